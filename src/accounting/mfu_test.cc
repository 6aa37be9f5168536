#include "trainflops/mfu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace trainflops {
namespace {

TEST(MfuTest, FindsDatasheetPeaks) {
  struct Case {
    const char* gpu;
    Dtype dtype;
    double dense_tflops;
  };
  const Case cases[] = {
      {"a100", Dtype::kBf16, 312},      {"A100", Dtype::kFp16, 312},        {"h100-sxm", Dtype::kBf16, 989.5},
      {"h100-sxm", Dtype::kFp8, 1979},  {"h100-pcie", Dtype::kBf16, 756.5}, {"h100-pcie", Dtype::kFp8, 1513},
      {"h200", Dtype::kBf16, 989.5},    {"h200", Dtype::kFp8, 1979},        {"b200", Dtype::kBf16, 2250},
      {"b200", Dtype::kFp8, 4500},      {"gb200", Dtype::kFp16, 2500},      {"gb200", Dtype::kFp8, 5000},
      {"MI300X", Dtype::kBf16, 1307.4}, {"mi300x", Dtype::kFp8, 2614.9},    {"mi355x", Dtype::kBf16, 2516.6},
      {"mi355x", Dtype::kFp8, 5033.2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.gpu) + " " + std::string(dtype_name(c.dtype)));
    const Result<PeakThroughput> peak = find_peak(c.gpu, c.dtype);
    ASSERT_TRUE(peak.ok()) << peak.error().message();
    EXPECT_EQ(peak.value().dense_tflops, c.dense_tflops);
  }
}

// Every GPU has BF16 and FP16 at the same dense rate, FP8 (where present)
// at twice it up to the datasheet's rounding, and each entry names a vendor
// document with its URL.
TEST(MfuTest, TableIsConsistentAndSourced) {
  std::set<std::string_view> gpus;
  for (const PeakThroughput& entry : peak_table()) gpus.insert(entry.gpu);
  EXPECT_EQ(gpus.size(), 8u);
  for (std::string_view gpu : gpus) {
    SCOPED_TRACE(std::string(gpu));
    const double bf16 = find_peak(gpu, Dtype::kBf16).value().dense_tflops;
    EXPECT_EQ(find_peak(gpu, Dtype::kFp16).value().dense_tflops, bf16);
    const Result<PeakThroughput> fp8 = find_peak(gpu, Dtype::kFp8);
    if (fp8.ok()) {
      EXPECT_NEAR(fp8.value().dense_tflops, 2 * bf16, 1e-4 * bf16);
    }
  }
  for (const PeakThroughput& entry : peak_table()) {
    EXPECT_NE(entry.source.find("https://"), std::string_view::npos) << entry.gpu;
    EXPECT_FALSE(entry.product.empty()) << entry.gpu;
  }
}

TEST(MfuTest, PeakErrors) {
  struct Case {
    const char* gpu;
    Dtype dtype;
    const char* message;
  };
  const Case cases[] = {
      {"h100", Dtype::kBf16,
       "\"h100\": unknown GPU; one of a100, h100-sxm, h100-pcie, h200, b200, gb200, mi300x, mi355x, or give the "
       "peak with --peak-tflops / peak_tflops="},
      {"A100", Dtype::kFp8,
       "a100: no fp8 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops="},
  };
  for (const Case& c : cases) {
    const Result<PeakThroughput> peak = find_peak(c.gpu, c.dtype);
    ASSERT_FALSE(peak.ok());
    EXPECT_EQ(peak.error().message(), c.message);
  }
}

TEST(MfuTest, ParsesDtypes) {
  EXPECT_EQ(parse_dtype("bf16").value(), Dtype::kBf16);
  EXPECT_EQ(parse_dtype("FP16").value(), Dtype::kFp16);
  EXPECT_EQ(parse_dtype("fp8").value(), Dtype::kFp8);
  EXPECT_EQ(parse_dtype("fp32").error().message(), "\"fp32\": must be one of bf16, fp16, fp8");
}

TEST(MfuTest, Utilization) {
  // 4.2e18 FLOPs in 10 s on 1,024 GPUs: 410.15625 TFLOP/s per GPU.
  StepMeasurement step{4.2e18, std::nullopt, 10, 1024, 989.5};
  Result<Utilization> result = utilization(step);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(result.value().tflops_per_gpu, 410.15625);
  EXPECT_DOUBLE_EQ(result.value().mfu, 410.15625 / 989.5);
  EXPECT_FALSE(result.value().hfu.has_value());

  step.executed_flops = 5.6e18;  // full recompute: 4/3 of the model FLOPs
  result = utilization(step);
  ASSERT_TRUE(result.ok());
  EXPECT_DOUBLE_EQ(*result.value().executed_tflops_per_gpu, 546.875);
  EXPECT_DOUBLE_EQ(*result.value().hfu, 546.875 / 989.5);
}

TEST(MfuTest, UtilizationErrors) {
  struct Case {
    StepMeasurement step;
    const char* message;
  };
  const Case cases[] = {
      {{0, std::nullopt, 1, 1, 1}, "model_flops = 0: must be a positive, finite number"},
      {{1, -1.0, 1, 1, 1}, "executed_flops = -1: must be a positive, finite number"},
      {{1, std::nullopt, 0, 1, 1}, "step_time_s = 0: must be a positive, finite number of seconds"},
      {{1, std::nullopt, INFINITY, 1, 1}, "step_time_s = inf: must be a positive, finite number of seconds"},
      {{1, std::nullopt, 1, 0, 1}, "num_gpus = 0: must be >= 1"},
      {{1, std::nullopt, 1, 8, NAN}, "peak_tflops = nan: must be a positive, finite number of TFLOP/s per GPU"},
  };
  for (const Case& c : cases) {
    const Result<Utilization> result = utilization(c.step);
    ASSERT_FALSE(result.ok()) << c.message;
    EXPECT_EQ(result.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
