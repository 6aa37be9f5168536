// The parameter layout of an imported Hugging Face config: the norms, biases,
// sinks, router biases and the tied embedding that change no FLOPs but
// change the parameter count, read from the config's fields with the
// defaults Transformers gives the model type, and fixed by the model type's
// modeling code where no field sets them (docs/hf-import.md).
#include <optional>
#include <string>
#include <string_view>

#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

bool one_of(std::string_view type, std::initializer_list<std::string_view> types) {
  for (const std::string_view t : types) {
    if (t == type) return true;
  }
  return false;
}

// A boolean field, `fallback` when absent or null.
Result<bool> flag_or(Fields& config, std::string_view key, bool fallback) {
  if (!config.has(key)) {
    config.get(key);
    return fallback;
  }
  return config.flag(key);
}

// Biases on the query, key, value and output projections (Llama's and
// Qwen3's attention_bias) and on the MLP (Llama's mlp_bias; Qwen3 has none):
// the layout holds biases on every projection or on q, k and v alone, so
// both or neither.
Status read_projection_biases(Fields& config, ParameterLayout& layout, bool has_mlp_bias) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool attention, flag_or(config, "attention_bias", false));
  bool mlp = false;
  if (has_mlp_bias) {
    TRAINFLOPS_ASSIGN_OR_RETURN(mlp, flag_or(config, "mlp_bias", false));
  }
  if (attention && mlp) {
    layout.linear_biases = true;
    return Ok{};
  }
  if (attention || mlp) {
    return config.invalid(attention ? "attention_bias" : "mlp_bias", json(true),
                          "the parameter count holds biases on every projection, or on the query, key and value "
                          "projections alone, not on " +
                              std::string(attention ? "the attention's projections without the MLP's"
                                                    : "the MLP's without the attention's"));
  }
  return Ok{};
}

}  // namespace

Status read_parameter_layout(Fields& config, Model& model) {
  const std::string& type = config.model_type();
  ParameterLayout& layout = model.parameter_layout;
  // Gemma ties its output layer to the embedding unless the config says
  // otherwise (Transformers' Gemma configs default to tied); the others
  // default to untied.
  const bool tied_by_default = one_of(type, {"gemma3", "gemma3_text", "gemma4_text"});
  TRAINFLOPS_ASSIGN_OR_RETURN(layout.tied_embedding, flag_or(config, "tie_word_embeddings", tied_by_default));

  if (one_of(type, {"llama", "mistral", "mixtral"})) {
    if (type == "llama") return read_projection_biases(config, layout, true);
    return Ok{};
  }
  if (type == "qwen2") {
    layout.qkv_biases = true;  // Qwen2's q, k and v projections always have biases
    return Ok{};
  }
  if (one_of(type, {"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"})) {
    // A norm of head_dim on the queries and one on the keys, in every layer
    // of softmax attention; the hybrids' MoE gates their shared expert.
    layout.qk_norm = ParameterLayout::QkNorm::kPerHead;
    if (one_of(type, {"qwen3_next", "qwen3_5_moe_text"})) layout.shared_expert_gate = true;
    return read_projection_biases(config, layout, false);
  }
  if (one_of(type, {"gemma3", "gemma3_text", "gemma4_text"})) {
    // Four norms per layer: before and after the attention and the MLP.
    layout.qk_norm = ParameterLayout::QkNorm::kPerHead;
    layout.sublayer_output_norms = true;
    if (type == "gemma4_text") {
      // Gemma4TextRouter's scale and per_expert_scale, Gemma4TextDecoderLayer's
      // layer_scalar (a buffer the checkpoint stores).
      layout.router_scales = true;
      layout.layer_scalars = true;
    }
    return Ok{};
  }
  if (one_of(type, {"deepseek_v3", "deepseek_v32", "kimi_k2", "glm4_moe_lite", "glm_moe_dsa", "kimi_linear"})) {
    layout.expert_bias = true;  // e_score_correction_bias, one per routed expert
    if (type == "kimi_linear") {
      // Kimi K3's routed_expert_norm, on the latent experts' combined output.
      TRAINFLOPS_ASSIGN_OR_RETURN(layout.latent_expert_norm, flag_or(config, "latent_moe_use_norm", false));
    }
    return Ok{};
  }
  if (type == "deepseek_v4") {
    // A sink logit per head in every attention; the router's bias on every
    // layer that does not route by hashing token ids (the MoE says which).
    layout.attention_sinks = true;
    layout.expert_bias = true;
    return Ok{};
  }
  if (type == "glm4_moe") {
    layout.expert_bias = true;
    TRAINFLOPS_ASSIGN_OR_RETURN(layout.qkv_biases, flag_or(config, "attention_bias", false));
    TRAINFLOPS_ASSIGN_OR_RETURN(const bool qk_norm, flag_or(config, "use_qk_norm", false));
    if (qk_norm) layout.qk_norm = ParameterLayout::QkNorm::kPerHead;
    return Ok{};
  }
  if (type == "gpt_oss") {
    // A sink per head; biases on the attention's projections (attention_bias,
    // true by default), and always on the router and every expert.
    layout.attention_sinks = true;
    TRAINFLOPS_ASSIGN_OR_RETURN(const bool attention, flag_or(config, "attention_bias", true));
    if (!attention) {
      return config.invalid("attention_bias", json(false),
                            "the parameter count holds gpt-oss's router and expert biases with the attention's");
    }
    layout.linear_biases = true;
    return Ok{};
  }
  if (one_of(type, {"minimax_m2", "minimax_m3"})) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const bool qk_norm, flag_or(config, "use_qk_norm", true));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> qk_norm_type, config.optional_text("qk_norm_type"));
    if (qk_norm) {
      if (qk_norm_type && *qk_norm_type != "per_layer" && *qk_norm_type != "per_head") {
        return config.invalid("qk_norm_type", json(*qk_norm_type), "must be per_layer or per_head");
      }
      // per_layer: one norm over every query head together, one over every
      // key head; MiniMax-M3's configuration class defaults to per_head.
      const std::string_view fallback = type == "minimax_m3" ? "per_head" : "per_layer";
      layout.qk_norm = qk_norm_type.value_or(std::string(fallback)) == "per_layer" ? ParameterLayout::QkNorm::kAllHeads
                                                                                   : ParameterLayout::QkNorm::kPerHead;
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(layout.expert_bias, flag_or(config, "use_routing_bias", true));
    return Ok{};
  }
  return Ok{};
}

}  // namespace trainflops::hf
