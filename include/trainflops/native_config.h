// trainflops' own model format: JSON (comments allowed) that spells out every
// layer, for models that were not configured through Megatron-LM.
// docs/config-format.md describes it; in short:
//   {
//     "hidden_size": 4096, "vocab_size": 128256,
//     "mixers": {"attn": {"type": "gqa", "num_heads": 32, "num_query_groups": 8, "head_dim": 128}},
//     "channel_mixers": {"mlp": {"type": "mlp", "ffn_hidden_size": 14336, "gated": true}},
//     "layers": [{"mixer": "attn", "channel_mixer": "mlp", "repeat": 32}],
//     "mtp": {"depths": 1, "layers": [{"mixer": "attn", "channel_mixer": "mlp"}]}
//   }
// Every size is required; only optional features ("q_lora_rank", "latent_size",
// "shared_expert_ffn_hidden_size", "num_experts", "output_gate", "gated") may
// be left out, meaning absent. Unknown keys are errors.
//
// Thread safety: The functions here keep no state of their own: several threads
// may call them at once, given different objects to change.
#ifndef TRAINFLOPS_NATIVE_CONFIG_H_
#define TRAINFLOPS_NATIVE_CONFIG_H_

#include <string>
#include <string_view>

#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// Parses and validates a config. Errors give the JSON path of the field, e.g.
//   "layers[1].mixer = \"atn\": not one of the defined mixers (attn)".
Result<Model> parse_native_config(std::string_view json_text);

// Reads the file at `path` and parses it; errors are prefixed with the path.
Result<Model> read_native_config(const std::string& path);

}  // namespace trainflops

#endif  // TRAINFLOPS_NATIVE_CONFIG_H_
