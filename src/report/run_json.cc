// The JSON forms of the reports that turn FLOPs into time: plan and mfu.
#include <nlohmann/json.hpp>

#include "trainflops/render.h"

namespace trainflops {
namespace {

using nlohmann::ordered_json;

constexpr double kSecondsPerDay = 86400;

// User text (a model's name, a log's path) may hold invalid UTF-8: replaced,
// as a JSON writer must not fail on it.
std::string dump(const ordered_json& out) {
  return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

ordered_json peak_json(const ChosenPeak& peak) {
  ordered_json out = {{"tflops", peak.tflops}};
  if (!peak.found) return out;
  const PeakThroughput& p = peak.found->peak;
  out["gpu"] = p.gpu;
  out["product"] = p.product;
  out["dtype"] = dtype_name(peak.dtype);
  out["source"] = p.source;
  if (!peak.found->assumed.empty()) out["assumed"] = peak.found->assumed;
  return out;
}

ordered_json stage_json(const StagePlan& s) {
  ordered_json out = {{"seq_length", s.seq_length},
                      {"sequences_per_iteration", s.sequences},
                      {"tokens_asked", to_decimal(s.tokens_asked)},
                      {"tokens", to_decimal(s.tokens)},
                      {"iterations", to_decimal(s.iterations)},
                      {"flops_per_iteration", s.flops_per_iteration.value},
                      {"flops", s.flops},
                      {"seconds", s.seconds},
                      {"days", s.seconds / kSecondsPerDay},
                      {"gpu_hours", s.gpu_hours}};
  if (s.cost) out["cost"] = *s.cost;
  return out;
}

}  // namespace

std::string render_plan_json(const RunPlan& plan, const Cluster& cluster, const ChosenPeak& peak, Mode mode,
                             const std::string& model_summary) {
  ordered_json out;
  out["mode"] = mode_name(mode);
  out["model"] = model_summary;
  out["cluster"] = {{"num_gpus", cluster.num_gpus},
                    {"peak", peak_json(peak)},
                    {"mfu", cluster.mfu},
                    {"sustained_flops_per_s", plan.sustained_flops_per_s}};
  if (cluster.price_per_gpu_hour) out["cluster"]["price_per_gpu_hour"] = *cluster.price_per_gpu_hour;
  out["stages"] = ordered_json::array();
  for (const StagePlan& s : plan.stages) out["stages"].push_back(stage_json(s));
  out["total"] = {{"tokens", to_decimal(plan.tokens)},
                  {"flops", plan.flops},
                  {"seconds", plan.seconds},
                  {"days", plan.seconds / kSecondsPerDay},
                  {"gpu_hours", plan.gpu_hours}};
  if (plan.cost) out["total"]["cost"] = *plan.cost;
  return dump(out);
}

std::string render_mfu_json(const Report& report, const StepMeasurement& step, const Utilization& use,
                            const ChosenPeak& peak, const std::optional<LogSource>& log) {
  ordered_json out;
  out["mode"] = mode_name(report.mode);
  out["model"] = report.model;
  out["workload"] = {{"description", report.workload}, {"tokens", to_decimal(report.tokens)}};
  out["flops"] = step.model_flops;
  out["step_time_s"] = step.step_time_s;
  out["num_gpus"] = step.num_gpus;
  out["tokens_per_second"] = to_double(report.tokens) / step.step_time_s;
  out["peak"] = peak_json(peak);
  out["tflops_per_gpu"] = use.tflops_per_gpu;
  out["mfu"] = use.mfu;
  if (use.hfu) {
    out["executed_flops"] = *step.executed_flops;
    out["executed_tflops_per_gpu"] = *use.executed_tflops_per_gpu;
    out["hfu"] = *use.hfu;
  }
  if (log) {
    const MegatronLogIteration& it = log->iteration;
    out["megatron_log"] = {{"file", log->file}, {"line", it.line}};
    if (it.iteration) out["megatron_log"]["iteration"] = *it.iteration;
    if (it.tflops_per_gpu.value_or(0) > 0) {
      out["megatron_log"]["tflops_per_gpu"] = *it.tflops_per_gpu;
      out["megatron_log"]["mfu"] = *it.tflops_per_gpu / peak.tflops;
    }
  }
  return dump(out);
}

}  // namespace trainflops
