#include "trainflops/seq_stats.h"

#include <algorithm>

#include "statistic_sums.h"

namespace trainflops {
namespace {

constexpr Int128 kLowLane = Int128{1} << 32;
// From 2^94 up a lane pair could overflow when 2^31 ranks are summed.
constexpr int kMaxSumBits = 94;

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
