// DeepSeek's family: multi-latent attention with MoE (deepseek_v3, and
// GLM-4.7-Flash's glm4_moe_lite and Mistral Small 4's mistral4), DeepSeek
// Sparse Attention on it (deepseek_v32, glm_moe_dsa, with index sharing),
// DeepSeek-V4's compressed sparse attention (deepseek_v4), and Kimi Linear's
// Kimi Delta Attention between MLA layers (kimi_linear, Kimi K3's text model).
#include <algorithm>
#include <string>

#include "inputs/hf_models.h"

namespace trainflops::hf {
namespace {

// Routing, load balancing and inference-only settings of DeepSeek-style MoE.
void ignore_routing(Fields& config) {
  config.ignore({"ep_size", "n_group", "topk_group", "topk_method", "routed_scaling_factor", "scoring_func",
                 "norm_topk_prob", "aux_loss_alpha", "seq_aux", "output_router_logits", "router_aux_loss_coef",
                 "router_jitter_noise"});
}

// Routed experts of moe_intermediate_size, plus n_shared_experts shared ones
// of the same width run as one MLP.
Result<Moe> deepseek_moe(Fields& config) {
  Moe moe;
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.num_experts, config.positive("n_routed_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.topk, config.positive("num_experts_per_tok"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, moe, "n_routed_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t shared, config.non_negative("n_shared_experts"));
  if (shared > 0) moe.shared_expert_ffn_hidden_size = shared * moe.expert_ffn_hidden_size;
  moe.gated = true;
  return moe;
}

Result<MlaAttention> mla_attention(Fields& config) {
  MlaAttention mla;
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.num_heads, config.positive("num_attention_heads"));
  // null: queries are projected from the hidden state (no query LoRA); absent
  // is an error, since Transformers then assumes a rank.
  if (!config.present("q_lora_rank")) {
    return config.missing("q_lora_rank", "for model_type \"" + config.model_type() +
                                             "\" (null when queries are projected without a LoRA)");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.q_lora_rank, config.optional_positive("q_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.kv_lora_rank, config.positive("kv_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.qk_head_dim, config.positive("qk_nope_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.qk_pos_emb_head_dim, config.non_negative("qk_rope_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.v_head_dim, config.positive("v_head_dim"));
  // Some releases state the query/key width too: it must be the sum.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> qk_width, config.optional_positive("qk_head_dim"));
  if (qk_width && *qk_width != mla.qk_head_dim + mla.qk_pos_emb_head_dim) {
    return config.invalid(
        "qk_head_dim", *qk_width,
        "must be qk_nope_head_dim + qk_rope_head_dim = " + std::to_string(mla.qk_head_dim + mla.qk_pos_emb_head_dim));
  }
  // MLA's widths are the fields above; these are derived or unused.
  config.ignore({"num_key_value_heads", "head_dim", "rope_interleave"});
  return mla;
}

// Which decoder layers are MoE: mlp_layer_types ("dense" / "sparse", GLM)
// when given, else the layers from first_k_dense_replace on, every
// moe_layer_freq-th (absent: every one).
Result<std::vector<bool>> deepseek_moe_layers(Fields& config, std::int64_t layers) {
  std::vector<bool> moe(static_cast<std::size_t>(layers));
  if (config.model_type() == "glm_moe_dsa" || config.model_type() == "glm4_moe_lite") {
    TRAINFLOPS_ASSIGN_OR_RETURN(const auto types, config.optional_words("mlp_layer_types", {"dense", "sparse"}));
    if (types) {
      if (types->size() != moe.size()) {
        return list_length_error(config, "mlp_layer_types", types->size(),
                                 "num_hidden_layers = " + std::to_string(layers));
      }
      for (std::size_t i = 0; i < moe.size(); ++i) moe[i] = (*types)[i] == "sparse";
      config.ignore({"first_k_dense_replace", "moe_layer_freq"});  // mlp_layer_types decides
      return moe;
    }
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t first_moe, config.non_negative("first_k_dense_replace"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> every, config.optional_positive("moe_layer_freq"));
  for (std::int64_t i = first_moe; i < layers; ++i) moe[static_cast<std::size_t>(i)] = i % every.value_or(1) == 0;
  return moe;
}

Result<DsaIndexer> dsa_indexer(Fields& config) {
  DsaIndexer indexer;
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.num_heads, config.positive("index_n_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.head_dim, config.positive("index_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.topk, config.positive("index_topk"));
  indexer.grad_mode = DsaIndexer::GradMode::kOff;  // a config does not say how the indexer trains
  return indexer;
}

// Per-layer "full" (runs the indexer) / "shared" (reuses the previous layer's
// top-k) from a list of those words or a string of F and S.
Result<std::vector<bool>> runs_from_list(Fields& config, std::string_view key, std::int64_t layers) {
  const json* value = config.get(key);
  std::vector<bool> runs;
  if (value->is_string()) {
    const auto pattern = value->get<std::string>();
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != 'F' && pattern[i] != 'S') {
        return config.invalid(key, *value,
                              "'" + pattern.substr(i, 1) + "' at position " + std::to_string(i) +
                                  " is neither F (full: runs the indexer) nor S (shared)");
      }
      runs.push_back(pattern[i] == 'F');
    }
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const auto words, config.optional_words(key, {"full", "shared"}));
    if (words) {
      for (const std::string& word : *words) runs.push_back(word == "full");
    }
  }
  if (runs.size() != static_cast<std::size_t>(layers)) {
    return list_length_error(config, key, runs.size(), "num_hidden_layers = " + std::to_string(layers));
  }
  if (!runs.front()) {
    return config.invalid(key, *value, "the first layer must run its indexer: it has no earlier top-k to reuse");
  }
  return runs;
}

// Index sharing (docs/accounting.md, 7.2), in Transformers' order of precedence:
// indexer_types, else index_topk_pattern, else index_topk_freq with
// index_skip_topk_offset (layer j, 1-based, runs its indexer iff
// max(j - max(offset, 1), 0) is a multiple of the frequency; absent: every
// layer runs its own).
Result<std::vector<bool>> indexer_runs(Fields& config, std::int64_t layers) {
  for (const std::string_view key : {"indexer_types", "index_topk_pattern"}) {
    if (!config.has(key)) continue;
    config.ignore({"indexer_types", "index_topk_pattern", "index_topk_freq", "index_skip_topk_offset"});
    return runs_from_list(config, key, layers);
  }
  config.get("index_topk_pattern");  // null
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> freq, config.optional_positive("index_topk_freq"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> offset,
                              config.optional_non_negative("index_skip_topk_offset"));
  if (freq.value_or(1) > 1 && !offset) {
    // Transformers and Megatron-LM default it differently (2 and 0).
    return config.missing("index_skip_topk_offset", "when index_topk_freq > 1");
  }
  std::vector<bool> runs(static_cast<std::size_t>(layers));
  for (std::int64_t j = 1; j <= layers; ++j) {
    runs[static_cast<std::size_t>(j - 1)] =
        std::max<std::int64_t>(j - std::max<std::int64_t>(offset.value_or(0), 1), 0) % freq.value_or(1) == 0;
  }
  return runs;
}

}  // namespace

Result<Model> import_deepseek(Fields& config, Notes&) {
  const bool sparse = config.model_type() == "deepseek_v32" || config.model_type() == "glm_moe_dsa";
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const MlaAttention mla, mla_attention(config));
  std::optional<DsaIndexer> indexer;
  std::vector<bool> runs;
  if (sparse) {
    TRAINFLOPS_ASSIGN_OR_RETURN(indexer, dsa_indexer(config));
    TRAINFLOPS_ASSIGN_OR_RETURN(runs, indexer_runs(config, layers));
    // Inference only: MTP draft iterations reuse the main model's top-k.
    config.ignore({"index_share_for_mtp_iteration", "indexer_rope_interleave"});
    if (config.model_type() == "glm_moe_dsa") {
      TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                                  config.optional_words("layer_types", {"deepseek_sparse_attention"}));
      if (types && types->size() != static_cast<std::size_t>(layers)) {
        return list_length_error(config, "layer_types", types->size(), "num_hidden_layers = " + std::to_string(layers));
      }
    }
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> moe_layers, deepseek_moe_layers(config, layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe moe, deepseek_moe(config));
  std::optional<DenseMlp> dense;
  if (std::find(moe_layers.begin(), moe_layers.end(), false) != moe_layers.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    dense = DenseMlp{ffn, /*gated=*/true};
  } else {
    config.ignore({"intermediate_size"});
  }
  ignore_routing(config);
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));

  const auto layer = [&](bool is_moe, bool runs_indexer) {
    Layer l;
    l.mixer = sparse ? Mixer{DsaAttention{mla, *indexer, runs_indexer}} : Mixer{mla};
    l.channel_mixer = is_moe ? ChannelMixer{moe} : ChannelMixer{*dense};
    return l;
  };
  for (std::size_t i = 0; i < moe_layers.size(); ++i) model.layers.push_back(layer(moe_layers[i], sparse && runs[i]));
  // Each MTP depth: one layer, numbered 1 so it runs its own indexer, and MoE
  // when the last decoder layer is (Megatron-LM's rule).
  for (std::int64_t d = 0; d < depths; ++d) model.mtp_depths.push_back({layer(moe_layers.back(), true)});
  return model;
}

// LongCat-Flash's release: 18.6B to 31.3B active parameters, about 27B on
// average. Its fixed part (the card's 18.6B, trainflops' count without the
// routed experts) and one real expert on every layer (1.06B) put the
// average at 7.86 real experts per token: 8, the nearest whole number
// (docs/longcat.md).
constexpr std::int64_t kLongcatNominalRealExperts = 8;

Result<Model> import_longcat_flash(Fields& config, Notes& notes) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  // num_layers counts LongCat's layers, each two attention + FFN blocks.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> blocks, config.optional_positive("num_hidden_layers"));
  if (blocks && *blocks != 2 * layers) {
    return config.invalid("num_hidden_layers", *blocks, "must be 2 * num_layers = " + std::to_string(2 * layers));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> method, config.optional_text("attention_method"));
  if (method && *method != "MLA") return config.invalid("attention_method", *method, "must be \"MLA\"");
  TRAINFLOPS_ASSIGN_OR_RETURN(const MlaAttention mla, mla_attention(config));
  // Scalars on the LoRA ranks' outputs, not products.
  config.ignore({"mla_scale_q_lora", "mla_scale_kv_lora"});
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("ffn_hidden_size"));
  const DenseMlp dense{ffn, /*gated=*/true};
  Moe moe;
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.num_experts, config.positive("n_routed_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.topk, config.positive("moe_topk"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.expert_ffn_hidden_size, config.positive("expert_ffn_hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t zero, config.non_negative("zero_expert_num"));
  if (zero > 0) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> type, config.optional_text("zero_expert_type"));
    if (type && *type != "identity") return config.invalid("zero_expert_type", *type, "must be \"identity\"");
    moe.zero_experts = zero;
    moe.real_experts_per_token = std::min(kLongcatNominalRealExperts, moe.topk);
    notes.assumed.push_back(
        "real_experts_per_token = " + std::to_string(*moe.real_experts_per_token) + " of moe_topk = " +
        std::to_string(moe.topk) +
        ": how many picks are real experts (not zero experts) depends on the data; the nominal value from "
        "LongCat-Flash's release (about 27B of 18.6B-31.3B parameters active), give a measured one with "
        "real_experts_per_token (--real-experts-per-token); megatron mode charges every pick as a real expert, as "
        "Megatron-LM has no zero experts");
  } else {
    config.ignore({"zero_expert_type"});
  }
  if (moe.topk > *moe.num_experts + zero) {
    return config.invalid("moe_topk", moe.topk,
                          "must not exceed n_routed_experts + zero_expert_num = " +
                              std::to_string(*moe.num_experts + zero));
  }
  // The dense FFN that reads the first attention's output, as the MoE does,
  // is the MoE's shared expert in all but name: the same products of the
  // same input, added to the residual stream.
  moe.shared_expert_ffn_hidden_size = ffn;
  moe.gated = true;
  config.ignore({"routed_scaling_factor", "norm_topk_prob", "router_bias", "moe_switch_token_num"});
  for (std::int64_t i = 0; i < layers; ++i) {
    model.layers.push_back(Layer{Mixer{mla}, ChannelMixer{moe}});
    model.layers.push_back(Layer{Mixer{mla}, ChannelMixer{dense}});
  }
  return model;
}

Result<Model> import_glm4_moe(Fields& config, Notes&) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const GqaAttention attention,
                              grouped_query_attention(config, model.hidden_size, /*explicit_sizes=*/true));
  config.ignore({"use_qk_norm"});  // a norm, not a product
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> moe_layers, deepseek_moe_layers(config, layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe moe, deepseek_moe(config));
  std::optional<DenseMlp> dense;
  if (std::find(moe_layers.begin(), moe_layers.end(), false) != moe_layers.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    dense = DenseMlp{ffn, /*gated=*/true};
  } else {
    config.ignore({"intermediate_size"});
  }
  ignore_routing(config);
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));
  const auto layer = [&](bool is_moe) {
    return Layer{Mixer{attention}, is_moe ? ChannelMixer{moe} : ChannelMixer{*dense}};
  };
  for (const bool is_moe : moe_layers) model.layers.push_back(layer(is_moe));
  // Each MTP depth: one layer, MoE when the last decoder layer is (as DeepSeek-V3's).
  for (std::int64_t d = 0; d < depths; ++d) model.mtp_depths.push_back({layer(moe_layers.back())});
  return model;
}

namespace {

using Kind = CompressedSparseAttention::Kind;

Result<Kind> kind_of_ratio(Fields& config, const std::string& key, std::int64_t ratio) {
  if (const auto kind = compression_kind_of(ratio)) return *kind;
  return config.invalid(key, ratio, "must be 0 (sliding window only), 4 (CSA) or 128 (HCA)");
}

// The attention kind of every decoder layer and MTP depth: compress_ratios
// (one per decoder layer, then optionally one per MTP depth), or the layer_types
// of Transformers' DeepseekV4Config with compress_rates. MTP depths without an
// entry attend a window only, as DeepSeek-V4's released MTP layer does.
Result<std::vector<Kind>> compression_kinds(Fields& config, std::int64_t layers, std::int64_t depths) {
  const auto count = static_cast<std::size_t>(layers), total = static_cast<std::size_t>(layers + depths);
  std::vector<Kind> kinds;
  if (const json* ratios = config.get("compress_ratios")) {
    if (!ratios->is_array()) return config.invalid("compress_ratios", *ratios, "must be a list of 0, 4 and 128");
    if (ratios->size() != count && ratios->size() != total) {
      return list_length_error(
          config, "compress_ratios", ratios->size(),
          "num_hidden_layers = " + std::to_string(layers) +
              (depths ? " or num_hidden_layers + num_nextn_predict_layers = " + std::to_string(layers + depths)
                      : std::string()));
    }
    for (std::size_t i = 0; i < ratios->size(); ++i) {
      const std::string key = "compress_ratios[" + std::to_string(i) + "]";
      const json& entry = (*ratios)[i];
      if (!entry.is_number_integer()) return config.invalid(key, entry, "must be 0, 4 or 128");
      TRAINFLOPS_ASSIGN_OR_RETURN(const Kind kind, kind_of_ratio(config, key, entry.get<std::int64_t>()));
      kinds.push_back(kind);
    }
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto types,
                              config.optional_words("layer_types", {"sliding_attention", "compressed_sparse_attention",
                                                                    "heavily_compressed_attention"}));
  if (types) {
    if (types->size() != count) {
      return list_length_error(config, "layer_types", types->size(), "num_hidden_layers = " + std::to_string(layers));
    }
    if (const json* rates = config.get("compress_rates")) {
      if (!rates->is_object()) return config.invalid("compress_rates", *rates, "must be an object");
      for (const auto& [type, ratio] : rates->items()) {
        const std::int64_t expected = type == "compressed_sparse_attention"    ? compression_ratio(Kind::kCsa)
                                      : type == "heavily_compressed_attention" ? compression_ratio(Kind::kHca)
                                                                               : -1;
        if (expected < 0 || !ratio.is_number_integer() || ratio.get<std::int64_t>() != expected) {
          return config.invalid("compress_rates." + type, ratio,
                                "trainflops counts compressed_sparse_attention at 4 and "
                                "heavily_compressed_attention at 128");
        }
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      const Kind kind = (*types)[i] == "sliding_attention"             ? Kind::kWindow
                        : (*types)[i] == "compressed_sparse_attention" ? Kind::kCsa
                                                                       : Kind::kHca;
      if (kinds.empty()) continue;
      if (kinds[i] != kind) {
        return config.invalid("layer_types[" + std::to_string(i) + "]", json((*types)[i]),
                              "disagrees with compress_ratios[" + std::to_string(i) +
                                  "] = " + std::to_string(compression_ratio(kinds[i])));
      }
    }
    if (kinds.empty()) {
      for (const std::string& type : *types) {
        kinds.push_back(type == "sliding_attention"             ? Kind::kWindow
                        : type == "compressed_sparse_attention" ? Kind::kCsa
                                                                : Kind::kHca);
      }
    }
  }
  if (kinds.empty())
    return config.missing("compress_ratios",
                          "for model_type \"deepseek_v4\", unless layer_types gives the attention kinds");
  kinds.resize(total, Kind::kWindow);
  return kinds;
}

}  // namespace

Result<Model> import_deepseek_v4(Fields& config, Notes&) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));

  CompressedSparseAttention attention;
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_heads, config.positive("num_attention_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> kv_heads,
                              config.optional_positive("num_key_value_heads"));
  if (kv_heads && *kv_heads != 1) {
    return config.invalid("num_key_value_heads", *kv_heads,
                          "must be 1: DeepSeek-V4 attends one shared latent key/value");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, config.positive("head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.q_lora_rank, config.positive("q_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.o_groups, config.positive("o_groups"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.o_lora_rank, config.positive("o_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.window, config.positive("sliding_window"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<Kind> kinds, compression_kinds(config, layers, depths));
  if (std::find(kinds.begin(), kinds.end(), Kind::kCsa) != kinds.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.indexer_num_heads, config.positive("index_n_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.indexer_head_dim, config.positive("index_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.topk, config.positive("index_topk"));
  } else {
    config.ignore({"index_n_heads", "index_head_dim", "index_topk"});  // no CSA layer
  }

  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe moe, deepseek_moe(config));
  // Every layer is MoE: hash-routed ones differ only in routing.
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto mlp_types, config.optional_words("mlp_layer_types", {"hash_moe", "moe"}));
  if (mlp_types && mlp_types->size() != static_cast<std::size_t>(layers)) {
    return list_length_error(config, "mlp_layer_types", mlp_types->size(),
                             "num_hidden_layers = " + std::to_string(layers));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> dense_layers,
                              config.optional_non_negative("first_k_dense_replace"));
  if (dense_layers.value_or(0) != 0) {
    return config.invalid("first_k_dense_replace", *dense_layers, "must be 0: DeepSeek-V4 has no dense layers");
  }
  // The layers that route by hashing token ids: mlp_layer_types, else the
  // first num_hash_layers (3 unless given, as Transformers' DeepseekV4Config).
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> hash_layers,
                              config.optional_non_negative("num_hash_layers"));
  std::vector<bool> hash_routed(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    hash_routed[static_cast<std::size_t>(i)] =
        mlp_types ? (*mlp_types)[static_cast<std::size_t>(i)] == "hash_moe" : i < hash_layers.value_or(3);
  }
  ignore_routing(config);
  // Manifold-constrained hyper-connections over hc_mult residual streams.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> streams, config.optional_positive("hc_mult"));
  if (streams) model.hyper_connections = HyperConnections{HyperConnections::Variant::kManifold, *streams, 0};
  // The rope split of head_dim, the Sinkhorn iterations and epsilon (no
  // products), and settings of numerics and routing.
  config.ignore(
      {"qk_rope_head_dim", "hc_sinkhorn_iters", "hc_eps", "compress_rope_theta", "swiglu_limit", "expert_dtype"});

  const auto layer = [&](Kind kind, bool hashed) {
    CompressedSparseAttention a = attention;
    a.kind = kind;
    Moe m = moe;
    m.hash_routed = hashed;
    return Layer{Mixer{a}, ChannelMixer{m}};
  };
  for (std::int64_t i = 0; i < layers; ++i) {
    const auto at = static_cast<std::size_t>(i);
    model.layers.push_back(layer(kinds[at], hash_routed[at]));
  }
  // MTP depths route by scores: their layer ids follow the decoder's.
  for (std::int64_t d = 0; d < depths; ++d) {
    model.mtp_depths.push_back({layer(kinds[static_cast<std::size_t>(layers + d)], false)});
  }
  return model;
}

namespace {

// A required list of layer ids, each in [0, layers), as a per-layer mark.
Result<std::vector<bool>> listed_layers(Fields& config, std::string_view key, std::int64_t layers) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto ids, config.optional_indices(key, layers, "num_hidden_layers"));
  if (!ids) return config.missing(key, "for model_type \"" + config.model_type() + "\"");
  std::vector<bool> listed(static_cast<std::size_t>(layers));
  for (const std::int64_t id : *ids) listed[static_cast<std::size_t>(id)] = true;
  return listed;
}

// DeepSeek-V4.1's compress_ratios: one per decoder layer, then optionally one
// per DSpark draft block (not counted), each 0 or positive.
Result<std::vector<std::int64_t>> v41_compress_ratios(Fields& config, std::int64_t layers) {
  const json* ratios = config.get("compress_ratios");
  if (!ratios) return config.missing("compress_ratios", "for model_type \"" + config.model_type() + "\"");
  if (!ratios->is_array()) return config.invalid("compress_ratios", *ratios, "must be a list of non-negative integers");
  if (ratios->size() < static_cast<std::size_t>(layers)) {
    return list_length_error(config, "compress_ratios", ratios->size(),
                             "at least num_hidden_layers = " + std::to_string(layers));
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(layers); ++i) {
    const json& entry = (*ratios)[i];
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 0) {
      return config.invalid("compress_ratios[" + std::to_string(i) + "]", entry, "must be a non-negative integer");
    }
    out.push_back(entry.get<std::int64_t>());
  }
  return out;
}

// Each layer that reads a cache takes it (kind "kv") or its top-k (kind
// "index") from the last listed layer at or before it, which must read a
// cache of the same ratio.
Status check_sources(Fields& config, std::string_view key, const std::vector<bool>& sources,
                     const std::vector<std::int64_t>& ratios) {
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    if (sources[i]) {
      if (ratios[i] == 0) {
        return config.invalid(key, static_cast<std::int64_t>(i),
                              "lists layer " + std::to_string(i) + ", whose compress_ratios entry is 0 (no cache)");
      }
      last = i;
    }
    if (ratios[i] == 0) continue;
    if (!last || ratios[*last] != ratios[i]) {
      return config.invalid(key, static_cast<std::int64_t>(i),
                            "must list a layer at or before layer " + std::to_string(i) + " with compress ratio " +
                                std::to_string(ratios[i]) + (last ? " (the last listed, layer " +
                                                                        std::to_string(*last) + ", has " +
                                                                        std::to_string(ratios[*last]) + ")"
                                                                  : ""));
    }
  }
  return Ok{};
}

}  // namespace

Result<Model> import_deepseek_v41(Fields& config, Notes& notes) {
  using Role = SharedCompressedAttention::CandidateRole;
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));

  SharedCompressedAttention attention;
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_heads, config.positive("num_attention_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> kv_heads,
                              config.optional_positive("num_key_value_heads"));
  if (kv_heads && *kv_heads != 1) {
    return config.invalid("num_key_value_heads", *kv_heads,
                          "must be 1: DeepSeek-V4.1 attends one shared latent key/value");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, config.positive("head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.q_lora_rank, config.positive("q_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.o_groups, config.positive("o_groups"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.o_lora_rank, config.positive("o_lora_rank"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.window, config.positive("sliding_window"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.indexer_num_heads, config.positive("index_n_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.indexer_head_dim, config.positive("index_head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.topk, config.positive("index_topk"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> ratios, v41_compress_ratios(config, layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> kv_sources, listed_layers(config, "kv_source_layer_ids", layers));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> index_sources,
                              listed_layers(config, "index_source_layer_ids", layers));
  TRAINFLOPS_RETURN_IF_ERROR(check_sources(config, "kv_source_layer_ids", kv_sources, ratios));
  TRAINFLOPS_RETURN_IF_ERROR(check_sources(config, "index_source_layer_ids", index_sources, ratios));
  // The two-level top-k: absent or negative, none.
  std::optional<std::size_t> candidate_source;
  if (const json* id = config.get("candidate_source_layer_id"); id && !(id->is_number_integer() && *id < 0)) {
    if (!id->is_number_integer() || *id >= layers || !index_sources[id->get<std::size_t>()]) {
      return config.invalid("candidate_source_layer_id", *id,
                            "must be an index source (index_source_layer_ids), or -1 for none");
    }
    candidate_source = id->get<std::size_t>();
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.candidate_blocks, config.positive("candidate_topk_blocks"));
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.candidate_block_size, config.positive("candidate_block_size"));
  } else {
    config.ignore({"candidate_topk_blocks", "candidate_block_size"});
  }

  TRAINFLOPS_ASSIGN_OR_RETURN(const Moe moe, deepseek_moe(config));
  ignore_routing(config);
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> streams, config.optional_positive("hc_mult"));
  if (streams) model.hyper_connections = HyperConnections{HyperConnections::Variant::kManifold, *streams, 0};
  model.parameter_layout.attention_sinks = true;  // a learnable logit per head, as DeepSeek-V4's

  // Engram: per listed layer, (max order - 1) x heads rows of head_dim looked up.
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto engram_layers,
                              config.optional_indices("engram_layer_ids", layers, "num_hidden_layers"));
  std::vector<std::optional<NgramMemory>> memories(static_cast<std::size_t>(layers));
  if (engram_layers && !engram_layers->empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t max_order, config.positive("engram_max_ngram_size"));
    if (max_order < 2) return config.invalid("engram_max_ngram_size", max_order, "must be at least 2 (bigrams)");
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t heads, config.positive("engram_n_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t head_dim, config.positive("engram_head_dim"));
    const json* rows = config.get("engram_num_embeddings");
    if (!rows) return config.missing("engram_num_embeddings", "with engram_layer_ids");
    if (!rows->is_array() || rows->size() != engram_layers->size()) {
      return config.invalid("engram_num_embeddings", *rows,
                            "must list one table size per engram_layer_ids entry (" +
                                std::to_string(engram_layers->size()) + ")");
    }
    for (std::size_t j = 0; j < engram_layers->size(); ++j) {
      const json& count = (*rows)[j];
      if (!count.is_number_integer() || count < 0) {
        return config.invalid("engram_num_embeddings[" + std::to_string(j) + "]", count,
                              "must be a non-negative integer");
      }
      memories[static_cast<std::size_t>((*engram_layers)[j])] =
          NgramMemory{(max_order - 1) * heads * head_dim, streams.value_or(1), 0,
                      count.get<std::int64_t>() * head_dim};
    }
  } else {
    config.ignore({"engram_max_ngram_size", "engram_n_heads", "engram_head_dim", "engram_num_embeddings"});
  }
  // The hashing's vocabularies and padding, the rope split, the Sinkhorn
  // iterations and epsilon: no products.
  config.ignore({"engram_vocab_size", "engram_pad_token_id", "engram_compressed_vocab_size", "qk_rope_head_dim",
                 "hc_sinkhorn_iters", "hc_eps", "compress_rope_theta", "swiglu_limit"});
  // DSpark: a speculative draft of its own (num_nextn_predict_layers blocks
  // with their own experts), trained apart from the model.
  if (config.has("num_nextn_predict_layers")) {
    config.get("num_nextn_predict_layers");
    notes.assumed.push_back(
        "num_nextn_predict_layers and dspark_*: DeepSeek-V4.1's DSpark draft blocks are a separately trained "
        "speculative decoder with their own experts, not counted");
  }
  config.ignore({"dspark_block_size", "dspark_noise_token_id", "dspark_target_layer_ids", "dspark_markov_rank",
                 "dspark_n_routed_experts", "dspark_num_experts_per_tok"});

  for (std::size_t i = 0; i < static_cast<std::size_t>(layers); ++i) {
    SharedCompressedAttention a = attention;
    a.compress_ratio = ratios[i];
    a.writes_cache = kv_sources[i];
    a.runs_indexer = index_sources[i];
    if (ratios[i] == 0) a.topk = a.indexer_num_heads = a.indexer_head_dim = 0;
    if (candidate_source && index_sources[i] && i >= *candidate_source) {
      a.candidate_role = i == *candidate_source ? Role::kSource : Role::kConsumer;
    } else {
      a.candidate_blocks = a.candidate_block_size = 0;
    }
    Layer layer{Mixer{a}, ChannelMixer{moe}};
    layer.ngram_memory = memories[i];
    model.layers.push_back(layer);
  }
  return model;
}

namespace {

// A list of 1-based layer numbers of linear_attn_config (`key`), each in [1, layers].
Result<std::vector<bool>> numbered_layers(Fields& linear, std::string_view key, std::int64_t layers) {
  const json* value = linear.get(key);
  if (!value) return linear.missing(key, "for model_type \"" + linear.model_type() + "\"");
  std::vector<bool> listed(static_cast<std::size_t>(layers));
  if (!value->is_array()) return linear.invalid(key, *value, "must be a list of layer numbers");
  for (const json& entry : *value) {
    if (!entry.is_number_integer() || entry.get<std::int64_t>() < 1 || entry.get<std::int64_t>() > layers) {
      return linear.invalid(key, *value,
                            "must hold layer numbers from 1 to num_hidden_layers = " + std::to_string(layers) +
                                " (they count from 1)");
    }
    listed[static_cast<std::size_t>(entry.get<std::int64_t>() - 1)] = true;
  }
  return listed;
}

// linear_attn_config: the Kimi Delta Attention layers and their sizes. The
// gates' low ranks are head_dim (f_a_proj and g_a_proj: hidden -> head_dim);
// use_full_rank_gate (Kimi K3) makes the output gate one hidden x P projection.
Result<KimiDeltaAttention> kimi_delta_attention(Fields& linear) {
  KimiDeltaAttention kda;
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.num_heads, linear.positive("num_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.head_dim, linear.positive("head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.conv_kernel_dim, linear.positive("short_conv_kernel_size"));
  kda.forget_gate_rank = kda.head_dim;
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool full_rank_gate, linear.flag("use_full_rank_gate"));
  if (!full_rank_gate) kda.output_gate_rank = kda.head_dim;
  // The forget gate's lower bound is a clamp, not a product.
  linear.ignore({"gate_lower_bound"});
  return kda;
}

}  // namespace

Result<Model> import_kimi_linear(Fields& config, Notes& notes) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, config.positive("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, config.positive("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, config.layer_count("num_hidden_layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(MlaAttention mla, mla_attention(config));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.output_gate, config.flag("mla_use_output_gate"));
  // Whether the MLA layers rotate their rope dimensions changes no product.
  config.ignore({"mla_use_nope", "mla_use_rope"});

  const json* linear_config = config.get("linear_attn_config");
  if (!linear_config) return config.missing("linear_attn_config", "for model_type \"" + config.model_type() + "\"");
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields linear,
                              Fields::open(*linear_config, config.path_of("linear_attn_config"), config.model_type()));
  TRAINFLOPS_ASSIGN_OR_RETURN(const KimiDeltaAttention kda, kimi_delta_attention(linear));
  notes.assumed.push_back(assumed_delta_rule_chunk_size(kda.chunk_size, "chunk_kda"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> kda_layers, numbered_layers(linear, "kda_layers", layers));
  if (linear.has("full_attn_layers")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> full, numbered_layers(linear, "full_attn_layers", layers));
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (full[i] == kda_layers[i]) {
        return linear.invalid("full_attn_layers", *linear_config->find("full_attn_layers"),
                              "with kda_layers must name every layer once; layer " + std::to_string(i + 1) +
                                  (full[i] ? " is in both" : " is in neither"));
      }
    }
  }
  const Fields::Unread unread = linear.finish();
  notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  notes.unknown.insert(notes.unknown.end(), unread.unknown.begin(), unread.unknown.end());

  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<bool> moe_layers, deepseek_moe_layers(config, layers));
  Moe moe;
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.num_experts, config.positive("num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.topk, config.positive("num_experts_per_token"));
  TRAINFLOPS_RETURN_IF_ERROR(check_topk(config, moe, "num_experts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.expert_ffn_hidden_size, config.positive("moe_intermediate_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t shared, config.non_negative("num_shared_experts"));
  if (shared > 0) moe.shared_expert_ffn_hidden_size = shared * moe.expert_ffn_hidden_size;
  // Kimi K3: the routed experts run in a latent space of this size.
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.latent_size, config.optional_positive("routed_expert_hidden_size"));
  moe.gated = true;
  std::optional<DenseMlp> dense;
  if (std::find(moe_layers.begin(), moe_layers.end(), false) != moe_layers.end()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t ffn, config.positive("intermediate_size"));
    dense = DenseMlp{ffn, /*gated=*/true};
  } else {
    config.ignore({"intermediate_size"});
  }
  // Routing, the activation's shape and the context length: no products (the
  // latent experts' norm is read with the parameter layout).
  config.ignore({"moe_renormalize", "moe_router_activation_func", "routed_scaling_factor", "use_grouped_topk",
                 "num_expert_group", "topk_group", "topk_method", "activation_situ_beta",
                 "activation_situ_linear_beta", "model_max_length"});
  // Kimi K3's attention residuals, over blocks of this many layers.
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> block_size,
                              config.optional_positive("attn_res_block_size"));
  if (block_size) model.attention_residuals = AttentionResiduals{*block_size};
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp_depth_count(config));

  const auto layer = [&](bool is_kda, bool is_moe) {
    Layer l;
    l.mixer = is_kda ? Mixer{kda} : Mixer{mla};
    l.channel_mixer = is_moe ? ChannelMixer{moe} : ChannelMixer{*dense};
    return l;
  };
  for (std::size_t i = 0; i < moe_layers.size(); ++i) model.layers.push_back(layer(kda_layers[i], moe_layers[i]));
  // Each MTP depth copies the last decoder layer's kinds.
  for (std::int64_t d = 0; d < depths; ++d) model.mtp_depths.push_back({layer(kda_layers.back(), moe_layers.back())});
  return model;
}

}  // namespace trainflops::hf
