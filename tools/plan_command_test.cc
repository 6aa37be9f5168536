// `trainflops plan` as a user runs it: the arithmetic of a run from the FLOPs
// of one iteration, which `count` gives (and its own tests check).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;
using trainflops::cli_test::run;

// Llama-3.1-8B-like with a global batch of 8 sequences of 4096 tokens: one
// iteration is 1,581,029,001,265,152 FLOPs in megatron mode (`count`).
const std::string kModel =
    "--megatron -- --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
    "--group-query-attention --num-query-groups 8 --swiglu --padded-vocab-size 128256 --seq-length 4096 "
    "--global-batch-size 8";
constexpr double kIterationFlops = 1581029001265152.0;
// 4 GPUs x 1000 TFLOP/s x 50%: 2e15 FLOP/s.
const std::string kCluster = "--num-gpus 4 --peak-tflops 1000 --mfu 50% --price-per-gpu-hour 3 --format json ";

nlohmann::json plan(const std::string& options) {
  const CliRun result = run("plan " + kCluster + options + " " + kModel);
  EXPECT_EQ(result.status, 0) << result.err;
  return nlohmann::json::parse(result.out.empty() ? "{}" : result.out);
}

TEST(PlanCommandTest, ABudgetInWholeIterations) {
  // 327,680 tokens: 10 iterations of 32,768; 327,681 need an 11th.
  for (const auto& [tokens, iterations] : {std::pair{"327680", 10}, std::pair{"327681", 11}}) {
    SCOPED_TRACE(tokens);
    const nlohmann::json out = plan(std::string("--tokens ") + tokens);
    ASSERT_EQ(out["stages"].size(), 1u);
    const nlohmann::json& stage = out["stages"][0];
    EXPECT_EQ(stage["iterations"], std::to_string(iterations));
    EXPECT_EQ(stage["tokens"], std::to_string(iterations * 32768));
    EXPECT_EQ(stage["tokens_asked"], tokens);
    EXPECT_DOUBLE_EQ(stage["flops_per_iteration"].get<double>(), kIterationFlops);
    const double seconds = iterations * kIterationFlops / 2e15;
    EXPECT_DOUBLE_EQ(stage["seconds"].get<double>(), seconds);
    EXPECT_DOUBLE_EQ(stage["gpu_hours"].get<double>(), seconds / 3600 * 4);
    EXPECT_DOUBLE_EQ(stage["cost"].get<double>(), seconds / 3600 * 4 * 3);
    EXPECT_DOUBLE_EQ(out["total"]["days"].get<double>(), seconds / 86400);
    EXPECT_DOUBLE_EQ(out["cluster"]["sustained_flops_per_s"].get<double>(), 2e15);
  }
}

TEST(PlanCommandTest, StagesOfContextLengthsAndTheInverse) {
  // 32k tokens per iteration: 8 sequences of 4096, then 4 of 8192.
  const nlohmann::json staged = plan("--stages 64k@4k,64k@8k --batch-tokens 32k");
  ASSERT_EQ(staged["stages"].size(), 2u);
  EXPECT_EQ(staged["stages"][0]["sequences_per_iteration"], 8);
  EXPECT_EQ(staged["stages"][1]["sequences_per_iteration"], 4);
  EXPECT_EQ(staged["stages"][1]["seq_length"], 8192);
  EXPECT_EQ(staged["stages"][0]["iterations"], "2");
  EXPECT_EQ(staged["total"]["tokens"], "131072");
  EXPECT_DOUBLE_EQ(staged["total"]["flops"].get<double>(),
                   staged["stages"][0]["flops"].get<double>() + staged["stages"][1]["flops"].get<double>());
  EXPECT_DOUBLE_EQ(staged["stages"][0]["flops"].get<double>(), 2 * kIterationFlops);

  // The time of 3.5 iterations trains 3 of them.
  const double days = 3.5 * kIterationFlops / 2e15 / 86400;
  char option[64];
  std::snprintf(option, sizeof option, "--days %.17g --seq-length 4k", days);
  const nlohmann::json inverse = plan(option);
  EXPECT_EQ(inverse["stages"][0]["iterations"], "3");
  EXPECT_EQ(inverse["total"]["tokens"], "98304");
}

// CSV numbers read back as the JSON's doubles.
TEST(PlanCommandTest, CsvRowsMatchTheJson) {
  const std::string options = "--tokens 327680 --num-gpus 4 --peak-tflops 1000 --mfu 50% --price-per-gpu-hour 3 ";
  const CliRun csv = run("plan " + options + "--format csv " + kModel);
  ASSERT_EQ(csv.status, 0) << csv.err;
  const nlohmann::json json = nlohmann::json::parse(run("plan " + options + "--format json " + kModel).out);
  const std::string stage =
      "1,4096,8,327680,10,1581029001265152," + std::to_string(static_cast<long long>(10 * kIterationFlops)) + ",";
  EXPECT_EQ(csv.out.rfind(
                "stage,seq_length,sequences_per_iteration,tokens,iterations,flops_per_iteration,flops,days,gpu_hours,"
                "cost\n" +
                    stage,
                0),
            0u)
      << csv.out;
  const std::string all = csv.out.substr(csv.out.find("\nall,,,") + 1);
  std::istringstream fields(all);
  std::string field;
  for (int i = 0; i < 8; ++i) std::getline(fields, field, ',');  // all,,,tokens,,,flops,days
  EXPECT_EQ(std::stod(field), json["total"]["days"].get<double>()) << all;
}

TEST(PlanCommandTest, TableWithADecimalBudget) {
  const CliRun result = run("plan --tokens 1.5M --num-gpus 4 --gpu H100 --mfu 0.5 --seq-length 4k " + kModel);
  ASSERT_EQ(result.status, 0) << result.err;
  // 1,500,000 tokens: 46 iterations of 32,768 (1,507,328 tokens).
  EXPECT_NE(result.out.find("\n1           4096         8    1.507M           46  1.5810e+15  7.2727e+16"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("cluster    4 GPUs x 989.5 TFLOP/s (NVIDIA H100 SXM5, bf16, dense) at MFU 50.00%: 1.979 "
                            "PFLOP/s sustained\n"),
            std::string::npos)
      << result.out;
}

TEST(PlanCommandTest, BadInputExitsTwoWithAMessage) {
  struct Case {
    std::string options;
    std::string message;
  };
  const Case cases[] = {
      {"--num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "the run's length is missing: one of --tokens (a budget, e.g. 15T), --stages (budgets per context length, "
       "e.g. 14.8T@4k,100B@32k) or --days (the tokens a time trains)"},
      {"--tokens 1T --days 3 --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "give the run's length one way: one of --tokens (a budget, e.g. 15T), --stages (budgets per context length, "
       "e.g. 14.8T@4k,100B@32k) or --days (the tokens a time trains)"},
      {"--tokens 1T --num-gpus 4 --peak-tflops 1000 --mfu 140% " + kModel,
       "--mfu = \"140%\": must be a fraction in (0, 1] or a percentage in (0, 100]"},
      {"--tokens 1T --num-gpus 4 --peak-tflops 1000 " + kModel,
       "--mfu is missing: the utilization the run sustains, e.g. 0.4 or 40%"},
      {"--tokens 1.5 --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "--tokens = \"1.5\": must be a whole number of tokens >= 1, optionally with K, M, B or T (15T, 500B)"},
      {"--stages 1T@4k,1T@3000 --batch-tokens 16M --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "batch_tokens = 16777216: seq_length = 3000 of stage 2 does not divide it"},
      {"--stages 1T --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "--stages: \"1T\" must be TOKENS@SEQ_LENGTH, e.g. 14.8T@4k,100B@32k"},
      {"--tokens 1T --mode executed --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       "--mode = \"executed\": a plan counts model FLOPs, as MFU does: megatron or model"},
      {"--days 0.000000001 --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel,
       // 1e-9 days; an iteration takes 1581029001265152 / 1.6e15 s.
       "seconds = 8.64e-05: shorter than one iteration, which takes 0.98814312579072 s on this cluster"},
      {"--days -2 --num-gpus 4 --peak-tflops 1000 --mfu 0.4 " + kModel, "--days = -2: must be a positive number"},
      {"--tokens 1T --num-gpus 4 --peak-tflops 1000 --mfu 0.4 --preset llama-3.1-8b",
       "the global batch is missing: give --global-batch-size (sequences per iteration) or --batch-tokens (tokens "
       "per iteration, e.g. 16M)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    const CliRun result = run("plan " + c.options);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "trainflops: " + c.message + "\n");
  }
}

}  // namespace
