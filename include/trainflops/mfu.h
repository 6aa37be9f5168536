// Throughput and utilization of a training run: TFLOP/s per GPU and model
// FLOPs utilization (MFU), from the FLOPs of one iteration and its step time,
// against the dense peak of a GPU type taken from its vendor's datasheet.
// docs/mfu.md lists the table with its sources.
#ifndef TRAINFLOPS_MFU_H_
#define TRAINFLOPS_MFU_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

// The datatype of the tensor-core GEMMs.
enum class Dtype { kBf16, kFp16, kFp8, kFp4 };

// "bf16", "fp16", "fp8", "fp4"; parse_dtype() accepts them in any case and
// fails with "\"<text>\": must be one of bf16, fp16, fp8, fp4".
std::string_view dtype_name(Dtype dtype);
Result<Dtype> parse_dtype(std::string_view text);

// One GPU type's dense peak in one datatype: tensor-core throughput without
// structured sparsity, in TFLOP/s (10^12 FLOP per second) per GPU.
struct PeakThroughput {
  std::string_view gpu;      // the key: "a100", "h100-sxm", "mi300x", ...
  std::string_view product;  // "NVIDIA H100 SXM5"
  Dtype dtype = Dtype::kBf16;
  double dense_tflops = 0;
  // The vendor document the value comes from, with its URL, and how the dense
  // value follows from it where the document gives the sparse one.
  std::string_view source;
};

// Every entry, grouped by GPU in the order of docs/mfu.md.
std::span<const PeakThroughput> peak_table();

// The GPU keys of peak_table(), in order: "a100, h100-sxm, h100-pcie, ...".
std::string peak_table_gpus();

// Other names a GPU goes by ("H100 SXM5", "hgx-b200", "a100-80gb"), each with
// the key it stands for. An ambiguous name ("h100": SXM or PCIe) comes with
// what it is taken as, which reports print.
struct GpuAlias {
  std::string_view alias;    // lowercase, words joined by '-'
  std::string_view gpu;      // a key of peak_table()
  std::string_view assumed;  // empty, or "h100 taken as h100-sxm (...); the PCIe card is h100-pcie"
};
std::span<const GpuAlias> gpu_aliases();

// A peak found by name, and what an ambiguous name was taken as ("" if none).
struct FoundPeak {
  PeakThroughput peak;
  std::string_view assumed;
};

// The entry for `gpu` and `dtype`. `gpu` is a key of peak_table() or an alias,
// in any case, with spaces or '_' for '-' and an optional vendor prefix
// ("NVIDIA H100 SXM", "amd_mi300x"). Errors: an unknown GPU ("\"h1OO\":
// unknown GPU; did you mean h100? One of a100, h100-sxm, ... (trainflops
// gpus lists them), or give the peak with --peak-tflops / peak_tflops="), a
// datatype the GPU has no tensor-core rate for ("a100: no fp8 tensor-core
// rate in its datasheet; give the peak with --peak-tflops / peak_tflops=").
Result<FoundPeak> find_peak(std::string_view gpu, Dtype dtype);

// The peak a report counts one GPU at: a number given outright, or the
// table's entry found by GPU name and datatype.
struct ChosenPeak {
  double tflops = 0;               // dense TFLOP/s per GPU
  Dtype dtype = Dtype::kBf16;
  std::optional<FoundPeak> found;  // empty when the number was given
  // "NVIDIA H100 SXM5, bf16, dense", or "--peak-tflops" for a given number.
  std::string origin() const;
  // What an ambiguous GPU name was taken as, or "".
  std::string_view assumed() const { return found ? found->assumed : std::string_view(); }
};

// `peak_tflops` when given, else find_peak(gpu, dtype). Errors: neither
// given ("--gpu is missing: give the GPU type (trainflops gpus lists them) or
// --peak-tflops"), and find_peak's.
Result<ChosenPeak> choose_peak(std::optional<double> peak_tflops, std::string_view gpu, Dtype dtype);

// One measured training step.
struct StepMeasurement {
  double model_flops = 0;  // FLOPs of one iteration as counted (megatron or model mode), > 0
  // FLOPs the hardware executed in that iteration (recomputation included),
  // when known; > 0. With it the hardware FLOPs utilization (HFU) is reported.
  std::optional<double> executed_flops;
  double step_time_s = 0;     // seconds per iteration, > 0
  std::int64_t num_gpus = 0;  // GPUs the iteration ran on, >= 1
  double peak_tflops = 0;     // dense peak of one GPU, TFLOP/s, > 0
};

struct Utilization {
  double tflops_per_gpu = 0;                      // model_flops / (step_time_s * num_gpus) / 1e12
  double mfu = 0;                                 // tflops_per_gpu / peak_tflops (a fraction, 0.42 = 42%)
  std::optional<double> executed_tflops_per_gpu;  // the same for executed_flops
  std::optional<double> hfu;                      // executed_tflops_per_gpu / peak_tflops
};

// Errors name the field and the rule: "step_time_s = 0: must be a positive,
// finite number of seconds", "num_gpus = 0: must be >= 1", ...; and a
// utilization above 100%, which no real run reaches: "MFU = 143.21% is above
// the peak: 1.0905e+18 FLOPs in 3 s on 256 GPUs is 1417.0 TFLOP/s per GPU,
// more than the 989.5 of the peak; check the step time, the GPU count and
// the GPU type".
// Preconditions: none; every input is checked.
Result<Utilization> utilization(const StepMeasurement& step);

}  // namespace trainflops

#endif  // TRAINFLOPS_MFU_H_
