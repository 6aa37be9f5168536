// Well-known models, built in: each is a data file presets/<name>.json holding
// the model (its Megatron-LM arguments, or its released Hugging Face
// config.json where Megatron-LM has no arguments for its layers) with its
// name, a description and the source of its numbers, compiled into the library.
//
// Thread safety: PublishedParameters and Preset are plain values: several
// threads may read one at once, and a thread that changes one must be the only
// one using it. The functions here keep no state of their own: several threads
// may call them at once, given different objects to change.
#ifndef TRAINFLOPS_PRESETS_H_
#define TRAINFLOPS_PRESETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/model.h"
#include "trainflops/parameter_part.h"
#include "trainflops/result.h"

namespace trainflops {

// A model's parameter counts as its authors publish them ("published_parameters"
// in the preset file; docs/presets.md). Publications differ in what they count:
// `total_counts` and `active_counts` name the parts of ModelParameters each
// figure holds (embedding, output_layer, decoder, mtp); an active figure that
// counts the embedding counts its whole table.
struct PublishedParameters {
  std::int64_t total = 0;
  std::int64_t active = 0;
  std::vector<ParameterPart> total_counts;
  std::vector<ParameterPart> active_counts;
  // The rounding unit of a figure published with few digits ("3B": 1e9), or 0
  // when the figure is precise; a check allows half of it beyond 1%.
  std::int64_t total_precision = 0;
  std::int64_t active_precision = 0;
  std::string source;
};

struct Preset {
  std::string name;         // what --preset takes, e.g. "glm-5"
  std::string title;        // e.g. "GLM-5"
  std::string description;  // one line
  std::string source;       // where the numbers come from
  // The model, exactly one of: Megatron-LM arguments, or the text of a
  // Hugging Face config.json as released.
  std::optional<MegatronArgs> args;
  std::optional<std::string> hf_config;
  std::optional<std::int64_t> seq_length;  // the default context
  // What Megatron-LM's arguments cannot say about the parameters ("parameter_layout"
  // beside "args"): query and key norms over all heads together (MiniMax-M2's),
  // where --qk-layernorm gives one norm of head_dim per head. Replaces the
  // layout the arguments give; unset: theirs.
  std::optional<ParameterLayout::QkNorm> qk_norm;
  std::optional<PublishedParameters> published_parameters;
};

// Parses one preset file (presets/<name>.json): "name", "title",
// "description", "source", the model as "args" (Megatron-LM arguments, whose
// seq_length is the default context) or as "hf_config" (a Hugging Face
// config.json object, with the default context in "seq_length"), and
// optionally "parameter_layout" (with "args" only: {"qk_norm": "per_head" or
// "all_heads"}) and "published_parameters". Errors name the key and the rule.
Result<Preset> parse_preset(std::string_view json_text);

// Every preset, sorted by name.
const std::vector<Preset>& presets();

// The preset called `name`; the error lists the known names.
Result<Preset> find_preset(std::string_view name);

// The preset's model (from its args, with its parameter_layout, or from its
// Hugging Face config with the default context as Megatron-LM's seq_length,
// named by title). A Hugging Face config is imported with unknown fields rejected, so
// that a preset never counts a field away silently.
Result<Model> preset_model(const Preset& preset);

}  // namespace trainflops

#endif  // TRAINFLOPS_PRESETS_H_
