// Exact packed-sequence statistics that merge across data-parallel ranks.
//
// Each rank adds the documents of its share of the global batch; the state is
// a small fixed-size vector of int64 whose elementwise sum over ranks (one
// all_reduce(SUM)) is the state of the whole global batch, from which flops()
// gives the exact `model`-mode FLOPs of the iteration.
//
// Thread safety: SeqStats: as its comment below says. The functions here keep
// no state of their own: several threads may call them at once, given different
// objects to change.
#ifndef TRAINFLOPS_SEQ_STATS_H_
#define TRAINFLOPS_SEQ_STATS_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// Thread safety: the const methods may run on several threads at once;
// add_lengths, add_cu_seqlens and set_vector change the state, so the thread
// calling one must be the only one using that SeqStats. SeqStats made from one
// Model on different threads (one per rank) need no synchronization.
class SeqStats {
 public:
  // Validates the model; counts in `model` mode.
  static Result<SeqStats> create(const Model& model);

  // Adds documents by their lengths (>= 0), or by cu_seqlens offsets (0 first,
  // non-decreasing). On error nothing is added.
  Status add_lengths(std::span<const std::int64_t> lengths);
  Status add_cu_seqlens(std::span<const std::int64_t> cu_seqlens);
  Status add_cu_seqlens(std::span<const std::int32_t> cu_seqlens);

  // For summing documents elsewhere (a GPU, without copying their lengths
  // back): the moments every statistic of this model is made of. Per document
  // of L tokens: L and L^2; per threshold c, m = max(L - c, 0) and m^2; per
  // pool (p, c), r = L mod p and r^2 where L > c (0 where L <= c).
  struct MomentSpec {
    std::vector<std::int64_t> thresholds;                      // c
    std::vector<std::pair<std::int64_t, std::int64_t>> pools;  // (p, c)
  };
  MomentSpec moment_spec() const;
  // Adds documents by their moments summed over them: sum L, sum L^2, then
  // sum m and sum m^2 per threshold, then sum r and sum r^2 per pool. On error nothing is added. Errors: another
  // number of moments; moments no documents have (a negative one, m or r
  // summing past L); a moment of 2^100 or more; a sum past add_lengths()'s limit.
  Status add_moments(std::span<const Int128> moments);

  // The most ranks whose vectors may be summed.
  static constexpr std::int64_t kMaxRanks = std::int64_t{1} << 31;
  static constexpr std::size_t kLanesPerStatistic = 3;

  // The state: the number of ranks summed (1 for one rank's), that number
  // times a fingerprint of the model (31 bits: equal models, equal
  // fingerprints), then three lanes per statistic, most significant first,
  // sum = top * 2^64 + middle * 2^32 + bottom, each lane in [0, 2^32) here
  // (a rank's sums stay below 2^94; more is an overflow error when adding),
  // so that summing the vectors of up to kMaxRanks ranks neither overflows
  // int64 nor loses a carry.
  std::vector<std::int64_t> vector() const;
  // Replaces the state with a summed vector (as all_reduce returns it; all
  // zeros: no documents, as after a reset). Errors: a length other than
  // this model's; a fingerprint that is not the rank count times this
  // model's (vectors of another model were summed); a negative lane, or one
  // larger than the vector's rank count allows.
  Status set_vector(std::span<const std::int64_t> summed);

  // Exact FLOPs of one iteration over every document added (or merged).
  Result<Flops> flops() const;
  // Tokens added so far.
  Int128 tokens() const;

  const FlopsCounter& counter() const { return counter_; }

 private:
  explicit SeqStats(FlopsCounter counter);

  FlopsCounter counter_;
  std::int64_t fingerprint_;
  std::int64_t ranks_ = 1;    // the ranks whose documents the state holds
  std::vector<Int128> sums_;  // per statistic of counter_.statistics()
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SEQ_STATS_H_
