// trainflops mfu: TFLOP/s per GPU and MFU of a training run, from the FLOPs
// of one iteration (counted like `count`), the step time, the number of GPUs
// and their dense peak (docs/mfu.md). HFU is printed when the FLOPs the
// hardware executed are known: counted (--mode executed, with --recompute) or
// given (--executed-flops).
#include <cstdio>

#include "command.h"
#include "model_source.h"
#include "trainflops/count.h"
#include "trainflops/mfu.h"
#include "trainflops/render.h"
#include "workload_options.h"

namespace trainflops::cli {
namespace {

struct MfuOptions {
  ModelOptions model;
  WorkloadOptions workload;
  std::string mode = "megatron", recompute;  // recompute: empty as the source says
  std::optional<double> step_time_s;
  std::optional<std::int64_t> num_gpus;
  std::string gpu, dtype = "bf16";
  std::optional<double> peak_tflops, executed_flops;
};

std::string printed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// The peak, and where it comes from, for the "peak" line.
struct Peak {
  double tflops = 0;
  std::string origin;
};

Result<Peak> choose_peak(const MfuOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Dtype dtype, parse_dtype(o.dtype));
  if (o.peak_tflops) return Peak{*o.peak_tflops, "--peak-tflops"};
  if (o.gpu.empty()) return Error("--gpu is missing: give the GPU type (docs/mfu.md) or --peak-tflops");
  TRAINFLOPS_ASSIGN_OR_RETURN(const PeakThroughput peak, find_peak(o.gpu, dtype));
  return Peak{peak.dense_tflops, std::string(peak.product) + ", " + std::string(dtype_name(dtype)) + ", dense"};
}

Result<std::string> run_mfu(const MfuOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Peak peak, choose_peak(o));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o.model));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Recompute recompute, recompute_to_count(o.recompute, source, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Workload workload, load_workload(o.workload, source));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count(source.model, workload, mode, recompute));
  // Executed mode counts both numerators: the model total (MFU) and the executed one (HFU).
  if (report.model_total && o.executed_flops) {
    return Error("--executed-flops: executed mode counts them; give one or the other");
  }
  const double model_flops = report.model_total ? report.model_total->value : report.total.value;
  const std::optional<double> executed = report.model_total ? report.total.value : o.executed_flops;
  const StepMeasurement step{model_flops, executed, *o.step_time_s, *o.num_gpus, peak.tflops};
  TRAINFLOPS_ASSIGN_OR_RETURN(const Utilization use, utilization(step));
  const double tokens_per_s = to_double(report.tokens) / step.step_time_s;
  std::string out = "trainflops: MFU, " + std::string(mode_name(mode)) + " mode\n";
  out += "model      " + report.model + "\n";
  out += "workload   " + report.workload + "\n";
  out += "flops      " + format_flops(model_flops) + " per iteration (model FLOPs)\n";
  out += "step       " + printed("%g s", step.step_time_s) + " on " + std::to_string(step.num_gpus) + " GPUs, " +
         printed("%.0f tokens/s", tokens_per_s) + printed(" (%.1f per GPU)", tokens_per_s / step.num_gpus) + "\n";
  out += "peak       " + printed("%g TFLOP/s per GPU", peak.tflops) + " (" + peak.origin + ")\n";
  out += "throughput " + printed("%.1f TFLOP/s per GPU", use.tflops_per_gpu) + "\n";
  out += "MFU        " + printed("%.2f%%", 100 * use.mfu) + "\n";
  if (use.hfu) {
    out += "executed   " + format_flops(*executed) + " per iteration, " +
           printed("%.1f TFLOP/s per GPU", *use.executed_tflops_per_gpu) + "\n";
    out += "HFU        " + printed("%.2f%%", 100 * *use.hfu) + "\n";
  }
  return out;
}

}  // namespace

Runner add_mfu_command(CLI::App& app) {
  auto options = std::make_shared<MfuOptions>();
  CLI::App* command = app.add_subcommand("mfu", "TFLOP/s per GPU and MFU (HFU) from the step time");
  add_model_options(*command, options->model);
  add_workload_options(*command, options->workload);
  command->add_option("--mode", options->mode, "megatron (default), model, or executed (adds HFU)");
  command->add_option("--recompute", options->recompute,
                      "Executed mode: none, selective (core attention) or full (every layer); default: what "
                      "--megatron -- --recompute-granularity says, else none");
  command->add_option("--step-time", options->step_time_s, "Seconds per iteration")->required();
  command->add_option("--num-gpus", options->num_gpus, "GPUs the iteration runs on")->required();
  command->add_option("--gpu", options->gpu, "GPU type: " + peak_table_gpus() + " (docs/mfu.md)");
  command->add_option("--dtype", options->dtype, "bf16 (default), fp16 or fp8");
  command->add_option("--peak-tflops", options->peak_tflops, "Dense peak TFLOP/s per GPU (overrides --gpu)");
  command->add_option("--executed-flops", options->executed_flops,
                      "FLOPs executed per iteration (recomputation included): adds HFU");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return print_result(run_mfu(*options));
  };
}

}  // namespace trainflops::cli
