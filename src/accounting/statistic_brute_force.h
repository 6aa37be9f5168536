// For the tests: an independent count of each statistic of one document,
// walking every query position, the keys it may see and the pools they form
// (no closed forms), to check statistic.h and statistic_sums.h against.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_BRUTE_FORCE_H_
#define TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_BRUTE_FORCE_H_

#include <algorithm>
#include <cstdint>

#include "trainflops/int128.h"
#include "trainflops/statistic.h"

namespace trainflops::testing_support {

inline Int128 brute_force(const Statistic& s, std::int64_t token_length) {
  // The chunk kinds walk n positions per token; the others take n = 1.
  const std::int64_t length = token_length * s.interleave;
  Int128 count = 0;
  for (std::int64_t query = 1; query <= length; ++query) {
    std::int64_t complete_pools = 0;
    if (s.pool > 0) {
      for (std::int64_t end = s.pool; end <= query; end += s.pool) ++complete_pools;
    }
    switch (s.kind) {
      case StatisticKind::kTokens: ++count; break;
      case StatisticKind::kCausalPairs:
        for (std::int64_t key = 1; key <= query; ++key) ++count;
        break;
      case StatisticKind::kTopkPairs:
        for (std::int64_t key = 1; key <= query; ++key) count += query - key < s.topk;
        break;
      case StatisticKind::kPooledAttendedPairs:
        for (std::int64_t pool = 0; pool < complete_pools && pool < s.topk / s.pool; ++pool) count += s.pool;
        if (s.tail) {
          for (std::int64_t key = complete_pools * s.pool + 1; key <= query; ++key) ++count;
        }
        break;
      case StatisticKind::kCompletePoolPairs: count += complete_pools; break;
      case StatisticKind::kPooledKeys:
        if (query % s.pool == 0) count += s.pool;  // a pool completes at its last key
        break;
      case StatisticKind::kWindowPairs:
        for (std::int64_t key = 1; key <= query; ++key) count += query - key < s.pool;
        break;
      case StatisticKind::kChunkedPairs:
        for (std::int64_t key = 1; key <= query; ++key) count += (key - 1) / s.pool == (query - 1) / s.pool;
        break;
      case StatisticKind::kCompressedEntries: count += complete_pools; break;
      case StatisticKind::kSelectedCompressed:
        for (std::int64_t entry = 1; entry <= complete_pools; ++entry) count += entry <= s.topk;
        break;
      case StatisticKind::kBlockTopkPairs:
        // Its own block, and k - 1 earlier ones (say the first: the count is
        // the same whichever the indexer picks).
        for (std::int64_t key = 1; key <= query; ++key) {
          const std::int64_t block = (key - 1) / s.pool, own = (query - 1) / s.pool;
          count += block == own || block < s.topk - 1;
        }
        break;
      case StatisticKind::kCompressedPositions: count += query % s.pool == 0; break;  // an entry completes
      case StatisticKind::kCandidateEntries:
        // The entries of the query's own (last) block, and of K - 1 earlier
        // blocks (say the first: every earlier block is complete).
        for (std::int64_t entry = 1; entry <= complete_pools; ++entry) {
          const std::int64_t block = (entry - 1) / s.block, own = (complete_pools - 1) / s.block;
          count += block == own || block < s.topk - 1;
        }
        break;
      case StatisticKind::kSelectedCandidates: {
        std::int64_t candidates = 0;
        for (std::int64_t entry = 1; entry <= complete_pools; ++entry) {
          const std::int64_t block = (entry - 1) / s.block, own = (complete_pools - 1) / s.block;
          candidates += block == own || block < s.blocks - 1;
        }
        count += std::min(candidates, s.topk);
        break;
      }
      case StatisticKind::kChunkSquares:
        // The query against every token of its chunk, later ones included.
        for (std::int64_t key = 1; key <= length; ++key) count += (key - 1) / s.pool == (query - 1) / s.pool;
        break;
      case StatisticKind::kChunkSubstitutions:
      {
        // The query's row: its earlier tokens in the chunk, each against every one of them.
        const std::int64_t chunk_start = (query - 1) / s.pool * s.pool + 1;
        for (std::int64_t a = chunk_start; a < query; ++a) {
          for (std::int64_t b = chunk_start; b < query; ++b) ++count;
        }
        break;
      }
    }
  }
  return count;
}

}  // namespace trainflops::testing_support

#endif  // TRAINFLOPS_SRC_ACCOUNTING_STATISTIC_BRUTE_FORCE_H_
