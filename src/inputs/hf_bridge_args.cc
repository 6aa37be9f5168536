// The Megatron-LM arguments Megatron-Bridge's providers set for the Hugging
// Face model types it maps (docs/hf-import.md, "Megatron mode"), read from a
// config the importer accepted: every field named here is present and valid
// where the importer requires it.
#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

std::optional<std::int64_t> optional_integer(const json& config, const char* key) {
  const auto found = config.find(key);
  if (found == config.end() || found->is_null()) return std::nullopt;
  return found->get<std::int64_t>();
}

// Where Bridge places the gated delta nets: the config's layer_types as a 0/1
// list (1 a gated delta net), else its full_attention_interval, else 4 (its
// full_attention_interval_from_hf). An int reaches Megatron-LM's function as
// an int, which places the MTP layers by the same rule as the decoder's.
LayerFrequency linear_attention_freq(const json& config) {
  const auto layer_types = config.find("layer_types");
  if (layer_types != config.end() && layer_types->is_array() && !layer_types->empty()) {
    std::vector<std::int64_t> linear;
    for (const json& type : *layer_types) linear.push_back(type.get<std::string>() == "linear_attention" ? 1 : 0);
    return linear;
  }
  return optional_integer(config, "full_attention_interval").value_or(4);
}

}  // namespace

MegatronArgs bridge_args_qwen_hybrid(const json& config) {
  MegatronArgs args;
  // The fields every provider maps by name (MegatronModelBridge.CONFIG_MAPPING).
  args.num_layers = optional_integer(config, "num_hidden_layers");
  args.hidden_size = optional_integer(config, "hidden_size");
  // Without intermediate_size (the MoE configs), Megatron-Core's
  // TransformerConfig sets 4h.
  args.ffn_hidden_size = optional_integer(config, "intermediate_size");
  if (!args.ffn_hidden_size && args.hidden_size) args.ffn_hidden_size = 4 * *args.hidden_size;
  args.num_attention_heads = optional_integer(config, "num_attention_heads");
  args.num_query_groups = optional_integer(config, "num_key_value_heads");
  args.group_query_attention = args.num_query_groups.has_value();
  args.kv_channels = optional_integer(config, "head_dim");
  args.padded_vocab_size = optional_integer(config, "vocab_size");
  args.mtp_num_layers = optional_integer(config, "mtp_num_hidden_layers");
  // Gated MLPs with SiLU (Megatron-LM's --swiglu), gated attention, and gated
  // delta nets where the config places them.
  args.swiglu = true;
  args.attention_output_gate = true;
  args.experimental_attention_variant = "gated_delta_net";
  args.linear_attention_freq = linear_attention_freq(config);
  args.linear_conv_kernel_dim = optional_integer(config, "linear_conv_kernel_dim");
  args.linear_key_head_dim = optional_integer(config, "linear_key_head_dim");
  args.linear_value_head_dim = optional_integer(config, "linear_value_head_dim");
  args.linear_num_key_heads = optional_integer(config, "linear_num_key_heads");
  args.linear_num_value_heads = optional_integer(config, "linear_num_value_heads");
  // The layout that changes parameters, not FLOPs: query and key norms, the
  // output layer tied as tie_word_embeddings says, and the shared expert's
  // gate (qwen3_next_bridge.py, qwen35_bridge.py).
  args.qk_layernorm = true;
  const auto tied = config.find("tie_word_embeddings");
  args.untie_embeddings_and_output_weights = !(tied != config.end() && tied->is_boolean() && tied->get<bool>());
  // Experts on every layer (the providers leave moe_layer_freq at 1, whatever
  // decoder_sparse_step and mlp_only_layers say), with the shared expert;
  // Qwen3.5's dense model has none.
  if (config.at("model_type").get<std::string>() != "qwen3_5_text") {
    args.num_experts = optional_integer(config, "num_experts");
    args.moe_layer_freq = std::int64_t{1};
    args.moe_router_topk = optional_integer(config, "num_experts_per_tok");
    args.moe_ffn_hidden_size = optional_integer(config, "moe_intermediate_size");
    args.moe_shared_expert_intermediate_size = optional_integer(config, "shared_expert_intermediate_size");
    args.moe_shared_expert_gate = true;
  }
  return args;
}

}  // namespace trainflops::hf
