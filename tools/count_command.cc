// trainflops count: the FLOPs of one training iteration with their breakdown.
#include "command.h"
#include "model_source.h"
#include "trainflops/count.h"
#include "trainflops/parameters.h"
#include "trainflops/pipeline.h"
#include "trainflops/render.h"
#include "workload_options.h"

namespace trainflops::cli {
namespace {

struct CountOptions {
  ModelOptions model;
  WorkloadOptions workload;
  std::string mode = "megatron", format = "table", recompute, layers = "kinds";  // recompute: empty as the source says
  PipelineSplit pipeline;
};

Result<std::string> run_count(const CountOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  TRAINFLOPS_ASSIGN_OR_RETURN(const LayerRows layers, parse_layer_rows(o.layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o.model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Recompute recompute, recompute_to_count(o.recompute, source, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const PipelineLayout layout,
                              pipeline_layout(source.model, o.pipeline.given() ? o.pipeline : source.pipeline));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count_workload(o.workload, source, mode, recompute));
  if (layout.chunks.empty()) return render(report, format, layers);
  // Parameters per stage where they can be counted (an MoE layer without
  // num_experts has no total).
  const Result<ModelParameters> parameters = count_parameters(source.model);
  return render(report, pipeline_report(report, layout, parameters.ok() ? &parameters.value() : nullptr), format,
                layers);
}

}  // namespace

Runner add_count_command(CLI::App& app) {
  auto options = std::make_shared<CountOptions>();
  CLI::App* command = app.add_subcommand("count", "Count the FLOPs of one training iteration");
  add_model_options(*command, options->model);
  add_workload_options(*command, options->workload);
  command->add_option("--mode", options->mode, "megatron (default), model or executed");
  command->add_option("--recompute", options->recompute,
                      "Executed mode: none, selective (core attention) or full (every layer); default: what "
                      "--megatron -- --recompute-granularity says, else none");
  command->add_option("--format", options->format, "table (default), json or csv");
  command->add_option("--layers", options->layers,
                      "The table's layer lines: kinds (default: one per kind and FLOPs), all (one per layer) or "
                      "none; JSON and CSV list every layer");
  command->add_option("--pipeline-stages", options->pipeline.stages,
                      "Report FLOPs per pipeline stage: an even split of the decoder layers (Megatron-LM's "
                      "placement; '|' in a hybrid layer pattern gives the stages without it)");
  command->add_option("--decoder-first-pipeline-num-layers", options->pipeline.first_stage_layers,
                      "With --pipeline-stages: decoder layers on the first stage (the others split evenly)");
  command->add_option("--decoder-last-pipeline-num-layers", options->pipeline.last_stage_layers,
                      "With --pipeline-stages: decoder layers on the last stage (the others split evenly)");
  command->add_option("--num-virtual-stages-per-pipeline-rank", options->pipeline.virtual_stages,
                      "With --pipeline-stages: model chunks per stage (Megatron-LM's interleaved virtual pipeline)");
  command->add_option("--pipeline-model-parallel-layout", options->pipeline.layout,
                      "With --pipeline-stages: Megatron-LM's layout of every chunk, e.g. \"Et*3|(tt|)*29,m|L\" "
                      "(E embedding, t decoder layer, m MTP depth, L output layer)");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return print_result(run_count(*options));
  };
}

}  // namespace trainflops::cli
