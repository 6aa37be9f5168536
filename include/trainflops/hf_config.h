// Hugging Face `config.json` import: the architecture a Transformers
// checkpoint declares, turned into a model description. docs/hf-import.md lists
// every supported model_type, the fields read, how each maps onto layers, and
// the fields known not to change FLOPs.
//
// Supported model_type values: llama, mistral, mixtral, qwen2, qwen3,
// qwen3_moe, qwen3_next, gemma3 (its text_config) and gemma3_text, gpt_oss,
// deepseek_v3, deepseek_v32, glm_moe_dsa, deepseek_v4, nemotron_h.
//
// Strict by design: an unknown model_type, a missing size, a value of the
// wrong type, and any field that is neither read nor known to leave FLOPs
// unchanged are errors, because trainflops cannot tell whether such a field
// changes the count. The few values real release configs leave out and
// Transformers fills in (Gemma 3's vocabulary and sliding-window pattern) are
// applied and reported in `assumed`, never silently.
//
// Conventions of the imported model:
//   - vocab_size is the config's, as is: the embedding rows of the checkpoint
//     (padding it further, as Megatron-LM does, is the caller's choice);
//   - megatron_path is kHybrid for nemotron_h (Megatron-LM's hybrid model, one
//     layer per pattern symbol) and kStandard for every other type (its GPT
//     model), which is how Megatron-Bridge builds these models;
//   - for the types whose Megatron-Bridge provider trainflops maps (qwen3_next,
//     qwen3_5_text, qwen3_5_moe_text), bridge_args holds the Megatron-LM
//     arguments that provider sets, and `megatron` mode counts them
//     (model_input.h) as Megatron-LM's function does (or where that refuses
//     them, as Megatron-Bridge's does), which may differ from the
//     checkpoint's architecture (Qwen3-Next's MTP layer);
//   - hf_model_type is the config's top-level model_type (the class NeMo
//     Automodel picks its formula by, in compare);
//   - DSA indexers get grad mode kOff (a config does not say how the indexer
//     trains); megatron_seq_length stays unset (a config has no training
//     sequence length; max_position_embeddings is not one).
//
// Thread safety: HfImport and UnknownFields are plain values: several threads
// may read one at once, and a thread that changes one must be the only one
// using it. The functions here keep no state of their own: several threads may
// call them at once, given different objects to change.
#ifndef TRAINFLOPS_HF_CONFIG_H_
#define TRAINFLOPS_HF_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

struct HfImport {
  Model model;  // validated
  // The Megatron-LM arguments Megatron-Bridge's provider sets for the
  // config's model_type (docs/hf-import.md, "Megatron mode"); unset for the
  // types trainflops does not map.
  std::optional<MegatronArgs> bridge_args;
  // Fields present in the config that do not change FLOPs, by JSON path
  // ("rope_theta", "text_config.rope_scaling", ...), in the config's order.
  std::vector<std::string> ignored;
  // Values the config leaves out and the import takes from Transformers'
  // defaults for that model_type, one sentence each, e.g.
  //   "text_config.vocab_size = 262208 (absent; Transformers' Gemma3TextConfig default)".
  std::vector<std::string> assumed;
  // Fields trainflops does not know (so it cannot tell whether they change
  // FLOPs), one sentence each; empty when they are rejected.
  std::vector<std::string> unknown;
};

// What a field that trainflops does not know is: a warning (listed in
// HfImport::unknown; release configs gain fields that change nothing) or an
// error (strict).
enum class UnknownFields { kWarned, kRejected };

// Parses a config.json's text. Errors name the field by its JSON path, the
// value and the rule, e.g.
//   "model_type = \"phi3\": not supported (supported: deepseek_v3, ...)"
//   "layer_types[3] = \"chunked_attention\": must be full_attention or sliding_attention".
Result<HfImport> import_hf_config(std::string_view json_text, UnknownFields unknown_fields = UnknownFields::kWarned);

// The model alone; an unknown field is an error, since nothing could show it.
Result<Model> parse_hf_config(std::string_view json_text);

// Reads the file at `path` and parses it; errors are prefixed with the path.
Result<HfImport> read_hf_import(const std::string& path, UnknownFields unknown_fields = UnknownFields::kWarned);
Result<Model> read_hf_config(const std::string& path);

// The supported model_type values, sorted.
const std::vector<std::string>& supported_hf_model_types();

}  // namespace trainflops

#endif  // TRAINFLOPS_HF_CONFIG_H_
