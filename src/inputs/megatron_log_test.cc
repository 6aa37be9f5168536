#include "trainflops/megatron_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace trainflops {
namespace {

// Lines as megatron/training/training.py's training_log formats them.
const std::string kLine =
    " [2026-01-05 10:00:32.123456] iteration       20/     100 | consumed samples:          320 | elapsed time per "
    "iteration (ms): 2000.0 | throughput per GPU (TFLOP/s/GPU): 395.3 | learning rate: 3.000000E-04 | global batch "
    "size:    16 | lm loss: 9.870000E+00 | loss scale: 1.0 |";

TEST(MegatronLogTest, ReadsTheLastIterationLine) {
  const std::string first =
      " [2026-01-05 10:00:12.000000] iteration       10/     100 | consumed samples:  160 | "
      "elapsed time per iteration (ms): 2500.0 | global batch size:     8 |";
  const Result<MegatronLogIteration> parsed =
      parse_megatron_log("using world size: 4\n" + first + "\n" + kLine + "\r\n[after training is done]\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().line, 3);
  EXPECT_EQ(parsed.value().iteration, 20);
  EXPECT_DOUBLE_EQ(parsed.value().step_time_s, 2.0);
  EXPECT_EQ(parsed.value().tflops_per_gpu, 395.3);
  EXPECT_EQ(parsed.value().global_batch_size, 16);

  // Without --log-throughput Megatron-LM prints no throughput.
  const Result<MegatronLogIteration> plain = parse_megatron_log(first);
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_DOUBLE_EQ(plain.value().step_time_s, 2.5);
  EXPECT_FALSE(plain.value().tflops_per_gpu.has_value());
  EXPECT_EQ(plain.value().global_batch_size, 8);
}

TEST(MegatronLogTest, Errors) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"",
       "no line has \"elapsed time per iteration (ms):\": give a Megatron-LM training log (the lines it writes "
       "every log_interval iterations)"},
      {"iteration 1/ 2 | elapsed time per iteration (ms): fast |",
       "line 1: elapsed time per iteration (ms) = \"fast\": must be a positive number"},
      {"x\nelapsed time per iteration (ms): 0.0 |",
       "line 2: elapsed time per iteration (ms) = \"0.0\": must be a "
       "positive number"},
      {"elapsed time per iteration (ms): 10.0 | global batch size: -3 |",
       "line 1: global batch size = \"-3\": must be a positive integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<MegatronLogIteration> parsed = parse_megatron_log(c.text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message(), c.message);
  }
}

// A log file: its last iteration line, or its path before the error.
TEST(MegatronLogTest, ReadsAFile) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "megatron_log_test.log", empty = dir + "megatron_log_test_empty.log";
  std::ofstream(log) << "iteration 1/ 2 | elapsed time per iteration (ms): 1500.0 |\n"
                        "iteration 2/ 2 | elapsed time per iteration (ms): 1250.0 | global batch size: 8 |\n";
  std::ofstream(empty) << "no iterations yet\n";
  const Result<MegatronLogIteration> read = read_megatron_log(log);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read.value().line, 2);
  EXPECT_EQ(read.value().iteration, 2);
  EXPECT_EQ(read.value().step_time_s, 1.25);
  EXPECT_EQ(read.value().global_batch_size, 8);
  EXPECT_EQ(read_megatron_log(empty).error().message(),
            empty + ": no line has \"elapsed time per iteration (ms):\": give a Megatron-LM training log (the lines "
                    "it writes every log_interval iterations)");
  EXPECT_EQ(read_megatron_log(dir + "no_such.log").error().message(),
            dir + "no_such.log: cannot open (No such file or directory)");
  std::remove(log.c_str());
  std::remove(empty.c_str());
}

}  // namespace
}  // namespace trainflops
