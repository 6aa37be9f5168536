// Internal: the exact sums over many documents of the per-document statistics
// of statistic.h, at about the speed of a pass over the lengths.
//
// Each statistic of a document of L tokens is a polynomial in L, in its excess
// over a threshold, m = max(L - c, 0), and in remainders r = x mod p. With
// pairs(L) = (L^2 + L) / 2 and, for x = q p + r, the whole pools seen
//   C(x) = sum_{i=1..x} floor(i/p) = p q (q - 1) / 2 + q (r + 1)
//        = (x^2 - r^2 + (2 - p)(x - r)) / (2p):
//   tokens                       L
//   causal pairs                 pairs(L)
//   top-k pairs, window pairs    pairs(L) - pairs(m), c = k or w (sum_i min(i, c))
//   complete pool pairs,
//   compressed entries           C(L)
//   pooled keys                  L - r, r = L mod p
//   chunked pairs                ((p + 1)(L - r) + r^2 + r) / 2, chunks of p
//   selected compressed entries  C(L) - C(m), c = k p (sum_i min(k, floor(i/p)))
//   pooled attended pairs        p (C(L) - C(m)), c = (k / p) p, the selected
//                                pools; with the tail, plus pairs(L) - p C(L)
//   block top-k pairs            chunked pairs + b (C(L) - C(m)) - (L - r) + (m - r_m),
//                                chunks and pools of b, c = (k - 1) b, since
//                                sum_i min(k - 1, floor((i - 1)/b)) = C(L) - floor(L/b)
//                                less the same of m
// and m mod p = L mod p where L > c, c being a multiple of p. So a block of
// documents needs only the moments of length_moments.h (sums of L, m, r and of
// their squares), which it computes in 64-bit lanes and this combines in 128
// bits. Documents that a block cannot hold (lengths of 2^31 or more), and
// the candidate entries (which no moment makes), are counted one by one with
// document_count().
// The results equal the per-document closed forms exactly
// (statistic_sums_test.cc).
#ifndef TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_SUMS_H_
#define TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_SUMS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "accounting/length_moments.h"
#include "trainflops/int128.h"
#include "trainflops/result.h"
#include "trainflops/statistic.h"

namespace trainflops {

class StatisticSums {
 public:
  // Sums of `statistics` (each meeting document_count()'s preconditions), each
  // of which must stay below 2^limit_bits (limit_bits <= 126).
  StatisticSums(std::vector<Statistic> statistics, int limit_bits);

  // Adds the statistics of every document to `sums` (one per statistic, in
  // order). On error `sums` is left as it was. Errors: a negative length
  // ("lengths[3] = -1: must be >= 0"); cu_seqlens as lengths_from_cu_seqlens()
  // reports them (checked before anything else); a sum that would reach the
  // limit ("the causal_pairs of the documents exceed 2^94").
  Status add_lengths(std::span<const std::int64_t> lengths, std::vector<Int128>& sums) const;
  Status add_cu_seqlens(std::span<const std::int64_t> cu_seqlens, std::vector<Int128>& sums) const;
  Status add_cu_seqlens(std::span<const std::int32_t> cu_seqlens, std::vector<Int128>& sums) const;

  // The moments the statistics are made of (thresholds and pools of
  // length_moments.h, each threshold capped at INT64_MAX, which no length
  // reaches), for summing them elsewhere.
  std::span<const std::uint64_t> thresholds() const { return thresholds_; }
  std::span<const PoolSpec> pools() const { return pools_; }
  // Adds documents by their moments summed over them: sum L, sum L^2, then
  // sum m and sum m^2 per threshold, then sum r and sum r^2 per pool. On error `sums` is left as it was.
  // Errors: a statistic no moment makes (the candidate entries); another number of moments; moments that no documents have (a
  // negative one, or one that its pool or threshold bounds, as m <= L and
  // p (L - r) <= L^2, exceeds); a moment of 2^100 or more; a sum that would
  // reach the limit.
  Status add_moments(std::span<const Int128> moments, std::vector<Int128>& sums) const;

 private:
  // How one statistic is made from the moments.
  struct Recipe {
    StatisticKind kind;
    Int128 pool = 0;
    bool tail = false;
    std::size_t excess = 0;    // index in thresholds_ of the excess m
    std::size_t whole = 0;     // index in pools_ of L mod p
    std::size_t selected = 0;  // index in pools_ of m mod p
  };

  template <typename Source>
  Status add(const Source& source, std::vector<Int128>& sums) const;
  // The moments of documents, summed: the flat layout add_moments() takes.
  struct SummedMoments {
    Int128 sum = 0;
    Int128 squares = 0;
  };
  Status add_summed(std::span<const SummedMoments> moments, std::vector<Int128>& sums) const;
  template <typename Source>
  Status add_one_by_one(const Source& source, std::size_t start, std::size_t n, std::vector<Int128>& sums) const;
  Error limit_error(std::size_t statistic) const;
  template <typename Offset>
  Status add_offsets(std::span<const Offset> cu_seqlens, std::vector<Int128>& sums) const;

  std::vector<Statistic> statistics_;
  int limit_bits_;
  std::vector<Recipe> recipes_;            // per statistic
  std::vector<std::uint64_t> thresholds_;  // sorted, distinct, <= INT64_MAX
  std::vector<PoolSpec> pools_;            // sorted, distinct, thresholds <= INT64_MAX
  std::vector<std::uint64_t> block_thresholds_;  // thresholds_ and pools_ capped at kMaxBlockTokens
  std::vector<PoolSpec> block_pools_;
  bool one_by_one_ = false;  // a statistic the moments do not cover
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_SUMS_H_
