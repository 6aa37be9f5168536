#include "trainflops/seq_stats.h"

#include <algorithm>

#include "accounting/statistic_sums.h"

namespace trainflops {
namespace {

constexpr int kLaneBits = 32;
constexpr Int128 kLaneMask = (Int128{1} << kLaneBits) - 1;
// A rank's sums stay below 2^94, so its top lane is below 2^30 and the top
// lane of a sum over kMaxRanks ranks below 2^61: the sum fits in 128 bits.
constexpr int kMaxSumBits = 94;
constexpr std::int64_t kMaxSummedTopLane = std::int64_t{1} << (kMaxSumBits - 2 * kLaneBits + 31);

}  // namespace

Result<SeqStats> SeqStats::create(const Model& model) {
  TRAINFLOPS_ASSIGN_OR_RETURN(FlopsCounter counter, FlopsCounter::create(model, Mode::kModel));
  return SeqStats(std::move(counter));
}

SeqStats::SeqStats(FlopsCounter counter) : counter_(std::move(counter)), sums_(counter_.statistics().size(), 0) {}

Status SeqStats::add_lengths(std::span<const std::int64_t> lengths) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_lengths(lengths, sums_);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int64_t> cu_seqlens) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_cu_seqlens(cu_seqlens, sums_);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int32_t> cu_seqlens) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_cu_seqlens(cu_seqlens, sums_);
}

std::vector<std::int64_t> SeqStats::vector() const {
  std::vector<std::int64_t> lanes;
  lanes.reserve(kLanesPerStatistic * sums_.size());
  for (Int128 sum : sums_) {
    for (int lane = kLanesPerStatistic - 1; lane >= 0; --lane) {
      lanes.push_back(static_cast<std::int64_t>((sum >> (lane * kLaneBits)) & kLaneMask));
    }
  }
  return lanes;
}

Status SeqStats::set_vector(std::span<const std::int64_t> summed) {
  if (summed.size() != kLanesPerStatistic * sums_.size()) {
    return Error("the vector has " + std::to_string(summed.size()) + " entries; this model's has " +
                 std::to_string(kLanesPerStatistic * sums_.size()));
  }
  std::vector<Int128> sums(sums_.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    for (std::size_t lane = 0; lane < kLanesPerStatistic; ++lane) {
      const std::size_t at = kLanesPerStatistic * i + lane;
      if (summed[at] < 0) return Error("vector[" + std::to_string(at) + "] is negative: not a sum of SeqStats vectors");
    }
    const std::size_t top = kLanesPerStatistic * i;
    if (summed[top] > kMaxSummedTopLane) {
      return Error(ErrorCode::kOverflow, "vector[" + std::to_string(top) + "] = " + std::to_string(summed[top]) +
                                             ": more than a sum over " + std::to_string(kMaxRanks) +
                                             " ranks can hold: not a sum of SeqStats vectors");
    }
    for (std::size_t lane = 0; lane < kLanesPerStatistic; ++lane) {
      sums[i] = (sums[i] << kLaneBits) + summed[top + lane];
    }
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
