#include "trainflops/mfu.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "trainflops/edit_distance.h"

namespace trainflops {
namespace {

// Vendor documents. NVIDIA's datasheets print tensor-core rates "with
// sparsity" and state the dense rate is one half; the dense values below are
// those halves. AMD prints dense rates, with the sparse ones beside them.
constexpr std::string_view kA100Source =
    "NVIDIA A100 Tensor Core GPU datasheet: BF16/FP16 Tensor Core 312 TFLOPS dense (624 with sparsity); "
    "no FP8. https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
constexpr std::string_view kH100SxmSource =
    "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: BF16/FP16 Tensor Core 1,979 TFLOPS, FP8 3,958 TFLOPS, "
    "with sparsity (dense is one half). "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";
constexpr std::string_view kH100PcieSource =
    "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe: BF16/FP16 Tensor Core 1,513 TFLOPS, FP8 3,026 TFLOPS, "
    "with sparsity (dense is one half). "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";
constexpr std::string_view kH200Source =
    "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: BF16/FP16 Tensor Core 1,979 TFLOPS, FP8 3,958 TFLOPS, "
    "with sparsity (dense is one half). https://www.nvidia.com/en-us/data-center/h200/";
constexpr std::string_view kH20Source =
    "NVIDIA HGX H20 specification, the export-compliant Hopper part, as NVIDIA gave it to partners (it publishes "
    "no datasheet for it): FP16/BF16 Tensor Core 148 TFLOPS, FP8 296 TFLOPS, dense; reported e.g. at "
    "https://xfastest.com/thread-283320-1-1.html";
constexpr std::string_view kB200Source =
    "NVIDIA HGX B200 specifications (8 GPUs): FP16/BF16 Tensor Core 36 PFLOPS, FP8 72 PFLOPS, with sparsity; "
    "FP4 144 PFLOPS with sparsity, 72 without; per GPU dense: one eighth, halved (FP4: one eighth of 72). "
    "https://www.nvidia.com/en-us/data-center/hgx/";
constexpr std::string_view kGb200Source =
    "NVIDIA GB200 NVL72 specifications, GB200 Grace Blackwell Superchip (2 GPUs): FP16/BF16 Tensor Core "
    "10 PFLOPS, FP8 20 PFLOPS, FP4 40 PFLOPS, with sparsity; per GPU dense: one half, halved. "
    "https://www.nvidia.com/en-us/data-center/gb200-nvl72/";
constexpr std::string_view kB300Source =
    "NVIDIA HGX B300 specifications (8 Blackwell Ultra GPUs): FP16/BF16 Tensor Core 36 PFLOPS, FP8 72 PFLOPS, "
    "with sparsity; per GPU dense: one eighth, halved. Its dense FP4 rate is printed differently across NVIDIA's "
    "pages, so the table has none. https://www.nvidia.com/en-us/data-center/hgx/";
constexpr std::string_view kGb300Source =
    "NVIDIA GB300 NVL72 specifications (72 Blackwell Ultra GPUs): FP16/BF16 Tensor Core 360 PFLOPS, FP8 720 "
    "PFLOPS, with sparsity; FP4 1,440 PFLOPS with sparsity, 1,080 without; per GPU dense: one 72nd, halved "
    "(FP4: one 72nd of 1,080). https://www.nvidia.com/en-us/data-center/gb300-nvl72/";
constexpr std::string_view kMi300xSource =
    "AMD Instinct MI300X data sheet: peak BF16/FP16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS dense (2,614.9 / 5,229.8 "
    "with structured sparsity). https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
    "amd-instinct-mi300x-data-sheet.pdf";
constexpr std::string_view kMi325xSource =
    "AMD Instinct MI325X data sheet: peak BF16/FP16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS dense (the MI300X's "
    "compute with more memory). https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html";
constexpr std::string_view kMi355xSource =
    "AMD Instinct MI355X specifications: peak BF16/FP16 2.5 PFLOPS, FP8 5 PFLOPS, MXFP4 10 PFLOPS dense (FP8 "
    "10.1 with structured sparsity); unrounded here as 256 CUs x 2,400 MHz x 4,096 (16-bit), 8,192 (FP8) or "
    "16,384 (FP4) FLOP per clock per CU. https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html";

constexpr std::array kPeaks = {
    PeakThroughput{"a100", "NVIDIA A100 (SXM4 or PCIe)", Dtype::kBf16, 312, kA100Source},
    PeakThroughput{"a100", "NVIDIA A100 (SXM4 or PCIe)", Dtype::kFp16, 312, kA100Source},
    PeakThroughput{"h100-sxm", "NVIDIA H100 SXM5", Dtype::kBf16, 989.5, kH100SxmSource},
    PeakThroughput{"h100-sxm", "NVIDIA H100 SXM5", Dtype::kFp16, 989.5, kH100SxmSource},
    PeakThroughput{"h100-sxm", "NVIDIA H100 SXM5", Dtype::kFp8, 1979, kH100SxmSource},
    PeakThroughput{"h100-pcie", "NVIDIA H100 PCIe", Dtype::kBf16, 756.5, kH100PcieSource},
    PeakThroughput{"h100-pcie", "NVIDIA H100 PCIe", Dtype::kFp16, 756.5, kH100PcieSource},
    PeakThroughput{"h100-pcie", "NVIDIA H100 PCIe", Dtype::kFp8, 1513, kH100PcieSource},
    PeakThroughput{"h200", "NVIDIA H200 SXM", Dtype::kBf16, 989.5, kH200Source},
    PeakThroughput{"h200", "NVIDIA H200 SXM", Dtype::kFp16, 989.5, kH200Source},
    PeakThroughput{"h200", "NVIDIA H200 SXM", Dtype::kFp8, 1979, kH200Source},
    PeakThroughput{"h20", "NVIDIA H20", Dtype::kBf16, 148, kH20Source},
    PeakThroughput{"h20", "NVIDIA H20", Dtype::kFp16, 148, kH20Source},
    PeakThroughput{"h20", "NVIDIA H20", Dtype::kFp8, 296, kH20Source},
    PeakThroughput{"b200", "NVIDIA B200 (HGX B200)", Dtype::kBf16, 2250, kB200Source},
    PeakThroughput{"b200", "NVIDIA B200 (HGX B200)", Dtype::kFp16, 2250, kB200Source},
    PeakThroughput{"b200", "NVIDIA B200 (HGX B200)", Dtype::kFp8, 4500, kB200Source},
    PeakThroughput{"b200", "NVIDIA B200 (HGX B200)", Dtype::kFp4, 9000, kB200Source},
    PeakThroughput{"gb200", "NVIDIA GB200 (one Blackwell GPU of a superchip)", Dtype::kBf16, 2500, kGb200Source},
    PeakThroughput{"gb200", "NVIDIA GB200 (one Blackwell GPU of a superchip)", Dtype::kFp16, 2500, kGb200Source},
    PeakThroughput{"gb200", "NVIDIA GB200 (one Blackwell GPU of a superchip)", Dtype::kFp8, 5000, kGb200Source},
    PeakThroughput{"gb200", "NVIDIA GB200 (one Blackwell GPU of a superchip)", Dtype::kFp4, 10000, kGb200Source},
    PeakThroughput{"b300", "NVIDIA B300 (HGX B300, Blackwell Ultra)", Dtype::kBf16, 2250, kB300Source},
    PeakThroughput{"b300", "NVIDIA B300 (HGX B300, Blackwell Ultra)", Dtype::kFp16, 2250, kB300Source},
    PeakThroughput{"b300", "NVIDIA B300 (HGX B300, Blackwell Ultra)", Dtype::kFp8, 4500, kB300Source},
    PeakThroughput{"gb300", "NVIDIA GB300 (one Blackwell Ultra GPU of NVL72)", Dtype::kBf16, 2500, kGb300Source},
    PeakThroughput{"gb300", "NVIDIA GB300 (one Blackwell Ultra GPU of NVL72)", Dtype::kFp16, 2500, kGb300Source},
    PeakThroughput{"gb300", "NVIDIA GB300 (one Blackwell Ultra GPU of NVL72)", Dtype::kFp8, 5000, kGb300Source},
    PeakThroughput{"gb300", "NVIDIA GB300 (one Blackwell Ultra GPU of NVL72)", Dtype::kFp4, 15000, kGb300Source},
    PeakThroughput{"mi300x", "AMD Instinct MI300X", Dtype::kBf16, 1307.4, kMi300xSource},
    PeakThroughput{"mi300x", "AMD Instinct MI300X", Dtype::kFp16, 1307.4, kMi300xSource},
    PeakThroughput{"mi300x", "AMD Instinct MI300X", Dtype::kFp8, 2614.9, kMi300xSource},
    PeakThroughput{"mi325x", "AMD Instinct MI325X", Dtype::kBf16, 1307.4, kMi325xSource},
    PeakThroughput{"mi325x", "AMD Instinct MI325X", Dtype::kFp16, 1307.4, kMi325xSource},
    PeakThroughput{"mi325x", "AMD Instinct MI325X", Dtype::kFp8, 2614.9, kMi325xSource},
    PeakThroughput{"mi355x", "AMD Instinct MI355X", Dtype::kBf16, 2516.6, kMi355xSource},
    PeakThroughput{"mi355x", "AMD Instinct MI355X", Dtype::kFp16, 2516.6, kMi355xSource},
    PeakThroughput{"mi355x", "AMD Instinct MI355X", Dtype::kFp8, 5033.2, kMi355xSource},
    PeakThroughput{"mi355x", "AMD Instinct MI355X", Dtype::kFp4, 10066.3, kMi355xSource},
};

constexpr std::array kAliases = {
    GpuAlias{"h100", "h100-sxm",
             "h100 taken as h100-sxm (NVIDIA H100 SXM5, the part of most training clusters); the PCIe card is "
             "h100-pcie"},
    GpuAlias{"h100-sxm5", "h100-sxm", ""},
    GpuAlias{"h100sxm", "h100-sxm", ""},
    GpuAlias{"h100pcie", "h100-pcie", ""},
    GpuAlias{"h200-sxm", "h200", ""},
    GpuAlias{"a100-sxm", "a100", ""},
    GpuAlias{"a100-sxm4", "a100", ""},
    GpuAlias{"a100-pcie", "a100", ""},
    GpuAlias{"a100-40gb", "a100", ""},
    GpuAlias{"a100-80gb", "a100", ""},
    GpuAlias{"hgx-b200", "b200", ""},
    GpuAlias{"dgx-b200", "b200", ""},
    GpuAlias{"hgx-b300", "b300", ""},
    GpuAlias{"dgx-b300", "b300", ""},
    GpuAlias{"gb200-nvl72", "gb200", ""},
    GpuAlias{"gb300-nvl72", "gb300", ""},
};

constexpr std::array kDtypes = {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8, Dtype::kFp4};

std::string lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// "NVIDIA H100 SXM" -> "h100-sxm": lowercase, words joined by '-', without
// the vendor's name.
std::string gpu_key(std::string_view name) {
  std::string key = lowercase(name);
  for (char& c : key) c = c == ' ' || c == '_' ? '-' : c;
  for (std::string_view vendor : {"nvidia-", "amd-", "instinct-"}) {
    if (key.rfind(vendor, 0) == 0) key.erase(0, vendor.size());
  }
  return key;
}

std::string shown(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

Status check_positive(const char* field, double value, const char* unit) {
  if (value > 0 && std::isfinite(value)) return Ok{};
  return Error(std::string(field) + " = " + shown(value) + ": must be a positive, finite number" + unit);
}

}  // namespace

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
    case Dtype::kFp8: return "fp8";
    case Dtype::kFp4: return "fp4";
  }
  return "?";
}

Result<Dtype> parse_dtype(std::string_view text) {
  const std::string lower = lowercase(text);
  for (Dtype dtype : kDtypes) {
    if (lower == dtype_name(dtype)) return dtype;
  }
  return Error("\"" + std::string(text) + "\": must be one of bf16, fp16, fp8, fp4");
}

std::span<const PeakThroughput> peak_table() { return kPeaks; }

std::string peak_table_gpus() {
  std::string names;
  std::string_view previous;
  for (const PeakThroughput& peak : kPeaks) {
    if (peak.gpu == previous) continue;
    names += (names.empty() ? "" : ", ") + std::string(peak.gpu);
    previous = peak.gpu;
  }
  return names;
}

std::span<const GpuAlias> gpu_aliases() { return kAliases; }

Result<FoundPeak> find_peak(std::string_view gpu, Dtype dtype) {
  std::string key = gpu_key(gpu);
  std::string_view assumed;
  for (const GpuAlias& alias : kAliases) {
    if (alias.alias != key) continue;
    key = alias.gpu;
    assumed = alias.assumed;
  }
  bool known = false;
  for (const PeakThroughput& peak : kPeaks) {
    if (peak.gpu != key) continue;
    if (peak.dtype == dtype) return FoundPeak{peak, assumed};
    known = true;
  }
  if (known) {
    return Error(key + ": no " + std::string(dtype_name(dtype)) +
                 " tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops=");
  }
  std::vector<std::string_view> names;
  for (const PeakThroughput& peak : kPeaks) names.push_back(peak.gpu);
  for (const GpuAlias& alias : kAliases) names.push_back(alias.alias);
  const std::optional<std::string> near = nearest_name(key, names, 2);
  return Error("\"" + std::string(gpu) + "\": unknown GPU; " + (near ? "did you mean " + *near + "? " : "") +
               "one of " + peak_table_gpus() +
               " (trainflops gpus lists them), or give the peak with --peak-tflops / peak_tflops=");
}

std::string ChosenPeak::origin() const {
  if (!found) return "--peak-tflops";
  return std::string(found->peak.product) + ", " + std::string(dtype_name(dtype)) + ", dense";
}

Result<ChosenPeak> choose_peak(std::optional<double> peak_tflops, std::string_view gpu, Dtype dtype) {
  if (peak_tflops) return ChosenPeak{*peak_tflops, dtype, std::nullopt};
  if (gpu.empty()) return Error("--gpu is missing: give the GPU type (trainflops gpus lists them) or --peak-tflops");
  TRAINFLOPS_ASSIGN_OR_RETURN(const FoundPeak found, find_peak(gpu, dtype));
  return ChosenPeak{found.peak.dense_tflops, dtype, found};
}

Result<Utilization> utilization(const StepMeasurement& step) {
  TRAINFLOPS_RETURN_IF_ERROR(check_positive("model_flops", step.model_flops, ""));
  if (step.executed_flops) {
    TRAINFLOPS_RETURN_IF_ERROR(check_positive("executed_flops", *step.executed_flops, ""));
  }
  TRAINFLOPS_RETURN_IF_ERROR(check_positive("step_time_s", step.step_time_s, " of seconds"));
  if (step.num_gpus < 1) return Error("num_gpus = " + std::to_string(step.num_gpus) + ": must be >= 1");
  TRAINFLOPS_RETURN_IF_ERROR(check_positive("peak_tflops", step.peak_tflops, " of TFLOP/s per GPU"));
  const double gpu_seconds = step.step_time_s * static_cast<double>(step.num_gpus);
  // No run exceeds its peak: such a utilization means a wrong input, named here.
  const auto within_peak = [&](const char* name, double flops, double tflops_per_gpu) -> Status {
    if (tflops_per_gpu <= step.peak_tflops) return Ok{};
    char text[400];
    if (!std::isfinite(tflops_per_gpu)) {
      std::snprintf(text, sizeof text,
                    "%s is above the peak: %.4e FLOPs in %g s on %lld GPUs is past a double's range; check the "
                    "step time",
                    name, flops, step.step_time_s, static_cast<long long>(step.num_gpus));
      return Error(text);
    }
    std::snprintf(text, sizeof text,
                  "%s = %.2f%% is above the peak: %.4e FLOPs in %g s on %lld GPUs is %.1f TFLOP/s per GPU, more "
                  "than the %g of the peak; check the step time, the GPU count and the GPU type",
                  name, 100 * tflops_per_gpu / step.peak_tflops, flops, step.step_time_s,
                  static_cast<long long>(step.num_gpus), tflops_per_gpu, step.peak_tflops);
    return Error(text);
  };
  Utilization result;
  result.tflops_per_gpu = step.model_flops / gpu_seconds / 1e12;
  result.mfu = result.tflops_per_gpu / step.peak_tflops;
  TRAINFLOPS_RETURN_IF_ERROR(within_peak("MFU", step.model_flops, result.tflops_per_gpu));
  if (step.executed_flops) {
    result.executed_tflops_per_gpu = *step.executed_flops / gpu_seconds / 1e12;
    result.hfu = *result.executed_tflops_per_gpu / step.peak_tflops;
    TRAINFLOPS_RETURN_IF_ERROR(within_peak("HFU", *step.executed_flops, *result.executed_tflops_per_gpu));
  }
  return result;
}

}  // namespace trainflops
