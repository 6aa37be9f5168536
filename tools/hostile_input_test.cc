// Inputs a hostile or careless user gives the command line and `batch`, each
// once a silent wrong answer, undefined behaviour or a hang: each is now a
// clear error with a nonzero exit status. `make test-sanitizers` runs these
// under AddressSanitizer and UndefinedBehaviorSanitizer too.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;
using trainflops::cli_test::run;
using trainflops::cli_test::scratch_dir;
using trainflops::cli_test::slurp;

// Runs a shell command line with `trainflops` standing for the tool, for
// redirections that run() cannot express; stderr is returned, stdout dropped.
CliRun run_shell(const std::string& command) {
  const std::string dir = scratch_dir();
  std::string line = command;
  const std::string tool = "trainflops";
  for (std::size_t at = line.find(tool); at != std::string::npos; at = line.find(tool, at + 1)) {
    if (at == 0 || line[at - 1] == ' ') line.replace(at, tool.size(), TRAINFLOPS_CLI);
  }
  const int raw = std::system(("(" + line + ") 2> " + dir + "shell_err").c_str());
  return CliRun{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, "", slurp(dir + "shell_err")};
}

const std::string kModelFlags =
    "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 8 --global-batch-size 1";

TEST(HostileInputTest, CommandLineValuesAreCheckedNotDroppedOrClamped) {
  struct Case {
    std::string arguments, err;
  };
  const std::string plan = "plan --preset llama-3.1-8b --gpu h100-sxm --mfu 0.4 --tokens 1T --seq-length 4k "
                           "--global-batch-size 8 ";
  const std::string mfu = "mfu --preset llama-3.1-8b --gpu h100-sxm --global-batch-size 8 --step-time 1 ";
  std::string stages;
  for (int i = 0; i < 171; ++i) stages += (i ? "," : "") + std::string(36, '9') + "@1";
  const std::vector<Case> cases = {
      {plan + "--num-gpus ''", "trainflops: --num-gpus: must not be empty\n"},
      {mfu + "--num-gpus ''", "trainflops: --num-gpus: must not be empty\n"},
      {plan + "--num-gpus 8 --price-per-gpu-hour ''", "trainflops: --price-per-gpu-hour: must not be empty\n"},
      {mfu + "--num-gpus 8 --peak-tflops ''", "trainflops: --peak-tflops: must not be empty\n"},
      {mfu + "--num-gpus 8 --executed-flops ''", "trainflops: --executed-flops: must not be empty\n"},
      {"count --preset llama-3.1-8b --global-batch-size 1 --pipeline-stages ''",
       "trainflops: --pipeline-stages: must not be empty\n"},
      {"count --preset llama-3.1-8b --global-batch-size 1 --docs ''", "trainflops: --docs: must not be empty\n"},
      {mfu + "--num-gpus 99999999999999999999",
       "trainflops: --num-gpus: \"99999999999999999999\" must be at most 9223372036854775807\n"},
      {plan + "--num-gpus 99999999999999999999",
       "trainflops: --num-gpus: \"99999999999999999999\" must be at most 9223372036854775807\n"},
      {"count --preset llama-3.1-8b --global-batch-size 1 --pipeline-stages 99999999999999999999",
       "trainflops: --pipeline-stages: \"99999999999999999999\" must be at most 9223372036854775807\n"},
      {"count --preset llama-3.1-8b --global-batch-size 1 --pipeline-stages 0x10",
       "trainflops: --pipeline-stages: \"0x10\" must be a decimal integer\n"},
      {"plan --preset llama-3.1-8b --gpu h100-sxm --mfu 0.4 --global-batch-size 1 --num-gpus 8 --stages " + stages,
       "trainflops: the tokens of the run do not fit in 128 bits\n"},
      // CLI11's own errors: one line, named as every other error is.
      {"count --frobnicate", "trainflops: The following argument was not expected: --frobnicate\n"},
      {"cuont", "trainflops: A subcommand is required\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments.substr(0, 200));
    const CliRun result = run(c.arguments);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.err, c.err);
    EXPECT_EQ(result.out, "");
  }
}

TEST(HostileInputTest, BatchRecordsAreReadStrictly) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "passwd") << "root:x:0:0:root:/root:/bin/bash\n";
  const std::string huge = "9223372036854775807";
  struct Case {
    std::string record, answer;
  };
  const std::vector<Case> cases = {
      {R"({"preset":"glm-5","mode":"executed","batch_size":1,"recomput":"full"})",
       R"({"error":"line 1: unknown key recomput; did you mean recompute?"})"},
      {R"({"preset":"glm-5","mode":"model","batch_size":1,"dsa_indexer_grad_mod":"off"})",
       R"({"error":"line 1: unknown key dsa_indexer_grad_mod; did you mean dsa_indexer_grad_mode?"})"},
      {R"({"preset":"glm-5","mode":"model","batch_size":1,"strikt":true})",
       R"({"error":"line 1: unknown key strikt; did you mean strict?"})"},
      {R"({"preset":"glm-5","mode":"model","batch_size":1,"colour":1})",
       R"({"error":"line 1: unknown key colour: a record takes mode, recompute, args, preset, hf, config, flags, )"
       R"(dsa_indexer_grad_mode, real_experts_per_token, megatron_branch, strict, allow_unknown_flags, batch_size, )"
       R"(seq_length, docs, cu_seqlens, )"
       R"(total_real_tokens, seqlen_squared_sum"})"},
      // Squares of 2^63 - 1 pass 2^127: an overflow, not a wrapped (negative) sum.
      {R"({"preset":"glm-5","mode":"megatron","docs":[)" + huge + "," + huge + "," + huge +
           R"(],"total_real_tokens":"27670116110564327421","seqlen_squared_sum":"1"})",
       R"({"error":"line 1: docs: the sum of squared lengths exceeds 128 bits"})"},
      // A flags file's contents are not shown when it is not a flags file.
      {R"({"flags":["@)" + dir + R"(passwd"],"mode":"megatron","batch_size":1})",
       R"x({"error":"line 1: )x" + dir + R"x(passwd: not a flags file: its first word is not a flag (flags start with --)"})x"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.record.substr(0, 200));
    const CliRun result = run("batch", c.record + "\n");
    EXPECT_EQ(result.status, 1);
    EXPECT_EQ(result.out, c.answer + "\n");
    EXPECT_EQ(result.err, "");
  }
}

TEST(HostileInputTest, BatchInputThatCannotBeReadEndsTheRunWithAnError) {
  const std::string good = R"({"preset":"llama-3.1-8b","mode":"megatron","batch_size":1})";
  // A line past 16 MiB is answered with an error and skipped; the next is counted.
  const CliRun long_line = run("batch", std::string((16 << 20) + 1, ' ') + "\n" + good + "\n");
  EXPECT_EQ(long_line.status, 1);
  EXPECT_EQ(long_line.out.substr(0, long_line.out.find('\n')),
            R"({"error":"line 1: longer than 16777216 bytes, the most a batch line may hold"})");
  EXPECT_NE(long_line.out.find("\n{\"flops\":"), std::string::npos) << long_line.out;

  struct Case {
    std::string command;
    int status;
    std::string err;
  };
  const std::vector<Case> cases = {
      {"trainflops batch < " + scratch_dir(), 4, "trainflops: cannot read stdin after line 0 (Is a directory)\n"},
      {"trainflops batch <&-", 4, "trainflops: cannot read stdin after line 0 (Bad file descriptor)\n"},
      {"trainflops --help > /dev/full", 3, "trainflops: cannot write the output (No space left on device)\n"},
      {"trainflops --version > /dev/full", 3, "trainflops: cannot write the output (No space left on device)\n"},
      {"trainflops --version >&-", 3, "trainflops: cannot write the output (Bad file descriptor)\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const CliRun result = run_shell(c.command);
    EXPECT_EQ(result.status, c.status);
    EXPECT_EQ(result.err, c.err);
  }
}

// "@FILE" is a flags file only where a flag name stands: as a value it is the value.
TEST(HostileInputTest, AtWordsAreValuesAfterAFlagThatTakesOne) {
  const CliRun result = run("count --format json --megatron -- " + kModelFlags + " --wandb-project @team");
  EXPECT_EQ(result.status, 0) << result.err;
}

}  // namespace
