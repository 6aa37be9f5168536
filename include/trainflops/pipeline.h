// Pipeline parallelism: the FLOPs of each pipeline stage of one training
// iteration, and their imbalance. Every stage runs every micro-batch, so the
// slowest stage sets the step: the imbalance (max stage / mean stage) is the
// factor by which it is slower than a perfect split.
//
// Placement follows Megatron-LM: the model is cut into consecutive chunks
// (one per stage, or, with a virtual pipeline, several per stage, chunk i on
// stage i mod stages); the embedding sits on the first chunk, the MTP depths
// and the output layer (logits, of every head) on the last, unless a
// pipeline_model_parallel_layout places them.
//
// Thread safety: PipelineChunk, PipelineLayout, PipelineStage and
// PipelineReport are plain values: several threads may read one at once, and a
// thread that changes one must be the only one using it. The functions here
// keep no state of their own: several threads may call them at once, given
// different objects to change.
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

// Consecutive layers of the model that one stage runs as a unit.
struct PipelineChunk {
  std::int64_t decoder_layers = 0;
  std::int64_t mtp_depths = 0;
  bool embedding = false;
  bool output_layer = false;  // the logits of every head, and the loss

  bool operator==(const PipelineChunk&) const = default;
};

// The chunks in model order, and where the split comes from.
struct PipelineLayout {
  std::vector<PipelineChunk> chunks;  // empty: no pipeline stages
  std::int64_t stages = 0;            // chunk i runs on stage i mod stages
  std::string origin;                 // "pipeline_stages 4, even split", "hybrid_layer_pattern '|'", ...
};

// One chunk per stage holding these decoder layers: the embedding on the
// first, `mtp_depths` and the output layer on the last.
PipelineLayout consecutive_stages(const std::vector<std::int64_t>& stage_layers, std::int64_t mtp_depths,
                                  std::string origin);

// From `split` when it is given, else from the model's own stages (`|` in a
// hybrid pattern), else none:
//  - stages alone: an even split of the decoder layers; with the first or
//    last stage set, the middle stages share the remaining layers evenly;
//  - with virtual_stages, stages x virtual_stages chunks of equal size;
//  - with a layout (Megatron-LM's syntax: E embedding, t decoder layer, m MTP
//    depth, L output layer and loss, '|' between chunks, "(..)*n" and "x*n"
//    repeat, ',' ignored): those chunks, whose count stages must divide.
// Errors name the value and the rule, e.g.
//   "pipeline_stages = 5: must divide the 78 decoder layers for an even split
//    (or set decoder_first_pipeline_num_layers / decoder_last_pipeline_num_layers)".
Result<PipelineLayout> pipeline_layout(const Model& model, const PipelineSplit& split);

struct PipelineStage {
  // What the stage holds, chunk by chunk: "embedding + decoder.1-20",
  // "decoder.1-4 | decoder.17-20"; "-" for nothing at all.
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
// layout has stages, and its chunks hold the decoder layers and MTP depths of
// the report's model.
PipelineReport pipeline_report(const Report& report, const PipelineLayout& layout,
                               const ModelParameters* parameters = nullptr);

}  // namespace trainflops

#endif  // TRAINFLOPS_PIPELINE_H_
