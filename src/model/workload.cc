#include "trainflops/workload.h"

#include <cstdint>

#include "model/workload_offsets.h"

namespace trainflops {
namespace {

std::string with_thousands(Int128 value) {
  const std::string digits = to_decimal(value);
  const std::size_t sign = digits[0] == '-' ? 1 : 0;
  std::string grouped = digits.substr(0, sign);
  for (std::size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

}  // namespace

Status validate(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    if (bshd->batch_size < 1) {
      return Error("batch_size = " + std::to_string(bshd->batch_size) + ": must be a positive integer");
    }
    if (bshd->seq_length < 1) {
      return Error("seq_length = " + std::to_string(bshd->seq_length) + ": must be a positive integer");
    }
    return Ok{};
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    bool any_token = false;
    for (std::size_t i = 0; i < packed->lengths.size(); ++i) {
      if (packed->lengths[i] < 0) {
        return Error("docs[" + std::to_string(i) + "] = " + std::to_string(packed->lengths[i]) +
                     ": a document length must be >= 0");
      }
      any_token |= packed->lengths[i] > 0;
    }
    if (!any_token) return Error("docs: the batch holds no tokens (at least one length must be positive)");
    return Ok{};
  }
  const auto& aggregates = std::get<SequenceAggregates>(workload);
  const Int128 t = aggregates.total_tokens, s2 = aggregates.squared_sum;
  if (t < 1) return Error("total_real_tokens = " + to_decimal(t) + ": must be a positive integer");
  if (s2 < t) {
    return Error("seqlen_squared_sum = " + to_decimal(s2) + ": must be at least total_real_tokens = " + to_decimal(t) +
                 " (every L^2 >= L)");
  }
  auto t_squared = checked_mul(t, t);
  if (t_squared && s2 > *t_squared) {
    return Error("seqlen_squared_sum = " + to_decimal(s2) +
                 ": must be at most total_real_tokens^2 = " + to_decimal(*t_squared) + " (sum L^2 <= (sum L)^2)");
  }
  return Ok{};
}

Int128 total_tokens(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) return Int128{bshd->batch_size} * bshd->seq_length;
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    Int128 sum = 0;
    for (std::int64_t length : packed->lengths) sum += length;  // < 2^63 lengths of < 2^63: fits
    return sum;
  }
  return std::get<SequenceAggregates>(workload).total_tokens;
}

Result<std::vector<std::int64_t>> lengths_from_cu_seqlens(const std::vector<std::int64_t>& cu_seqlens) {
  if (cu_seqlens.size() < 2) {
    return Error("cu_seqlens: needs at least two offsets (0 and the end of the first document), got " +
                 std::to_string(cu_seqlens.size()));
  }
  if (cu_seqlens[0] != 0) return Error("cu_seqlens[0] = " + std::to_string(cu_seqlens[0]) + ": must be 0");
  std::vector<std::int64_t> lengths;
  lengths.reserve(cu_seqlens.size() - 1);
  for (std::size_t i = 1; i < cu_seqlens.size(); ++i) {
    if (cu_seqlens[i] < cu_seqlens[i - 1]) {
      return Error("cu_seqlens[" + std::to_string(i) + "] = " + std::to_string(cu_seqlens[i]) +
                   ": must not be smaller than the previous offset " + std::to_string(cu_seqlens[i - 1]));
    }
    lengths.push_back(cu_seqlens[i] - cu_seqlens[i - 1]);
  }
  return lengths;
}

Status check_offsets_hold_tokens(std::int64_t last) {
  if (last != 0) return Ok{};
  return Error("cu_seqlens: the batch holds no tokens (the last offset must be positive)");
}

std::string describe(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    return "BSHD, " + with_thousands(bshd->batch_size) + (bshd->batch_size == 1 ? " sequence x " : " sequences x ") +
           with_thousands(bshd->seq_length) + " tokens = " + with_thousands(total_tokens(workload)) + " tokens";
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    return describe_packed(static_cast<Int128>(packed->lengths.size()), total_tokens(workload));
  }
  const auto& aggregates = std::get<SequenceAggregates>(workload);
  return "aggregates, " + with_thousands(aggregates.total_tokens) + " tokens, sum of squared lengths " +
         with_thousands(aggregates.squared_sum);
}

std::string describe_packed(Int128 documents, Int128 tokens) {
  return "THD, " + with_thousands(documents) + " packed documents, " + with_thousands(tokens) + " tokens";
}

}  // namespace trainflops
