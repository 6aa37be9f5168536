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
      {"a100", Dtype::kBf16, 312},
      {"A100", Dtype::kFp16, 312},
      {"h100-sxm", Dtype::kBf16, 989.5},
      {"h100-sxm", Dtype::kFp8, 1979},
      {"h100-pcie", Dtype::kBf16, 756.5},
      {"h100-pcie", Dtype::kFp8, 1513},
      {"h200", Dtype::kBf16, 989.5},
      {"h200", Dtype::kFp8, 1979},
      {"b200", Dtype::kBf16, 2250},
      {"b200", Dtype::kFp8, 4500},
      {"gb200", Dtype::kFp16, 2500},
      {"gb200", Dtype::kFp8, 5000},
      {"MI300X", Dtype::kBf16, 1307.4},
      {"mi300x", Dtype::kFp8, 2614.9},
      {"mi355x", Dtype::kBf16, 2516.6},
      {"mi355x", Dtype::kFp8, 5033.2},
      // Halves of the sparse rates their vendors print (or, for FP4, the dense ones).
      {"h20", Dtype::kBf16, 148},
      {"h20", Dtype::kFp8, 296},
      {"b300", Dtype::kBf16, 2250},
      {"b300", Dtype::kFp8, 4500},
      {"gb300", Dtype::kBf16, 2500},
      {"gb300", Dtype::kFp8, 5000},
      {"gb300", Dtype::kFp4, 15000},
      {"b200", Dtype::kFp4, 9000},
      {"gb200", Dtype::kFp4, 10000},
      {"mi325x", Dtype::kBf16, 1307.4},
      {"mi325x", Dtype::kFp8, 2614.9},
      {"mi355x", Dtype::kFp4, 10066.3},
      // The names GPUs go by.
      {"NVIDIA H100 SXM", Dtype::kBf16, 989.5},
      {"H100_PCIe", Dtype::kBf16, 756.5},
      {"h100-sxm5", Dtype::kBf16, 989.5},
      {"AMD Instinct MI300X", Dtype::kBf16, 1307.4},
      {"hgx-b200", Dtype::kFp8, 4500},
      {"a100-80gb", Dtype::kBf16, 312},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.gpu) + " " + std::string(dtype_name(c.dtype)));
    const Result<FoundPeak> peak = find_peak(c.gpu, c.dtype);
    ASSERT_TRUE(peak.ok()) << peak.error().message();
    EXPECT_EQ(peak.value().peak.dense_tflops, c.dense_tflops);
    EXPECT_EQ(peak.value().assumed, "");
  }
}

// A name that could be two parts is taken as one, and says which.
TEST(MfuTest, AmbiguousNamesSayWhatTheyAreTakenAs) {
  const Result<FoundPeak> h100 = find_peak("H100", Dtype::kBf16);
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100.value().peak.gpu, "h100-sxm");
  EXPECT_EQ(h100.value().assumed,
            "h100 taken as h100-sxm (NVIDIA H100 SXM5, the part of most training clusters); the PCIe card is "
            "h100-pcie");
  for (const GpuAlias& alias : gpu_aliases()) {
    SCOPED_TRACE(std::string(alias.alias));
    EXPECT_TRUE(find_peak(alias.alias, Dtype::kBf16).ok());
  }
}

// Every GPU has BF16 and FP16 at the same dense rate, FP8 (where present)
// at twice it up to the datasheet's rounding, and each entry names a vendor
// document with its URL.
TEST(MfuTest, TableIsConsistentAndSourced) {
  std::set<std::string_view> gpus;
  for (const PeakThroughput& entry : peak_table()) gpus.insert(entry.gpu);
  EXPECT_EQ(gpus.size(), 12u);
  for (std::string_view gpu : gpus) {
    SCOPED_TRACE(std::string(gpu));
    const double bf16 = find_peak(gpu, Dtype::kBf16).value().peak.dense_tflops;
    EXPECT_EQ(find_peak(gpu, Dtype::kFp16).value().peak.dense_tflops, bf16);
    const Result<FoundPeak> fp8 = find_peak(gpu, Dtype::kFp8);
    if (fp8.ok()) {
      EXPECT_NEAR(fp8.value().peak.dense_tflops, 2 * bf16, 1e-4 * bf16);
    }
    // FP4 runs at twice FP8 on Blackwell and CDNA4, three times on Blackwell Ultra.
    const Result<FoundPeak> fp4 = find_peak(gpu, Dtype::kFp4);
    if (fp4.ok()) {
      const double ratio = fp4.value().peak.dense_tflops / fp8.value().peak.dense_tflops;
      EXPECT_TRUE(std::abs(ratio - 2) < 1e-4 || std::abs(ratio - 3) < 1e-4) << ratio;
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
      {"h1OO", Dtype::kBf16,
       "\"h1OO\": unknown GPU; did you mean h100? one of a100, h100-sxm, h100-pcie, h200, h20, b200, gb200, b300, "
       "gb300, mi300x, mi325x, mi355x (trainflops gpus lists them), or give the peak with --peak-tflops / "
       "peak_tflops="},
      {"tpu-v5p", Dtype::kBf16,
       "\"tpu-v5p\": unknown GPU; one of a100, h100-sxm, h100-pcie, h200, h20, b200, gb200, b300, gb300, mi300x, "
       "mi325x, mi355x (trainflops gpus lists them), or give the peak with --peak-tflops / peak_tflops="},
      {"h100", Dtype::kFp4,
       "h100-sxm: no fp4 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops="},
      {"A100", Dtype::kFp8,
       "a100: no fp8 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops="},
  };
  for (const Case& c : cases) {
    const Result<FoundPeak> peak = find_peak(c.gpu, c.dtype);
    ASSERT_FALSE(peak.ok());
    EXPECT_EQ(peak.error().message(), c.message);
  }
}

TEST(MfuTest, ParsesDtypes) {
  EXPECT_EQ(parse_dtype("bf16").value(), Dtype::kBf16);
  EXPECT_EQ(parse_dtype("FP16").value(), Dtype::kFp16);
  EXPECT_EQ(parse_dtype("fp8").value(), Dtype::kFp8);
  EXPECT_EQ(parse_dtype("FP4").value(), Dtype::kFp4);
  EXPECT_EQ(parse_dtype("fp32").error().message(), "\"fp32\": must be one of bf16, fp16, fp8, fp4");
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
      // 1.0905e18 FLOPs in 3 s on 256 GPUs: 1419.9 TFLOP/s per GPU, beyond an H100's 989.5.
      {{1.0905e18, std::nullopt, 3, 256, 989.5},
       "MFU = 143.50% is above the peak: 1.0905e+18 FLOPs in 3 s on 256 GPUs is 1419.9 TFLOP/s per GPU, more than "
       "the 989.5 of the peak; check the step time, the GPU count and the GPU type"},
      {{1e18, 2e18, 3, 256, 1500},
       "HFU = 173.61% is above the peak: 2.0000e+18 FLOPs in 3 s on 256 GPUs is 2604.2 TFLOP/s per GPU, more than "
       "the 1500 of the peak; check the step time, the GPU count and the GPU type"},
      {{1e300, std::nullopt, 1e-300, 1, 1000},
       "MFU is above the peak: 1.0000e+300 FLOPs in 1e-300 s on 1 GPUs is past a double's range; check the step "
       "time"},
  };
  for (const Case& c : cases) {
    const Result<Utilization> result = utilization(c.step);
    ASSERT_FALSE(result.ok()) << c.message;
    EXPECT_EQ(result.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
