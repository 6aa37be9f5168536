#include "accounting/statistic_sums.h"

#include <algorithm>
#include <optional>
#include <string>

#include "trainflops/workload.h"

namespace trainflops {
namespace {

// No length reaches INT64_MAX, so a larger threshold leaves no excess, as
// INT64_MAX does; within a block every length is below 2^31, so there
// kMaxBlockTokens does.
std::uint64_t capped(Int128 threshold, std::uint64_t cap) {
  return static_cast<std::uint64_t>(std::min<Int128>(threshold, cap));
}
std::uint64_t capped(Int128 threshold) { return capped(threshold, INT64_MAX); }

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
    case StatisticKind::kTopkPairs: return Needs{capped(s.topk), std::nullopt};
    case StatisticKind::kWindowPairs: return Needs{capped(s.pool), std::nullopt};
    case StatisticKind::kCompletePoolPairs:
    case StatisticKind::kPooledKeys:
    case StatisticKind::kChunkedPairs:
    case StatisticKind::kCompressedEntries: return Needs{std::nullopt, pool};
    case StatisticKind::kPooledAttendedPairs: return Needs{capped(s.topk / s.pool * s.pool), pool, true};
    case StatisticKind::kSelectedCompressed: return Needs{capped(Int128{s.topk} * s.pool), pool, true};
    case StatisticKind::kBlockTopkPairs: return Needs{capped(Int128{s.topk - 1} * s.pool), pool, true};
    case StatisticKind::kCompressedPositions: return Needs{std::nullopt, pool};
    // Over n L positions the remainders are of n L: counted document by document.
    case StatisticKind::kChunkSquares: return s.interleave == 1 ? std::optional{Needs{std::nullopt, pool}} : std::nullopt;
    // Cubic in the last chunk, or capped per query: counted document by document.
    case StatisticKind::kChunkSubstitutions:
    case StatisticKind::kSelectedCandidates:
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
  // The same, one for one, for the block loops (whose lengths stay below
  // 2^31): sorted still, though no longer distinct.
  for (const std::uint64_t threshold : thresholds_) block_thresholds_.push_back(capped(threshold, kMaxBlockTokens));
  for (const PoolSpec& pool : pools_) block_pools_.push_back({pool.pool, capped(pool.threshold, kMaxBlockTokens)});
}

Error StatisticSums::limit_error(std::size_t statistic) const {
  return Error(ErrorCode::kOverflow, "the " + statistic_name(statistics_[statistic]) + " of the documents exceed 2^" +
                                         std::to_string(limit_bits_));
}

Status StatisticSums::add_summed(std::span<const SummedMoments> moments, std::vector<Int128>& sums) const {
  const SummedMoments& lengths = moments[0];
  const Int128 tokens = lengths.sum;
  const Int128 pairs = (lengths.squares + tokens) / 2;
  const auto excess = moments.subspan(1, thresholds_.size());
  const auto remainders = moments.subspan(1 + thresholds_.size());
  // p times the sum of C(x) over the documents, from the sums of x, x^2, r, r^2.
  const auto pooled = [](Int128 p, const SummedMoments& x, const SummedMoments& r) {
    return (x.squares - r.squares + (2 - p) * (x.sum - r.sum)) / 2;
  };
  for (std::size_t i = 0; i < recipes_.size(); ++i) {
    const Recipe& recipe = recipes_[i];
    const Int128 p = recipe.pool;
    const SummedMoments& m = excess.empty() ? SummedMoments{} : excess[recipe.excess];
    const SummedMoments& r = remainders.empty() ? SummedMoments{} : remainders[recipe.whole];
    const SummedMoments& r_m = remainders.empty() ? SummedMoments{} : remainders[recipe.selected];
    // p times the sums of C over the documents and over their excesses.
    const auto whole = [&] { return pooled(p, lengths, r); };
    const auto selected = [&] { return pooled(p, m, r_m); };
    const auto chunked = [&] { return ((p + 1) * (tokens - r.sum) + r.squares + r.sum) / 2; };
    Int128 value = 0;
    switch (recipe.kind) {
      case StatisticKind::kTokens: value = tokens; break;
      case StatisticKind::kCausalPairs: value = pairs; break;
      case StatisticKind::kTopkPairs:
      case StatisticKind::kWindowPairs: value = pairs - (m.squares + m.sum) / 2; break;
      case StatisticKind::kCompletePoolPairs:
      case StatisticKind::kCompressedEntries: value = whole() / p; break;
      case StatisticKind::kPooledKeys: value = tokens - r.sum; break;
      case StatisticKind::kChunkedPairs: value = chunked(); break;
      case StatisticKind::kPooledAttendedPairs:
        value = whole() - selected();
        if (recipe.tail) value += pairs - whole();
        break;
      case StatisticKind::kSelectedCompressed: value = (whole() - selected()) / p; break;
      case StatisticKind::kBlockTopkPairs:
        value = chunked() + whole() - selected() - (tokens - r.sum) + (m.sum - r_m.sum);
        break;
      case StatisticKind::kCompressedPositions: value = (tokens - r.sum) / p; break;
      case StatisticKind::kChunkSquares: value = p * (tokens - r.sum) + r.squares; break;
      case StatisticKind::kCandidateEntries:
      case StatisticKind::kSelectedCandidates:
      case StatisticKind::kChunkSubstitutions: break;  // never: needs_of() counts them document by document
    }
    // The moments are below 2^100 and bound each other as documents' do
    // (add_moments()), so `value` stays below 2^103; sums stay below 2^126.
    sums[i] += value;
    if (sums[i] >= Int128{1} << limit_bits_) return limit_error(i);
  }
  return Ok{};
}

Status StatisticSums::add_moments(std::span<const Int128> moments, std::vector<Int128>& sums) const {
  const std::size_t expected = 2 * (1 + thresholds_.size() + pools_.size());
  if (moments.size() != expected) {
    return Error("the moments have " + std::to_string(moments.size()) + " entries; this model's have " +
                 std::to_string(expected));
  }
  if (one_by_one_) {
    for (const Statistic& s : statistics_) {
      if (!needs_of(s)) {
        return Error(ErrorCode::kUnsupported,
                     "the " + statistic_name(s) + " are not made of the moments: they need each document's length");
      }
    }
  }
  constexpr Int128 kMaxMoment = Int128{1} << 100;
  for (std::size_t i = 0; i < moments.size(); ++i) {
    if (moments[i] < 0) return Error("moments[" + std::to_string(i) + "] is negative: not a sum over documents");
    if (moments[i] >= kMaxMoment) {
      return Error(ErrorCode::kOverflow, "moments[" + std::to_string(i) + "] = " + to_decimal(moments[i]) +
                                             ": the moments of the documents reach 2^100");
    }
  }
  std::vector<SummedMoments> summed(moments.size() / 2);
  for (std::size_t i = 0; i < summed.size(); ++i) summed[i] = {moments[2 * i], moments[2 * i + 1]};
  // What every set of documents meets, so that no product in add_summed()
  // overflows: x <= x^2 summed, m <= L, r <= x, and p (x - r) <= x^2 summed.
  const auto bounded = [&](const SummedMoments& part, const SummedMoments& whole) {
    return part.sum <= whole.sum && part.squares <= whole.squares;
  };
  bool consistent = summed[0].sum <= summed[0].squares;
  for (std::size_t t = 0; t < thresholds_.size(); ++t) consistent = consistent && bounded(summed[1 + t], summed[0]);
  for (std::size_t q = 0; q < pools_.size(); ++q) {
    const PoolSpec& pool = pools_[q];
    // A pool's remainders are of L, or of the excess over its threshold (one of thresholds_).
    const auto threshold = std::lower_bound(thresholds_.begin(), thresholds_.end(), pool.threshold);
    const SummedMoments& x =
        pool.threshold == 0 ? summed[0] : summed[1 + static_cast<std::size_t>(threshold - thresholds_.begin())];
    const SummedMoments& r = summed[1 + thresholds_.size() + q];
    consistent = consistent && bounded(r, x) && x.sum - r.sum <= x.squares / static_cast<Int128>(pool.pool);
  }
  if (!consistent) return Error("the moments are not those of any documents");
  std::vector<Int128> next = sums;
  TRAINFLOPS_RETURN_IF_ERROR(add_summed(summed, next));
  sums = std::move(next);
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
  std::vector<SummedMoments> summed(1 + excess.size() + remainders.size());
  const BlockLoops loops(MomentSpec{block_thresholds_, block_pools_});
  for (std::size_t start = 0; start < source.documents(); start += kBlockDocuments) {
    const std::size_t n = std::min(kBlockDocuments, source.documents() - start);
    const BlockMoments block = source.moments(start, n, loops, excess.data(), remainders.data());
    if (!block.fits || one_by_one_) {
      TRAINFLOPS_RETURN_IF_ERROR(add_one_by_one(source, start, n, next));
      continue;
    }
    summed[0] = {block.tokens, block.squares};
    for (std::size_t t = 0; t < excess.size(); ++t) summed[1 + t] = {excess[t].sum, excess[t].squares};
    for (std::size_t q = 0; q < remainders.size(); ++q) {
      summed[1 + excess.size() + q] = {remainders[q].sum, remainders[q].squares};
    }
    TRAINFLOPS_RETURN_IF_ERROR(add_summed(summed, next));
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
