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
       "trainflops: --gpu is missing: give the GPU type (trainflops gpus lists them) or --peak-tflops\n"},
      {"--step-time 2 --num-gpus 4 --gpu a100 --dtype fp8 " + kModel,
       "trainflops: a100: no fp8 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops=\n"},
      {"--step-time 2 --num-gpus 4 --gpu h100-sxm --dtype tf32 " + kModel,
       "trainflops: \"tf32\": must be one of bf16, fp16, fp8, fp4\n"},
      // 1.5810e15 FLOPs in 0.1 s on 4 GPUs would be 3952.6 TFLOP/s per GPU: no H100 does that.
      {"--step-time 0.1 --num-gpus 4 --gpu h100 " + kModel,
       "trainflops: MFU = 399.45% is above the peak: 1.5810e+15 FLOPs in 0.1 s on 4 GPUs is 3952.6 TFLOP/s per GPU, "
       "more than the 989.5 of the peak; check the step time, the GPU count and the GPU type\n"},
      {"--num-gpus 4 --gpu h100-sxm " + kModel,
       "trainflops: the step time is missing: one of --step-time (seconds per iteration), --tokens-per-second (of "
       "the whole run) or --megatron-log (a Megatron-LM training log)\n"},
      {"--step-time 2 --tokens-per-second 16384 --num-gpus 4 --gpu h100-sxm " + kModel,
       "trainflops: give the step time one way: one of --step-time (seconds per iteration), --tokens-per-second "
       "(of the whole run) or --megatron-log (a Megatron-LM training log)\n"},
      {"--megatron-log " + std::string(TRAINFLOPS_TEST_DATA) + "/hf/README.md --num-gpus 4 --gpu h100-sxm " + kModel,
       "trainflops: " + std::string(TRAINFLOPS_TEST_DATA) +
           "/hf/README.md: no line has \"elapsed time per iteration (ms):\": give a Megatron-LM training log (the "
           "lines it writes every log_interval iterations)\n"},
      {"--step-time 2 --num-gpus 4 --gpu h100-sxm --format csv " + kModel,
       "trainflops: --format = \"csv\": mfu prints table or json\n"},
      {"--step-time 0 --num-gpus 4 --gpu h100-sxm " + kModel,
       "trainflops: step_time_s = 0: must be a positive, finite number of seconds\n"},
      {"--step-time 1 --num-gpus 0 --gpu h100-sxm " + kModel, "trainflops: num_gpus = 0: must be >= 1\n"},
      {"--step-time 1 --num-gpus 8 --gpu h100-sxm --mode executed --executed-flops 3e15 " + kModel,
       "trainflops: --executed-flops: executed mode counts them; give one or the other\n"},
      // The hardware executes at least the model's FLOPs.
      {"--step-time 1 --num-gpus 8 --gpu h100-sxm --executed-flops 1e15 " + kModel,
       "trainflops: --executed-flops = 1e+15: below the 1.5810e+15 model FLOPs of the iteration, which the hardware "
       "executes at least (recomputation adds to them)\n"},
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

TEST(MfuCommandTest, GpuCountIsRequired) {
  const CliRun result = run_mfu("--step-time 2 --gpu h100-sxm " + kModel);
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("--num-gpus is required"), std::string::npos) << result.err;
}

// The step time three ways, an alias of a GPU, and the JSON form.
TEST(MfuCommandTest, StepTimeFromTokensPerSecondOrAMegatronLog) {
  // 8 x 4096 tokens at 16384 tokens/s: 2 s, as --step-time 2 (19.97% above).
  const CliRun tokens = run_mfu("--tokens-per-second 16384 --num-gpus 4 --gpu H100 " + kModel);
  ASSERT_EQ(tokens.status, 0) << tokens.err;
  EXPECT_NE(tokens.out.find("step       2 s on 4 GPUs, 16384 tokens/s (4096.0 per GPU)\n"), std::string::npos)
      << tokens.out;
  EXPECT_NE(tokens.out.find("MFU        19.97%\n"), std::string::npos) << tokens.out;
  EXPECT_NE(tokens.out.find("           h100 taken as h100-sxm (NVIDIA H100 SXM5, the part of most training "
                            "clusters); the PCIe card is h100-pcie\n"),
            std::string::npos)
      << tokens.out;

  // The log's last iteration line: 2000.0 ms, a global batch of 16 (twice the
  // flags' 8: 3.1621e15 FLOPs) and Megatron-LM's own 395.3 TFLOP/s per GPU,
  // which its function gives for this model: 3.1621e15 / (2 s x 4 GPUs).
  const std::string log = std::string(TRAINFLOPS_TEST_DATA) + "/megatron_log/llama-8b-4gpu.log";
  const CliRun from_log = run_mfu("--megatron-log " + log + " --num-gpus 4 --gpu h100-sxm " + kModel);
  ASSERT_EQ(from_log.status, 0) << from_log.err;
  for (const std::string& line : std::vector<std::string>{
           "workload   BSHD, 16 sequences x 4,096 tokens = 65,536 tokens\n",
           "log        " + log + ", line 3 (iteration 20)\n",
           "step       2 s on 4 GPUs, 32768 tokens/s (8192.0 per GPU)\n",
           std::string("throughput 395.3 TFLOP/s per GPU\n"),
           std::string("MFU        39.95%\n"),
           std::string("Megatron   395.3 TFLOP/s per GPU in its log: MFU 39.95% by its own count (1.0001 x "
                       "trainflops')\n"),
       }) {
    EXPECT_NE(from_log.out.find(line), std::string::npos) << line << from_log.out;
  }

  const CliRun json = run_mfu("--megatron-log " + log + " --num-gpus 4 --gpu h100-sxm --format json " + kModel);
  ASSERT_EQ(json.status, 0) << json.err;
  for (const std::string key :
       {"\"step_time_s\": 2.0,", "\"num_gpus\": 4,", "\"gpu\": \"h100-sxm\",", "\"tflops\": 989.5,", "\"line\": 3,",
        "\"iteration\": 20,", "\"tflops_per_gpu\": 395.3,"}) {
    EXPECT_NE(json.out.find(key), std::string::npos) << key << json.out;
  }
}

// The log gives the step time; documents given as options are the workload
// (the log's global batch size is for a BSHD batch).
TEST(MfuCommandTest, AMegatronLogWithPackedDocuments) {
  const std::string log = std::string(TRAINFLOPS_TEST_DATA) + "/megatron_log/llama-8b-4gpu.log";
  const CliRun result = run_mfu("--megatron-log " + log + " --num-gpus 4 --gpu h100-sxm --docs 4096,2048 " + kModel);
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("workload   THD, 2 packed documents, 6,144 tokens\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("step       2 s on 4 GPUs, 3072 tokens/s (768.0 per GPU)\n"), std::string::npos)
      << result.out;
}

TEST(MfuCommandTest, GpusListsEveryPeakWithItsAliases) {
  const CliRun table = trainflops::cli_test::run("gpus");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("\nh100-sxm   NVIDIA H100 SXM5                                    989.5    989.5     "
                           "1979        -  h100, h100-sxm5, h100sxm\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("\ngb300      NVIDIA GB300 (one Blackwell Ultra GPU of NVL72)      2500     2500     5000"
                           "    15000  gb300-nvl72\n"),
            std::string::npos)
      << table.out;
  const CliRun json = trainflops::cli_test::run("gpus --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"gpu\": \"mi355x\""), std::string::npos);
  EXPECT_NE(json.out.find("\"fp4\": 10066.3"), std::string::npos);
}

}  // namespace
