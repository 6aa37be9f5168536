// trainflops plan: a whole training run from a token budget (in context-length
// stages) or a time, a cluster and an MFU: FLOPs, iterations, days,
// GPU-hours and cost (plan.h).
#include <cmath>
#include <cstdio>

#include "command.h"
#include "model_source.h"
#include "peak_options.h"
#include "printed.h"
#include "trainflops/plan.h"
#include "trainflops/render.h"
#include "trainflops/workload_text.h"

namespace trainflops::cli {
namespace {

constexpr double kSecondsPerDay = 86400;

struct PlanOptions {
  ModelOptions model;
  PeakOptions peak;
  std::string mode = "megatron", format = "table";
  std::optional<std::string> tokens, stages, seq_length, global_batch_size, batch_tokens, mfu;
  std::optional<double> days;
  std::optional<std::int64_t> num_gpus;
  std::optional<double> price_per_gpu_hour;
};

// "14.8T@4k,100B@32k": the tokens and the sequence length of each stage.
Result<std::vector<PlanStage>> parse_stages(const std::string& text) {
  std::vector<PlanStage> stages;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t at = item.find('@');
    if (at == std::string::npos) {
      return Error("--stages: \"" + item + "\" must be TOKENS@SEQ_LENGTH, e.g. 14.8T@4k,100B@32k");
    }
    const std::string field = "--stages[" + std::to_string(stages.size()) + "]";
    PlanStage stage;
    TRAINFLOPS_ASSIGN_OR_RETURN(stage.tokens, parse_token_count(item.substr(0, at), field + " tokens"));
    TRAINFLOPS_ASSIGN_OR_RETURN(stage.seq_length,
                                parse_size(item.substr(at + 1), field + " seq length", 1, SizeSuffixes::kAccepted));
    stages.push_back(stage);
    start = end + 1;
  }
  return stages;
}

// The global batch: one option, else the model source's (Megatron-LM flags).
Result<PlanBatch> batch_of(const PlanOptions& o, const ModelSource& source) {
  if (o.global_batch_size && o.batch_tokens) {
    return Error("give the global batch one way: --global-batch-size (sequences) or --batch-tokens (tokens)");
  }
  PlanBatch batch;
  if (o.global_batch_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(batch.sequences,
                                parse_size(*o.global_batch_size, "--global-batch-size", 1, SizeSuffixes::kRejected));
  } else if (o.batch_tokens) {
    // A size like the sequence lengths it holds (16M = 4096 x 4096), not a budget.
    TRAINFLOPS_ASSIGN_OR_RETURN(batch.tokens,
                                parse_size(*o.batch_tokens, "--batch-tokens", 1, SizeSuffixes::kAccepted));
  } else if (source.global_batch_size) {
    batch.sequences = *source.global_batch_size;
  } else {
    return Error(
        "the global batch is missing: give --global-batch-size (sequences per iteration) or "
        "--batch-tokens (tokens per iteration, e.g. 16M)");
  }
  return batch;
}

Result<std::int64_t> seq_length_of(const PlanOptions& o, const ModelSource& source) {
  if (o.seq_length) return parse_size(*o.seq_length, "--seq-length", 1, SizeSuffixes::kAccepted);
  if (source.seq_length) return *source.seq_length;
  return Error("the sequence length is missing: give --seq-length (e.g. 4k), or --stages with one per stage");
}

Result<RunPlan> make_plan(const PlanOptions& o, const ModelSource& source, const FlopsCounter& counter,
                          const Cluster& cluster) {
  const int given = o.tokens.has_value() + o.stages.has_value() + o.days.has_value();
  if (given != 1) {
    return Error(std::string(given ? "give the run's length one way" : "the run's length is missing") +
                 ": one of --tokens (a budget, e.g. 15T), --stages (budgets per context length, e.g. "
                 "14.8T@4k,100B@32k) or --days (the tokens a time trains)");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const PlanBatch batch, batch_of(o, source));
  if (o.stages) {
    if (o.seq_length) return Error("--seq-length: --stages gives each stage its own; give one or the other");
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<PlanStage> stages, parse_stages(*o.stages));
    return plan_run(counter, stages, batch, cluster);
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t seq_length, seq_length_of(o, source));
  if (o.days) {
    if (!(*o.days > 0 && std::isfinite(*o.days))) {
      return Error("--days = " + printed("%g", *o.days) + ": must be a positive number");
    }
    return plan_for_time(counter, seq_length, batch, cluster, *o.days * kSecondsPerDay);
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 tokens, parse_token_count(*o.tokens, "--tokens"));
  return plan_run(counter, {PlanStage{tokens, seq_length}}, batch, cluster);
}

// 14800000000000 -> "14.8T"; exact below 1000.
std::string tokens_text(Int128 tokens) {
  const double value = to_double(tokens);
  const char* suffixes[] = {"", "K", "M", "B", "T", "P"};
  int suffix = 0;
  double scaled = value;
  while (scaled >= 1000 && suffix < 5) {
    scaled /= 1000;
    ++suffix;
  }
  return suffix == 0 ? to_decimal(tokens) : printed("%.4g", scaled) + suffixes[suffix];
}

std::string cell(std::string text, std::size_t width, bool right = true) {
  if (text.size() < width) text.insert(right ? 0 : text.size(), width - text.size(), ' ');
  return " " + text;
}

std::string render_table(const PlanOptions& o, const ModelSource& source, const ChosenPeak& peak,
                         const Cluster& cluster, const RunPlan& plan, Mode mode) {
  std::string out = "trainflops: run plan, " + std::string(mode_name(mode)) + " mode\n";
  out += "model      " + summarize(source.model) + "\n";
  out += "cluster    " + std::to_string(cluster.num_gpus) + " GPUs x " + printed("%g", peak.tflops) + " TFLOP/s (" +
         peak.origin() + ") at MFU " + printed("%.2f%%", 100 * cluster.mfu) + ": " +
         printed("%.4g", plan.sustained_flops_per_s / 1e15) + " PFLOP/s sustained\n";
  if (!peak.assumed().empty()) out += "           " + std::string(peak.assumed()) + "\n";
  out += "\n" + std::string("stage") + cell("seq length", 10) + cell("sequences", 9) + cell("tokens", 9) +
         cell("iterations", 12) + cell("FLOPs/iter", 11) + cell("FLOPs", 11) + cell("days", 9) + cell("GPU-hours", 12) +
         (cluster.price_per_gpu_hour ? cell("cost", 13) : "") + "\n";
  const auto row = [&](const std::string& name, const std::string& seq, const std::string& sequences, Int128 tokens,
                       const std::string& iterations, const std::string& per_iteration, double flops, double seconds,
                       double gpu_hours, const std::optional<double>& cost) {
    return name + std::string(5 - std::min<std::size_t>(5, name.size()), ' ') + cell(seq, 10) + cell(sequences, 9) +
           cell(tokens_text(tokens), 9) + cell(iterations, 12) + cell(per_iteration, 11) +
           cell(format_flops(flops), 11) + cell(printed("%.2f", seconds / kSecondsPerDay), 9) +
           cell(printed("%.0f", gpu_hours), 12) + (cost ? cell(printed("%.0f", *cost), 13) : "") + "\n";
  };
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& s = plan.stages[i];
    out += row(std::to_string(i + 1), std::to_string(s.seq_length), std::to_string(s.sequences), s.tokens,
               to_decimal(s.iterations), format_flops(s.flops_per_iteration.value), s.flops, s.seconds, s.gpu_hours,
               s.cost);
  }
  if (plan.stages.size() > 1) {
    Int128 iterations = 0;
    for (const StagePlan& s : plan.stages) iterations += s.iterations;
    out += row("all", "", "", plan.tokens, to_decimal(iterations), "", plan.flops, plan.seconds, plan.gpu_hours,
               plan.cost);
  }
  if (o.days) {
    out += "\n" + printed("%g", *o.days) + " days train " + tokens_text(plan.tokens) + " tokens (" +
           to_decimal(plan.tokens) + ") in whole iterations.\n";
  }
  return out;
}

std::string render_csv(const RunPlan& plan) {
  std::string out =
      "stage,seq_length,sequences_per_iteration,tokens,iterations,flops_per_iteration,flops,days,"
      "gpu_hours,cost\n";
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& s = plan.stages[i];
    out += std::to_string(i + 1) + "," + std::to_string(s.seq_length) + "," + std::to_string(s.sequences) + "," +
           to_decimal(s.tokens) + "," + to_decimal(s.iterations) + "," + shortest_decimal(s.flops_per_iteration.value) +
           "," + shortest_decimal(s.flops) + "," + shortest_decimal(s.seconds / kSecondsPerDay) + "," +
           shortest_decimal(s.gpu_hours) + "," + (s.cost ? shortest_decimal(*s.cost) : "") + "\n";
  }
  out += "all,,," + to_decimal(plan.tokens) + ",,," + shortest_decimal(plan.flops) + "," +
         shortest_decimal(plan.seconds / kSecondsPerDay) + "," + shortest_decimal(plan.gpu_hours) + "," +
         (plan.cost ? shortest_decimal(*plan.cost) : "") + "\n";
  return out;
}

Result<std::string> run_plan(const PlanOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  if (mode == Mode::kExecuted) {
    return Error("--mode = \"executed\": a plan counts model FLOPs, as MFU does: megatron or model");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ChosenPeak peak, peak_from_options(o.peak));
  if (!o.mfu) return Error("--mfu is missing: the utilization the run sustains, e.g. 0.4 or 40%");
  Cluster cluster;
  TRAINFLOPS_ASSIGN_OR_RETURN(cluster.mfu, parse_utilization(*o.mfu, "--mfu"));
  cluster.num_gpus = *o.num_gpus;
  cluster.peak_tflops = peak.tflops;
  cluster.price_per_gpu_hour = o.price_per_gpu_hour;
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o.model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(source.model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const RunPlan plan, make_plan(o, source, counter, cluster));
  switch (format) {
    case Format::kTable: return render_table(o, source, peak, cluster, plan, mode);
    case Format::kCsv: return render_csv(plan);
    case Format::kJson: break;
  }
  return render_plan_json(plan, cluster, peak, mode, summarize(source.model));
}

}  // namespace

Runner add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* command =
      app.add_subcommand("plan", "A whole run: FLOPs, iterations, days, GPU-hours and cost from a token budget");
  add_model_options(*command, options->model);
  add_peak_options(*command, options->peak);
  command->add_option("--mode", options->mode, "megatron (default) or model");
  command->add_option("--tokens", options->tokens, "The token budget, e.g. 15T or 500B");
  command->add_option("--stages", options->stages,
                      "Budgets per context length, e.g. 14.8T@4k,100B@32k,100B@128k (instead of --tokens)");
  command->add_option("--days", options->days, "The time of the run: how many tokens it trains (instead of --tokens)");
  command->add_option("--seq-length", options->seq_length, "Tokens per sequence (4096, or 4k)");
  command->add_option("--global-batch-size", options->global_batch_size, "Sequences per iteration");
  command->add_option("--batch-tokens", options->batch_tokens,
                      "Tokens per iteration, e.g. 16M (= 4096 x 4096; k and M are powers of 1024 here, as in lengths)");
  command->add_option("--num-gpus", options->num_gpus, "GPUs of the run")->required();
  command->add_option("--mfu", options->mfu, "The MFU the run sustains: 0.4 or 40% (assumed or measured)");
  command->add_option("--price-per-gpu-hour", options->price_per_gpu_hour, "Adds the cost (any currency)");
  command->add_option("--format", options->format, "table (default), json or csv");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return print_result(run_plan(*options));
  };
}

}  // namespace trainflops::cli
