#include "trainflops/seq_stats.h"

#include <gtest/gtest.h>

#include <random>

namespace trainflops {
namespace {

Model dsa_model() {
  Model model;
  model.hidden_size = 256;
  model.vocab_size = 1000;
  const MlaAttention mla{4, 64, 32, 32, 16, 32};
  const DsaIndexer indexer{8, 32, 64, DsaIndexer::GradMode::kOff, 4, true};
  model.layers = {Layer{Mixer{DsaAttention{mla, indexer, true}}, ChannelMixer{DenseMlp{512, true}}},
                  Layer{Mixer{DsaAttention{mla, indexer, false}}, ChannelMixer{DenseMlp{512, true}}}};
  return model;
}

// Four ranks each add different documents; the elementwise sum of their
// vectors gives the exact count of all the documents together.
TEST(SeqStatsTest, VectorsSummedOverRanksGiveTheGlobalCount) {
  std::mt19937_64 rng(5);
  std::vector<std::int64_t> all;
  std::vector<std::int64_t> summed;
  for (int rank = 0; rank < 4; ++rank) {
    SeqStats stats = SeqStats::create(dsa_model()).value();
    std::vector<std::int64_t> cu = {0};
    for (int d = 0; d < 50; ++d) {
      const std::int64_t length = std::uniform_int_distribution<std::int64_t>(0, 3000)(rng);
      all.push_back(length);
      cu.push_back(cu.back() + length);
    }
    ASSERT_TRUE(stats.add_cu_seqlens(std::span<const std::int64_t>(cu)).ok());
    const std::vector<std::int64_t> lanes = stats.vector();
    if (summed.empty()) summed.assign(lanes.size(), 0);
    for (std::size_t i = 0; i < lanes.size(); ++i) summed[i] += lanes[i];
  }
  SeqStats global = SeqStats::create(dsa_model()).value();
  ASSERT_TRUE(global.set_vector(summed).ok());
  const Result<Report> direct = count(dsa_model(), PackedDocuments{all}, Mode::kModel);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(to_decimal(*global.flops().value().exact), to_decimal(*direct.value().total.exact));
  EXPECT_EQ(to_decimal(global.tokens()), to_decimal(direct.value().tokens));
}

// The documented limit: each rank's sums below 2^94, up to 2^31 ranks. The
// elementwise sum of 2^31 copies of a vector (what all_reduce gives for that
// many identical ranks) fits int64 in every lane and reads back as 2^31 times
// the rank's sums, exactly.
TEST(SeqStatsTest, LanesSumExactlyOverTheMostRanksAtTheLimit) {
  SeqStats rank = SeqStats::create(dsa_model()).value();
  const std::int64_t near_limit = 199'032'864'766'429;  // L(L+1)/2, the most pairs, just below 2^94
  const std::vector<std::int64_t> document = {near_limit};
  ASSERT_TRUE(rank.add_lengths(document).ok());
  const std::vector<std::int64_t> lanes = rank.vector();
  ASSERT_EQ(lanes.size(), 2 + SeqStats::kLanesPerStatistic * rank.counter().statistics().size());
  const Int128 one_rank = *count(dsa_model(), PackedDocuments{document}, Mode::kModel).value().total.exact;
  for (const std::int64_t ranks : {std::int64_t{5}, SeqStats::kMaxRanks}) {
    SCOPED_TRACE(ranks);
    std::vector<std::int64_t> summed;
    for (std::int64_t lane : lanes) {
      std::int64_t total = 0;
      ASSERT_FALSE(__builtin_mul_overflow(lane, ranks, &total)) << lane;
      summed.push_back(total);
    }
    SeqStats global = SeqStats::create(dsa_model()).value();
    ASSERT_TRUE(global.set_vector(summed).ok()) << global.set_vector(summed).error().message();
    EXPECT_EQ(to_decimal(global.tokens()), to_decimal(Int128{near_limit} * ranks));
    // The statistics are exact; FLOPs of 2^31 such ranks pass 2^127: an overflow error, not a wrapped number.
    const Result<Flops> flops = global.flops();
    if (ranks == 5) {
      EXPECT_EQ(to_decimal(*flops.value().exact), to_decimal(one_rank * ranks));
    } else {
      EXPECT_EQ(flops.error().code(), ErrorCode::kOverflow);
    }
  }
  // A rank past the limit (this KPool model's largest sum, its complete-pool pairs, about L^2 / 8,
  // passes 2^94 at three times that length): an overflow error, nothing added.
  const std::vector<std::int64_t> over = {3 * near_limit};
  const Status too_much = SeqStats::create(dsa_model()).value().add_lengths(over);
  ASSERT_FALSE(too_much.ok());
  EXPECT_EQ(too_much.error().code(), ErrorCode::kOverflow);
}

TEST(SeqStatsTest, Errors) {
  SeqStats stats = SeqStats::create(dsa_model()).value();
  const std::vector<std::int32_t> decreasing = {0, 5, 3};
  EXPECT_EQ(stats.add_cu_seqlens(std::span<const std::int32_t>(decreasing)).error().message(),
            "cu_seqlens[2] = 3: must not be smaller than the previous offset 5");
  const std::vector<std::int64_t> negative = {4, -1};
  EXPECT_EQ(stats.add_lengths(negative).error().message(), "lengths[1] = -1: must be >= 0");
  EXPECT_EQ(to_decimal(stats.tokens()), "0");  // failed adds leave the state alone
  const std::vector<std::int64_t> short_vector = {1, 2};
  EXPECT_EQ(stats.set_vector(short_vector).error().message(),
            "the vector has 2 entries; this model's has " + std::to_string(stats.vector().size()));
}

// Vectors of another model, or vectors no ranks could sum to, are refused
// instead of giving a wrong count.
TEST(SeqStatsTest, RefusesVectorsOfAnotherModelOrNoSum) {
  Model other_model = dsa_model();
  other_model.vocab_size += 64;  // the same statistics, another count
  SeqStats stats = SeqStats::create(dsa_model()).value();
  SeqStats other = SeqStats::create(other_model).value();
  const std::vector<std::int64_t> document = {1000};
  ASSERT_TRUE(stats.add_lengths(document).ok());
  ASSERT_TRUE(other.add_lengths(document).ok());
  const std::vector<std::int64_t> mine = stats.vector(), theirs = other.vector();
  ASSERT_EQ(mine.size(), theirs.size());
  ASSERT_EQ(mine[0], 1);
  const std::int64_t fingerprint = mine[1];
  std::vector<std::int64_t> mixed = mine;
  for (std::size_t i = 0; i < mixed.size(); ++i) mixed[i] += theirs[i];
  struct Case {
    std::vector<std::int64_t> vector;
    std::string message;
  };
  std::vector<std::int64_t> negative_ranks = mine, forged = mine, too_large = mine;
  negative_ranks[0] = -1;
  forged[0] = 2;  // two ranks' count with one rank's fingerprint
  too_large[4] = std::int64_t{1} << 33;  // a lower lane of one rank is below 2^32
  const std::vector<Case> cases = {
      {mixed, "vector[1] = " + std::to_string(mixed[1]) + ": not 2 times this model's fingerprint " +
                  std::to_string(fingerprint) +
                  ": the vector sums SeqStats of another model (or is not a sum of SeqStats vectors)"},
      {negative_ranks, "vector[0] = -1: the number of ranks summed must be in [0, 2147483648]: not a sum of SeqStats "
                       "vectors"},
      {forged, "vector[1] = " + std::to_string(fingerprint) + ": not 2 times this model's fingerprint " +
                   std::to_string(fingerprint) +
                   ": the vector sums SeqStats of another model (or is not a sum of SeqStats vectors)"},
      {too_large, "vector[4] = 8589934592: more than a sum over 1 ranks can hold: not a sum of SeqStats vectors"},
  };
  for (const Case& c : cases) {
    SeqStats merged = SeqStats::create(dsa_model()).value();
    const Status status = merged.set_vector(c.vector);
    ASSERT_FALSE(status.ok()) << c.message;
    EXPECT_EQ(status.error().message(), c.message);
  }
  EXPECT_NE(fingerprint, theirs[1]);
}

}  // namespace
}  // namespace trainflops
