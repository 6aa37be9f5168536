// `trainflops mfu` as a user runs it: a subprocess, its exit status, stdout
// and stderr.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;

CliRun run_mfu(const std::string& arguments) { return trainflops::cli_test::run("mfu " + arguments); }

// Llama-3.1-8B-like: 32 layers, hidden 4096, on 8 sequences of 4096 tokens.
const std::string kModel =
    "--megatron -- --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
    "--group-query-attention --num-query-groups 8 --swiglu --padded-vocab-size 128256 --seq-length 4096 "
    "--global-batch-size 8";

TEST(MfuCommandTest, PrintsThroughputAndUtilization) {
  // 8 x 4096 tokens: 1,581,029,001,265,152 FLOPs in megatron mode (trainflops
  // count); over 2 s on 4 GPUs that is 197.63 TFLOP/s per GPU.
  struct Case {
    std::string options;
    std::vector<std::string> lines;
  };
  const Case cases[] = {
      {"--step-time 2 --num-gpus 4 --gpu h100-sxm",
       {"flops      1.5810e+15 per iteration (model FLOPs)\n",
        "step       2 s on 4 GPUs, 16384 tokens/s (4096.0 per GPU)\n",
        "peak       989.5 TFLOP/s per GPU (NVIDIA H100 SXM5, bf16, dense)\n", "throughput 197.6 TFLOP/s per GPU\n",
        "MFU        19.97%\n"}},
      {"--step-time 2 --num-gpus 4 --gpu MI355X --dtype fp8",
       {"peak       5033.2 TFLOP/s per GPU (AMD Instinct MI355X, fp8, dense)\n", "MFU        3.93%\n"}},
      {"--step-time 2 --num-gpus 4 --gpu a100 --peak-tflops 197.628625158144",
       {"peak       197.629 TFLOP/s per GPU (--peak-tflops)\n", "MFU        100.00%\n"}},
      {"--step-time 2 --num-gpus 4 --gpu h200 --executed-flops 2108038668353536",
       {"MFU        19.97%\n", "executed   2.1080e+15 per iteration, 263.5 TFLOP/s per GPU\n", "HFU        26.63%\n"}},
      // Executed mode counts both: MFU from the model total, HFU from the executed one.
      {"--step-time 2 --num-gpus 4 --gpu h100-sxm --mode executed --recompute full",
       {"trainflops: MFU, executed mode\n", "flops      1.5811e+15 per iteration (model FLOPs)\n",
        "MFU        19.97%\n", "executed   2.0736e+15 per iteration, 259.2 TFLOP/s per GPU\n", "HFU        26.20%\n"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    const CliRun result = run_mfu(c.options + " " + kModel);
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_EQ(result.err, "");
    for (const std::string& line : c.lines) EXPECT_NE(result.out.find(line), std::string::npos) << line << result.out;
    EXPECT_EQ(result.out.find("HFU") != std::string::npos, c.options.find("executed") != std::string::npos);
  }
}

TEST(MfuCommandTest, BadInputExitsTwoWithAMessage) {
  struct Case {
    std::string options;
    std::string message;
  };
  const Case cases[] = {
      {"--step-time 2 --num-gpus 4 " + kModel,
       "trainflops: --gpu is missing: give the GPU type (docs/mfu.md) or --peak-tflops\n"},
      {"--step-time 2 --num-gpus 4 --gpu a100 --dtype fp8 " + kModel,
       "trainflops: a100: no fp8 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops=\n"},
      {"--step-time 2 --num-gpus 4 --gpu h100-sxm --dtype tf32 " + kModel,
       "trainflops: \"tf32\": must be one of bf16, fp16, fp8\n"},
      {"--step-time 0 --num-gpus 4 --gpu h100-sxm " + kModel,
       "trainflops: step_time_s = 0: must be a positive, finite number of seconds\n"},
      {"--step-time 1 --num-gpus 0 --gpu h100-sxm " + kModel, "trainflops: num_gpus = 0: must be >= 1\n"},
      {"--step-time 1 --num-gpus 8 --gpu h100-sxm --mode executed --executed-flops 3e15 " + kModel,
       "trainflops: --executed-flops: executed mode counts them; give one or the other\n"},
      {"--step-time 1 --num-gpus 8 --gpu h100-sxm --docs 5,6 --global-batch-size 2 " + kModel,
       "trainflops: give one workload: batch_size (with seq_length), docs, cu_seqlens, or total_real_tokens with "
       "seqlen_squared_sum\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    const CliRun result = run_mfu(c.options);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, c.message);
  }
}

TEST(MfuCommandTest, StepTimeAndGpuCountAreRequired) {
  const CliRun result = run_mfu("--gpu h100-sxm " + kModel);
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("--step-time is required"), std::string::npos) << result.err;
}

}  // namespace
