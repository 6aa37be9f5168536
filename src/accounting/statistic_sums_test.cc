#include "accounting/statistic_sums.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "accounting/length_moments.h"
#include "accounting/statistic_brute_force.h"
#include "trainflops/workload.h"

namespace trainflops {
namespace {

using testing_support::brute_force;

std::vector<Statistic> every_kind() {
  return {kTokens,
          kCausalPairs,
          topk_pairs(1),
          topk_pairs(7),
          topk_pairs(2048),
          topk_pairs(INT64_MAX),
          complete_pool_pairs(1),
          complete_pool_pairs(3),
          complete_pool_pairs(64),
          pooled_keys(3),
          pooled_keys(64),
          pooled_attended_pairs(12, 3, true),
          pooled_attended_pairs(12, 3, false),
          pooled_attended_pairs(2048, 64, true),
          pooled_attended_pairs(INT64_MAX / 7 * 7, 7, true),
          pooled_attended_pairs(4, 4, false),
          window_pairs(1),
          window_pairs(128),
          window_pairs(INT64_MAX),
          chunked_pairs(1),
          chunked_pairs(64),
          chunked_pairs(100),
          compressed_entries(4),
          compressed_entries(5),
          selected_compressed(1, 4),
          selected_compressed(512, 4),
          selected_compressed(7, 3),
          selected_compressed(INT32_MAX, INT32_MAX),
          block_topk_pairs(1, 1),
          block_topk_pairs(3, 7),
          block_topk_pairs(16, 128),
          compressed_positions(2),
          candidate_entries(1, 2048, 8),
          candidate_entries(2, 3, 5),
          selected_candidates(512, 1, 2048, 8),
          selected_candidates(14, 2, 3, 5),
          chunk_squares(64),
          chunk_squares(3),
          chunk_substitutions(64),
          chunk_substitutions(3),
          interleaved_chunk_squares(64, 3),
          interleaved_chunk_substitutions(64, 3)};
}

// Sets the loops treat differently: pools of any size (the portable loops),
// powers of two only (the vector loops, in several passes), the two
// GLM-5-class sets (one pass), and a pool too large for the AVX2 loops.
std::vector<std::vector<Statistic>> statistic_sets() {
  return {every_kind(),
          {kTokens, kCausalPairs, topk_pairs(1), topk_pairs(7), topk_pairs(2048), topk_pairs(INT64_MAX),
           complete_pool_pairs(1), complete_pool_pairs(64), pooled_keys(8), pooled_attended_pairs(12, 4, true),
           pooled_attended_pairs(2048, 64, false),
           pooled_attended_pairs(std::int64_t{1} << 62, std::int64_t{1} << 40, true)},
          {kTokens, kCausalPairs, topk_pairs(2048)},
          {kTokens, kCausalPairs, window_pairs(128), chunked_pairs(64), compressed_entries(4),
           selected_compressed(512, 4), selected_compressed(1, 128)},
          {kTokens, complete_pool_pairs(4), pooled_keys(4), pooled_attended_pairs(2048, 4, true)},
          {kTokens, kCausalPairs, topk_pairs(2048), complete_pool_pairs(std::int64_t{1} << 20)},
          {kTokens, chunked_pairs(64), chunk_squares(64), chunk_squares(3), chunk_squares(std::int64_t{1} << 40)}};
}

// The reference: document_count() per document, summed in 128 bits.
std::vector<Int128> closed_forms(const std::vector<Statistic>& statistics, const std::vector<std::int64_t>& lengths) {
  std::vector<Int128> sums(statistics.size(), 0);
  for (std::int64_t length : lengths) {
    for (std::size_t i = 0; i < statistics.size(); ++i) sums[i] += *document_count(statistics[i], length);
  }
  return sums;
}

std::vector<std::string> decimal(const std::vector<Int128>& values) {
  std::vector<std::string> out;
  for (Int128 v : values) out.push_back(to_decimal(v));
  return out;
}

std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets = {0};
  for (std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

// Runs a test body with each of the loops this processor has.
class EveryLoops : public ::testing::TestWithParam<Loops> {
 protected:
  void SetUp() override {
    if (static_cast<int>(GetParam()) > static_cast<int>(available_loops())) GTEST_SKIP() << "not on this processor";
    previous_ = use_loops(GetParam());
  }
  void TearDown() override { use_loops(previous_); }

 private:
  Loops previous_ = Loops::kPortable;
};
INSTANTIATE_TEST_SUITE_P(Loops, EveryLoops, ::testing::Values(Loops::kAvx2, Loops::kPortable),
                         [](const auto& info) { return info.param == Loops::kAvx2 ? "Avx2" : "Portable"; });

TEST(StatisticSumsTest, ClosedFormsMatchPerQueryLoops) {
  for (const Statistic& statistic : every_kind()) {
    for (std::int64_t length = 0; length <= 40; ++length) {
      SCOPED_TRACE(statistic_name(statistic) + " L=" + std::to_string(length));
      EXPECT_EQ(to_decimal(*document_count(statistic, length)), to_decimal(brute_force(statistic, length)));
    }
  }
}

// Every length 0..40 and a few around pool sizes and the top-k of 2048, in
// one block, added as lengths and as both kinds of offsets: the per-query
// loops again.
TEST_P(EveryLoops, SmallDocumentsMatchPerQueryLoops) {
  std::vector<std::int64_t> lengths = {63, 64, 65, 129, 2049, 2100};
  for (std::int64_t length = 0; length <= 40; ++length) lengths.push_back(length);
  const std::vector<std::int64_t> offsets = offsets_of(lengths);
  const std::vector<std::int32_t> narrow(offsets.begin(), offsets.end());
  for (const std::vector<Statistic>& statistics : statistic_sets()) {
    SCOPED_TRACE(std::to_string(statistics.size()) + " statistics");
    std::vector<Int128> expected(statistics.size(), 0);
    for (std::int64_t length : lengths) {
      for (std::size_t i = 0; i < statistics.size(); ++i) expected[i] += brute_force(statistics[i], length);
    }
    const StatisticSums summer(statistics, 126);
    std::vector<Int128> from_lengths(statistics.size(), 0), from_offsets = from_lengths, from_narrow = from_lengths;
    ASSERT_TRUE(summer.add_lengths(lengths, from_lengths).ok());
    ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int64_t>(offsets), from_offsets).ok());
    ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int32_t>(narrow), from_narrow).ok());
    EXPECT_EQ(decimal(from_lengths), decimal(expected));
    EXPECT_EQ(decimal(from_offsets), decimal(expected));
    EXPECT_EQ(decimal(from_narrow), decimal(expected));
  }
}

// Random batches of every shape the blocks care about: sizes around the block
// size and the vector width, lengths around the thresholds and pools, and
// lengths that overflow a block's 2^31 tokens (counted one by one).
void random_batches_match_closed_forms(const std::vector<Statistic>& statistics) {
  std::mt19937_64 rng(7);
  const StatisticSums summer(statistics, 126);
  SCOPED_TRACE(std::to_string(statistics.size()) + " statistics, the last " + statistic_name(statistics.back()));
  constexpr std::size_t kBlock = kBlockDocuments;
  const std::vector<std::size_t> sizes = {
      0, 1, 3, 4, 5, 8, 17, 31, 32, 33, 65, kBlock - 1, kBlock, kBlock + 1, 2 * kBlock + 3};
  // Lengths of 2^26 and more still fit a block when they are few; from 2^31 on, no block fits.
  const std::vector<std::int64_t> maxima = {
      10, 2100, 1 << 20, (1 << 26) + 9, 1 << 27, std::int64_t{1} << 31, std::int64_t{1} << 40};
  for (std::size_t size : sizes) {
    for (std::int64_t maximum : maxima) {
      SCOPED_TRACE("size " + std::to_string(size) + ", lengths up to " + std::to_string(maximum));
      std::vector<std::int64_t> lengths(size);
      for (auto& length : lengths) length = std::uniform_int_distribution<std::int64_t>(0, maximum)(rng);
      const std::vector<Int128> expected = closed_forms(statistics, lengths);
      std::vector<Int128> from_lengths(statistics.size(), 0), from_offsets = from_lengths;
      ASSERT_TRUE(summer.add_lengths(lengths, from_lengths).ok());
      EXPECT_EQ(decimal(from_lengths), decimal(expected));
      if (size == 0) continue;
      const std::vector<std::int64_t> offsets = offsets_of(lengths);
      ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int64_t>(offsets), from_offsets).ok());
      EXPECT_EQ(decimal(from_offsets), decimal(expected));
      if (offsets.back() <= INT32_MAX) {
        const std::vector<std::int32_t> narrow(offsets.begin(), offsets.end());
        std::vector<Int128> from_narrow(statistics.size(), 0);
        ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int32_t>(narrow), from_narrow).ok());
        EXPECT_EQ(decimal(from_narrow), decimal(expected));
      }
    }
  }
}

TEST_P(EveryLoops, RandomBatchesMatchClosedForms) {
  for (const std::vector<Statistic>& statistics : statistic_sets()) {
    random_batches_match_closed_forms(statistics);
  }
}

// A block holds up to 2^31 - 1 tokens in 64-bit moments; one more token sends
// it down the 128-bit path. Both are exact, up to lengths of INT64_MAX.
TEST_P(EveryLoops, LengthsAtTheLimits) {
  const std::int64_t block_max = kMaxBlockTokens;
  const std::vector<std::vector<std::int64_t>> batches = {
      {block_max},
      {block_max + 1},
      {block_max - 5, 5},
      {block_max - 5, 6},
      {1, 2, 3, block_max - 6, 0},
      {INT64_MAX},
      {INT64_MAX, 0, 1, INT64_MAX},
      {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX},
  };
  for (const std::vector<Statistic>& statistics : statistic_sets()) {
    const StatisticSums summer(statistics, 126);
    for (const auto& lengths : batches) {
      SCOPED_TRACE(std::to_string(statistics.size()) + " statistics, lengths " + testing::PrintToString(lengths));
      std::vector<Int128> sums(statistics.size(), 0);
      ASSERT_TRUE(summer.add_lengths(lengths, sums).ok());
      EXPECT_EQ(decimal(sums), decimal(closed_forms(statistics, lengths)));
      Int128 total = 0;
      for (std::int64_t length : lengths) total += length;
      if (total > INT64_MAX) continue;
      std::vector<Int128> from_offsets(statistics.size(), 0);
      const std::vector<std::int64_t> offsets = offsets_of(lengths);
      ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int64_t>(offsets), from_offsets).ok());
      EXPECT_EQ(decimal(from_offsets), decimal(sums));
    }
    // The widest int32 offsets: one document of INT32_MAX tokens.
    const std::vector<std::int32_t> narrow = {0, INT32_MAX};
    std::vector<Int128> sums(statistics.size(), 0);
    ASSERT_TRUE(summer.add_cu_seqlens(std::span<const std::int32_t>(narrow), sums).ok());
    EXPECT_EQ(decimal(sums), decimal(closed_forms(statistics, {INT32_MAX})));
  }
  // The causal pairs of one INT64_MAX document, written out.
  EXPECT_EQ(to_decimal(closed_forms({kCausalPairs}, {INT64_MAX})[0]),
            "42535295865117307928310139910543638528");  // (2^63 - 1) 2^63 / 2
}

// seq_stats_fuzzer: a block of long documents with a pool larger than the
// AVX2 loops take (2^11) must reach the portable loops.
TEST_P(EveryLoops, DeclinedBlocksWithPoolsTooLargeForAvx2) {
  constexpr std::int64_t pool = std::int64_t{1} << 20, topk = 6 * pool;
  const std::vector<Statistic> statistics = {kTokens,           kCausalPairs,
                                             topk_pairs(topk),  complete_pool_pairs(pool),
                                             pooled_keys(pool), pooled_attended_pairs(topk, pool, false)};
  const std::vector<std::int64_t> lengths = {2285, 3206,      963840,    69120,    189184,  2964,
                                             4022, 318768404, 246743040, 17694720, 48431104};
  const StatisticSums summer(statistics, 126);
  std::vector<Int128> sums(statistics.size(), 0);
  ASSERT_TRUE(summer.add_lengths(lengths, sums).ok());
  EXPECT_EQ(decimal(sums), decimal(closed_forms(statistics, lengths)));
}

// The moments summed elsewhere (as on a GPU), here document by document from
// their definitions: the statistics equal the closed forms.
std::vector<Int128> moments_of(const StatisticSums& summer, const std::vector<std::int64_t>& lengths) {
  std::vector<Int128> moments;
  const auto add = [&](const auto& value_of) {
    Int128 sum = 0, squares = 0;
    for (std::int64_t length : lengths) {
      const Int128 value = value_of(Int128{length});
      sum += value;
      squares += value * value;
    }
    moments.push_back(sum);
    moments.push_back(squares);
  };
  add([](Int128 length) { return length; });
  for (std::uint64_t c : summer.thresholds()) add([&](Int128 length) { return std::max<Int128>(length - c, 0); });
  for (const PoolSpec& pool : summer.pools()) {
    add([&](Int128 length) { return length > pool.threshold ? length % pool.pool : 0; });
  }
  return moments;
}

TEST(StatisticSumsTest, MomentsSummedElsewhereMatchClosedForms) {
  std::mt19937_64 rng(11);
  for (const std::vector<Statistic>& statistics : statistic_sets()) {
    const StatisticSums summer(statistics, 126);
    // No moment makes the candidate entries: they need each document's length.
    const auto candidates = std::find_if(statistics.begin(), statistics.end(), [](const Statistic& s) {
      return s.kind == StatisticKind::kCandidateEntries;
    });
    if (candidates != statistics.end()) {
      std::vector<Int128> sums(statistics.size(), 0);
      const Status refused = summer.add_moments(moments_of(summer, {3, 5}), sums);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.error().message(), "the " + statistic_name(*candidates) +
                                               " are not made of the moments: they need each document's length");
      continue;
    }
    // Lengths past a block's 2^31 tokens too, and past thresholds and pools of 2^31 and more.
    const std::int64_t maxima[] = {10, 2100, std::int64_t{1} << 20, std::int64_t{INT32_MAX} - 1, std::int64_t{1} << 45};
    for (const std::int64_t maximum : maxima) {
      SCOPED_TRACE(std::to_string(statistics.size()) + " statistics, lengths up to " + std::to_string(maximum));
      std::vector<std::int64_t> lengths(300);
      for (auto& length : lengths) length = std::uniform_int_distribution<std::int64_t>(0, maximum)(rng);
      lengths.push_back(INT32_MAX);
      std::vector<Int128> sums(statistics.size(), 0);
      ASSERT_TRUE(summer.add_moments(moments_of(summer, lengths), sums).ok());
      EXPECT_EQ(decimal(sums), decimal(closed_forms(statistics, lengths)));
    }
  }
}

TEST(StatisticSumsTest, MomentsNoDocumentsHaveAreErrors) {
  const StatisticSums summer({kTokens, kCausalPairs, topk_pairs(4), complete_pool_pairs(8)}, 94);
  const std::vector<Int128> good = moments_of(summer, {3, 9, 17});
  ASSERT_EQ(good.size(), 6u);  // L, the excess over 4, L mod 8
  const auto with = [&](std::size_t at, Int128 value) {
    std::vector<Int128> moments = good;
    moments[at] = value;
    return moments;
  };
  struct Case {
    std::vector<Int128> moments;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{1, 1}, "the moments have 2 entries; this model's have 6"},
      {with(3, -1), "moments[3] is negative: not a sum over documents"},
      {with(1, Int128{1} << 100),
       "moments[1] = 1267650600228229401496703205376: the moments of the documents reach 2^100"},
      {with(2, good[0] + 1), "the moments are not those of any documents"},   // m summing past L
      {with(4, good[0] + 1), "the moments are not those of any documents"},   // r summing past L
      {with(0, good[1] + 1), "the moments are not those of any documents"},   // L summing past L^2
      {with(0, good[0] + 64), "the moments are not those of any documents"},  // 8 (L - r) past L^2
      {with(1, (Int128{1} << 96)), "the causal_pairs of the documents exceed 2^94"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    std::vector<Int128> sums = {5, 7, 7, 2};
    EXPECT_EQ(summer.add_moments(c.moments, sums).error().message(), c.message);
    EXPECT_EQ(decimal(sums), decimal({5, 7, 7, 2}));  // unchanged
  }
}

TEST_P(EveryLoops, SumsThatReachTheLimitAreErrors) {
  const StatisticSums summer({kTokens, kCausalPairs}, 94);
  std::vector<Int128> sums = {0, 0};
  // 2^31 - 1 per document: (2^62 - 2^31) pairs each, so 2^32 documents would
  // reach 2^94; start near the limit instead.
  sums[1] = (Int128{1} << 94) - (Int128{1} << 61);
  const std::vector<std::int64_t> fits = {1 << 30};                                 // 2^59 + 2^29 pairs
  const std::vector<std::int64_t> too_many = {1 << 30, 1 << 30, 1 << 30, 1 << 30};  // 2^61 + 2^31 pairs
  ASSERT_TRUE(summer.add_lengths(fits, sums).ok());
  const std::vector<Int128> before = sums;
  EXPECT_EQ(summer.add_lengths(too_many, sums).error().message(), "the causal_pairs of the documents exceed 2^94");
  EXPECT_EQ(decimal(sums), decimal(before));  // unchanged
  // One document of INT64_MAX tokens has about 2^125 pairs.
  std::vector<Int128> zero = {0, 0};
  EXPECT_EQ(summer.add_lengths(std::vector<std::int64_t>{INT64_MAX}, zero).error().message(),
            "the causal_pairs of the documents exceed 2^94");
  EXPECT_EQ(summer.add_cu_seqlens(std::span<const std::int64_t>(std::vector<std::int64_t>{0, INT64_MAX}), zero)
                .error()
                .message(),
            "the causal_pairs of the documents exceed 2^94");
  EXPECT_EQ(decimal(zero), decimal({0, 0}));
}

TEST_P(EveryLoops, Errors) {
  const StatisticSums summer({kTokens, kCausalPairs}, 94);
  std::vector<Int128> sums = {5, 7};
  struct Case {
    std::vector<std::int64_t> cu_seqlens;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 0"},
      {{0}, "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 1"},
      {{3, 4}, "cu_seqlens[0] = 3: must be 0"},
      {{0, 5, 3}, "cu_seqlens[2] = 3: must not be smaller than the previous offset 5"},
      {{0, -1, 5}, "cu_seqlens[1] = -1: must not be smaller than the previous offset 0"},
      {{0, INT64_MAX, INT64_MIN, INT64_MAX},
       "cu_seqlens[2] = -9223372036854775808: must not be smaller than the "
       "previous offset 9223372036854775807"},
      // An overflow (2^125 pairs) before a bad offset: the offset is reported.
      {{0, INT64_MAX, 0}, "cu_seqlens[2] = 0: must not be smaller than the previous offset 9223372036854775807"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.cu_seqlens));
    EXPECT_EQ(summer.add_cu_seqlens(std::span<const std::int64_t>(c.cu_seqlens), sums).error().message(), c.message);
    // The message is the one lengths_from_cu_seqlens gives, and so it is for int32.
    EXPECT_EQ(lengths_from_cu_seqlens(c.cu_seqlens).error().message(), c.message);
  }
  // A decreasing pair deep in a later block.
  std::vector<std::int32_t> narrow(5000);
  for (std::size_t i = 0; i < narrow.size(); ++i) narrow[i] = static_cast<std::int32_t>(3 * i);
  narrow[4321] = 2;
  EXPECT_EQ(summer.add_cu_seqlens(std::span<const std::int32_t>(narrow), sums).error().message(),
            "cu_seqlens[4321] = 2: must not be smaller than the previous offset 12960");
  narrow[4321] = -7;
  EXPECT_EQ(summer.add_cu_seqlens(std::span<const std::int32_t>(narrow), sums).error().message(),
            "cu_seqlens[4321] = -7: must not be smaller than the previous offset 12960");
  std::vector<std::int64_t> lengths(3000, 2);
  lengths[2500] = -4;
  EXPECT_EQ(summer.add_lengths(lengths, sums).error().message(), "lengths[2500] = -4: must be >= 0");
  lengths[2500] = INT64_MIN;
  EXPECT_EQ(summer.add_lengths(lengths, sums).error().message(), "lengths[2500] = -9223372036854775808: must be >= 0");
  EXPECT_EQ(decimal(sums), decimal({5, 7}));  // failed adds change nothing
}

}  // namespace
}  // namespace trainflops
