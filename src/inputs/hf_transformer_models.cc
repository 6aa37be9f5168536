// Decoder-only transformers with grouped-query attention: llama, mistral,
// mixtral, qwen2, qwen3, qwen3_moe, gemma3, gpt_oss, llama4_text, minimax_m2,
// and qwen3_next with its gated delta net layers.
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

Result<Model> import_qwen3_next(Fields& config, Notes&) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Base base, read_base(config));
  // Full attention layers: gated attention (q_proj also yields a sigmoid gate
  // of the query width).
  TRAINFLOPS_ASSIGN_OR_RETURN(GqaAttention attention,
                              grouped_query_attention(config, base.hidden_size, /*explicit_sizes=*/true));
  attention.output_gate = true;
  GatedDeltaNet linear;
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.key_head_dim, config.positive("linear_key_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.value_head_dim, config.positive("linear_value_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.num_key_heads, config.positive("linear_num_key_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.num_value_heads, config.positive("linear_num_value_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(linear.conv_kernel_dim, config.positive("linear_conv_kernel_dim"));

  std::vector<bool> full(static_cast<std::size_t>(base.layers));
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

  Moe experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.num_experts, config.positive("num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, experts, "num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(experts.shared_expert_ffn_hidden_size,
                              config.positive("shared_expert_intermediate_size"));
  experts.gated = true;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> moe, qwen_moe_pattern(config, base.layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<ChannelMixer> dense, dense_if_needed(config, moe));
  // Transformers' Qwen3-Next attention has no sliding window: these change nothing.
  config.ignore({"use_sliding_window", "sliding_window", "max_window_layers", "norm_topk_prob", "output_router_logits",
                 "router_aux_loss_coef", "router_jitter_noise"});

  // Multi-token prediction: each depth one gated-attention layer, MoE when the
  // last decoder layer is (as Megatron-LM builds Qwen3-Next's MTP).
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> depths,
                              config.optional_non_negative("mtp_num_hidden_layers"));
  if (depths) TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(config.path_of("mtp_num_hidden_layers"), *depths));

  Model model = model_of(base);
  for (std::size_t i = 0; i < full.size(); ++i) {
    Layer layer;
    layer.mixer = full[i] ? Mixer{attention} : Mixer{linear};
    layer.channel_mixer = moe[i] ? ChannelMixer{experts} : *dense;
    model.layers.push_back(std::move(layer));
  }
  const Layer mtp_layer{Mixer{attention}, model.layers.back().channel_mixer};
  for (std::int64_t d = 0; d < depths.value_or(0); ++d) model.mtp_depths.push_back({mtp_layer});
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

}  // namespace trainflops::hf
