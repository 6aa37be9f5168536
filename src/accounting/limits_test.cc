// Sizes near the 64-bit limits: every count is either exact in 128 bits or a
// clear error, never a wrapped number.
#include <gtest/gtest.h>

#include <cmath>
#include <span>

#include "trainflops/batch.h"
#include "trainflops/count.h"
#include "trainflops/seq_stats.h"
#include "trainflops/statistic.h"

namespace trainflops {
namespace {

constexpr const char* kTooLarge = " does not fit in 128 bits; the workload is too large to count exactly";

Model dense_model() {
  Model model;
  model.hidden_size = 64;
  model.vocab_size = 128;
  GqaAttention attention;
  attention.num_heads = 4;
  attention.num_query_groups = 2;
  attention.head_dim = 16;
  model.layers = {Layer{Mixer{attention}, ChannelMixer{DenseMlp{128, true}}}};
  return model;
}

// MLP only: 18 FLOPs per token (MLP 2 FMAs + logits 1 FMA, x2 x3), nothing per pair.
Model tokens_only_model() {
  Model model;
  model.hidden_size = 1;
  model.vocab_size = 1;
  model.layers = {Layer{std::nullopt, ChannelMixer{DenseMlp{1, false}}}};
  return model;
}

// DSA with KPool (pools of 4, top-2048, grad mode off) and without.
Model dsa_kpool_model() {
  Model model;
  model.hidden_size = 64;
  model.vocab_size = 128;
  const MlaAttention mla{2, 16, 16, 16, 8, 16};
  model.layers = {
      Layer{Mixer{DsaAttention{mla, DsaIndexer{2, 8, 2048, DsaIndexer::GradMode::kOff, 4, true}, true}}, std::nullopt},
      Layer{Mixer{DsaAttention{mla, DsaIndexer{2, 8, 2048, DsaIndexer::GradMode::kSparse, 1, true}, true}},
            std::nullopt}};
  return model;
}

// The per-document counts of one document of INT64_MAX (and of 2^62 + 3)
// tokens, computed independently with Python's integers: sum (i mod p) in
// closed form gives sum floor(i/p) = (sum i - sum (i mod p)) / p; the checks
// of that program against per-query loops are in its notes.
TEST(LimitsTest, StatisticsOfTheLongestDocuments) {
  struct Case {
    Statistic statistic;
    std::int64_t length;
    const char* count;
  };
  const std::int64_t max = INT64_MAX, big = (std::int64_t{1} << 62) + 3;
  const std::vector<Case> cases = {
      {kCausalPairs, max, "42535295865117307928310139910543638528"},
      {topk_pairs(2048), max, "18889465931478578756608"},
      {complete_pool_pairs(4), max, "10633823966279326978618770463815368704"},
      {complete_pool_pairs(3), max, "14178431955039102639695589291229620907"},
      {pooled_keys(4), max, "9223372036854775804"},
      {pooled_attended_pairs(2048, 4, true), max, "18903300989533860917248"},
      {pooled_attended_pairs(2048, 4, false), max, "18889465931478578753536"},
      {pooled_attended_pairs(12, 3, true), max, "119903836479112085413"},
      {kCausalPairs, big, "10633823966279326999371357546738614278"},
      {topk_pairs(2048), big, "9444732965739288337408"},
      {complete_pool_pairs(4), big, "2658455991569831748113457129774383104"},
      {complete_pool_pairs(3), big, "3544607988759775664919890509437075457"},
      {pooled_keys(4), big, "4611686018427387904"},
      {pooled_attended_pairs(2048, 4, true), big, "9451650494766929416198"},
      {pooled_attended_pairs(2048, 4, false), big, "9444732965739288334336"},
      {pooled_attended_pairs(12, 3, true), big, "59951918239556042713"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(statistic_name(c.statistic) + " L=" + std::to_string(c.length));
    const auto count = document_count(c.statistic, c.length);
    ASSERT_TRUE(count.has_value());
    EXPECT_EQ(to_decimal(*count), c.count);
  }
}

// Model mode: exact where the count fits, the same error everywhere it does not.
TEST(LimitsTest, ModelModeIsExactOrAClearError) {
  const Int128 max = INT64_MAX;
  struct Exact {
    Workload workload;
    Int128 tokens;
  };
  for (const Exact& c : std::vector<Exact>{{Bshd{INT64_MAX, 1}, max},
                                           {Bshd{1, INT64_MAX}, max},
                                           {Bshd{2, INT64_MAX}, 2 * max},
                                           {PackedDocuments{{INT64_MAX, INT64_MAX, 0, 1}}, 2 * max + 1}}) {
    SCOPED_TRACE(describe(c.workload));
    const Result<Report> report = count(tokens_only_model(), c.workload, Mode::kModel);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(18 * c.tokens));
    EXPECT_EQ(to_decimal(report.value().tokens), to_decimal(c.tokens));
  }
  struct Failure {
    Model model;
    Workload workload;
    std::string error;  // of total() and report() alike
  };
  const std::vector<Failure> failures = {
      // 18 (2^63 - 1)^2 FLOPs: about 2^130.
      {tokens_only_model(), Bshd{INT64_MAX, INT64_MAX}, std::string("the FLOPs of the iteration") + kTooLarge},
      {dense_model(), PackedDocuments{{INT64_MAX}}, std::string("the FLOPs of the iteration") + kTooLarge},
      {dsa_kpool_model(), PackedDocuments{{INT64_MAX}}, std::string("the FLOPs of the iteration") + kTooLarge},
      {dsa_kpool_model(), Bshd{INT64_MAX, INT64_MAX}, std::string("the causal_pairs of the batch") + kTooLarge},
  };
  for (const Failure& c : failures) {
    SCOPED_TRACE(summarize(c.model) + ", " + describe(c.workload));
    const FlopsCounter counter = FlopsCounter::create(c.model, Mode::kModel).value();
    const Result<Flops> total = counter.total(c.workload);
    const Result<Report> report = counter.report(c.workload);
    ASSERT_FALSE(total.ok()) << to_decimal(*total.value().exact);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(total.error().message(), c.error);
    EXPECT_EQ(report.error().message(), c.error);
  }
}

// Long documents through every DSA and KPool statistic: the counter, SeqStats
// and the closed forms of each statistic agree exactly.
TEST(LimitsTest, DsaAndKpoolCountsOfLongDocumentsAgree) {
  const std::vector<std::int64_t> lengths = {
      (std::int64_t{1} << 40) + 3, 5, 2047, 2048, 2049, (std::int64_t{1} << 31) - 1, std::int64_t{1} << 31};
  const FlopsCounter counter = FlopsCounter::create(dsa_kpool_model(), Mode::kModel).value();
  std::vector<Int128> sums(counter.statistics().size(), 0);
  for (std::int64_t length : lengths) {
    for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += *document_count(counter.statistics()[i], length);
  }
  const Result<Flops> from_statistics = counter.total_from_statistics(sums);
  const Result<Flops> direct = counter.total(PackedDocuments{lengths});
  SeqStats stats = SeqStats::create(dsa_kpool_model()).value();
  ASSERT_TRUE(stats.add_lengths(lengths).ok());
  ASSERT_TRUE(from_statistics.ok() && direct.ok());
  EXPECT_EQ(to_decimal(*direct.value().exact), to_decimal(*from_statistics.value().exact));
  EXPECT_EQ(to_decimal(*stats.flops().value().exact), to_decimal(*direct.value().exact));
}

// Megatron mode counts in doubles from T and S2, so huge aggregates give huge
// but finite figures, linear in T and S2; what cannot even be summed in 128
// bits is an error.
TEST(LimitsTest, MegatronModeWithHugeAggregates) {
  const FlopsCounter counter = FlopsCounter::create(dense_model(), Mode::kMegatron).value();
  // flops = a T + b S2: two small batches give a and b.
  const double f1 = counter.total(SequenceAggregates{2, 2}).value().value;
  const double f2 = counter.total(SequenceAggregates{2, 4}).value().value;
  const double b = (f2 - f1) / 2, a = (f1 - 2 * b) / 2;
  struct Case {
    Int128 tokens, squares;
  };
  for (const Case& c : std::vector<Case>{{Int128{1} << 100, Int128{1} << 120},
                                         {Int128{1} << 126, (Int128{1} << 126) + ((Int128{1} << 126) - 1)},
                                         {INT64_MAX, Int128{INT64_MAX} * INT64_MAX}}) {
    SCOPED_TRACE(to_decimal(c.tokens) + ", " + to_decimal(c.squares));
    const Result<Flops> flops = counter.total(SequenceAggregates{c.tokens, c.squares});
    ASSERT_TRUE(flops.ok()) << flops.error().message();
    const double expected = a * to_double(c.tokens) + b * to_double(c.squares);
    EXPECT_TRUE(std::isfinite(flops.value().value));
    EXPECT_NEAR(flops.value().value / expected, 1.0, 1e-12);
  }
  // Two documents of INT64_MAX: S2 = 2 (2^63 - 1)^2 < 2^127 still sums.
  const Result<Flops> two = counter.total(PackedDocuments{{INT64_MAX, INT64_MAX}});
  ASSERT_TRUE(two.ok()) << two.error().message();
  const double t = 2 * to_double(INT64_MAX);
  EXPECT_NEAR(two.value().value / (a * t + b * t * to_double(INT64_MAX)), 1.0, 1e-12);
  // INT64_MAX sequences of INT64_MAX tokens: S2 = 2^189 does not.
  EXPECT_EQ(counter.total(Bshd{INT64_MAX, INT64_MAX}).error().message(),
            std::string("the sum of squared lengths") + kTooLarge);
}

// SeqStats keeps each sum below 2^94, so that 2^31 ranks can add their lanes.
TEST(LimitsTest, SeqStatsNearItsLimit) {
  SeqStats stats = SeqStats::create(dense_model()).value();
  const std::int64_t l = std::int64_t{1} << 47;  // L(L+1)/2 = 2^93 + 2^46 causal pairs
  ASSERT_TRUE(stats.add_lengths(std::vector<std::int64_t>{l}).ok());
  const std::vector<std::int64_t> before = stats.vector();
  EXPECT_EQ(stats.add_lengths(std::vector<std::int64_t>{l}).error().message(),
            "the causal_pairs of the documents exceed 2^94");
  EXPECT_EQ(
      stats.add_cu_seqlens(std::span<const std::int64_t>(std::vector<std::int64_t>{0, INT64_MAX})).error().message(),
      "the causal_pairs of the documents exceed 2^94");
  EXPECT_EQ(stats.vector(), before);  // failed adds change nothing
  // Its lanes: the low one below 2^32, the high one below 2^62, so that the
  // lanes of ranks whose documents together stay below 2^94 sum exactly.
  for (std::size_t i = 0; i < before.size(); i += 2) {
    EXPECT_GE(before[i], 0);
    EXPECT_LT(before[i], std::int64_t{1} << 62);
    EXPECT_GE(before[i + 1], 0);
    EXPECT_LT(before[i + 1], std::int64_t{1} << 32);
  }
  SeqStats other_rank = SeqStats::create(dense_model()).value();
  ASSERT_TRUE(other_rank.add_lengths(std::vector<std::int64_t>{l / 2, 3}).ok());
  std::vector<std::int64_t> summed = before;
  for (std::size_t i = 0; i < summed.size(); ++i) summed[i] += other_rank.vector()[i];
  SeqStats merged = SeqStats::create(dense_model()).value();
  ASSERT_TRUE(merged.set_vector(summed).ok());
  EXPECT_EQ(to_decimal(*merged.flops().value().exact),
            to_decimal(*count(dense_model(), PackedDocuments{{l, l / 2, 3}}, Mode::kModel).value().total.exact));
  EXPECT_EQ(to_decimal(*stats.flops().value().exact),
            to_decimal(*count(dense_model(), PackedDocuments{{l}}, Mode::kModel).value().total.exact));
}

// Batch records carry sizes as JSON numbers: past int64 is an error, and
// aggregates past it may be decimal strings.
TEST(LimitsTest, BatchRecordsNearTheLimit) {
  const std::string args =
      R"({"num_layers": 1, "hidden_size": 64, "num_attention_heads": 4, "kv_channels": 16, "ffn_hidden_size": 128,
          "padded_vocab_size": 128, "seq_length": 9223372036854775807})";
  struct Case {
    std::string workload, mode, line;
  };
  const std::vector<Case> cases = {
      {R"("batch_size": 9223372036854775808)", "model",
       R"({"error":"line 7: batch_size = 9223372036854775808: must be a 64-bit integer"})"},
      {R"("docs": [9223372036854775808])", "model",
       R"({"error":"line 7: docs[0] = 9223372036854775808: must be a 64-bit integer"})"},
      {R"("batch_size": 9223372036854775807)", "model",
       std::string(R"({"error":"line 7: the causal_pairs of the batch)") + kTooLarge + "\"}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.workload);
    const BatchAnswer answer =
        answer_batch_line(R"({"args": )" + args + R"(, "mode": ")" + c.mode + R"(", )" + c.workload + "}", 7);
    EXPECT_EQ(answer.json, c.line);
    EXPECT_FALSE(answer.ok);
  }
  const std::string huge =
      answer_batch_line(
          R"({"args": )" + args +
              R"(, "mode": "megatron", "total_real_tokens": "1267650600228229401496703205376", "seqlen_squared_sum": "1329227995784915872903807060280344576"})",
          1)
          .json;
  ASSERT_EQ(huge.rfind(R"({"flops":)", 0), 0u) << huge;
  EXPECT_TRUE(std::isfinite(std::stod(huge.substr(9))));
}

}  // namespace
}  // namespace trainflops
