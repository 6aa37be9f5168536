// Pipeline parallelism: the FLOPs of each pipeline stage of one training
// iteration, and their imbalance. Every stage runs every micro-batch, so the
// slowest stage sets the step: the imbalance (max stage / mean stage) is the
// factor by which it is slower than a perfect split.
//
// Placement follows Megatron-LM: the decoder layers are split into
// consecutive stages; the embedding sits on the first stage, the MTP depths
// and the output layer (logits, of every head) on the last.
#ifndef TRAINFLOPS_PIPELINE_H_
#define TRAINFLOPS_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/parameters.h"
#include "trainflops/result.h"

namespace trainflops {

// The decoder layers of each stage, and where the split comes from.
struct PipelineLayout {
  std::vector<std::int64_t> stage_layers;  // empty: no pipeline stages
  std::string origin;                      // "pipeline_stages 4, even split", "hybrid_layer_pattern '|'", ...
};

// From `split` when it gives `stages`, else from the model's own stages (`|`
// in a hybrid pattern), else none. An even split needs `stages` to divide the
// decoder layers; with the first or last stage set, the middle stages share
// the remaining layers evenly. `stages` must agree with the model's own
// stages when it has them. Errors name the value and the rule, e.g.
//   "pipeline_stages = 5: must divide the 78 decoder layers for an even split
//    (or set decoder_first_pipeline_num_layers / decoder_last_pipeline_num_layers)".
Result<PipelineLayout> pipeline_layout(const Model& model, const PipelineSplit& split);

struct PipelineStage {
  // What the stage holds, e.g. "embedding + decoder.1-20",
  // "decoder.61-78 + mtp1 + logits"; "-" for nothing at all.
  std::string layers;
  std::int64_t decoder_layers = 0;
  Flops flops;                       // exact in the exact modes
  std::optional<Int128> parameters;  // every parameter the stage holds
};

struct PipelineReport {
  std::string origin;  // PipelineLayout::origin
  std::vector<PipelineStage> stages;
  double imbalance = 1;     // max stage FLOPs / mean stage FLOPs (1 when all are zero)
  std::size_t slowest = 0;  // 0-based index of the stage with the most FLOPs (the first of ties)
};

// The report's rows grouped into the layout's stages (the report's layers:
// "decoder.N", "mtpD.*" and "logits"). With `parameters` (count_parameters of
// the same model), each stage also holds its parameters. Preconditions: the
// layout has stages, and they hold the decoder layers of the report's model.
PipelineReport pipeline_report(const Report& report, const PipelineLayout& layout,
                               const ModelParameters* parameters = nullptr);

}  // namespace trainflops

#endif  // TRAINFLOPS_PIPELINE_H_
