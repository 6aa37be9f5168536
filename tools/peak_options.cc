#include "peak_options.h"

namespace trainflops::cli {

void add_peak_options(CLI::App& command, PeakOptions& options) {
  command.add_option("--gpu", options.gpu, "GPU type, e.g. h100-sxm, b200, mi300x (trainflops gpus lists them)");
  command.add_option("--dtype", options.dtype, "bf16 (default), fp16, fp8 or fp4");
  command.add_option("--peak-tflops", options.peak_tflops, "Dense peak TFLOP/s per GPU (overrides --gpu)");
}

Result<ChosenPeak> peak_from_options(const PeakOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Dtype dtype, parse_dtype(o.dtype));
  return choose_peak(o.peak_tflops, o.gpu, dtype);
}

}  // namespace trainflops::cli
