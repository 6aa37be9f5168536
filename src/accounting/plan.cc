#include "trainflops/plan.h"

#include <cmath>
#include <string>

#include "base/decimal_text.h"

namespace trainflops {
namespace {

constexpr double kSecondsPerHour = 3600;

std::string shown(double value) { return shortest_round_trip(value); }

Status check_cluster(const Cluster& c) {
  if (c.num_gpus < 1) return Error("num_gpus = " + std::to_string(c.num_gpus) + ": must be >= 1");
  if (!(c.peak_tflops > 0) || !std::isfinite(c.peak_tflops)) {
    return Error("peak_tflops = " + shown(c.peak_tflops) + ": must be a positive, finite number of TFLOP/s per GPU");
  }
  if (!(c.mfu > 0 && c.mfu <= 1)) return Error("mfu = " + shown(c.mfu) + ": must be in (0, 1]");
  if (c.price_per_gpu_hour && !(*c.price_per_gpu_hour >= 0 && std::isfinite(*c.price_per_gpu_hour))) {
    return Error("price_per_gpu_hour = " + shown(*c.price_per_gpu_hour) + ": must be a non-negative number");
  }
  return Ok{};
}

// Sequences per iteration of a stage of `seq_length`.
Result<std::int64_t> sequences_of(const PlanBatch& batch, std::int64_t seq_length, std::size_t stage) {
  if (batch.sequences.has_value() == batch.tokens.has_value()) {
    return Error(
        "give the global batch one way: batch_sequences (sequences per iteration) or batch_tokens (tokens "
        "per iteration)");
  }
  if (batch.sequences) {
    if (*batch.sequences < 1) return Error("batch_sequences = " + std::to_string(*batch.sequences) + ": must be >= 1");
    return *batch.sequences;
  }
  if (*batch.tokens < 1) return Error("batch_tokens = " + std::to_string(*batch.tokens) + ": must be >= 1");
  if (*batch.tokens % seq_length != 0) {
    return Error("batch_tokens = " + std::to_string(*batch.tokens) + ": seq_length = " + std::to_string(seq_length) +
                 " of stage " + std::to_string(stage + 1) + " does not divide it");
  }
  return *batch.tokens / seq_length;
}

// A stage of `iterations` iterations, its time and cost.
Result<StagePlan> stage_plan(const FlopsCounter& counter, std::int64_t seq_length, std::int64_t sequences,
                             Int128 tokens_asked, Int128 iterations, const Cluster& cluster, double sustained) {
  StagePlan stage;
  stage.seq_length = seq_length;
  stage.sequences = sequences;
  stage.tokens_asked = tokens_asked;
  stage.iterations = iterations;
  const auto per_iteration = checked_mul(Int128{sequences}, seq_length);
  const auto tokens = per_iteration ? checked_mul(*per_iteration, iterations) : std::nullopt;
  if (!tokens) return Error(ErrorCode::kOverflow, "the tokens of the run do not fit in 128 bits");
  stage.tokens = *tokens;
  TRAINFLOPS_ASSIGN_OR_RETURN(stage.flops_per_iteration, counter.total(Bshd{sequences, seq_length}));
  stage.flops = stage.flops_per_iteration.value * to_double(iterations);
  stage.seconds = stage.flops / sustained;
  stage.gpu_hours = stage.seconds / kSecondsPerHour * static_cast<double>(cluster.num_gpus);
  if (cluster.price_per_gpu_hour) stage.cost = stage.gpu_hours * *cluster.price_per_gpu_hour;
  return stage;
}

Result<RunPlan> totals(std::vector<StagePlan> stages, const Cluster& cluster, double sustained) {
  RunPlan plan;
  plan.sustained_flops_per_s = sustained;
  for (const StagePlan& stage : stages) {
    const std::optional<Int128> tokens = checked_add(plan.tokens, stage.tokens);
    if (!tokens) return Error(ErrorCode::kOverflow, "the tokens of the run do not fit in 128 bits");
    plan.tokens = *tokens;
    plan.flops += stage.flops;
    plan.seconds += stage.seconds;
    plan.gpu_hours += stage.gpu_hours;
  }
  if (cluster.price_per_gpu_hour) plan.cost = plan.gpu_hours * *cluster.price_per_gpu_hour;
  plan.stages = std::move(stages);
  return plan;
}

double sustained_of(const Cluster& c) { return static_cast<double>(c.num_gpus) * c.peak_tflops * 1e12 * c.mfu; }

}  // namespace

Result<RunPlan> plan_run(const FlopsCounter& counter, const std::vector<PlanStage>& stages, const PlanBatch& batch,
                         const Cluster& cluster) {
  TRAINFLOPS_RETURN_IF_ERROR(check_cluster(cluster));
  if (stages.empty()) return Error("stages: give at least one (tokens and seq_length)");
  const double sustained = sustained_of(cluster);
  std::vector<StagePlan> planned;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const PlanStage& s = stages[i];
    const std::string field = "stages[" + std::to_string(i) + "]";
    if (s.tokens < 1) return Error(field + ".tokens = " + to_decimal(s.tokens) + ": must be >= 1");
    if (s.seq_length < 1) return Error(field + ".seq_length = " + std::to_string(s.seq_length) + ": must be >= 1");
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t sequences, sequences_of(batch, s.seq_length, i));
    const Int128 per_iteration = Int128{sequences} * s.seq_length;  // both below 2^63
    const Int128 iterations = s.tokens / per_iteration + (s.tokens % per_iteration != 0);
    TRAINFLOPS_ASSIGN_OR_RETURN(StagePlan stage,
                                stage_plan(counter, s.seq_length, sequences, s.tokens, iterations, cluster, sustained));
    planned.push_back(std::move(stage));
  }
  return totals(std::move(planned), cluster, sustained);
}

Result<RunPlan> plan_for_time(const FlopsCounter& counter, std::int64_t seq_length, const PlanBatch& batch,
                              const Cluster& cluster, double seconds) {
  TRAINFLOPS_RETURN_IF_ERROR(check_cluster(cluster));
  if (!(seconds > 0) || !std::isfinite(seconds)) {
    return Error("seconds = " + shown(seconds) + ": must be a positive, finite time");
  }
  if (seq_length < 1) return Error("seq_length = " + std::to_string(seq_length) + ": must be >= 1");
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t sequences, sequences_of(batch, seq_length, 0));
  const double sustained = sustained_of(cluster);
  TRAINFLOPS_ASSIGN_OR_RETURN(const Flops per_iteration, counter.total(Bshd{sequences, seq_length}));
  const double whole = std::floor(seconds * sustained / per_iteration.value);
  if (whole < 1) {
    return Error("seconds = " + shown(seconds) + ": shorter than one iteration, which takes " +
                 shown(per_iteration.value / sustained) + " s on this cluster");
  }
  if (whole >= 1e36) return Error(ErrorCode::kOverflow, "the iterations of the run do not fit in 128 bits");
  const auto iterations = static_cast<Int128>(whole);
  TRAINFLOPS_ASSIGN_OR_RETURN(StagePlan stage,
                              stage_plan(counter, seq_length, sequences, 0, iterations, cluster, sustained));
  stage.tokens_asked = stage.tokens;
  return totals({std::move(stage)}, cluster, sustained);
}

Result<double> parse_utilization(std::string_view text, std::string_view field) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string_view number = percent ? text.substr(0, text.size() - 1) : text;
  const std::optional<double> read = parse_double(number);
  const double value = read ? (percent ? *read / 100 : *read) : 0;
  if (!(value > 0 && value <= 1)) {
    return Error(std::string(field) + " = \"" + std::string(text) +
                 "\": must be a fraction in (0, 1] or a percentage in (0, 100]");
  }
  return value;
}

}  // namespace trainflops
