#include "trainflops/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

// One dense layer: the plan's arithmetic does not depend on what the model is.
FlopsCounter small_counter() {
  Model model;
  model.hidden_size = 64;
  model.vocab_size = 100;
  model.layers = {Layer{Mixer{GqaAttention{.num_heads = 4, .num_query_groups = 4, .head_dim = 16}},
                        ChannelMixer{DenseMlp{128, false}}}};
  return FlopsCounter::create(model, Mode::kModel).value();
}

TEST(PlanTest, StagesAddUpAndRoundUpToWholeIterations) {
  const FlopsCounter counter = small_counter();
  const Cluster cluster{2, 100, 0.5, 1.5};  // 1e14 FLOP/s
  const Result<RunPlan> plan = plan_run(counter, {{1000, 10}, {2000, 20}}, PlanBatch{std::nullopt, 40}, cluster);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  const std::vector<StagePlan>& s = plan.value().stages;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].sequences, 4);
  EXPECT_EQ(to_decimal(s[0].iterations), "25");  // 1000 / 40
  EXPECT_EQ(s[1].sequences, 2);
  EXPECT_EQ(to_decimal(s[1].iterations), "50");
  EXPECT_EQ(to_decimal(plan.value().tokens), "3000");
  const double per_iteration = counter.total(Bshd{4, 10}).value().value;
  EXPECT_DOUBLE_EQ(s[0].flops, 25 * per_iteration);
  EXPECT_DOUBLE_EQ(s[0].seconds, 25 * per_iteration / 1e14);
  EXPECT_DOUBLE_EQ(*s[0].cost, s[0].seconds / 3600 * 2 * 1.5);
  EXPECT_DOUBLE_EQ(plan.value().flops, s[0].flops + s[1].flops);
  EXPECT_DOUBLE_EQ(*plan.value().cost, *s[0].cost + *s[1].cost);

  const Result<RunPlan> rounded = plan_run(counter, {{1001, 10}}, PlanBatch{4, std::nullopt}, cluster);
  EXPECT_EQ(to_decimal(rounded.value().stages[0].iterations), "26");
  EXPECT_EQ(to_decimal(rounded.value().tokens), "1040");
}

TEST(PlanTest, Errors) {
  const FlopsCounter counter = small_counter();
  const PlanBatch sequences{4, std::nullopt};
  struct Case {
    Result<RunPlan> plan;
    std::string message;
  };
  const Case cases[] = {
      {plan_run(counter, {}, sequences, {1, 1, 1, {}}), "stages: give at least one (tokens and seq_length)"},
      {plan_run(counter, {{0, 10}}, sequences, {1, 1, 1, {}}), "stages[0].tokens = 0: must be >= 1"},
      {plan_run(counter, {{10, 10}}, sequences, {0, 1, 1, {}}), "num_gpus = 0: must be >= 1"},
      {plan_run(counter, {{10, 10}}, sequences, {1, 1, 1.5, {}}), "mfu = 1.5: must be in (0, 1]"},
      {plan_run(counter, {{10, 10}}, sequences, {1, 1, 1, -2.0}),
       "price_per_gpu_hour = -2: must be a non-negative number"},
      {plan_run(counter, {{10, 10}}, PlanBatch{4, 40}, {1, 1, 1, {}}),
       "give the global batch one way: batch_sequences (sequences per iteration) or batch_tokens (tokens per "
       "iteration)"},
      {plan_for_time(counter, 10, sequences, {1, 1, 1, {}}, 0), "seconds = 0: must be a positive, finite time"},
      // 171 stages of 10^36 - 1 tokens: more than 2^127 in all.
      {plan_run(counter, std::vector<PlanStage>(171, PlanStage{*parse_decimal(std::string(36, '9')), 1}),
                PlanBatch{1, std::nullopt}, {1, 1, 1, {}}),
       "the tokens of the run do not fit in 128 bits"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.plan.ok()) << c.message;
    EXPECT_EQ(c.plan.error().message(), c.message);
  }
}

TEST(PlanTest, ParsesBudgetsAndUtilizations) {
  const struct {
    const char* text;
    const char* tokens;
  } budgets[] = {{"15T", "15000000000000"}, {"14.8T", "14800000000000"}, {"500b", "500000000000"},
                 {"16M", "16000000"},       {"4194304", "4194304"},      {".5K", "500"}};
  for (const auto& b : budgets) {
    const Result<Int128> tokens = parse_token_count(b.text, "--tokens");
    ASSERT_TRUE(tokens.ok()) << b.text << ": " << tokens.error().message();
    EXPECT_EQ(to_decimal(tokens.value()), b.tokens) << b.text;
  }
  for (const char* bad : {"", "T", "1.5", "1.0005K", "-3", "15X", "0"}) {
    EXPECT_EQ(parse_token_count(bad, "--tokens").error().message(),
              "--tokens = \"" + std::string(bad) +
                  "\": must be a whole number of tokens >= 1, optionally with K, M, B or T (15T, 500B)");
  }
  EXPECT_DOUBLE_EQ(parse_utilization("0.4", "--mfu").value(), 0.4);
  EXPECT_DOUBLE_EQ(parse_utilization("40%", "--mfu").value(), 0.4);
  EXPECT_EQ(parse_utilization("0", "--mfu").error().message(),
            "--mfu = \"0\": must be a fraction in (0, 1] or a percentage in (0, 100]");
}

}  // namespace
}  // namespace trainflops
