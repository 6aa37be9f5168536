#include "trainflops/seq_stats.h"

#include <algorithm>

namespace trainflops {
namespace {

constexpr Int128 kLowLane = Int128{1} << 32;
// Above this a lane pair could overflow when 2^31 ranks are summed.
constexpr Int128 kMaxSum = Int128{1} << 94;

}  // namespace

Result<SeqStats> SeqStats::create(const Model& model) {
  TRAINFLOPS_ASSIGN_OR_RETURN(FlopsCounter counter, FlopsCounter::create(model, Mode::kModel));
  return SeqStats(std::move(counter));
}

SeqStats::SeqStats(FlopsCounter counter) : counter_(std::move(counter)), sums_(counter_.statistics().size(), 0) {}

Status SeqStats::add_lengths(std::span<const std::int64_t> lengths) {
  std::vector<Int128> sums = sums_;
  const auto& statistics = counter_.statistics();
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    if (lengths[d] < 0) {
      return Error("lengths[" + std::to_string(d) + "] = " + std::to_string(lengths[d]) + ": must be >= 0");
    }
    for (std::size_t i = 0; i < statistics.size(); ++i) {
      auto count = document_count(statistics[i], lengths[d]);
      auto sum = count ? checked_add(sums[i], *count) : std::nullopt;
      if (!sum || *sum >= kMaxSum) {
        return Error("the " + statistic_name(statistics[i]) + " of the documents exceed 2^94");
      }
      sums[i] = *sum;
    }
  }
  sums_ = std::move(sums);
  return Ok{};
}

template <typename Offset>
static Result<std::vector<std::int64_t>> lengths_of(std::span<const Offset> cu_seqlens) {
  std::vector<std::int64_t> offsets(cu_seqlens.begin(), cu_seqlens.end());
  return lengths_from_cu_seqlens(offsets);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int64_t> cu_seqlens) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> lengths, lengths_of(cu_seqlens));
  return add_lengths(lengths);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int32_t> cu_seqlens) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> lengths, lengths_of(cu_seqlens));
  return add_lengths(lengths);
}

std::vector<std::int64_t> SeqStats::vector() const {
  std::vector<std::int64_t> lanes;
  lanes.reserve(2 * sums_.size());
  for (Int128 sum : sums_) {
    lanes.push_back(static_cast<std::int64_t>(sum / kLowLane));
    lanes.push_back(static_cast<std::int64_t>(sum % kLowLane));
  }
  return lanes;
}

Status SeqStats::set_vector(std::span<const std::int64_t> summed) {
  if (summed.size() != 2 * sums_.size()) {
    return Error("the vector has " + std::to_string(summed.size()) + " entries; this model's has " +
                 std::to_string(2 * sums_.size()));
  }
  std::vector<Int128> sums(sums_.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    if (summed[2 * i] < 0 || summed[2 * i + 1] < 0) {
      return Error("vector[" + std::to_string(summed[2 * i] < 0 ? 2 * i : 2 * i + 1) +
                   "] is negative: not a sum of SeqStats vectors");
    }
    sums[i] = Int128{summed[2 * i]} * kLowLane + summed[2 * i + 1];
  }
  sums_ = std::move(sums);
  return Ok{};
}

Result<Flops> SeqStats::flops() const { return counter_.total_from_statistics(sums_); }

Int128 SeqStats::tokens() const {
  const auto& statistics = counter_.statistics();
  const auto it = std::find(statistics.begin(), statistics.end(), kTokens);
  return it == statistics.end() ? 0 : sums_[static_cast<std::size_t>(it - statistics.begin())];
}

}  // namespace trainflops
