#include "trainflops/pipeline.h"

#include <algorithm>

namespace trainflops {
namespace {

std::string shown(const char* name, std::int64_t value) { return std::string(name) + " = " + std::to_string(value); }

// The uneven options given, as "decoder_first_pipeline_num_layers = 3 and ...".
std::string uneven_options(const PipelineSplit& split) {
  std::string text;
  if (split.first_stage_layers) text = shown("decoder_first_pipeline_num_layers", *split.first_stage_layers);
  if (split.last_stage_layers) {
    text += (text.empty() ? "" : " and ") + shown("decoder_last_pipeline_num_layers", *split.last_stage_layers);
  }
  return text;
}

Result<PipelineLayout> megatron_split(std::int64_t layers, const PipelineSplit& split) {
  const std::int64_t stages = *split.stages;
  if (stages < 1) return Error(shown("pipeline_stages", stages) + ": must be a positive integer");
  const std::int64_t first = split.first_stage_layers.value_or(0), last = split.last_stage_layers.value_or(0);
  if (first < 0) return Error(shown("decoder_first_pipeline_num_layers", first) + ": must be a non-negative integer");
  if (last < 0) return Error(shown("decoder_last_pipeline_num_layers", last) + ": must be a non-negative integer");
  const std::int64_t uneven = (split.first_stage_layers ? 1 : 0) + (split.last_stage_layers ? 1 : 0);
  if (uneven == 0) {
    if (layers % stages != 0) {
      return Error(shown("pipeline_stages", stages) + ": must divide the " + std::to_string(layers) +
                   " decoder layers for an even split (or set decoder_first_pipeline_num_layers / "
                   "decoder_last_pipeline_num_layers)");
    }
    return PipelineLayout{std::vector<std::int64_t>(static_cast<std::size_t>(stages), layers / stages),
                          "pipeline_stages " + std::to_string(stages) + ", even split"};
  }
  if (stages < 2) {
    return Error(shown("pipeline_stages", stages) + ": an uneven first or last stage (" + uneven_options(split) +
                 ") needs at least 2 stages");
  }
  const std::int64_t rest = layers - first - last, middle = stages - uneven;
  if (rest < 0) return Error(uneven_options(split) + ": more than the " + std::to_string(layers) + " decoder layers");
  if (middle == 0 ? rest != 0 : rest % middle != 0) {
    return Error(shown("pipeline_stages", stages) + ": the " + std::to_string(rest) + " decoder layers that " +
                 uneven_options(split) + " leave must divide evenly over the " + std::to_string(middle) +
                 " other stage" + (middle == 1 ? "" : "s"));
  }
  PipelineLayout layout;
  if (split.first_stage_layers) layout.stage_layers.push_back(first);
  for (std::int64_t i = 0; i < middle; ++i) layout.stage_layers.push_back(rest / middle);
  if (split.last_stage_layers) layout.stage_layers.push_back(last);
  layout.origin = "pipeline_stages " + std::to_string(stages);
  if (split.first_stage_layers) layout.origin += ", first stage " + std::to_string(first) + " layers";
  if (split.last_stage_layers) layout.origin += ", last stage " + std::to_string(last) + " layers";
  return layout;
}

// Which stage holds a report or parameter row: decoder layers by position,
// the embedding on the first stage, everything after the decoder (MTP depths,
// the output layer) on the last.
class StageMap {
 public:
  explicit StageMap(const std::vector<std::int64_t>& stage_layers) {
    std::int64_t end = 0;
    for (std::int64_t layers : stage_layers) ends_.push_back(end += layers);
  }

  std::size_t stage_of(const std::string& name) const {
    if (name == "embedding") return 0;
    if (name.rfind("decoder.", 0) == 0) {
      const std::int64_t number = std::stoll(name.substr(8));
      return static_cast<std::size_t>(std::upper_bound(ends_.begin(), ends_.end(), number - 1) - ends_.begin());
    }
    return ends_.size() - 1;
  }

 private:
  std::vector<std::int64_t> ends_;  // one past the last decoder layer of each stage (0-based)
};

// "embedding + decoder.1-20", "decoder.61-78 + mtp1 + logits", "-".
std::string describe_stage(const std::vector<std::string>& row_names, std::int64_t first_layer,
                           std::int64_t decoder_layers, bool first_stage) {
  std::vector<std::string> parts;
  if (first_stage) parts.push_back("embedding");
  if (decoder_layers == 1) parts.push_back("decoder." + std::to_string(first_layer));
  if (decoder_layers > 1) {
    parts.push_back("decoder." + std::to_string(first_layer) + "-" + std::to_string(first_layer + decoder_layers - 1));
  }
  for (const std::string& name : row_names) {
    if (name.rfind("decoder.", 0) == 0) continue;
    const std::string part = name.substr(0, name.find('.'));
    if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
  }
  if (parts.empty()) return "-";
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : " + ") + part;
  return text;
}

}  // namespace

Result<PipelineLayout> pipeline_layout(const Model& model, const PipelineSplit& split) {
  const auto layers = static_cast<std::int64_t>(model.layers.size());
  const auto& own = model.pipeline_stage_layers;
  if (!split.stages) {
    if (split.first_stage_layers || split.last_stage_layers) {
      return Error(uneven_options(split) + ": needs pipeline_stages");
    }
    if (own.empty()) return PipelineLayout{};
    return PipelineLayout{own, "hybrid_layer_pattern '|', " + std::to_string(own.size()) + " stages"};
  }
  if (own.empty()) return megatron_split(layers, split);
  if (split.first_stage_layers || split.last_stage_layers) {
    return Error(uneven_options(split) + ": hybrid_layer_pattern places the layers with '|'; give one or the other");
  }
  if (*split.stages != static_cast<std::int64_t>(own.size())) {
    return Error(shown("pipeline_stages", *split.stages) + ": hybrid_layer_pattern splits the decoder into " +
                 std::to_string(own.size()) + " stages with '|'");
  }
  return PipelineLayout{own, "hybrid_layer_pattern '|', " + std::to_string(own.size()) + " stages"};
}

PipelineReport pipeline_report(const Report& report, const PipelineLayout& layout, const ModelParameters* parameters) {
  const StageMap map(layout.stage_layers);
  PipelineReport out;
  out.origin = layout.origin;
  out.stages.resize(layout.stage_layers.size());
  std::vector<std::vector<std::string>> names(out.stages.size());
  for (const LayerFlops& row : report.layers) {
    const std::size_t stage = map.stage_of(row.name);
    Flops& flops = out.stages[stage].flops;
    flops.value += row.flops.value;
    if (row.flops.exact) flops.exact = flops.exact.value_or(0) + *row.flops.exact;
    names[stage].push_back(row.name);
  }
  if (parameters) {
    for (PipelineStage& stage : out.stages) stage.parameters = 0;
    for (const LayerParameters& row : parameters->layers)
      *out.stages[map.stage_of(row.name)].parameters += row.count.total;
  }
  std::int64_t first_layer = 1;
  double max = 0, sum = 0;
  for (std::size_t i = 0; i < out.stages.size(); ++i) {
    PipelineStage& stage = out.stages[i];
    if (stage.flops.exact) stage.flops.value = to_double(*stage.flops.exact);
    stage.decoder_layers = layout.stage_layers[i];
    stage.layers = describe_stage(names[i], first_layer, stage.decoder_layers, i == 0);
    first_layer += stage.decoder_layers;
    sum += stage.flops.value;
    if (stage.flops.value > max) {
      max = stage.flops.value;
      out.slowest = i;
    }
  }
  out.imbalance = sum > 0 ? max / (sum / static_cast<double>(out.stages.size())) : 1;
  return out;
}

}  // namespace trainflops
