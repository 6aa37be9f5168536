#include "trainflops/pipeline.h"

#include <algorithm>
#include <cctype>

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

Result<std::vector<std::int64_t>> megatron_split(std::int64_t layers, const PipelineSplit& split, std::string& origin) {
  const std::int64_t stages = *split.stages;
  // At most one stage per decoder layer, besides an empty first and last.
  if (stages > layers + 2) {
    return Error(shown("pipeline_stages", stages) + ": more stages than the " + std::to_string(layers) +
                 " decoder layers can fill");
  }
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
    origin = "pipeline_stages " + std::to_string(stages) + ", even split";
    return std::vector<std::int64_t>(static_cast<std::size_t>(stages), layers / stages);
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
  std::vector<std::int64_t> stage_layers;
  if (split.first_stage_layers) stage_layers.push_back(first);
  for (std::int64_t i = 0; i < middle; ++i) stage_layers.push_back(rest / middle);
  if (split.last_stage_layers) stage_layers.push_back(last);
  origin = "pipeline_stages " + std::to_string(stages);
  if (split.first_stage_layers) origin += ", first stage " + std::to_string(first) + " layers";
  if (split.last_stage_layers) origin += ", last stage " + std::to_string(last) + " layers";
  return stage_layers;
}

// --- pipeline_model_parallel_layout --------------------------------------------

// A layout longer than this is a mistake: no model has a million layers.
constexpr std::size_t kMaxLayoutCharacters = std::size_t{1} << 20;

Error layout_error(std::string_view layout, const std::string& rule) {
  constexpr std::size_t kShown = 100;
  const std::string text =
      layout.size() <= kShown ? std::string(layout) : std::string(layout.substr(0, kShown)) + "...";
  return Error("pipeline_model_parallel_layout = \"" + text + "\": " + rule);
}

// Megatron-LM's unrolling: "(X)*n" repeats X (no parentheses inside), then
// "c*n" repeats the character before it; commas are decoration.
Result<std::string> unrolled(std::string_view layout) {
  std::string text;
  for (char c : layout) {
    if (c != ',') text += c;
  }
  const auto repeat = [&](std::string_view unit, std::size_t digits_at, std::string& out, std::size_t& next) -> Status {
    std::size_t end = digits_at;
    std::int64_t times = 0;
    // Capped, so that the size check below sees a huge count without overflow.
    for (; end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])); ++end) {
      times = std::min<std::int64_t>(times * 10 + (text[end] - '0'), kMaxLayoutCharacters + 1);
    }
    if (end == digits_at) return layout_error(layout, "'*' must be followed by a repeat count");
    if (static_cast<double>(times) * static_cast<double>(unit.size()) + static_cast<double>(out.size()) >
        static_cast<double>(kMaxLayoutCharacters)) {
      return layout_error(layout, "unrolls to more than " + std::to_string(kMaxLayoutCharacters) + " characters");
    }
    for (std::int64_t i = 0; i < times; ++i) out += unit;
    next = end;
    return Ok{};
  };
  std::string groups;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '(') {
      groups += text[i++];
      continue;
    }
    const std::size_t close = text.find_first_of("()", i + 1);
    if (close == std::string::npos || text[close] == '(') {
      return layout_error(layout, "'(' at position " + std::to_string(i + 1) +
                                      " must be closed by ')' with no parentheses between (they do not nest)");
    }
    if (close + 1 >= text.size() || text[close + 1] != '*') {
      return layout_error(layout, "a group in parentheses must be followed by '*' and a repeat count");
    }
    TRAINFLOPS_RETURN_IF_ERROR(repeat(std::string_view(text).substr(i + 1, close - i - 1), close + 2, groups, i));
  }
  text = std::move(groups);
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (i + 1 < text.size() && text[i + 1] == '*') {
      TRAINFLOPS_RETURN_IF_ERROR(repeat(std::string_view(text).substr(i, 1), i + 2, out, i));
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The chunks of a layout, checked against the model as Megatron-LM checks
// them (validate_layer_layout).
Result<std::vector<PipelineChunk>> layout_chunks(std::string_view layout, std::int64_t decoder_layers,
                                                 std::int64_t mtp_depths) {
  if (layout.size() > kMaxLayoutCharacters) {
    return layout_error(layout, "longer than " + std::to_string(kMaxLayoutCharacters) + " characters");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, unrolled(layout));
  std::vector<PipelineChunk> chunks(1);
  std::int64_t embeddings = 0, losses = 0, decoders = 0, mtps = 0, position = 0;
  bool after_loss = false;
  for (const char c : text) {
    if (c == '|') {
      chunks.emplace_back();
      continue;
    }
    ++position;
    if (after_loss) return layout_error(layout, "L (the output layer and loss) must be the last layer");
    PipelineChunk& chunk = chunks.back();
    switch (c) {
      case 'E':
        if (position != 1) return layout_error(layout, "E (the embedding) must be the first layer, once");
        chunk.embedding = true;
        ++embeddings;
        break;
      case 't':
        if (mtps > 0) return layout_error(layout, "the decoder layers (t) must come before the MTP depths (m)");
        ++chunk.decoder_layers;
        ++decoders;
        break;
      case 'm':
        if (mtps > 0 && chunk.mtp_depths == 0) {
          return layout_error(layout, "the MTP depths (m) must all be in one chunk");
        }
        ++chunk.mtp_depths;
        ++mtps;
        break;
      case 'L':
        chunk.output_layer = true;
        after_loss = true;
        ++losses;
        break;
      default:
        return layout_error(layout, std::string("'") + c +
                                        "' is not a layer: E embedding, t decoder layer, m MTP depth, L output layer "
                                        "and loss, '|' between chunks");
    }
  }
  if (embeddings != 1) return layout_error(layout, "E (the embedding) must be the first layer, once");
  if (losses != 1) return layout_error(layout, "L (the output layer and loss) must be the last layer, once");
  if (decoders != decoder_layers) {
    return layout_error(layout, "places " + std::to_string(decoders) + " decoder layers (t); the model has " +
                                    std::to_string(decoder_layers));
  }
  if (mtps != mtp_depths) {
    return layout_error(
        layout, "places " + std::to_string(mtps) + " MTP depths (m); the model has " + std::to_string(mtp_depths));
  }
  return chunks;
}

// --- the report ------------------------------------------------------------------

// Which chunk holds a report or parameter row: decoder layers and MTP depths
// by position, the embedding and the output layer where the layout puts them.
class ChunkMap {
 public:
  explicit ChunkMap(const std::vector<PipelineChunk>& chunks) {
    std::int64_t decoders = 0, mtps = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      decoder_ends_.push_back(decoders += chunks[i].decoder_layers);
      mtp_ends_.push_back(mtps += chunks[i].mtp_depths);
      if (chunks[i].embedding) embedding_ = i;
      if (chunks[i].output_layer) output_layer_ = i;
    }
  }

  std::size_t chunk_of(const std::string& name) const {
    if (name == "embedding") return embedding_;
    if (name.rfind("decoder.", 0) == 0) return position(decoder_ends_, std::stoll(name.substr(8)));
    if (name.rfind("mtp", 0) == 0) return position(mtp_ends_, std::stoll(name.substr(3)));
    return output_layer_;
  }

 private:
  // The chunk holding the `number`-th (1-based) item, by the running ends.
  static std::size_t position(const std::vector<std::int64_t>& ends, std::int64_t number) {
    return static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), number - 1) - ends.begin());
  }

  std::vector<std::int64_t> decoder_ends_, mtp_ends_;  // running totals, one past each chunk's last
  std::size_t embedding_ = 0, output_layer_ = 0;
};

std::string range(const std::string& name, std::int64_t first, std::int64_t count) {
  if (count == 1) return name + std::to_string(first);
  return name + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// "embedding + decoder.1-20", "decoder.61-78 + mtp1 + logits", "-".
std::string describe_chunk(const PipelineChunk& chunk, std::int64_t first_layer, std::int64_t first_depth) {
  std::vector<std::string> parts;
  if (chunk.embedding) parts.push_back("embedding");
  if (chunk.decoder_layers > 0) parts.push_back(range("decoder.", first_layer, chunk.decoder_layers));
  for (std::int64_t d = 0; d < chunk.mtp_depths; ++d) parts.push_back("mtp" + std::to_string(first_depth + d));
  if (chunk.output_layer) parts.push_back("logits");
  if (parts.empty()) return "-";
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : " + ") + part;
  return text;
}

}  // namespace

PipelineLayout consecutive_stages(const std::vector<std::int64_t>& stage_layers, std::int64_t mtp_depths,
                                  std::string origin) {
  PipelineLayout layout;
  layout.stages = static_cast<std::int64_t>(stage_layers.size());
  layout.origin = std::move(origin);
  for (const std::int64_t layers : stage_layers) layout.chunks.push_back(PipelineChunk{layers, 0, false, false});
  if (!layout.chunks.empty()) {
    layout.chunks.front().embedding = true;
    layout.chunks.back().mtp_depths = mtp_depths;
    layout.chunks.back().output_layer = true;
  }
  return layout;
}

Result<PipelineLayout> pipeline_layout(const Model& model, const PipelineSplit& split) {
  const auto layers = static_cast<std::int64_t>(model.layers.size());
  const auto depths = static_cast<std::int64_t>(model.mtp_depths.size());
  const auto& own = model.pipeline_stage_layers;
  const std::string own_origin = "hybrid_layer_pattern '|', " + std::to_string(own.size()) + " stages";
  if (!split.stages) {
    if (split.given()) {
      return Error(std::string(split.layout ? "pipeline_model_parallel_layout"
                               : split.virtual_stages
                                   ? shown("num_virtual_stages_per_pipeline_rank", *split.virtual_stages)
                                   : uneven_options(split)) +
                   ": needs pipeline_stages");
    }
    if (own.empty()) return PipelineLayout{};
    return consecutive_stages(own, depths, own_origin);
  }
  const std::int64_t stages = *split.stages;
  if (stages < 1) return Error(shown("pipeline_stages", stages) + ": must be a positive integer");
  if (!own.empty()) {
    if (split.first_stage_layers || split.last_stage_layers || split.layout || split.virtual_stages) {
      return Error(std::string(split.layout           ? "pipeline_model_parallel_layout"
                               : split.virtual_stages ? "num_virtual_stages_per_pipeline_rank"
                                                      : uneven_options(split)) +
                   ": hybrid_layer_pattern places the layers with '|'; give one or the other");
    }
    if (stages != static_cast<std::int64_t>(own.size())) {
      return Error(shown("pipeline_stages", stages) + ": hybrid_layer_pattern splits the decoder into " +
                   std::to_string(own.size()) + " stages with '|'");
    }
    return consecutive_stages(own, depths, own_origin);
  }
  if (split.layout) {
    if (split.first_stage_layers || split.last_stage_layers) {
      return Error(uneven_options(split) + ": pipeline_model_parallel_layout places the layers; give one or the other");
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<PipelineChunk> chunks, layout_chunks(*split.layout, layers, depths));
    const auto count = static_cast<std::int64_t>(chunks.size());
    if (count % stages != 0) {
      return layout_error(*split.layout, std::to_string(count) + " chunks do not divide evenly over " +
                                             shown("pipeline_stages", stages));
    }
    if (split.virtual_stages && *split.virtual_stages != count / stages) {
      return Error(shown("num_virtual_stages_per_pipeline_rank", *split.virtual_stages) +
                   ": pipeline_model_parallel_layout has " + std::to_string(count / stages) + " chunks per stage");
    }
    return PipelineLayout{std::move(chunks), stages,
                          "pipeline_model_parallel_layout, " + std::to_string(stages) + " stages x " +
                              std::to_string(count / stages) + " chunks"};
  }
  if (split.virtual_stages) {
    const std::int64_t virtual_stages = *split.virtual_stages;
    if (virtual_stages < 1) {
      return Error(shown("num_virtual_stages_per_pipeline_rank", virtual_stages) + ": must be a positive integer");
    }
    if (split.first_stage_layers || split.last_stage_layers) {
      return Error(ErrorCode::kUnsupported, uneven_options(split) +
                                                ": an uneven first or last stage with a virtual pipeline is not "
                                                "counted; give a pipeline_model_parallel_layout");
    }
    if (stages > layers || virtual_stages > layers || layers % (stages * virtual_stages) != 0) {
      return Error(shown("num_virtual_stages_per_pipeline_rank", virtual_stages) + ": " + std::to_string(stages) +
                   " stages x " + std::to_string(virtual_stages) + " chunks must divide the " + std::to_string(layers) +
                   " decoder layers");
    }
    PipelineLayout layout = consecutive_stages(
        std::vector<std::int64_t>(static_cast<std::size_t>(stages * virtual_stages),
                                  layers / (stages * virtual_stages)),
        depths,
        "pipeline_stages " + std::to_string(stages) + " x " + std::to_string(virtual_stages) + " virtual stages");
    layout.stages = stages;
    return layout;
  }
  std::string origin;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> stage_layers, megatron_split(layers, split, origin));
  return consecutive_stages(stage_layers, depths, std::move(origin));
}

PipelineReport pipeline_report(const Report& report, const PipelineLayout& layout, const ModelParameters* parameters) {
  const ChunkMap map(layout.chunks);
  const auto stage_of = [&](const std::string& name) {
    return map.chunk_of(name) % static_cast<std::size_t>(layout.stages);
  };
  PipelineReport out;
  out.origin = layout.origin;
  out.stages.resize(static_cast<std::size_t>(layout.stages));
  for (const LayerFlops& row : report.layers) {
    Flops& flops = out.stages[stage_of(row.name)].flops;
    flops.value += row.flops.value;
    if (row.flops.exact) flops.exact = flops.exact.value_or(0) + *row.flops.exact;
  }
  if (parameters) {
    for (PipelineStage& stage : out.stages) stage.parameters = 0;
    for (const LayerParameters& row : parameters->layers) *out.stages[stage_of(row.name)].parameters += row.count.total;
  }
  std::int64_t first_layer = 1, first_depth = 1;
  for (std::size_t i = 0; i < layout.chunks.size(); ++i) {
    const PipelineChunk& chunk = layout.chunks[i];
    PipelineStage& stage = out.stages[i % out.stages.size()];
    const std::string described = describe_chunk(chunk, first_layer, first_depth);
    stage.layers = i < out.stages.size() ? described : stage.layers + " | " + described;
    stage.decoder_layers += chunk.decoder_layers;
    first_layer += chunk.decoder_layers;
    first_depth += chunk.mtp_depths;
  }
  double max = 0, sum = 0;
  for (std::size_t i = 0; i < out.stages.size(); ++i) {
    PipelineStage& stage = out.stages[i];
    if (stage.flops.exact) stage.flops.value = to_double(*stage.flops.exact);
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
