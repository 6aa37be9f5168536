// Decoder-only transformers with grouped-query attention: llama, mistral,
// mixtral, qwen2, qwen3, qwen3_moe, gemma3, gpt_oss, llama4_text, minimax_m2,
// and qwen3_next and qwen3_5 with their gated delta net layers.
#include <algorithm>
#include <string>

#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

constexpr std::string_view kFullAttention = "full_attention";
constexpr std::string_view kSlidingAttention = "sliding_attention";

// The size every layer shares, read once.
struct Base {
  std::int64_t hidden_size = 0, vocab_size = 0, layers = 0;
};

Result<Base> read_base(Fields& config) {
  Base base;
  TRAINFLOPS_ASSIGN_OR_RETURN(base.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(base.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(base.layers, config.layer_count("num_hidden_layers"));
  return base;
}

Model model_of(const Base& base) {
  Model model;
  model.hidden_size = base.hidden_size;
  model.vocab_size = base.vocab_size;
  return model;
}

// A per-layer list (layer_types and the like) must cover every layer.
Status check_per_layer(const Fields& config, std::string_view key, std::size_t size, std::int64_t layers) {
  if (size == static_cast<std::size_t>(layers)) return Ok{};
  return list_length_error(config, key, size, "num_hidden_layers = " + std::to_string(layers));
}

// Sliding windows of layer_types ("full_attention" / "sliding_attention"),
// all of width `window`; nullopt when the config has no layer_types.
Result<std::optional<std::vector<std::optional<std::int64_t>>>> windows_from_layer_types(
    Fields& config, std::int64_t layers, const std::optional<std::int64_t>& window, const std::string& window_rule) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                              config.optional_words("layer_types", {kFullAttention, kSlidingAttention}));
  if (!types) return std::optional<std::vector<std::optional<std::int64_t>>>();
  TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, "layer_types", types->size(), layers));
  std::vector<std::optional<std::int64_t>> windows(types->size());
  for (std::size_t i = 0; i < types->size(); ++i) {
    if ((*types)[i] != kSlidingAttention) continue;
    if (!window) {
      return config.invalid("layer_types[" + std::to_string(i) + "]", json(kSlidingAttention), window_rule);
    }
    windows[i] = window;
  }
  return std::optional(std::move(windows));
}

// Qwen2/Qwen3: with use_sliding_window, the layers from max_window_layers on
// attend a window of sliding_window keys, unless layer_types says per layer.
Result<std::vector<std::optional<std::int64_t>>> qwen_windows(Fields& config, std::int64_t layers) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool use, config.flag("use_sliding_window"));
  std::optional<std::int64_t> window;
  if (use) {
    TRAINFLOPS_ASSIGN_OR_RETURN(window, config.optional_positive("sliding_window"));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(
      auto listed, windows_from_layer_types(config, layers, window,
                                            use ? "needs sliding_window, which is null"
                                                : "needs a sliding window, but use_sliding_window is false"));
  if (!use) config.ignore({"sliding_window", "max_window_layers"});  // off: they change nothing
  if (listed) {
    if (use) config.ignore({"max_window_layers"});  // layer_types decides
    return std::move(*listed);
  }
  std::vector<std::optional<std::int64_t>> windows(static_cast<std::size_t>(layers));
  if (!use) return windows;
  if (!window) return config.missing("sliding_window", "when use_sliding_window is true");
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> first,
                              config.optional_non_negative("max_window_layers"));
  if (!first) return config.missing("max_window_layers", "when use_sliding_window is true");
  for (std::int64_t i = *first; i < layers; ++i) windows[static_cast<std::size_t>(i)] = window;
  return windows;
}

// Mistral and Mixtral: sliding_window (null: none) on every layer.
Result<std::vector<std::optional<std::int64_t>>> uniform_window(Fields& config, std::int64_t layers) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> window, config.optional_positive("sliding_window"));
  return std::vector<std::optional<std::int64_t>>(static_cast<std::size_t>(layers), window);
}

Layer attention_layer(GqaAttention attention, const std::optional<std::int64_t>& window, ChannelMixer channel_mixer) {
  attention.window = window;
  return Layer{Mixer{attention}, std::move(channel_mixer)};
}

DenseMlp swiglu(std::int64_t ffn_hidden_size) { return DenseMlp{ffn_hidden_size, /*gated=*/true}; }

// Qwen's MoE layer pattern: decoder_sparse_step and mlp_only_layers.
Result<std::vector<bool>> qwen_moe_pattern(Fields& config, std::int64_t layers) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t step, config.positive("decoder_sparse_step"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto mlp_only,
                              config.optional_indices("mlp_only_layers", layers, "num_hidden_layers"));
  return qwen_moe_layers(layers, step, mlp_only.value_or(std::vector<std::int64_t>{}));
}

// Dense MLP of intermediate_size where `moe` is false; read only when needed.
Result<std::optional<ChannelMixer>> dense_if_needed(Fields& config, const std::vector<bool>& moe) {
  for (const bool expert_layer : moe) {
    if (expert_layer) continue;
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    return std::optional<ChannelMixer>(swiglu(ffn));
  }
  config.ignore({"intermediate_size"});  // no dense layer uses it
  return std::optional<ChannelMixer>();
}

}  // namespace

Result<Model> import_transformer(Fields& config, Notes&) {
  const std::string& type = config.model_type();
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/false));
  std::vector<std::optional<std::int64_t>> windows(static_cast<std::size_t>(base.layers));
  if (type == "mistral" || type == "mixtral") {
    TRAINFLOPS_ASSIGN_OR_RETURN(windows, uniform_window(config, base.layers));
  } else if (type != "llama") {
    TRAINFLOPS_ASSIGN_OR_RETURN(windows, qwen_windows(config, base.layers));
  }
  config.ignore(
      {"pretraining_tp", "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob"});

  std::vector<bool> moe(static_cast<std::size_t>(base.layers), false);
  std::optional<ChannelMixer> experts;
  if (type == "mixtral") {
    Moe m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, config.positive("num_local_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, config.positive("num_experts_per_tok"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, config.positive("intermediate_size"));
    m.gated = true;
    TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, m, "num_local_experts"));
    experts = m;
    moe.assign(moe.size(), true);
  } else if (type == "qwen3_moe") {
    Moe m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, config.positive("num_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, config.positive("num_experts_per_tok"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
    m.gated = true;
    TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, m, "num_experts"));
    experts = m;
    TRAINFLOPS_ASSIGN_OR_RETURN(moe, qwen_moe_pattern(config, base.layers));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<ChannelMixer> dense, dense_if_needed(config, moe));

  Model model = model_of(base);
  for (std::size_t i = 0; i < windows.size(); ++i) {
    model.layers.push_back(attention_layer(attention, windows[i], moe[i] ? *experts : *dense));
  }
  return model;
}

namespace {

// Gemma 3's text model, at the top level (gemma3_text) or in text_config.
Result<Model> import_gemma3_text(Fields& text, Notes& notes) {
  Base base;
  TRAINFLOPS_ASSIGN_OR_RETURN(base.hidden_size, text.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(base.layers, text.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> vocab, text.optional_positive("vocab_size"));
  // Gemma 3's release configs leave these out; Transformers fills them in.
  constexpr std::int64_t kGemma3Vocabulary = 262208, kGemma3SlidingWindowPattern = 6;
  base.vocab_size = vocab.value_or(kGemma3Vocabulary);
  if (!vocab) {
    notes.assumed.push_back(text.path_of("vocab_size") + " = " + std::to_string(kGemma3Vocabulary) +
                            " (absent; Transformers' Gemma3TextConfig default)");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention attention,
                              grouped_query_attention(text, base.hidden_size, /*explicit_sizes=*/true));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, text.positive("intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t window, text.positive("sliding_window"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool bidirectional, text.flag("use_bidirectional_attention"));
  if (bidirectional) {
    return text.invalid("use_bidirectional_attention", json(true),
                        "bidirectional attention is not counted (trainflops counts causal decoders)");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(auto listed, windows_from_layer_types(text, base.layers, window, "needs sliding_window"));
  std::vector<std::optional<std::int64_t>> windows(static_cast<std::size_t>(base.layers));
  if (listed) {
    windows = std::move(*listed);
    text.ignore({"sliding_window_pattern"});  // layer_types decides
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> every,
                                text.optional_positive("sliding_window_pattern"));
    const std::int64_t pattern = every.value_or(kGemma3SlidingWindowPattern);
    if (!every) {
      notes.assumed.push_back(text.path_of("sliding_window_pattern") + " = " +
                              std::to_string(kGemma3SlidingWindowPattern) +
                              " (absent; Transformers' Gemma3TextConfig default: every 6th layer attends "
                              "globally, the others a sliding window)");
    }
    for (std::int64_t i = 0; i < base.layers; ++i) {
      if ((i + 1) % pattern != 0) windows[static_cast<std::size_t>(i)] = window;
    }
  }
  text.ignore({"query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping", "rope_local_base_freq",
               "cache_implementation", "hidden_activation"});
  Model model = model_of(base);
  for (const auto& layer_window : windows)
    model.layers.push_back(attention_layer(attention, layer_window, swiglu(ffn)));
  return model;
}

}  // namespace

Result<Model> import_gemma4(Fields& text, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(text));
  const auto count = static_cast<std::size_t>(base.layers);
  // Per-layer embeddings (E2B, E4B): every layer's own token embedding of
  // hidden_size_per_layer_input values, from a table of
  // vocab_size_per_layer_input rows; 0 (or absent) for none.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> per_layer,
                              text.optional_non_negative("hidden_size_per_layer_input"));
  std::optional<PerLayerEmbedding> embedding;
  if (per_layer.value_or(0) > 0) {
    if (!text.has("vocab_size_per_layer_input")) {
      return text.missing("vocab_size_per_layer_input", "by per-layer embeddings (hidden_size_per_layer_input > 0)");
    }
    PerLayerEmbedding e{.dim = *per_layer};
    TRAINFLOPS_ASSIGN_OR_RETURN(e.vocabulary, text.positive("vocab_size_per_layer_input"));
    embedding = e;
  } else {
    text.ignore({"vocab_size_per_layer_input"});  // the per-layer tables' vocabulary: none without them
  }
  // Sliding layers: grouped-query attention of head_dim over a window; full
  // layers: global_head_dim wide, num_global_key_value_heads groups, keys
  // that are the values too with attention_k_eq_v.
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention sliding,
                              grouped_query_attention(text, base.hidden_size, /*explicit_sizes=*/true));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t window, text.positive("sliding_window"));
  if (!text.has("layer_types")) return text.missing("layer_types", "for model_type \"gemma4_text\"");
  TRAINFLOPS_ASSIGN_OR_RETURN(auto windows,
                              windows_from_layer_types(text, base.layers, window, "needs sliding_window"));
  GqaAttention full = sliding;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> global_head_dim,
                              text.optional_positive("global_head_dim"));
  if (global_head_dim) full.head_dim = global_head_dim;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> global_groups,
                              text.optional_positive("num_global_key_value_heads"));
  if (global_groups) {
    if (full.num_heads % *global_groups != 0) {
      return text.invalid("num_global_key_value_heads", *global_groups,
                          "must divide num_attention_heads = " + std::to_string(full.num_heads));
    }
    full.num_query_groups = *global_groups;
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(full.key_is_value, text.flag("attention_k_eq_v"));
  // The last num_kv_shared_layers layers reuse an earlier layer's keys and
  // values; with use_double_wide_mlp their MLP is twice as wide.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> shared_count,
                              text.optional_non_negative("num_kv_shared_layers"));
  const std::int64_t shared = shared_count.value_or(0);
  if (shared >= base.layers) {
    return text.invalid("num_kv_shared_layers", shared,
                        "must be less than num_hidden_layers = " + std::to_string(base.layers) +
                            ": some layer computes the keys and values the others reuse");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool double_wide, text.flag("use_double_wide_mlp"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, text.positive("intermediate_size"));
  // The MoE block (26B A4B): routed experts beside the dense MLP, which acts
  // as their shared expert.
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool moe_block, text.flag("enable_moe_block"));
  std::optional<Moe> experts;
  if (moe_block) {
    Moe m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, text.positive("num_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, text.positive("top_k_experts"));
    if (m.topk > *m.num_experts) {
      return text.invalid("top_k_experts", m.topk, "must not exceed num_experts = " + std::to_string(*m.num_experts));
    }
    const std::string_view width =
        text.has("moe_intermediate_size") ? "moe_intermediate_size" : "expert_intermediate_size";
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, text.positive(width));
    m.shared_expert_ffn_hidden_size = ffn;
    m.gated = true;
    experts = m;
  }
  text.ignore({"num_experts", "top_k_experts", "moe_intermediate_size", "expert_intermediate_size"});
  // "vision": images attend bidirectionally among themselves; text stays causal.
  if (const json* bidirectional = text.get("use_bidirectional_attention")) {
    if (*bidirectional == true) {
      return text.invalid("use_bidirectional_attention", *bidirectional,
                          "bidirectional attention is not counted (trainflops counts causal decoders)");
    }
  }
  text.ignore({"final_logit_softcapping", "attn_logit_softcapping", "query_pre_attn_scalar", "hidden_activation"});
  Model model = model_of(base);
  for (std::size_t i = 0; i < count; ++i) {
    const bool reuses = static_cast<std::int64_t>(i) >= base.layers - shared;
    GqaAttention attention = (*windows)[i] ? sliding : full;
    attention.window = (*windows)[i];
    if (reuses) {
      attention.reuses_key_value = true;
      attention.key_is_value = false;
    }
    const std::int64_t width = reuses && double_wide ? 2 * ffn : ffn;
    const ChannelMixer channel = experts ? ChannelMixer{*experts} : ChannelMixer{swiglu(width)};
    model.layers.push_back(
        Layer{.mixer = Mixer{attention}, .channel_mixer = channel, .per_layer_embedding = embedding});
  }
  return model;
}

Result<Model> import_gemma3(Fields& config, Notes& notes) {
  if (config.model_type() == "gemma3_text") return import_gemma3_text(config, notes);
  // The multimodal wrapper: the language model is text_config; the vision
  // tower and its projector are not counted (docs/hf-import.md).
  config.ignore({"vision_config", "mm_tokens_per_image", "boi_token_index", "eoi_token_index", "image_token_index"});
  const json* text_json = config.get("text_config");
  if (!text_json) return config.missing("text_config");
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields text, Fields::open(*text_json, "text_config", config.model_type()));
  text.ignore_common();
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> text_type, text.optional_text("model_type"));
  if (text_type && *text_type != "gemma3_text") {
    return text.invalid("model_type", json(*text_type), "must be gemma3_text in a gemma3 config");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(Model model, import_gemma3_text(text, notes));
  const Fields::Unread unread = text.finish();
  notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  notes.unknown.insert(notes.unknown.end(), unread.unknown.begin(), unread.unknown.end());
  return model;
}

Result<Model> import_gpt_oss(Fields& config, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t window, config.positive("sliding_window"));
  TRAINFLOPS_ASSIGN_OR_RETURN(auto windows,
                              windows_from_layer_types(config, base.layers, window, "needs sliding_window"));
  if (!windows) return config.missing("layer_types");
  // Experts: a gated (clamped SwiGLU) MLP of intermediate_size, no shared one.
  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> alias, config.optional_positive("experts_per_token"));
  if (alias && *alias != experts.topk) {
    return config.invalid("experts_per_token", *alias,
                          "must equal num_experts_per_tok = " + std::to_string(experts.topk));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("intermediate_size"));
  experts.gated = true;
  config.ignore({"swiglu_limit", "initial_context_length", "output_router_logits", "router_aux_loss_coef",
                 "router_jitter_noise"});
  Model model = model_of(base);
  for (const auto& layer_window : *windows) model.layers.push_back(attention_layer(attention, layer_window, experts));
  return model;
}

namespace {

// Qwen3-Next's and Qwen3.5's hybrid decoder: gated delta net layers and
// gated full attention layers (q_proj also yields a sigmoid gate of the
// query width), placed by layer_types or every full_attention_interval-th.
struct QwenHybrid {
  GqaAttention attention;
  GatedDeltaNet linear;
  std::vector<bool> full;  // per layer: full attention, else the gated delta net
};

Result<QwenHybrid> qwen_hybrid(Fields& config, const Base& base) {
  QwenHybrid hybrid;
  TRAINFLOPS_ASSIGN_OR_RETURN(hybrid.attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  hybrid.attention.output_gate = true;
  GatedDeltaNet& linear = hybrid.linear;
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.key_head_dim, config.positive("linear_key_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.value_head_dim, config.positive("linear_value_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.num_key_heads, config.positive("linear_num_key_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.num_value_heads, config.positive("linear_num_value_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.conv_kernel_dim, config.positive("linear_conv_kernel_dim"));

  std::vector<bool>& full = hybrid.full;
  full.resize(static_cast<std::size_t>(base.layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                              config.optional_words("layer_types", {"linear_attention", kFullAttention}));
  if (types) {
    TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, "layer_types", types->size(), base.layers));
    for (std::size_t i = 0; i < types->size(); ++i) full[i] = (*types)[i] == kFullAttention;
    config.ignore({"full_attention_interval"});  // layer_types decides
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> interval,
                                config.optional_positive("full_attention_interval"));
    if (!interval) return config.missing("full_attention_interval", "when layer_types is absent");
    for (std::int64_t i = 0; i < base.layers; ++i) full[static_cast<std::size_t>(i)] = (i + 1) % *interval == 0;
  }
  return hybrid;
}

// Routed experts of moe_intermediate_size and one shared expert of
// shared_expert_intermediate_size, all gated.
Result<Moe> qwen_hybrid_experts(Fields& config) {
  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.shared_expert_ffn_hidden_size,
                              config.positive("shared_expert_intermediate_size"));
  experts.gated = true;
  return experts;
}

// mtp_num_hidden_layers: multi-token prediction depths, each one gated
// attention layer with the last decoder layer's channel mixer (as Megatron-LM
// builds Qwen3-Next's MTP).
Result<std::int64_t> qwen_mtp_depths(Fields& config) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> depths,
                              config.optional_non_negative("mtp_num_hidden_layers"));
  if (depths) TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(config.path_of("mtp_num_hidden_layers"), *depths));
  return depths.value_or(0);
}

Model qwen_hybrid_model(const Base& base, const QwenHybrid& hybrid, const std::vector<bool>& moe,
                        const std::optional<ChannelMixer>& experts, const std::optional<ChannelMixer>& dense,
                        std::int64_t mtp_depths) {
  Model model = model_of(base);
  for (std::size_t i = 0; i < hybrid.full.size(); ++i) {
    Layer layer;
    layer.mixer = hybrid.full[i] ? Mixer{hybrid.attention} : Mixer{hybrid.linear};
    layer.channel_mixer = moe[i] ? *experts : *dense;
    model.layers.push_back(std::move(layer));
  }
  const Layer mtp_layer{Mixer{hybrid.attention}, model.layers.back().channel_mixer};
  for (std::int64_t d = 0; d < mtp_depths; ++d) model.mtp_depths.push_back({mtp_layer});
  return model;
}

}  // namespace

Result<Model> import_qwen3_next(Fields& config, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const QwenHybrid hybrid, qwen_hybrid(config, base));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe experts, qwen_hybrid_experts(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> moe, qwen_moe_pattern(config, base.layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<ChannelMixer> dense, dense_if_needed(config, moe));
  // Transformers' Qwen3-Next attention has no sliding window: these change nothing.
  config.ignore({"use_sliding_window", "sliding_window", "max_window_layers", "norm_topk_prob", "output_router_logits",
                 "router_aux_loss_coef", "router_jitter_noise"});
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, qwen_mtp_depths(config));
  return qwen_hybrid_model(base, hybrid, moe, ChannelMixer{experts}, dense, depths);
}

Result<Model> import_qwen3_5(Fields& config, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const QwenHybrid hybrid, qwen_hybrid(config, base));
  // qwen3_5_moe_text: every layer MoE; qwen3_5_text: every layer a dense MLP.
  const bool experts_everywhere = config.model_type() == "qwen3_5_moe_text";
  std::vector<bool> moe(static_cast<std::size_t>(base.layers), experts_everywhere);
  std::optional<ChannelMixer> experts, dense;
  if (experts_everywhere) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Moe routed, qwen_hybrid_experts(config));
    experts = routed;
    config.ignore(
        {"intermediate_size", "norm_topk_prob", "output_router_logits", "router_aux_loss_coef", "router_jitter_noise"});
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    dense = swiglu(ffn);
  }
  // The attention output gate is attn_output_gate in these configs, always
  // on in the releases; its activation and the gated delta net's state dtype
  // change no product. mlp_only_layers is empty in the releases.
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool gate, config.flag("attn_output_gate"));
  if (!gate && config.has("attn_output_gate")) {
    return config.invalid("attn_output_gate", json(false), "only the gated attention of the releases is counted");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto mlp_only,
                              config.optional_indices("mlp_only_layers", base.layers, "num_hidden_layers"));
  if (mlp_only && !mlp_only->empty()) {
    return config.invalid("mlp_only_layers", json(*mlp_only), "must be empty: every layer has the same channel mixer");
  }
  config.ignore({"output_gate_type", "mamba_ssm_dtype", "mtp_use_dedicated_embeddings"});
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, qwen_mtp_depths(config));
  return qwen_hybrid_model(base, hybrid, moe, experts, dense, depths);
}

Result<Model> import_qwen3_8(Fields& config, Notes& notes) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const QwenHybrid hybrid, qwen_hybrid(config, base));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe experts, qwen_hybrid_experts(config));
  // The full-attention layers are QSA: gated grouped-query attention over
  // the blocks its indexer selects.
  CompressedBlockSparseAttention sparse;
  sparse.attention = hybrid.attention;
  TRAINFLOPS_ASSIGN_OR_RETURN(sparse.indexer_num_heads, config.positive("indexer_n_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(sparse.indexer_key_heads, config.positive("indexer_kv_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(sparse.indexer_head_dim, config.positive("indexer_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(sparse.block_size, config.positive("indexer_compress_ratio"));
  TRAINFLOPS_ASSIGN_OR_RETURN(sparse.budget, config.positive("indexer_budget"));
  if (sparse.budget % sparse.block_size != 0) {
    return config.invalid("indexer_budget", sparse.budget,
                          "must be a multiple of indexer_compress_ratio = " + std::to_string(sparse.block_size));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> gate, config.optional_text("output_gate_type"));
  if (gate && *gate != "sigmoid") {
    return config.invalid("output_gate_type", json(*gate), "only the sigmoid output gate of the release is counted");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto mlp_only,
                              config.optional_indices("mlp_only_layers", base.layers, "num_hidden_layers"));
  if (mlp_only && !mlp_only->empty()) {
    return config.invalid("mlp_only_layers", json(*mlp_only), "must be empty: every layer has the same channel mixer");
  }
  Model model = model_of(base);
  model.parameter_layout.shared_expert_gate = true;
  // Gated residual hyper-connections over hc_count streams, their gates of rank hc_lowrank.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> streams, config.optional_positive("hc_count"));
  if (streams) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t rank, config.positive("hc_lowrank"));
    model.hyper_connections = HyperConnections{HyperConnections::Variant::kGatedResidual, *streams, rank};
  } else {
    config.ignore({"hc_lowrank"});
  }
  // Per-layer n-gram embeddings on ple_layer_ids, numbered from 1: ngram_size
  // - 1 orders of heads_per_ngram hashed tables, ple_embed_dim wide together.
  std::vector<std::optional<NgramMemory>> memories(static_cast<std::size_t>(base.layers));
  const json* ple_layers = config.get("ple_layer_ids");
  if (ple_layers && !ple_layers->empty()) {
    if (!ple_layers->is_array()) return config.invalid("ple_layer_ids", *ple_layers, "must be a list of layer numbers");
    NgramMemory memory;
    TRAINFLOPS_ASSIGN_OR_RETURN(memory.embed_dim, config.positive("ple_embed_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> kernel,
                                config.optional_positive("ple_conv_kernel_size"));
    memory.conv_kernel = kernel.value_or(4);  // the release's default
    memory.streams = streams.value_or(1);
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t rows, config.positive("ngram_vocab_size_base"));
    memory.table_parameters = rows * memory.embed_dim;
    notes.assumed.push_back(
        "ngram_vocab_size_base: each n-gram head's table holds about that many rows (the hashing rounds each "
        "head's size), so the PLE tables are counted as ngram_vocab_size_base x ple_embed_dim parameters per layer");
    for (const json& id : *ple_layers) {
      if (!id.is_number_integer() || id < 1 || id > base.layers) {
        return config.invalid("ple_layer_ids", *ple_layers,
                              "must hold layer numbers from 1 to num_hidden_layers = " + std::to_string(base.layers) +
                                  " (they count from 1)");
      }
      memories[id.get<std::size_t>() - 1] = memory;
    }
    config.ignore({"ngram_size", "heads_per_ngram"});  // they split ple_embed_dim, which holds the rows' width
  } else {
    config.ignore({"ple_embed_dim", "ple_conv_kernel_size", "ngram_vocab_size_base", "ngram_size", "heads_per_ngram"});
  }
  // The hashing's rounding and seed, the state dtype, the router's settings,
  // and the MTP depth's own description (one QSA layer, as counted).
  config.ignore({"make_ngram_vocab_size_divisible_by", "split_ngram_parts", "seed", "mamba_ssm_dtype", "norm_topk_prob",
                 "output_router_logits", "router_aux_loss_coef", "mtp", "mtp_use_dedicated_embeddings"});
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, qwen_mtp_depths(config));
  for (std::size_t i = 0; i < hybrid.full.size(); ++i) {
    Layer layer{hybrid.full[i] ? Mixer{sparse} : Mixer{hybrid.linear}, ChannelMixer{experts}};
    layer.ngram_memory = memories[i];
    model.layers.push_back(layer);
  }
  for (std::int64_t d = 0; d < depths; ++d) model.mtp_depths.push_back({Layer{Mixer{sparse}, ChannelMixer{experts}}});
  return model;
}

Result<Model> import_llama4_text(Fields& config, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  const auto count = static_cast<std::size_t>(base.layers);
  // Which layers attend within chunks: layer_types when given, else the RoPE
  // layers of no_rope_layers (1: RoPE and chunked, 0: NoPE and global), else
  // Transformers' default of a global layer every no_rope_layer_interval (4).
  std::vector<bool> chunked(count);
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                              config.optional_words("layer_types", {"chunked_attention", kFullAttention}));
  if (types) {
    TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, "layer_types", types->size(), base.layers));
    for (std::size_t i = 0; i < count; ++i) chunked[i] = (*types)[i] == "chunked_attention";
    config.ignore({"no_rope_layers", "no_rope_layer_interval"});  // layer_types decides
  } else if (const json* no_rope = config.get("no_rope_layers")) {
    if (!no_rope->is_array()) return config.invalid("no_rope_layers", *no_rope, "must be a list of 0 and 1");
    TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, "no_rope_layers", no_rope->size(), base.layers));
    for (std::size_t i = 0; i < count; ++i) {
      const json& entry = (*no_rope)[i];
      if (entry != 0 && entry != 1) {
        return config.invalid("no_rope_layers[" + std::to_string(i) + "]", entry, "must be 0 or 1");
      }
      chunked[i] = entry == 1;
    }
    config.ignore({"no_rope_layer_interval"});
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> interval,
                                config.optional_positive("no_rope_layer_interval"));
    for (std::size_t i = 0; i < count; ++i) chunked[i] = (i + 1) % static_cast<std::size_t>(interval.value_or(4)) != 0;
  }
  std::optional<std::int64_t> chunk;
  if (std::find(chunked.begin(), chunked.end(), true) != chunked.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(chunk, config.positive("attention_chunk_size"));
  } else {
    config.ignore({"attention_chunk_size"});
  }

  // MoE layers: moe_layers when given, else every interleave_moe_layer_step-th
  // layer ending each step. Routed experts and one shared expert, both gated
  // MLPs of intermediate_size; dense layers of intermediate_size_mlp.
  std::vector<bool> moe(count);
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto listed,
                              config.optional_indices("moe_layers", base.layers, "num_hidden_layers"));
  if (listed) {
    for (const std::int64_t i : *listed) moe[static_cast<std::size_t>(i)] = true;
    config.ignore({"interleave_moe_layer_step"});  // moe_layers decides
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t step, config.positive("interleave_moe_layer_step"));
    for (std::size_t i = 0; i < count; ++i) moe[i] = (i + 1) % static_cast<std::size_t>(step) == 0;
  }
  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("intermediate_size"));
  experts.shared_expert_ffn_hidden_size = experts.expert_ffn_hidden_size;
  experts.gated = true;
  std::optional<ChannelMixer> dense;
  if (std::find(moe.begin(), moe.end(), false) != moe.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size_mlp"));
    dense = swiglu(ffn);
  } else {
    config.ignore({"intermediate_size_mlp"});
  }
  // Attention temperature, QK norms and router settings: not products, or not FLOPs.
  config.ignore({"attn_temperature_tuning", "attn_scale", "floor_scale", "use_qk_norm", "output_router_logits",
                 "router_aux_loss_coef", "router_jitter_noise", "for_llm_compressor"});

  Model model = model_of(base);
  for (std::size_t i = 0; i < count; ++i) {
    attention.chunk = chunked[i] ? chunk : std::nullopt;
    model.layers.push_back(Layer{Mixer{attention}, moe[i] ? ChannelMixer{experts} : *dense});
  }
  return model;
}

Result<Model> import_minimax_m2(Fields& config, Notes& notes) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  // attn_type_list: 1 softmax attention, 0 MiniMax's lightning (linear) attention.
  if (const json* types = config.get("attn_type_list")) {
    if (!types->is_array()) return config.invalid("attn_type_list", *types, "must be a list of 0 and 1");
    TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, "attn_type_list", types->size(), base.layers));
    for (std::size_t i = 0; i < types->size(); ++i) {
      if ((*types)[i] != 1) {
        return config.invalid("attn_type_list[" + std::to_string(i) + "]", (*types)[i],
                              "only softmax attention (1) is counted; lightning attention (0) is not");
      }
    }
  }
  // Every layer is MoE: routed experts of intermediate_size, and a shared one
  // when shared_intermediate_size is positive.
  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> shared,
                              config.optional_non_negative("shared_intermediate_size"));
  if (shared.value_or(0) > 0) experts.shared_expert_ffn_hidden_size = shared;
  experts.gated = true;
  // Multi-token prediction modules, each mtp_transformer_layers layers.
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool mtp, config.flag("use_mtp"));
  std::int64_t depths = 0;
  if (mtp) {
    TRAINFLOPS_ASSIGN_OR_RETURN(depths, config.non_negative("num_mtp_modules"));
    TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(config.path_of("num_mtp_modules"), depths));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t per_depth, config.positive("mtp_transformer_layers"));
    if (per_depth != 1) {
      return config.invalid("mtp_transformer_layers", per_depth, "only one layer per MTP module is counted");
    }
    if (depths > 0) {
      notes.assumed.push_back(config.path_of("num_mtp_modules") + " = " + std::to_string(depths) +
                              " MTP depths, each a 2h -> h projection, one decoder layer (MoE) and logits, as "
                              "DeepSeek-V3's");
    }
  } else {
    config.ignore({"num_mtp_modules", "mtp_transformer_layers"});
  }
  config.ignore({"rotary_dim", "use_qk_norm", "qk_norm_type", "scoring_func", "use_routing_bias",
                 "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "sliding_window"});
  Model model = model_of(base);
  for (std::int64_t i = 0; i < base.layers; ++i) model.layers.push_back(Layer{Mixer{attention}, ChannelMixer{experts}});
  for (std::int64_t d = 0; d < depths; ++d)
    model.mtp_depths.push_back({Layer{Mixer{attention}, ChannelMixer{experts}}});
  return model;
}

namespace {

// A per-layer list of numbers, each 0 (false) or not (true); nullopt when absent.
Result<std::optional<std::vector<bool>>> per_layer_flags(Fields& config, std::string_view key, std::int64_t layers) {
  const json* list = config.get(key);
  if (!list) return std::optional<std::vector<bool>>();
  if (!list->is_array()) return config.invalid(key, *list, "must be a list of numbers, one per layer");
  TRAINFLOPS_RETURN_IF_ERROR(check_per_layer(config, key, list->size(), layers));
  std::vector<bool> flags;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    if (!entry.is_number_integer()) {
      return config.invalid(std::string(key) + "[" + std::to_string(i) + "]", entry, "must be an integer");
    }
    flags.push_back(entry.get<std::int64_t>() != 0);
  }
  return std::optional(std::move(flags));
}

// MiniMax-M3's sparse_attention_config: which layers attend block-sparse, and
// how; nullopt for every layer dense.
struct MiniMaxSparse {
  BlockSparseAttention attention;
  std::vector<bool> layers;
};

Result<std::optional<MiniMaxSparse>> minimax_sparse(Fields& config, const GqaAttention& attention, std::int64_t layers,
                                                    Notes& notes) {
  const json* object = config.get("sparse_attention_config");
  if (!object) return std::optional<MiniMaxSparse>();
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields sparse,
                              Fields::open(*object, config.path_of("sparse_attention_config"), config.model_type()));
  std::optional<MiniMaxSparse> result;
  // use_sparse_attention: absent means on.
  const bool stated = sparse.has("use_sparse_attention");
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool use, sparse.flag("use_sparse_attention"));
  if (stated && !use) {
    sparse.ignore_unread();
  } else {
    MiniMaxSparse s;
    s.attention.attention = attention;
    TRAINFLOPS_ASSIGN_OR_RETURN(s.attention.indexer_num_heads, sparse.positive("sparse_num_index_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(s.attention.indexer_head_dim, sparse.positive("sparse_index_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(s.attention.block_size, sparse.positive("sparse_block_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(s.attention.topk_blocks, sparse.positive("sparse_topk_blocks"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> init,
                                sparse.optional_non_negative("sparse_init_block"));
    s.attention.init_blocks = init.value_or(0);
    // The query's own block is always attended unless sparse_local_block is 0;
    // then whether it is depends on the scores, which no count can know.
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> local,
                                sparse.optional_non_negative("sparse_local_block"));
    if (local == 0) {
      return sparse.invalid("sparse_local_block", 0, "must be positive: the query's own block must be attended");
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(const auto freq, per_layer_flags(sparse, "sparse_attention_freq", layers));
    s.layers = freq.value_or(std::vector<bool>(static_cast<std::size_t>(layers), true));
    // Selection-only indexers (MiniMax-M3's) have no value branch on the sparse layers.
    TRAINFLOPS_ASSIGN_OR_RETURN(const auto no_value, per_layer_flags(sparse, "sparse_disable_index_value", layers));
    for (std::size_t i = 0; no_value && i < s.layers.size(); ++i) {
      if (s.layers[i] && !(*no_value)[i]) {
        return sparse.invalid("sparse_disable_index_value[" + std::to_string(i) + "]", 0,
                              "must be non-zero on a sparse layer: an indexer value branch is not counted");
      }
    }
    sparse.ignore({"sparse_score_type"});  // max or log-sum-exp pooling of the scores: no products
    result = std::move(s);
  }
  const Fields::Unread unread = sparse.finish();
  notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  notes.unknown.insert(notes.unknown.end(), unread.unknown.begin(), unread.unknown.end());
  return result;
}

}  // namespace

Result<Model> import_minimax_m3(Fields& config, Notes& notes) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.output_gate, config.flag("attention_output_gate"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<MiniMaxSparse> sparse,
                              minimax_sparse(config, attention, base.layers, notes));
  // moe_layer_freq: per layer, 0 a dense MLP of dense_intermediate_size, else
  // MoE (absent: every layer); routed experts of intermediate_size and
  // n_shared_experts shared ones of shared_intermediate_size, all gated.
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto listed, per_layer_flags(config, "moe_layer_freq", base.layers));
  const std::vector<bool> moe = listed.value_or(std::vector<bool>(static_cast<std::size_t>(base.layers), true));
  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_local_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> shared_count,
                              config.optional_non_negative("n_shared_experts"));
  if (shared_count.value_or(0) > 0) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t shared, config.positive("shared_intermediate_size"));
    experts.shared_expert_ffn_hidden_size = *shared_count * shared;
  } else {
    config.ignore({"shared_intermediate_size"});
  }
  experts.gated = true;
  std::optional<ChannelMixer> dense;
  if (std::find(moe.begin(), moe.end(), false) != moe.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("dense_intermediate_size"));
    dense = swiglu(ffn);
  } else {
    config.ignore({"dense_intermediate_size"});
  }
  // Multi-token prediction: each module one layer built as the last decoder
  // layer (MoE and, where it is, sparse attention) with its 2h -> h projection.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> depths,
                              config.optional_non_negative("num_mtp_modules"));
  if (depths) TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(config.path_of("num_mtp_modules"), *depths));
  // The release's num_nextn_predict_layers is the draft depth inference
  // engines read; training builds num_mtp_modules modules (NeMo Automodel's
  // MiniMax-M3 reads only that), so it adds nothing here.
  config.ignore({"num_nextn_predict_layers"});
  // Norms, RoPE, routing and the clamped SwiGLU's constants: no products.
  config.ignore({"rotary_dim", "use_qk_norm", "qk_norm_type", "use_gemma_norm", "scoring_func", "use_routing_bias",
                 "routed_scaling_factor", "swiglu_alpha", "swiglu_limit", "output_router_logits",
                 "router_aux_loss_coef", "router_jitter_noise"});
  Model model = model_of(base);
  const auto layer = [&](std::size_t i) {
    const Mixer mixer = sparse && sparse->layers[i] ? Mixer{sparse->attention} : Mixer{attention};
    return Layer{mixer, moe[i] ? ChannelMixer{experts} : *dense};
  };
  for (std::size_t i = 0; i < moe.size(); ++i) model.layers.push_back(layer(i));
  for (std::int64_t d = 0; d < depths.value_or(0); ++d) model.mtp_depths.push_back({layer(moe.size() - 1)});
  return model;
}

}  // namespace trainflops::hf
