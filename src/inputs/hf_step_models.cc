// StepFun's Step-3.5 (step3p5): grouped-query attention whose sliding-window
// layers have their own head count (attention_other_setting), a sigmoid gate
// per head on every layer's output, dense and MoE layers listed by
// moe_layers_enum (a shared expert beside the routed ones), and MTP layers
// described by the entries of layer_types after the decoder's.
#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

constexpr std::string_view kFullAttention = "full_attention";
constexpr std::string_view kSlidingAttention = "sliding_attention";

// The MoE layers of moe_layers_enum: "3,4,5" as the release writes it, or a
// list of indices, each below `bound` (the decoder and MTP layers together).
Result<std::vector<bool>> moe_layers(Fields& config, std::int64_t bound) {
  const json* value = config.get("moe_layers_enum");
  if (!value) return config.missing("moe_layers_enum", "for model_type \"step3p5\" (the indices of the MoE layers)");
  std::vector<bool> moe(static_cast<std::size_t>(bound));
  const std::string rule = "every entry must be a layer index from 0 to " + std::to_string(bound - 1) +
                           " (num_hidden_layers + num_nextn_predict_layers - 1)";
  if (value->is_string()) {
    const std::string text = value->get<std::string>();
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find(',', start), text.size());
      std::string_view entry(text.data() + start, end - start);
      while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
      while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
      std::int64_t index = -1;
      const auto [rest, error] = std::from_chars(entry.data(), entry.data() + entry.size(), index);
      if (entry.empty() || error != std::errc() || rest != entry.data() + entry.size() || index < 0 || index >= bound) {
        return config.invalid("moe_layers_enum", *value,
                              "\"" + std::string(entry) + "\" is not a layer index: " + rule);
      }
      moe[static_cast<std::size_t>(index)] = true;
      start = end + 1;
    }
    return moe;
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(
      const std::optional<std::vector<std::int64_t>> indices,
      config.optional_indices("moe_layers_enum", bound, "num_hidden_layers + num_nextn_predict_layers"));
  const std::vector<std::int64_t> listed = indices.value_or(std::vector<std::int64_t>());
  for (const std::int64_t index : listed) moe[static_cast<std::size_t>(index)] = true;
  return moe;
}

// The shared expert's width: share_expert_dim, or its plural spelling.
Result<std::int64_t> shared_expert_width(Fields& config) {
  const bool singular = config.has("share_expert_dim");
  if (!singular && !config.has("share_expert_dims")) {
    return config.missing("share_expert_dim", "for model_type \"step3p5\" with MoE layers");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t width,
                              config.positive(singular ? "share_expert_dim" : "share_expert_dims"));
  if (singular && config.has("share_expert_dims")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t plural, config.positive("share_expert_dims"));
    if (plural != width) {
      return config.invalid("share_expert_dims", plural, "must equal share_expert_dim = " + std::to_string(width));
    }
  }
  return width;
}

// The sliding layers' attention: attention_other_setting's heads, key/value
// heads and head width, each absent meaning the full layers'.
Result<GqaAttention> sliding_attention(Fields& config, const GqaAttention& full, Notes& notes) {
  const json* value = config.get("attention_other_setting");
  if (!value) {
    return config.missing("attention_other_setting", "for model_type \"step3p5\" with sliding_attention layers");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields other,
                              Fields::open(*value, config.path_of("attention_other_setting"), config.model_type()));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> kind, other.optional_text("attention_type"));
  if (kind && *kind != kSlidingAttention) {
    return other.invalid("attention_type", json(*kind), "must be \"sliding_attention\": the setting of those layers");
  }
  GqaAttention sliding = full;
  TRAINFLOPS_ASSIGN_OR_RETURN(sliding.num_heads, other.positive("num_attention_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> groups,
                              other.optional_positive("num_attention_groups"));
  if (groups) sliding.num_query_groups = *groups;
  if (sliding.num_heads % sliding.num_query_groups != 0) {
    return other.invalid("num_attention_groups", sliding.num_query_groups,
                         "must divide num_attention_heads = " + std::to_string(sliding.num_heads));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> head_dim, other.optional_positive("head_dim"));
  if (head_dim) sliding.head_dim = head_dim;
  const Fields::Unread unread = other.finish();
  notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  notes.unknown.insert(notes.unknown.end(), unread.unknown.begin(), unread.unknown.end());
  return sliding;
}

}  // namespace

Result<Model> import_step3p5(Fields& config, Notes& notes) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> implementation, config.optional_text("att_impl_type"));
  if (implementation && *implementation != "GQA") {
    return config.invalid("att_impl_type", json(*implementation), "only Step-3.5's grouped-query attention (\"GQA\")");
  }

  GqaAttention full;
  TRAINFLOPS_ASSIGN_OR_RETURN(full.num_heads, config.positive("num_attention_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(full.num_query_groups, config.positive("num_attention_groups"));
  if (full.num_heads % full.num_query_groups != 0) {
    return config.invalid("num_attention_groups", full.num_query_groups,
                          "must divide num_attention_heads = " + std::to_string(full.num_heads));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(full.head_dim, config.positive("head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(full.head_gate, config.flag("use_head_wise_attn_gate"));
  config.ignore({"num_key_value_heads"});  // num_attention_groups is what the release reads

  // layer_types names the decoder's layers and, after them, the MTP layers'.
  if (!config.has("layer_types")) return config.missing("layer_types", "for model_type \"step3p5\"");
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                              config.optional_words("layer_types", {kFullAttention, kSlidingAttention}));
  if (types->size() != static_cast<std::size_t>(layers + depths)) {
    return list_length_error(config, "layer_types", types->size(),
                             "num_hidden_layers + num_nextn_predict_layers = " + std::to_string(layers + depths) +
                                 " (the MTP layers' attention follows the decoder's)");
  }
  const bool any_sliding = std::find(types->begin(), types->end(), kSlidingAttention) != types->end();
  GqaAttention sliding = full;
  if (any_sliding) {
    TRAINFLOPS_ASSIGN_OR_RETURN(sliding, sliding_attention(config, full, notes));
    TRAINFLOPS_ASSIGN_OR_RETURN(sliding.window, config.positive("sliding_window"));
  } else {
    config.ignore({"attention_other_setting", "sliding_window"});  // no layer slides
  }

  // use_moe false: every layer dense. Otherwise moe_layers_enum lists the MoE
  // layers, and decides alone (moe_every_n_layer and moe_layer_offset are the
  // older spelling of the same schedule).
  bool no_moe = false;
  if (config.has("use_moe")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const bool use_moe, config.flag("use_moe"));
    no_moe = !use_moe;
  } else {
    config.get("use_moe");  // null: the default, MoE
  }
  std::vector<bool> moe(static_cast<std::size_t>(layers + depths));
  std::optional<Moe> experts;
  if (!no_moe) {
    TRAINFLOPS_ASSIGN_OR_RETURN(moe, moe_layers(config, layers + depths));
    config.ignore({"moe_every_n_layer", "moe_layer_offset"});
  } else {
    config.ignore({"moe_layers_enum", "moe_every_n_layer", "moe_layer_offset"});
  }
  if (std::find(moe.begin(), moe.end(), true) != moe.end()) {
    Moe m;
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, config.positive("moe_num_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, config.positive("moe_top_k"));
    if (m.topk > *m.num_experts) {
      return config.invalid("moe_top_k", m.topk, "must not exceed moe_num_experts = " + std::to_string(*m.num_experts));
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.shared_expert_ffn_hidden_size, shared_expert_width(config));
    m.gated = true;
    experts = m;
  }
  config.ignore({"moe_num_experts", "moe_top_k", "moe_intermediate_size", "share_expert_dim", "share_expert_dims"});
  std::optional<DenseMlp> dense;
  if (std::find(moe.begin(), moe.end(), false) != moe.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    dense = DenseMlp{ffn, /*gated=*/true};
  } else {
    config.ignore({"intermediate_size"});
  }

  // Routing, clamps, norms and RoPE variants: no products of their own.
  config.ignore({"moe_router_activation", "moe_router_scaling_factor", "norm_expert_weight", "need_fp32_gate",
                 "swiglu_limits", "swiglu_limits_shared", "zero_centered", "max_seq_len", "partial_rotary_factors",
                 "yarn_only_types", "use_rope_layers"});
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool qk_norm, config.flag("use_qk_norm"));
  if (qk_norm) model.parameter_layout.qk_norm = ParameterLayout::QkNorm::kPerHead;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.parameter_layout.expert_bias, config.flag("use_moe_router_bias"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.parameter_layout.attention_sinks, config.flag("sink"));

  const auto layer = [&](std::size_t i) {
    Layer l;
    l.mixer = (*types)[i] == kSlidingAttention ? sliding : full;
    l.channel_mixer = moe[i] ? ChannelMixer{*experts} : ChannelMixer{*dense};
    return l;
  };
  for (std::size_t i = 0; i < static_cast<std::size_t>(layers); ++i) model.layers.push_back(layer(i));
  for (std::int64_t d = 0; d < depths; ++d) model.mtp_depths.push_back({layer(static_cast<std::size_t>(layers + d))});
  return model;
}

}  // namespace trainflops::hf
