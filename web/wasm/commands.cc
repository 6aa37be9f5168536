#include "commands.h"

#include <nlohmann/json.hpp>

#include "trainflops/compare.h"
#include "trainflops/mfu.h"
#include "trainflops/plan.h"
#include "trainflops/presets.h"
#include "trainflops/render.h"
#include "trainflops/sweep.h"
#include "trainflops/workload_text.h"

namespace trainflops::web {
namespace {

using nlohmann::ordered_json;

// The text of a JSON value that nlohmann writes: invalid UTF-8 replaced.
std::string text_of(const ordered_json& value) {
  return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// The peak of one GPU: "peak-tflops", else the table's entry for "gpu" and "dtype".
Result<ChosenPeak> read_peak(const Options& options) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Dtype dtype, parse_dtype(option(options, "dtype").value_or("bf16")));
  std::optional<double> tflops;
  if (option(options, "peak-tflops")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(tflops, read_number(options, "peak-tflops"));
  }
  return choose_peak(tflops, option(options, "gpu").value_or(""), dtype);
}

Result<std::int64_t> read_num_gpus(const Options& options) {
  if (!option(options, "num-gpus")) return Error("--num-gpus is required");
  return read_size(options, "num-gpus", 1, false);
}

// The sequence length of a view: "seq-length", else the source's.
Result<std::int64_t> read_seq_length(const Options& options, const ResolvedModel& source) {
  if (option(options, "seq-length")) return read_size(options, "seq-length", 1, true);
  if (source.seq_length) return *source.seq_length;
  return Error("the sequence length is missing: give --seq-length (e.g. 4096 or 4k)");
}

}  // namespace

Result<std::string> count_view(const Options& options, const std::vector<std::int64_t>* cu_seqlens) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, read_mode(options));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel source, read_model(options, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Recompute recompute, read_recompute(options, source, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Workload workload, read_workload(options, source, cu_seqlens));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count(source.model, workload, mode, recompute));
  const ordered_json extras = {
      {"table", render(report, Format::kTable)}, {"warnings", source.warnings}, {"assumed", source.assumed}};
  std::string out = "{\"report\":" + render(report, Format::kJson) + "," + text_of(extras).substr(1);
  return out;
}

Result<std::string> sweep_view(const Options& options) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, read_mode(options));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> lengths,
                              parse_seq_lengths(option(options, "seq-lengths").value_or("4k,32k,128k,256k")));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel source, read_model(options, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<SweepPoint> points, sweep(source.model, lengths, mode));
  return render_sweep(points, summarize(source.model), mode, Format::kJson);
}

Result<std::string> compare_view(const Options& options) {
  // Every framework's convention, counted on the model as its source describes it.
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel source, read_model(options, Mode::kModel));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t seq_length, read_seq_length(options, source));
  std::int64_t sequences = source.global_batch_size.value_or(1);
  if (option(options, "global-batch-size")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(sequences, read_size(options, "global-batch-size", 1, false));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const Comparison comparison, compare_frameworks(source.model, seq_length, sequences));
  return render_comparison(comparison, Format::kJson);
}

Result<std::string> plan_view(const Options& options) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, read_mode(options));
  if (mode == Mode::kExecuted) {
    return Error("--mode = \"executed\": a plan counts model FLOPs, as MFU does: megatron or model");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const ChosenPeak peak, read_peak(options));
  const std::optional<std::string> mfu = option(options, "mfu");
  if (!mfu) return Error("--mfu is missing: the utilization the run sustains, e.g. 0.4 or 40%");
  Cluster cluster;
  TRAINFLOPS_ASSIGN_OR_RETURN(cluster.mfu, parse_utilization(*mfu, "--mfu"));
  TRAINFLOPS_ASSIGN_OR_RETURN(cluster.num_gpus, read_num_gpus(options));
  cluster.peak_tflops = peak.tflops;
  if (option(options, "price-per-gpu-hour")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(cluster.price_per_gpu_hour, read_number(options, "price-per-gpu-hour"));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel source, read_model(options, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(source.model, mode));
  const std::optional<std::string> tokens_text = option(options, "tokens");
  if (!tokens_text) return Error("the run's length is missing: give --tokens (a budget, e.g. 15T)");
  PlanStage stage;
  TRAINFLOPS_ASSIGN_OR_RETURN(stage.tokens, parse_token_count(*tokens_text, "--tokens"));
  TRAINFLOPS_ASSIGN_OR_RETURN(stage.seq_length, read_seq_length(options, source));
  PlanBatch batch;
  if (option(options, "global-batch-size")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(batch.sequences, read_size(options, "global-batch-size", 1, false));
  } else if (source.global_batch_size) {
    batch.sequences = *source.global_batch_size;
  } else {
    return Error("the global batch is missing: give --global-batch-size (sequences per iteration)");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const RunPlan plan, plan_run(counter, {stage}, batch, cluster));
  return render_plan_json(plan, cluster, peak, mode, summarize(source.model));
}

Result<std::string> mfu_view(const Options& options, const std::vector<std::int64_t>* cu_seqlens) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, read_mode(options));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ChosenPeak peak, read_peak(options));
  if (!option(options, "step-time")) return Error("the step time is missing: give --step-time (seconds per iteration)");
  TRAINFLOPS_ASSIGN_OR_RETURN(const double step_time_s, read_number(options, "step-time"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t num_gpus, read_num_gpus(options));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel source, read_model(options, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Recompute recompute, read_recompute(options, source, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Workload workload, read_workload(options, source, cu_seqlens));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count(source.model, workload, mode, recompute));
  // Executed mode counts both numerators: the model total (MFU) and the executed one (HFU).
  const double model_flops = report.model_total ? report.model_total->value : report.total.value;
  const std::optional<double> executed = report.model_total ? std::optional<double>(report.total.value) : std::nullopt;
  const StepMeasurement step{model_flops, executed, step_time_s, num_gpus, peak.tflops};
  TRAINFLOPS_ASSIGN_OR_RETURN(const Utilization use, utilization(step));
  return render_mfu_json(report, step, use, peak, std::nullopt);
}

std::string catalog() {
  ordered_json out = {{"presets", ordered_json::array()}, {"gpus", ordered_json::array()}};
  for (const Preset& preset : presets()) {
    ordered_json row = {{"name", preset.name}, {"title", preset.title}, {"description", preset.description}};
    if (preset.seq_length) row["seq_length"] = *preset.seq_length;
    out["presets"].push_back(std::move(row));
  }
  for (const PeakThroughput& peak : peak_table()) {
    ordered_json& gpus = out["gpus"];
    if (gpus.empty() || gpus.back()["gpu"] != peak.gpu) {
      gpus.push_back({{"gpu", peak.gpu}, {"product", peak.product}, {"dtypes", ordered_json::array()}});
    }
    gpus.back()["dtypes"].push_back(dtype_name(peak.dtype));
  }
  return text_of(out);
}

}  // namespace trainflops::web
