// Nemotron-H: a hybrid pattern of Mamba-2 (M), attention (*), MLP (-) and MoE
// (E) layers, one symbol per layer, as Megatron-LM's hybrid model builds it.
#include <string>

#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

// Symbols of hybrid_override_pattern and the words of layers_block_type (both
// Transformers' current names and the ones older configs use).
struct Block {
  char symbol;
  std::string_view word, legacy_word;
};
constexpr Block kBlocks[] = {
    {'M', "linear_attention", "mamba"},
    {'*', "full_attention", "attention"},
    {'-', "mlp", "mlp"},
    {'E', "moe", "moe"},
};

// One symbol per layer, from a pattern string `pattern_key` or a list of words
// `list_key`; when both are present they must agree. nullopt when neither is.
Result<std::optional<std::string>> read_blocks(Fields& config, std::string_view pattern_key,
                                               std::string_view list_key) {
  std::optional<std::string> pattern;
  if (const json* value = config.get(pattern_key)) {
    if (!value->is_string()) return config.invalid(pattern_key, *value, "must be a string of M * - E");
    pattern = value->get<std::string>();
    for (std::size_t i = 0; i < pattern->size(); ++i) {
      bool known = false;
      for (const Block& block : kBlocks) known = known || (*pattern)[i] == block.symbol;
      if (!known) {
        return config.invalid(pattern_key, *value,
                              "'" + pattern->substr(i, 1) + "' at position " + std::to_string(i) +
                                  " is not a layer symbol (M Mamba-2, * attention, - MLP, E MoE)");
      }
    }
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto words, config.optional_words(list_key, {"linear_attention", "full_attention",
                                                                                 "mlp", "moe", "mamba", "attention"}));
  if (!words) return pattern;
  std::string listed;
  for (const std::string& word : *words) {
    for (const Block& block : kBlocks) {
      if (word == block.word || word == block.legacy_word) listed += block.symbol;
    }
  }
  if (pattern && *pattern != listed) {
    return config.invalid(
        list_key, *config.get(list_key),
        "disagrees with " + std::string(pattern_key) + " = \"" + *pattern + "\" (reads as \"" + listed + "\")");
  }
  return std::optional(listed);
}

// The layer of each symbol, with its fields read on first use so that a model
// without, e.g., MoE layers need not carry (or may carry unused) MoE fields.
class LayerBuilder {
 public:
  explicit LayerBuilder(Fields& config) : config_(config) {}

  Result<Layer> layer(char symbol) {
    Layer layer;
    switch (symbol) {
      case 'M': {
        if (!mamba_) {
          TRAINFLOPS_ASSIGN_OR_RETURN(mamba_, mamba());
        }
        layer.mixer = *mamba_;
        break;
      }
      case '*': {
        if (!attention_) {
          TRAINFLOPS_ASSIGN_OR_RETURN(attention_, attention());
        }
        layer.mixer = *attention_;
        break;
      }
      case '-': {
        if (!mlp_) {
          TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config_.positive("intermediate_size"));
          mlp_ = DenseMlp{ffn, /*gated=*/false};  // up and down projections around a squared ReLU
        }
        layer.channel_mixer = *mlp_;
        break;
      }
      default: {
        if (!moe_) {
          TRAINFLOPS_ASSIGN_OR_RETURN(moe_, moe());
        }
        layer.channel_mixer = *moe_;
        break;
      }
    }
    return layer;
  }

  // The fields of the kinds no layer uses change nothing.
  void ignore_unused() {
    if (!mamba_) config_.ignore({"mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups"});
    if (!attention_) {
      config_.ignore({"num_attention_heads", "num_key_value_heads", "head_dim", "attention_head_dim"});
    }
    if (!mlp_) config_.ignore({"intermediate_size"});
    if (!moe_) {
      config_.ignore({"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                      "moe_shared_expert_intermediate_size", "moe_latent_size"});
    }
  }

 private:
  // Transformers' Nemotron-H: width mamba_num_heads x mamba_head_dim
  // (`expand` is not used).
  Result<Mamba2> mamba() {
    Mamba2 m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_heads, config_.positive("mamba_num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t head_dim, config_.positive("mamba_head_dim"));
    m.inner_dim = m.num_heads * head_dim;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_groups, config_.positive("n_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.state_dim, config_.positive("ssm_state_size"));
    return m;
  }

  // head_dim, or attention_head_dim as the released Nemotron-H configs name it.
  Result<GqaAttention> attention() {
    GqaAttention a;
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_heads, config_.positive("num_attention_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_query_groups, config_.positive("num_key_value_heads"));
    if (a.num_heads % a.num_query_groups != 0) {
      return config_.invalid("num_key_value_heads", a.num_query_groups,
                             "must divide num_attention_heads = " + std::to_string(a.num_heads));
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> head_dim, config_.optional_positive("head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> attention_head_dim,
                                config_.optional_positive("attention_head_dim"));
    if (head_dim && attention_head_dim && *head_dim != *attention_head_dim) {
      return config_.invalid("attention_head_dim", *attention_head_dim,
                             "must equal head_dim = " + std::to_string(*head_dim));
    }
    a.head_dim = head_dim ? head_dim : attention_head_dim;
    if (!a.head_dim) return config_.missing("head_dim", "for attention layers, unless attention_head_dim gives it");
    return a;
  }

  // Non-gated experts (up and down projections), optionally in a latent space
  // of moe_latent_size, and one shared expert of
  // moe_shared_expert_intermediate_size (0 or null: none).
  Result<Moe> moe() {
    Moe m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, config_.positive("n_routed_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, config_.positive("num_experts_per_tok"));
    TRAINFLOPS_RETURN_IF_ERROR(check_topk(config_, m, "n_routed_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, config_.positive("moe_intermediate_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> shared,
                                config_.optional_non_negative("moe_shared_expert_intermediate_size"));
    if (shared.value_or(0) > 0) m.shared_expert_ffn_hidden_size = shared;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.latent_size, config_.optional_positive("moe_latent_size"));
    return m;
  }

  Fields& config_;
  std::optional<Mamba2> mamba_;
  std::optional<GqaAttention> attention_;
  std::optional<DenseMlp> mlp_;
  std::optional<Moe> moe_;
};

}  // namespace

Result<Model> import_nemotron_h(Fields& config, Notes&) {
  Model model;
  model.megatron_path = MegatronPath::kHybrid;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> main,
                              read_blocks(config, "hybrid_override_pattern", "layers_block_type"));
  if (!main)
    return config.missing("hybrid_override_pattern",
                          "for model_type \"nemotron_h\", unless layers_block_type lists the layers");
  if (main->empty()) return config.invalid("hybrid_override_pattern", json(""), "must hold at least one layer");
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> layers, config.optional_positive("num_hidden_layers"));
  if (layers && *layers != static_cast<std::int64_t>(main->size())) {
    return config.invalid("num_hidden_layers", *layers,
                          "the layer pattern has " + std::to_string(main->size()) + " layers");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));
  std::optional<std::string> mtp;
  if (depths > 0) {
    TRAINFLOPS_ASSIGN_OR_RETURN(mtp, read_blocks(config, "mtp_hybrid_override_pattern", "mtp_layers_block_type"));
    if (!mtp || mtp->empty()) {
      return config.missing("mtp_hybrid_override_pattern",
                            "when num_nextn_predict_layers > 0, unless mtp_layers_block_type lists the layers");
    }
  } else {
    config.ignore({"mtp_hybrid_override_pattern", "mtp_layers_block_type"});
  }
  if (config.has("sliding_window")) {
    return config.invalid("sliding_window", *config.get("sliding_window"),
                          "sliding-window attention is not imported for model_type \"nemotron_h\"");
  }
  config.get("sliding_window");  // null

  LayerBuilder builder(config);
  for (const char symbol : *main) {
    TRAINFLOPS_ASSIGN_OR_RETURN(Layer layer, builder.layer(symbol));
    model.layers.push_back(std::move(layer));
  }
  for (std::int64_t d = 0; d < depths; ++d) {
    LayerStack depth;
    for (const char symbol : *mtp) {
      TRAINFLOPS_ASSIGN_OR_RETURN(Layer layer, builder.layer(symbol));
      depth.push_back(std::move(layer));
    }
    model.mtp_depths.push_back(std::move(depth));
  }
  builder.ignore_unused();
  // Settings of numerics, kernels and routing; `expand` and `conv_kernel` do
  // not enter the count (Megatron-LM's Mamba formula has no convolution term),
  // and `time_step_rank`, Mamba-1's, no Mamba-2 shape (its time steps are one
  // per head, out of the input projection).
  config.ignore({"expand",
                 "conv_kernel",
                 "chunk_size",
                 "mamba_hidden_act",
                 "mlp_hidden_act",
                 "use_conv_bias",
                 "use_bias",
                 "mamba_proj_bias",
                 "time_step_min",
                 "time_step_max",
                 "time_step_limit",
                 "time_step_floor",
                 "time_step_rank",
                 "residual_in_fp32",
                 "rescale_prenorm_residual",
                 "num_logits_to_keep",
                 "use_mamba_kernels",
                 "mamba_ssm_cache_dtype",
                 "n_group",
                 "topk_group",
                 "routed_scaling_factor",
                 "norm_topk_prob",
                 "moe_shared_expert_overlap",
                 "n_shared_experts"});
  return model;
}

}  // namespace trainflops::hf
