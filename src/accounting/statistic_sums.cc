#include "accounting/statistic_sums.h"

#include <algorithm>
#include <optional>
#include <string>

#include "trainflops/workload.h"

namespace trainflops {
namespace {

// Within a block every length is below 2^31, so a larger threshold leaves no
// excess, as kMaxBlockTokens does.
std::uint64_t block_threshold(Int128 threshold) {
  return static_cast<std::uint64_t>(std::min<Int128>(threshold, kMaxBlockTokens));
}

// What each statistic needs besides sum L and sum L^2 (statistic_sums.h):
// the threshold of its excess m, the size p of its remainders r = L mod p,
// and whether it needs the remainders of its excess too.
struct Needs {
  std::optional<std::uint64_t> threshold;
  std::optional<std::uint64_t> pool;
  bool selected = false;
};

// nullopt for a kind the moments do not cover: counted document by document.
std::optional<Needs> needs_of(const Statistic& s) {
  const auto pool = static_cast<std::uint64_t>(s.pool);
  switch (s.kind) {
    case StatisticKind::kTokens:
    case StatisticKind::kCausalPairs: return Needs{};
    case StatisticKind::kTopkPairs: return Needs{block_threshold(s.topk), std::nullopt};
    case StatisticKind::kWindowPairs: return Needs{block_threshold(s.pool), std::nullopt};
    case StatisticKind::kCompletePoolPairs:
    case StatisticKind::kPooledKeys:
    case StatisticKind::kChunkedPairs:
    case StatisticKind::kCompressedEntries: return Needs{std::nullopt, pool};
    case StatisticKind::kPooledAttendedPairs: return Needs{block_threshold(s.topk / s.pool * s.pool), pool, true};
    case StatisticKind::kSelectedCompressed: return Needs{block_threshold(Int128{s.topk} * s.pool), pool, true};
    case StatisticKind::kBlockTopkPairs:
    case StatisticKind::kCompressedPositions:
    case StatisticKind::kCandidateEntries: return std::nullopt;
  }
  return std::nullopt;
}

// Where the documents come from: lengths, or the offsets between them.
struct Lengths {
  std::span<const std::int64_t> lengths;
  std::size_t documents() const { return lengths.size(); }
  BlockMoments moments(std::size_t start, std::size_t n, const BlockLoops& loops, ExcessMoments* excess,
                       RemainderMoments* remainders) const {
    return loops.lengths(lengths.data() + start, n, excess, remainders);
  }
  Int128 length(std::size_t i) const { return lengths[i]; }
};

template <typename Offset>
struct Offsets {
  std::span<const Offset> cu_seqlens;
  std::size_t documents() const { return cu_seqlens.size() - 1; }
  BlockMoments moments(std::size_t start, std::size_t n, const BlockLoops& loops, ExcessMoments* excess,
                       RemainderMoments* remainders) const {
    return loops.offsets(cu_seqlens.data() + start, n, excess, remainders);
  }
  Int128 length(std::size_t i) const { return Int128{cu_seqlens[i + 1]} - cu_seqlens[i]; }
};

}  // namespace

StatisticSums::StatisticSums(std::vector<Statistic> statistics, int limit_bits)
    : statistics_(std::move(statistics)), limit_bits_(limit_bits) {
  // The thresholds and pools of every statistic, collected (sorted and
  // distinct, as the loops want the pools), then looked up.
  for (const Statistic& s : statistics_) {
    const std::optional<Needs> needs = needs_of(s);
    if (!needs) continue;
    if (needs->threshold) thresholds_.push_back(*needs->threshold);
    if (needs->pool) pools_.push_back({*needs->pool, 0});
    if (needs->selected) pools_.push_back({*needs->pool, *needs->threshold});
  }
  std::sort(thresholds_.begin(), thresholds_.end());
  thresholds_.erase(std::unique(thresholds_.begin(), thresholds_.end()), thresholds_.end());
  std::sort(pools_.begin(), pools_.end());
  pools_.erase(std::unique(pools_.begin(), pools_.end()), pools_.end());
  const auto index = [](const auto& values, const auto& value) {
    return static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), value) - values.begin());
  };
  for (const Statistic& s : statistics_) {
    Recipe recipe{s.kind, s.pool, s.tail};
    const std::optional<Needs> needs = needs_of(s);
    if (!needs) {
      one_by_one_ = true;
    } else {
      if (needs->threshold) recipe.excess = index(thresholds_, *needs->threshold);
      if (needs->pool) recipe.whole = index(pools_, PoolSpec{*needs->pool, 0});
      if (needs->selected) recipe.selected = index(pools_, PoolSpec{*needs->pool, *needs->threshold});
    }
    recipes_.push_back(recipe);
  }
}

Error StatisticSums::limit_error(std::size_t statistic) const {
  return Error(ErrorCode::kOverflow, "the " + statistic_name(statistics_[statistic]) + " of the documents exceed 2^" +
                                         std::to_string(limit_bits_));
}

Status StatisticSums::add_block(const BlockMoments& block, const std::vector<ExcessMoments>& excess,
                                const std::vector<RemainderMoments>& remainders, std::vector<Int128>& sums) const {
  const Int128 tokens = block.tokens;
  const Int128 pairs = (Int128{block.squares} + tokens) / 2;
  // p times the sum of C(x) over the documents, from the sums of x, x^2, r, r^2.
  const auto pooled = [](Int128 p, Int128 x, Int128 x_squares, const RemainderMoments& r) {
    return (x_squares - r.squares + (2 - p) * (x - r.sum)) / 2;
  };
  for (std::size_t i = 0; i < recipes_.size(); ++i) {
    const Recipe& recipe = recipes_[i];
    const Int128 p = recipe.pool;
    const ExcessMoments& m = excess.empty() ? ExcessMoments{} : excess[recipe.excess];
    const RemainderMoments& r = remainders.empty() ? RemainderMoments{} : remainders[recipe.whole];
    // p times the sums of C over the documents and over their excesses.
    const auto whole = [&] { return pooled(p, tokens, block.squares, r); };
    const auto selected = [&] { return pooled(p, m.sum, m.squares, remainders[recipe.selected]); };
    Int128 value = 0;
    switch (recipe.kind) {
      case StatisticKind::kTokens: value = tokens; break;
      case StatisticKind::kCausalPairs: value = pairs; break;
      case StatisticKind::kTopkPairs:
      case StatisticKind::kWindowPairs: value = pairs - (Int128{m.squares} + m.sum) / 2; break;
      case StatisticKind::kCompletePoolPairs:
      case StatisticKind::kCompressedEntries: value = whole() / p; break;
      case StatisticKind::kPooledKeys: value = tokens - r.sum; break;
      case StatisticKind::kChunkedPairs: value = ((p + 1) * (tokens - r.sum) + r.squares + r.sum) / 2; break;
      case StatisticKind::kPooledAttendedPairs:
        value = whole() - selected();
        if (recipe.tail) value += pairs - whole();
        break;
      case StatisticKind::kSelectedCompressed: value = (whole() - selected()) / p; break;
      case StatisticKind::kBlockTopkPairs:
      case StatisticKind::kCompressedPositions:
      case StatisticKind::kCandidateEntries: break;  // never: needs_of() counts them document by document
    }
    sums[i] += value;  // sums < 2^126 and a block's value < 2^64: no overflow
    if (sums[i] >= Int128{1} << limit_bits_) return limit_error(i);
  }
  return Ok{};
}

template <typename Source>
Status StatisticSums::add_one_by_one(const Source& source, std::size_t start, std::size_t n,
                                     std::vector<Int128>& sums) const {
  for (std::size_t d = start; d < start + n; ++d) {
    const Int128 length = source.length(d);
    // Only offsets that add_offsets() then rejects give lengths outside int64.
    if (length < 0 || length > INT64_MAX) {
      return Error("lengths[" + std::to_string(d) + "] = " + to_decimal(length) + ": must be >= 0");
    }
    for (std::size_t i = 0; i < statistics_.size(); ++i) {
      const auto count = document_count(statistics_[i], static_cast<std::int64_t>(length));
      const auto sum = count ? checked_add(sums[i], *count) : std::nullopt;
      if (!sum || *sum >= Int128{1} << limit_bits_) return limit_error(i);
      sums[i] = *sum;
    }
  }
  return Ok{};
}

template <typename Source>
Status StatisticSums::add(const Source& source, std::vector<Int128>& sums) const {
  std::vector<Int128> next = sums;
  std::vector<ExcessMoments> excess(thresholds_.size());
  std::vector<RemainderMoments> remainders(pools_.size());
  const BlockLoops loops(MomentSpec{thresholds_, pools_});
  for (std::size_t start = 0; start < source.documents(); start += kBlockDocuments) {
    const std::size_t n = std::min(kBlockDocuments, source.documents() - start);
    const BlockMoments block = source.moments(start, n, loops, excess.data(), remainders.data());
    TRAINFLOPS_RETURN_IF_ERROR(block.fits && !one_by_one_ ? add_block(block, excess, remainders, next)
                                                          : add_one_by_one(source, start, n, next));
  }
  sums = std::move(next);
  return Ok{};
}

Status StatisticSums::add_lengths(std::span<const std::int64_t> lengths, std::vector<Int128>& sums) const {
  return add(Lengths{lengths}, sums);
}

// Offsets are validated first: when anything fails, the offsets' own error
// (the first bad entry) wins over what the summing found.
template <typename Offset>
Status StatisticSums::add_offsets(std::span<const Offset> cu_seqlens, std::vector<Int128>& sums) const {
  const auto offsets_error = [&]() -> std::optional<Error> {
    const Result<std::vector<std::int64_t>> checked =
        lengths_from_cu_seqlens(std::vector<std::int64_t>(cu_seqlens.begin(), cu_seqlens.end()));
    if (checked.ok()) return std::nullopt;
    return checked.error();
  };
  if (cu_seqlens.size() < 2 || cu_seqlens[0] != 0) return *offsets_error();
  Status status = add(Offsets<Offset>{cu_seqlens}, sums);
  if (status.ok()) return status;
  if (auto error = offsets_error()) return *error;
  return status;
}

Status StatisticSums::add_cu_seqlens(std::span<const std::int64_t> cu_seqlens, std::vector<Int128>& sums) const {
  return add_offsets(cu_seqlens, sums);
}

Status StatisticSums::add_cu_seqlens(std::span<const std::int32_t> cu_seqlens, std::vector<Int128>& sums) const {
  return add_offsets(cu_seqlens, sums);
}

}  // namespace trainflops
