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
constexpr std::int64_t kMaxTopLane = std::int64_t{1} << (kMaxSumBits - 2 * kLaneBits);
constexpr std::int64_t kMaxLane = (std::int64_t{1} << kLaneBits) - 1;
constexpr std::size_t kHeaderLanes = 2;  // the ranks summed, and the fingerprint times the ranks

// What tells one model's count from another's: its statistics and what it
// makes of them (the total of a fixed probe of sums), hashed (FNV-1a) into 31
// bits, so that the sum of 2^31 ranks' fingerprints fits an int64.
std::int64_t fingerprint_of(const FlopsCounter& counter) {
  std::uint64_t hash = 0xcbf29ce484222325u;
  const auto mix = [&](std::string_view bytes) {
    for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  };
  std::vector<Int128> probe;
  for (const Statistic& statistic : counter.statistics()) {
    mix(statistic_name(statistic));
    mix(";");
    probe.push_back(static_cast<Int128>(probe.size()) * 1000003 + 7);
  }
  const Result<Flops> total = counter.total_from_statistics(probe);
  mix(total.ok() ? to_decimal(*total.value().exact) : "overflow");
  return static_cast<std::int64_t>(hash >> 33) | 1;  // 31 bits, never 0: an all-zero vector is no rank's
}

}  // namespace

Result<SeqStats> SeqStats::create(const Model& model) {
  TRAINFLOPS_ASSIGN_OR_RETURN(FlopsCounter counter, FlopsCounter::create(model, Mode::kModel));
  return SeqStats(std::move(counter));
}

SeqStats::SeqStats(FlopsCounter counter)
    : counter_(std::move(counter)), fingerprint_(fingerprint_of(counter_)), sums_(counter_.statistics().size(), 0) {}

Status SeqStats::add_lengths(std::span<const std::int64_t> lengths) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_lengths(lengths, sums_);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int64_t> cu_seqlens) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_cu_seqlens(cu_seqlens, sums_);
}

Status SeqStats::add_cu_seqlens(std::span<const std::int32_t> cu_seqlens) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_cu_seqlens(cu_seqlens, sums_);
}

SeqStats::MomentSpec SeqStats::moment_spec() const {
  const StatisticSums sums(counter_.statistics(), kMaxSumBits);
  MomentSpec spec;
  for (const std::uint64_t threshold : sums.thresholds())
    spec.thresholds.push_back(static_cast<std::int64_t>(threshold));
  for (const PoolSpec& pool : sums.pools()) {
    spec.pools.emplace_back(static_cast<std::int64_t>(pool.pool), static_cast<std::int64_t>(pool.threshold));
  }
  return spec;
}

Status SeqStats::add_moments(std::span<const Int128> moments) {
  return StatisticSums(counter_.statistics(), kMaxSumBits).add_moments(moments, sums_);
}

std::vector<std::int64_t> SeqStats::vector() const {
  std::vector<std::int64_t> lanes = {ranks_, ranks_ * fingerprint_};
  lanes.reserve(kHeaderLanes + kLanesPerStatistic * sums_.size());
  for (Int128 sum : sums_) {
    for (int lane = kLanesPerStatistic - 1; lane >= 0; --lane) {
      lanes.push_back(static_cast<std::int64_t>((sum >> (lane * kLaneBits)) & kLaneMask));
    }
  }
  return lanes;
}

Status SeqStats::set_vector(std::span<const std::int64_t> summed) {
  const std::size_t size = kHeaderLanes + kLanesPerStatistic * sums_.size();
  if (summed.size() != size) {
    return Error("the vector has " + std::to_string(summed.size()) + " entries; this model's has " +
                 std::to_string(size));
  }
  const std::int64_t ranks = summed[0];
  if (ranks < 0 || ranks > kMaxRanks) {
    return Error("vector[0] = " + std::to_string(ranks) + ": the number of ranks summed must be in [0, " +
                 std::to_string(kMaxRanks) + "]: not a sum of SeqStats vectors");
  }
  if (summed[1] != ranks * fingerprint_) {
    return Error("vector[1] = " + std::to_string(summed[1]) + ": not " + std::to_string(ranks) +
                 " times this model's fingerprint " + std::to_string(fingerprint_) +
                 ": the vector sums SeqStats of another model (or is not a sum of SeqStats vectors)");
  }
  std::vector<Int128> sums(sums_.size());
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const std::size_t top = kHeaderLanes + kLanesPerStatistic * i;
    for (std::size_t lane = 0; lane < kLanesPerStatistic; ++lane) {
      const std::size_t at = top + lane;
      if (summed[at] < 0) return Error("vector[" + std::to_string(at) + "] is negative: not a sum of SeqStats vectors");
      // Each rank's lane is below 2^32 (its top lane below 2^30): n ranks' below n times that.
      const std::int64_t most = ranks * (lane == 0 ? kMaxTopLane : kMaxLane);
      if (summed[at] > most) {
        return Error(ErrorCode::kOverflow, "vector[" + std::to_string(at) + "] = " + std::to_string(summed[at]) +
                                               ": more than a sum over " + std::to_string(ranks) +
                                               " ranks can hold: not a sum of SeqStats vectors");
      }
      sums[i] = (sums[i] << kLaneBits) + summed[at];
    }
  }
  ranks_ = std::max<std::int64_t>(ranks, 1);  // no rank's documents: the state of one rank that has none
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
