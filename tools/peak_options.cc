#include "peak_options.h"

#include "trainflops/mfu.h"

namespace trainflops::cli {

void add_peak_options(CLI::App& command, PeakOptions& options) {
  command.add_option("--gpu", options.gpu, "GPU type, e.g. h100-sxm, b200, mi300x (trainflops gpus lists them)");
  command.add_option("--dtype", options.dtype, "bf16 (default), fp16, fp8 or fp4");
  command.add_option("--peak-tflops", options.peak_tflops, "Dense peak TFLOP/s per GPU (overrides --gpu)");
}

Result<ChosenPeak> choose_peak(const PeakOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Dtype dtype, parse_dtype(o.dtype));
  if (o.peak_tflops) return ChosenPeak{*o.peak_tflops, "--peak-tflops", "", {{"tflops", *o.peak_tflops}}};
  if (o.gpu.empty()) return Error("--gpu is missing: give the GPU type (trainflops gpus lists them) or --peak-tflops");
  TRAINFLOPS_ASSIGN_OR_RETURN(const FoundPeak found, find_peak(o.gpu, dtype));
  const PeakThroughput& p = found.peak;
  nlohmann::ordered_json json = {{"tflops", p.dense_tflops},
                                 {"gpu", p.gpu},
                                 {"product", p.product},
                                 {"dtype", dtype_name(dtype)},
                                 {"source", p.source}};
  if (!found.assumed.empty()) json["assumed"] = found.assumed;
  return ChosenPeak{p.dense_tflops, std::string(p.product) + ", " + std::string(dtype_name(dtype)) + ", dense",
                    std::string(found.assumed), std::move(json)};
}

}  // namespace trainflops::cli
