#include "trainflops/statistic.h"

#include <gtest/gtest.h>

#include "accounting/statistic_brute_force.h"

namespace trainflops {
namespace {

using testing_support::brute_force;

std::vector<Statistic> every_kind() {
  std::vector<Statistic> all = {kTokens, kCausalPairs};
  for (std::int64_t k : {1, 2, 7, 64}) all.push_back(topk_pairs(k));
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t k : {p, 4 * p, 16 * p}) {
      all.push_back(pooled_attended_pairs(k, p, true));
      all.push_back(pooled_attended_pairs(k, p, false));
    }
    all.push_back(complete_pool_pairs(p));
    all.push_back(pooled_keys(p));
  }
  for (std::int64_t n : {1, 3, 128}) {
    all.push_back(window_pairs(n));
    all.push_back(chunked_pairs(n));
    all.push_back(compressed_entries(n));
    all.push_back(selected_compressed(5, n));
  }
  all.push_back(selected_compressed(64, 4));
  for (const auto& [blocks, size] : {std::pair{1, 1}, {1, 4}, {3, 4}, {2, 1}, {16, 8}, {2, 128}}) {
    all.push_back(block_topk_pairs(blocks, size));
  }
  // DeepSeek-V4.1: ratios 1 and 2 (its two), candidate sets below, at and
  // above the entries of documents up to 300 tokens.
  for (std::int64_t r : {1, 2, 3, 8}) {
    all.push_back(compressed_positions(r));
    for (const auto& [blocks, size] : {std::pair{1, 1}, {1, 8}, {3, 4}, {2, 1}, {16, 8}, {4, 32}}) {
      all.push_back(candidate_entries(r, blocks, size));
      // A top-k at the fewest candidates ((K-1)B + 1), between them and KB, and above.
      const std::int64_t fewest = (blocks - 1) * size + 1;
      if (r % 2 == 1) {
        for (const std::int64_t topk : {fewest, fewest + size / 2 + 1, fewest + size + 4}) {
          all.push_back(selected_candidates(topk, r, blocks, size));
        }
      }
    }
  }
  // Kimi Delta Attention's chunked delta rule, chunks of 1 to 16 (64 below).
  for (std::int64_t c : {1, 3, 8, 16}) {
    all.push_back(chunk_squares(c));
    all.push_back(chunk_substitutions(c));
  }
  all.push_back(chunk_squares(64));
  // The gated delta product's: 2 to 4 keys per token, chunks that split
  // tokens (3 and 64 over 3 per token) and that do not.
  for (const auto& [c, n] : {std::pair{3, 2}, {8, 4}, {16, 3}, {5, 5}}) {
    all.push_back(interleaved_chunk_squares(c, n));
    all.push_back(interleaved_chunk_substitutions(c, n));
  }
  all.push_back(interleaved_chunk_squares(64, 3));
  return all;
}

TEST(StatisticTest, DocumentCountsMatchPerQueryLoops) {
  for (const Statistic& statistic : every_kind()) {
    for (std::int64_t length = 0; length <= 300; ++length) {
      SCOPED_TRACE(statistic_name(statistic) + " L=" + std::to_string(length));
      ASSERT_EQ(document_count(statistic, length), std::optional<Int128>(brute_force(statistic, length)));
    }
  }
  // Near the 64-bit limit the count is still exact.
  const Int128 max = INT64_MAX;
  EXPECT_EQ(to_decimal(*document_count(kCausalPairs, INT64_MAX)), to_decimal(max * (max + 1) / 2));
}

// flash-linear-attention's chunk sizes (32, 64), with a partial last chunk
// and without, and near the 64-bit limit.
TEST(StatisticTest, ChunkSubstitutionsAtKernelChunkSizes) {
  for (const std::int64_t c : {32, 64}) {
    for (const std::int64_t length : {0, 1, 31, 32, 33, 63, 64, 65, 100, 128, 129, 200}) {
      SCOPED_TRACE("c=" + std::to_string(c) + " L=" + std::to_string(length));
      EXPECT_EQ(document_count(chunk_substitutions(c), length),
                std::optional<Int128>(brute_force(chunk_substitutions(c), length)));
    }
  }
  // 64 tokens: 63 * 64 * 127 / 6 = 85,344 products; 65: one more chunk of 1, none.
  EXPECT_EQ(document_count(chunk_substitutions(64), 65), Int128{85344});
  // One chunk of 2^62 tokens: (2^62 - 1) 2^62 (2^63 - 1) / 6 needs 185 bits.
  EXPECT_EQ(document_count(chunk_substitutions(std::int64_t{1} << 62), std::int64_t{1} << 62), std::nullopt);
  EXPECT_EQ(document_count(chunk_squares(64), INT64_MAX),
            std::optional<Int128>((Int128{INT64_MAX} - 63) * 64 + 63 * 63));
}

// The gated delta product's chunks of 64 over 3 keys per token: 22 tokens
// are 66 positions, a chunk of 64 and one of 2; near the 64-bit limit the
// positions pass 2^64 and the squares 2^127.
TEST(StatisticTest, InterleavedChunksCountPositions) {
  EXPECT_EQ(document_count(interleaved_chunk_squares(64, 3), 22), Int128{64 * 64 + 2 * 2});
  EXPECT_EQ(document_count(interleaved_chunk_substitutions(64, 3), 22), Int128{85344 + 1});
  EXPECT_EQ(document_count(interleaved_chunk_squares(64, 3), 21), Int128{63 * 63});
  EXPECT_EQ(document_count(interleaved_chunk_squares(64, 1), 22), document_count(chunk_squares(64), 22));
  const Int128 positions = Int128{INT64_MAX} * 3;  // 2^64 < positions, (positions mod 64) = 61
  EXPECT_EQ(document_count(interleaved_chunk_squares(64, 3), INT64_MAX),
            std::optional<Int128>((positions - 61) * 64 + 61 * 61));
  EXPECT_EQ(document_count(interleaved_chunk_squares(std::int64_t{1} << 62, INT64_MAX), INT64_MAX), std::nullopt);
  EXPECT_EQ(statistic_name(interleaved_chunk_squares(64, 3)), "chunk_squares(c=64,n=3)");
  EXPECT_EQ(statistic_name(interleaved_chunk_substitutions(64, 1)), "chunk_substitutions(c=64)");
}

// KPool counts in megatron mode: interpolated between the two whole lengths
// around the mean m = S2 / T, scaled by T / m documents (docs/accounting.md, 7.5).
TEST(StatisticTest, MegatronInterpolatesKpoolCountsAtFractionalMeans) {
  struct Batch {
    std::vector<std::int64_t> lengths;
  };
  for (const Batch& batch : std::vector<Batch>{{{100, 37}}, {{5, 6, 7}}, {{64, 64}}, {{1}}, {{300, 2, 2, 9}}}) {
    double tokens = 0, squares = 0;
    for (std::int64_t l : batch.lengths) {
      tokens += static_cast<double>(l);
      squares += static_cast<double>(l) * static_cast<double>(l);
    }
    const double mean = squares / tokens;
    const auto n0 = static_cast<std::int64_t>(mean);
    const double w = mean - static_cast<double>(n0);
    for (const Statistic& statistic : every_kind()) {
      const bool interpolated = statistic.kind == StatisticKind::kPooledAttendedPairs ||
                                statistic.kind == StatisticKind::kCompletePoolPairs ||
                                statistic.kind == StatisticKind::kPooledKeys ||
                                statistic.kind == StatisticKind::kChunkedPairs;
      if (!interpolated) continue;
      SCOPED_TRACE(statistic_name(statistic) + " m=" + std::to_string(mean));
      const double expected =
          tokens / mean *
          ((1 - w) * to_double(brute_force(statistic, n0)) + w * to_double(brute_force(statistic, n0 + 1)));
      EXPECT_NEAR(*megatron_estimate(statistic, {tokens, squares, std::nullopt}), expected,
                  1e-12 * std::max(expected, 1.0));
    }
  }
}

TEST(StatisticTest, MegatronEstimates) {
  // Documents 3 and 5: T = 8, S2 = 34, m = 4.25.
  const MegatronAggregates batch{8, 34, std::nullopt};
  EXPECT_EQ(megatron_estimate(kTokens, batch), 8);
  EXPECT_EQ(megatron_estimate(kCausalPairs, batch), 17);  // exact would be 6 + 15 = 21 = 17 + T/2
  // s = e (1 - e/(2m)) / (m/2), e = min(k, floor(m)). m <= k: e = 4, and s = 1 - 0.25^2 / 4.25^2, not 1.
  EXPECT_DOUBLE_EQ(*megatron_estimate(topk_pairs(5), batch), 17 * (4 * (1 - 4 / 8.5) / 2.125));
  EXPECT_DOUBLE_EQ(*megatron_estimate(topk_pairs(5), batch), 17 * (1 - 0.0625 / (4.25 * 4.25)));
  // m > k: e = k, s = 2 (1 - 2/8.5) / 2.125.
  EXPECT_DOUBLE_EQ(*megatron_estimate(topk_pairs(2), batch), 17 * (2 * (1 - 2 / 8.5) / 2.125));
  // A whole mean within k: every pair (documents 4 and 4: T = 8, S2 = 32, m = 4).
  EXPECT_EQ(megatron_estimate(topk_pairs(5), {8, 32, std::nullopt}), 16);
  // DeepSeek-V4's estimates: a full window per token, S2/(2r) compressed
  // entries, and selected entries from the configured seq_length.
  EXPECT_EQ(megatron_estimate(window_pairs(128), batch), 8 * 128);
  EXPECT_EQ(megatron_estimate(compressed_entries(4), batch), 34.0 / 8);
  EXPECT_EQ(megatron_estimate(selected_compressed(2, 4), batch), std::nullopt);
  // s = 64: e = min(2, 16) = 2, T e (1 - 4 e / (2 s)) = 8 * 2 * (1 - 8/128).
  EXPECT_DOUBLE_EQ(*megatron_estimate(selected_compressed(2, 4), {8, 34, 64}), 8 * 2 * (1 - 8.0 / 128));
}

}  // namespace
}  // namespace trainflops
