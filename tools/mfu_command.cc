// trainflops mfu: TFLOP/s per GPU and MFU of a training run, from the FLOPs
// of one iteration (counted like `count`), the step time (given, from tokens
// per second, or from a Megatron-LM log line), the number of GPUs and their
// dense peak (docs/mfu.md). HFU is printed when the FLOPs the hardware
// executed are known: counted (--mode executed, with --recompute) or given
// (--executed-flops). With a Megatron-LM log that shows its throughput, the
// MFU Megatron-LM's own count implies is printed beside trainflops'.
#include <cstdio>

#include "command.h"
#include "model_source.h"
#include "peak_options.h"
#include "printed.h"
#include "trainflops/count.h"
#include "trainflops/megatron_log.h"
#include "trainflops/mfu.h"
#include "trainflops/render.h"
#include "workload_options.h"

namespace trainflops::cli {
namespace {

struct MfuOptions {
  ModelOptions model;
  WorkloadOptions workload;
  std::string mode = "megatron", recompute, format = "table";  // recompute: empty as the source says
  std::optional<double> step_time_s, tokens_per_second;
  std::string megatron_log;
  std::optional<std::int64_t> num_gpus;
  PeakOptions peak;
  std::optional<double> executed_flops;
};

// How the step time was given: exactly one way.
Result<std::optional<MegatronLogIteration>> read_log(const MfuOptions& o) {
  const int given = o.step_time_s.has_value() + o.tokens_per_second.has_value() + !o.megatron_log.empty();
  if (given != 1) {
    return Error(std::string(given ? "give the step time one way" : "the step time is missing") +
                 ": one of --step-time (seconds per iteration), --tokens-per-second (of the whole run) or "
                 "--megatron-log (a Megatron-LM training log)");
  }
  if (o.megatron_log.empty()) return std::optional<MegatronLogIteration>();
  TRAINFLOPS_ASSIGN_OR_RETURN(const MegatronLogIteration iteration, read_megatron_log(o.megatron_log));
  return std::optional<MegatronLogIteration>(iteration);
}

Result<std::string> run_mfu(MfuOptions o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  if (format == Format::kCsv) return Error("--format = \"csv\": mfu prints table or json");
  TRAINFLOPS_ASSIGN_OR_RETURN(const ChosenPeak peak, peak_from_options(o.peak));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<MegatronLogIteration> log, read_log(o));
  // The log's global batch size is the workload's, unless the options give one.
  const WorkloadOptions& w = o.workload;
  const bool workload_given = w.global_batch_size || !w.docs.empty() || !w.cu_seqlens_file.empty() ||
                              w.total_real_tokens || w.seqlen_squared_sum;
  if (log && log->global_batch_size && !workload_given) {
    o.workload.global_batch_size = std::to_string(*log->global_batch_size);
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o.model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Recompute recompute, recompute_to_count(o.recompute, source, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count_workload(o.workload, source, mode, recompute));
  // Executed mode counts both numerators: the model total (MFU) and the executed one (HFU).
  if (report.model_total && o.executed_flops) {
    return Error("--executed-flops: executed mode counts them; give one or the other");
  }
  double step_time_s = log ? log->step_time_s : o.step_time_s.value_or(0);
  if (o.tokens_per_second) {
    if (!(*o.tokens_per_second > 0)) {
      return Error("--tokens-per-second = " + printed("%g", *o.tokens_per_second) + ": must be a positive number");
    }
    step_time_s = to_double(report.tokens) / *o.tokens_per_second;
  }
  const double model_flops = report.model_total ? report.model_total->value : report.total.value;
  if (o.executed_flops && *o.executed_flops < model_flops) {
    return Error("--executed-flops = " + printed("%g", *o.executed_flops) + ": below the " +
                 printed("%.4e", model_flops) + " model FLOPs of the iteration, which the hardware executes at least "
                 "(recomputation adds to them)");
  }
  const std::optional<double> executed = report.model_total ? report.total.value : o.executed_flops;
  const StepMeasurement step{model_flops, executed, step_time_s, *o.num_gpus, peak.tflops};
  TRAINFLOPS_ASSIGN_OR_RETURN(const Utilization use, utilization(step));
  const double tokens_per_s = to_double(report.tokens) / step.step_time_s;
  // Megatron-LM's own number, its TFLOP/s per GPU over the same peak (0: the log has none).
  const double megatron_tflops = log ? log->tflops_per_gpu.value_or(0) : 0;

  if (format == Format::kJson) {
    std::optional<LogSource> source_log;
    if (log) source_log = LogSource{o.megatron_log, *log};
    return render_mfu_json(report, step, use, peak, source_log);
  }
  std::string out = "trainflops: MFU, " + std::string(mode_name(mode)) + " mode\n";
  out += "model      " + report.model + "\n";
  out += "workload   " + report.workload + "\n";
  out += "flops      " + format_flops(model_flops) + " per iteration (model FLOPs)\n";
  if (log) {
    out += "log        " + o.megatron_log + ", line " + std::to_string(log->line) +
           (log->iteration ? " (iteration " + std::to_string(*log->iteration) + ")" : "") + "\n";
  }
  out += "step       " + printed("%g s", step.step_time_s) + " on " + std::to_string(step.num_gpus) + " GPUs, " +
         printed("%.0f tokens/s", tokens_per_s) + printed(" (%.1f per GPU)", tokens_per_s / step.num_gpus) + "\n";
  out += "peak       " + printed("%g TFLOP/s per GPU", peak.tflops) + " (" + peak.origin() + ")\n";
  if (!peak.assumed().empty()) out += "           " + std::string(peak.assumed()) + "\n";
  out += "throughput " + printed("%.1f TFLOP/s per GPU", use.tflops_per_gpu) + "\n";
  out += "MFU        " + printed("%.2f%%", 100 * use.mfu) + "\n";
  if (use.hfu) {
    out += "executed   " + format_flops(*executed) + " per iteration, " +
           printed("%.1f TFLOP/s per GPU", *use.executed_tflops_per_gpu) + "\n";
    out += "HFU        " + printed("%.2f%%", 100 * *use.hfu) + "\n";
  }
  if (megatron_tflops > 0) {
    out += "Megatron   " + printed("%.1f TFLOP/s per GPU", megatron_tflops) + " in its log: MFU " +
           printed("%.2f%%", 100 * megatron_tflops / peak.tflops) + " by its own count (" +
           printed("%.4f", megatron_tflops / use.tflops_per_gpu) + " x trainflops')\n";
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
  command->add_option("--step-time", options->step_time_s, "Seconds per iteration");
  command->add_option("--tokens-per-second", options->tokens_per_second,
                      "Tokens per second of the whole run (instead of --step-time)");
  command->add_option("--megatron-log", options->megatron_log,
                      "A Megatron-LM training log: its last iteration line gives the step time, the global batch "
                      "size and Megatron-LM's own TFLOP/s per GPU (instead of --step-time)");
  command->add_option("--num-gpus", options->num_gpus, "GPUs the iteration runs on")->required();
  add_peak_options(*command, options->peak);
  command->add_option("--executed-flops", options->executed_flops,
                      "FLOPs executed per iteration (recomputation included): adds HFU");
  command->add_option("--format", options->format, "table (default) or json");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return print_result(run_mfu(*options));
  };
}

}  // namespace trainflops::cli
