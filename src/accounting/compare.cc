#include "trainflops/compare.h"

#include <algorithm>
#include <array>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "accounting/convention_count.h"
#include "base/overloaded.h"

namespace trainflops {
namespace {

// A framework: its choices, and the models and workloads it cannot express.
struct FrameworkDefinition {
  Framework framework;
  std::string_view name;
  std::string_view title;
  Conventions conventions;
  // Empty when the framework can count the model; else why not.
  std::string (*cannot_express)(const Model& model);
  // When set, the choices for `model`: a framework whose function for the
  // model's family counts otherwise than `conventions` say.
  Conventions (*conventions_for)(const Model& model) = nullptr;
  // When set, where the framework's released recipes for such a model
  // differ from it (FrameworkCount::recipe_differences).
  std::vector<std::string> (*recipe_differences)(const Model& model) = nullptr;
};

// Whether any decoder or MTP layer satisfies `predicate`.
template <typename Predicate>
bool any_layer(const Model& model, Predicate predicate) {
  for (const Layer& layer : model.layers) {
    if (predicate(layer)) return true;
  }
  for (const auto& depth : model.mtp_depths) {
    for (const Layer& layer : depth) {
      if (predicate(layer)) return true;
    }
  }
  return false;
}

template <typename Kind>
bool has_mixer(const Model& model) {
  return any_layer(model, [](const Layer& l) { return l.mixer && std::holds_alternative<Kind>(*l.mixer); });
}

bool has_dsa_where(const Model& model, bool (*predicate)(const DsaAttention&)) {
  return any_layer(model, [&](const Layer& l) {
    const auto* dsa = l.mixer ? std::get_if<DsaAttention>(&*l.mixer) : nullptr;
    return dsa && predicate(*dsa);
  });
}

bool has_gqa_where(const Model& model, bool (*predicate)(const GqaAttention&)) {
  return any_layer(model, [&](const Layer& l) {
    const auto* gqa = l.mixer ? std::get_if<GqaAttention>(&*l.mixer) : nullptr;
    return gqa && predicate(*gqa);
  });
}

// Whether every layer's `Kind` (a mixer or a channel mixer) is the first's,
// by `equal`.
template <typename Kind, typename Equal>
bool one_shape_of(const Model& model, Equal equal) {
  const Kind* first = nullptr;
  return !any_layer(model, [&](const Layer& l) {
    const Kind* mine = nullptr;
    if constexpr (std::is_constructible_v<Mixer, Kind>) {
      mine = l.mixer ? std::get_if<Kind>(&*l.mixer) : nullptr;
    } else {
      mine = l.channel_mixer ? std::get_if<Kind>(&*l.channel_mixer) : nullptr;
    }
    if (!mine) return false;
    if (!first) first = mine;
    return !equal(*first, *mine);
  });
}

bool has_kpool(const Model& model) {
  return has_dsa_where(model, [](const DsaAttention& a) { return a.indexer.pool_size > 1; });
}

std::string expressible_everywhere(const Model&) { return ""; }

// Whether two grouped-query attention layers differ in heads, key/value heads
// or head width (Step-3.5's sliding and full layers): a function that takes
// one of each for every layer cannot count the model.
bool gqa_widths_differ(const Model& model) {
  const GqaAttention* first = nullptr;
  return any_layer(model, [&](const Layer& l) {
    const auto* gqa = l.mixer ? std::get_if<GqaAttention>(&*l.mixer) : nullptr;
    if (!gqa) return false;
    if (!first) first = gqa;
    return gqa->num_heads != first->num_heads || gqa->num_query_groups != first->num_query_groups ||
           gqa->head_dim != first->head_dim;
  });
}
constexpr std::string_view kOneAttentionWidth =
    " takes one head count, key/value head count and head width for every attention layer; this model's differ";

bool has_head_gate(const Model& model) {
  return has_gqa_where(model, [](const GqaAttention& a) { return a.head_gate; });
}

// Gemma 4's key/value projections: only MaxText's function knows them.
bool has_shared_key_value(const Model& model) {
  return has_gqa_where(model, [](const GqaAttention& a) { return a.key_is_value || a.reuses_key_value; });
}
constexpr std::string_view kNoSharedKeyValue =
    " has no attention whose keys are its values, or that reuses another layer's keys and values (Gemma 4)";
bool has_ngram_memory(const Model& model) {
  return any_layer(model, [](const Layer& l) { return l.ngram_memory.has_value(); });
}
bool has_per_layer_embedding(const Model& model) {
  return any_layer(model, [](const Layer& l) { return l.per_layer_embedding.has_value(); });
}
constexpr std::string_view kNoPerLayerEmbedding = " has no per-layer embeddings (Gemma 4 E2B, E4B)";

// Why a framework whose function has no term for the residual-stream
// machinery of `model` cannot count it, or empty. Only its DeepSeek-V4
// (MaxText) or DeepSeek-V4.1 and Qwen3.8 (NeMo Automodel) functions count
// hyper-connections and n-gram memory, and compare does not model those.
std::string residual_machinery_unexpressed(const Model& model, std::string_view framework) {
  if (model.hyper_connections) return std::string(framework) + " has no hyper-connections outside its DeepSeek-V4 model";
  if (has_ngram_memory(model)) return std::string(framework) + " has no n-gram memory outside its DeepSeek-V4 model";
  return "";
}

constexpr std::string_view kNoSharedCompressedAttention =
    " has no DeepSeek-V4.1 attention (compressed caches shared between layers, two-level top-k)";
constexpr std::string_view kNoQsa = " has no Qwen3.8 sparse attention (QSA: GQA over indexed blocks of keys)";

// Why Megatron-LM's or Megatron-Bridge's function (`framework`) cannot count
// `model` on the path its hybrid layer pattern, or its absence, selects; or
// empty. The transformer function has no Mamba-2 or gated delta product term;
// the hybrid function reads only the Mamba-2 (gated delta product under its
// spec), gated delta net and `*` attention counts of the pattern (MLP and MoE
// besides) and charges an attention layer without a head width g h/n keys and
// values, a fraction compare's whole counts cannot hold.
std::string megatron_path_unexpressed(const Model& model, std::string_view framework) {
  const std::string name(framework);
  if (model.megatron_path == MegatronPath::kStandard) {
    if (has_mixer<GatedDeltaProduct>(model)) {
      return name + "'s transformer function has no gated delta product term (Megatron-LM main's hybrid function, "
                    "for a hybrid_layer_pattern under a gated-delta-product spec, has)";
    }
    if (!has_mixer<Mamba2>(model)) return "";
    return name + "'s transformer function has no Mamba-2 term (its hybrid function, for a hybrid_layer_pattern, has)";
  }
  std::string other;
  any_layer(model, [&](const Layer& l) {
    if (l.mixer && !std::holds_alternative<GqaAttention>(*l.mixer) && !std::holds_alternative<Mamba2>(*l.mixer) &&
        !std::holds_alternative<GatedDeltaProduct>(*l.mixer) && !std::holds_alternative<GatedDeltaNet>(*l.mixer) &&
        !std::holds_alternative<DsaGqaAttention>(*l.mixer)) {
      other = mixer_kind(*l.mixer);
    }
    return !other.empty();
  });
  if (!other.empty()) {
    return name +
           "'s hybrid function counts Mamba-2, gated delta net and grouped-query attention layers only (M, G "
           "and * of the pattern); this model has " +
           other + " layers";
  }
  const std::int64_t h = model.hidden_size;
  if (any_layer(model, [h](const Layer& l) {
        const auto* a = l.mixer ? std::get_if<GqaAttention>(&*l.mixer) : nullptr;
        return a && !a->head_dim && (Int128{h} * a->num_query_groups) % a->num_heads != 0;
      })) {
    return name +
           "'s hybrid function charges attention without kv_channels keys and values g h/n wide, a fraction "
           "here; compare counts whole widths";
  }
  return "";
}

std::string megatron_cannot_express(const Model& model) {
  if (has_shared_key_value(model)) return "Megatron-LM" + std::string(kNoSharedKeyValue);
  if (has_mixer<SharedCompressedAttention>(model)) return "Megatron-LM" + std::string(kNoSharedCompressedAttention);
  if (has_mixer<CompressedBlockSparseAttention>(model)) return "Megatron-LM" + std::string(kNoQsa);
  if (has_mixer<KimiDeltaAttention>(model)) {
    return "Megatron-LM's main and dev functions have no Kimi Delta Attention (no K symbol, no kda variant); its Kimi "
           "Delta Attention pull request counts the layer with full-rank gates, as megatron mode does from its "
           "arguments";
  }
  if (has_mixer<BlockSparseAttention>(model)) {
    return "Megatron-LM has no block-sparse attention and no MiniMax-M3 model (main or dev); Megatron-Bridge's "
           "provider runs it";
  }
  if (std::string reason = megatron_path_unexpressed(model, "Megatron-LM"); !reason.empty()) return reason;
  if (gqa_widths_differ(model)) return "Megatron-LM's function" + std::string(kOneAttentionWidth);
  return "";
}

// Megatron-LM's dev branch: its hybrid function has no gated delta product.
std::string megatron_dev_cannot_express(const Model& model) {
  if (has_mixer<GatedDeltaProduct>(model)) {
    return "Megatron-LM's dev branch has no gated delta product: its hybrid function charges the M layers of a "
           "gated-delta-product spec as Mamba-2 (main's counts them)";
  }
  return megatron_cannot_express(model);
}

std::string megatron_main_cannot_express(const Model& model) {
  if (has_kpool(model)) return "KPool is not on Megatron-LM's main branch";
  if (has_mixer<CompressedSparseAttention>(model)) {
    return "DeepSeek-V4 attention (dsv4_hybrid) is not on Megatron-LM's main branch; its dev branch counts it (the "
           "DSA fix row)";
  }
  return megatron_cannot_express(model);
}

std::string bridge_cannot_express(const Model& model) {
  if (has_kpool(model)) return "Megatron-Bridge has no KPool";
  if (has_shared_key_value(model)) return "Megatron-Bridge" + std::string(kNoSharedKeyValue);
  if (has_mixer<SharedCompressedAttention>(model)) return "Megatron-Bridge" + std::string(kNoSharedCompressedAttention);
  if (has_mixer<CompressedBlockSparseAttention>(model)) return "Megatron-Bridge" + std::string(kNoQsa);
  if (has_mixer<GatedDeltaProduct>(model)) {
    return "Megatron-Bridge's hybrid function has no gated delta product: it charges every M layer as Mamba-2 "
           "(Megatron-LM main's counts them)";
  }
  if (has_dsa_where(model, [](const DsaAttention& a) { return a.indexer.grad_mode == DsaIndexer::GradMode::kFull; })) {
    return "Megatron-Bridge charges an indexer on detached inputs; grad mode full has no counterpart there";
  }
  if (std::string reason = megatron_path_unexpressed(model, "Megatron-Bridge"); !reason.empty()) return reason;
  if (gqa_widths_differ(model)) return "Megatron-Bridge's function" + std::string(kOneAttentionWidth);
  return "";
}

// MaxText counts DeepSeek-V4 with its own function: every layer DeepSeek-V4
// attention and MoE, manifold hyper-connections, no n-gram memory.
std::string maxtext_deepseek_v4_unexpressed(const Model& model) {
  const bool other_layer = any_layer(model, [](const Layer& l) {
    return !l.mixer || !std::holds_alternative<CompressedSparseAttention>(*l.mixer) || !l.channel_mixer ||
           !std::holds_alternative<Moe>(*l.channel_mixer) || std::get<Moe>(*l.channel_mixer).latent_size ||
           !std::get<Moe>(*l.channel_mixer).gated;
  });
  if (other_layer) return "MaxText's DeepSeek-V4 function has DeepSeek-V4 attention and a gated MoE on every layer";
  if (model.hyper_connections && model.hyper_connections->variant != HyperConnections::Variant::kManifold) {
    return "MaxText's DeepSeek-V4 function has manifold-constrained hyper-connections only";
  }
  if (has_ngram_memory(model)) return "compare does not model MaxText's count of n-gram memory (its Engram layers)";
  // Hash routing changes parameters, not FLOPs: its layers have the same shape.
  std::optional<Moe> first;
  const bool unequal_moe = any_layer(model, [&](const Layer& l) {
    Moe moe = std::get<Moe>(*l.channel_mixer);
    moe.hash_routed = false;
    if (!first) first = moe;
    return !(moe == *first);
  });
  if (unequal_moe) return "MaxText's DeepSeek-V4 function has one MoE shape for every layer";
  return "";
}

bool has_latent_moe(const Model& model) {
  return any_layer(model, [](const Layer& l) {
    const auto* moe = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
    return moe && moe->latent_size.has_value();
  });
}

std::string maxtext_cannot_express(const Model& model) {
  if (has_mixer<DsaGqaAttention>(model)) {
    return "MaxText counts DSA's indexer inside its MLA count only (the indexer's queries from q_lora_rank): it has no "
           "DSA over grouped-query attention";
  }
  if (has_kpool(model)) return "MaxText has no KPool";
  if (has_mixer<KimiDeltaAttention>(model)) return "MaxText has no Kimi Delta Attention";
  if (has_mixer<BlockSparseAttention>(model)) return "MaxText has no block-sparse attention (no MiniMax-M3 model)";
  if (has_mixer<Mamba2>(model)) return "MaxText has no Mamba-2 layer (no Nemotron-H model)";
  if (has_mixer<GatedDeltaProduct>(model)) return "MaxText has no gated delta product";
  if (has_mixer<CompressedSparseAttention>(model)) return maxtext_deepseek_v4_unexpressed(model);
  if (has_mixer<SharedCompressedAttention>(model)) return "MaxText" + std::string(kNoSharedCompressedAttention);
  if (has_mixer<CompressedBlockSparseAttention>(model)) return "MaxText" + std::string(kNoQsa);
  if (std::string reason = residual_machinery_unexpressed(model, "MaxText"); !reason.empty()) return reason;
  if (has_latent_moe(model)) return "MaxText's experts run in the hidden size: no latent MoE";
  if (has_gqa_where(model, [](const GqaAttention& a) { return a.chunk.has_value() || !a.head_dim; })) {
    return "compare models MaxText's GQA with a head dimension and without chunked attention only";
  }
  const bool unequal_gdn = any_layer(model, [](const Layer& l) {
    const auto* g = l.mixer ? std::get_if<GatedDeltaNet>(&*l.mixer) : nullptr;
    return g && (g->key_head_dim != g->value_head_dim || g->variant != GatedDeltaNet::Variant::kGdn);
  });
  if (unequal_gdn) return "MaxText's gated delta net rule is modelled for GDN with equal key and value head sizes only";
  // Its Gemma 4 model has global and local widths of its own; no other.
  if (gqa_widths_differ(model) && !has_shared_key_value(model)) {
    return "MaxText (but for Gemma 4)" + std::string(kOneAttentionWidth);
  }
  return "";
}

std::string torchtitan_cannot_express(const Model& model) {
  if (has_mixer<DsaAttention>(model) || has_mixer<DsaGqaAttention>(model)) {
    return "torchtitan has no DeepSeek Sparse Attention model";
  }
  if (has_mixer<CompressedSparseAttention>(model)) {
    return "torchtitan's main branch has no DeepSeek-V4 model; the one proposed for it charges 6 per parameter of the "
           "built module (every routed expert, no output layer) and all L^2 pairs on every layer, which compare does "
           "not model";
  }
  if (has_shared_key_value(model)) return "torchtitan" + std::string(kNoSharedKeyValue);
  if (has_mixer<KimiDeltaAttention>(model)) return "torchtitan has no Kimi Delta Attention model";
  if (has_mixer<Mamba2>(model)) return "torchtitan has no Mamba-2 model";
  if (has_mixer<GatedDeltaProduct>(model)) return "torchtitan has no gated delta product model";
  if (has_mixer<BlockSparseAttention>(model)) return "torchtitan has no block-sparse attention (no MiniMax-M3 model)";
  if (has_mixer<SharedCompressedAttention>(model)) return "torchtitan" + std::string(kNoSharedCompressedAttention);
  if (has_mixer<CompressedBlockSparseAttention>(model)) return "torchtitan" + std::string(kNoQsa);
  if (model.hyper_connections || has_ngram_memory(model)) {
    return "torchtitan has no model with hyper-connections or n-gram memory";
  }
  if (has_per_layer_embedding(model)) return "torchtitan" + std::string(kNoPerLayerEmbedding);
  if (gqa_widths_differ(model)) return "torchtitan's rule" + std::string(kOneAttentionWidth);
  return "";
}

std::string nemo_rl_cannot_express(const Model& model) {
  constexpr std::string_view kFormulas =
      "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only";
  if (has_mixer<DsaGqaAttention>(model)) {
    return std::string(kFormulas) + "; none has DeepSeek Sparse Attention or its indexer";
  }
  if (has_mixer<Mamba2>(model)) {
    return std::string(kFormulas) +
           ": its nemotronh formula is mapped from no config (a Nemotron-H config raises \"Unsupported config type\")";
  }
  // Its formulas' attention, listed: any other mixer has none.
  const bool other_mixer = any_layer(model, [](const Layer& l) {
    return l.mixer && !std::holds_alternative<GqaAttention>(*l.mixer) &&
           !std::holds_alternative<MlaAttention>(*l.mixer);
  });
  if (other_mixer) return std::string(kFormulas) + "; this model has other attention";
  if (model.hyper_connections || has_ngram_memory(model)) {
    return std::string(kFormulas) + "; hyper-connections and n-gram memory have no place in them";
  }
  if (has_per_layer_embedding(model)) return std::string(kFormulas) + "; per-layer embeddings have no place in them";
  if (has_latent_moe(model)) return std::string(kFormulas) + "; this model's experts run in a latent space";
  if (has_gqa_where(model, [](const GqaAttention& a) {
        return a.window.has_value() || a.chunk.has_value() || a.output_gate || a.head_gate || !a.head_dim ||
               a.key_is_value || a.reuses_key_value;
      })) {
    return std::string(kFormulas) +
           "; windows, chunks, output or head gates and shared key/value projections have no place in them";
  }
  const auto mlp_gated = [](const Layer& l) {
    return !l.channel_mixer ||
           std::visit(Overloaded{[](const OneOf<DenseMlp, Moe> auto& mlp) { return mlp.gated; }}, *l.channel_mixer);
  };
  if (any_layer(model, [&](const Layer& l) { return !mlp_gated(l); })) {
    return std::string(kFormulas) + ", each charging every MLP as SwiGLU; this model has an ungated one";
  }
  // Its DeepSeek-V3 formula takes the shared expert to be one expert wide.
  const bool other_shared_expert = has_mixer<MlaAttention>(model) && any_layer(model, [](const Layer& l) {
                                     const auto* moe = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
                                     return moe && moe->shared_expert_ffn_hidden_size != moe->expert_ffn_hidden_size;
                                   });
  if (other_shared_expert) {
    return std::string(kFormulas) + "; its DeepSeek-V3 formula needs one shared expert as wide as a routed one";
  }
  const bool gqa_shared_expert = has_mixer<GqaAttention>(model) && any_layer(model, [](const Layer& l) {
                                   const auto* moe = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
                                   return moe && moe->shared_expert_ffn_hidden_size.has_value();
                                 });
  if (gqa_shared_expert) return std::string(kFormulas) + "; its Qwen3 MoE formula has no shared expert";
  return "";
}

// What NeMo Automodel's Step-3.5 function can describe: full-attention
// layers of one width, sliding layers of one window with their own head count
// (it reads attention_other_setting's heads alone), every layer gated per
// head, one dense MLP and one MoE with a shared expert; each MTP depth charged
// as a full-attention MoE layer, so the last decoder layer must be one.
bool automodel_step_expressible(const Model& model) {
  const GqaAttention* full = nullptr;
  const GqaAttention* sliding = nullptr;
  const ChannelMixer* dense = nullptr;
  const ChannelMixer* experts = nullptr;
  const auto fits = [&](const Layer& l) {
    const auto* a = l.mixer ? std::get_if<GqaAttention>(&*l.mixer) : nullptr;
    if (!a || !a->head_gate || a->chunk || !l.channel_mixer) return false;
    const GqaAttention*& same = a->window ? sliding : full;
    if (!same) same = a;
    if (a->num_heads != same->num_heads || a->num_query_groups != same->num_query_groups ||
        a->head_dim != same->head_dim || a->window != same->window) {
      return false;
    }
    const auto* moe = std::get_if<Moe>(&*l.channel_mixer);
    if (moe && !moe->shared_expert_ffn_hidden_size) return false;
    const ChannelMixer*& mlp = moe ? experts : dense;
    if (!mlp) mlp = &*l.channel_mixer;
    return *mlp == *l.channel_mixer;
  };
  if (!std::all_of(model.layers.begin(), model.layers.end(), fits)) return false;
  for (const LayerStack& depth : model.mtp_depths) {
    if (!std::all_of(depth.begin(), depth.end(), fits)) return false;
  }
  if (full && sliding && (sliding->num_query_groups != full->num_query_groups || sliding->head_dim != full->head_dim)) {
    return false;
  }
  if (model.mtp_depths.empty()) return true;
  const Layer& last = model.layers.back();
  return !std::get<GqaAttention>(*last.mixer).window && std::holds_alternative<Moe>(*last.channel_mixer);
}

// NeMo Automodel's Nemotron-H formula (nemotronh_flops) reads the layer
// counts of hybrid_override_pattern: Mamba-2 (M), attention (*), dense MLP
// (-) and MoE (E) layers, the experts ungated (relu2). Why it cannot count
// `model`, or empty.
std::string automodel_nemotron_h_unexpressed(const Model& model) {
  constexpr std::string_view kFormula = "NeMo Automodel's Nemotron-H formula";
  const bool other_mixer = any_layer(model, [](const Layer& l) {
    return l.mixer && !std::holds_alternative<Mamba2>(*l.mixer) && !std::holds_alternative<GqaAttention>(*l.mixer);
  });
  if (other_mixer) return std::string(kFormula) + " counts Mamba-2 and grouped-query attention layers only";
  if (model.hyper_connections || has_ngram_memory(model) || has_per_layer_embedding(model)) {
    return std::string(kFormula) + " has no hyper-connections, n-gram memory or per-layer embeddings";
  }
  if (has_shared_key_value(model)) return std::string(kFormula) + std::string(kNoSharedKeyValue);
  const bool gated_experts = any_layer(model, [](const Layer& l) {
    const auto* moe = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
    return moe && moe->gated;
  });
  if (gated_experts) return std::string(kFormula) + " charges every expert ungated (relu2); this model's are gated";
  // One config: one Mamba-2 shape, one head and key/value head count, one MLP
  // width, one MoE shape.
  const auto equal = [](const auto& a, const auto& b) { return a == b; };
  const bool one_shape = one_shape_of<Mamba2>(model, equal) && one_shape_of<DenseMlp>(model, equal) &&
                         one_shape_of<Moe>(model, equal) &&
                         one_shape_of<GqaAttention>(model, [](const GqaAttention& a, const GqaAttention& b) {
                           return a.num_heads == b.num_heads && a.num_query_groups == b.num_query_groups;
                         });
  if (!one_shape) {
    return std::string(kFormula) +
           " reads one config: one Mamba-2 shape, one head count, one MLP width and one MoE shape for every layer";
  }
  return "";
}

// What NeMo Automodel reports for a config class its formulas are not mapped
// from: a generic estimate of another model than the one described.
constexpr std::string_view kAutomodelFallback =
    ": get_flops_formula_for_hf_config falls back to transformer_flops, which charges every layer multi-head "
    "attention h wide and an ungated MLP of intermediate_size (half the layers routed when the config names "
    "num_experts_per_tok), whatever the model; compare does not model that estimate";

// Hugging Face config types whose Transformers class NeMo Automodel maps no
// formula from, though compare would count their models: it reads a
// config by its class, not by the architecture the config describes.
struct UnmappedConfigType {
  std::string_view model_type, config_class, what;
};
constexpr UnmappedConfigType kAutomodelUnmapped[] = {
    {"deepseek_v2", "DeepseekV2Config", "DeepSeek-V2's"},
    {"gemma3", "Gemma3Config", "Gemma 3's multimodal"},
    {"gemma3_text", "Gemma3TextConfig", "Gemma 3's text-only"},
    {"llama4_text", "Llama4TextConfig", "Llama 4's text-only"},
    {"mistral", "MistralConfig", "Mistral's"},
    {"qwen3_5_text", "Qwen3_5TextConfig", "a text-only Qwen3.5"},
};

std::string automodel_cannot_express(const Model& model) {
  // Qwen3.8-2.4T-A95B's release: the fallback reads intermediate_size, which
  // Transformers' Qwen3_5MoeTextConfig removes.
  if (model.hf_model_type == "qwen3_5_moe_text") {
    return "NeMo Automodel maps no formula from Qwen3_5MoeTextConfig, the class of a text-only Qwen3.5-MoE config "
           "(its Qwen3.5 formula is mapped from the multimodal Qwen3_5MoeConfig): get_flops_formula_for_hf_config "
           "falls back to transformer_flops, which raises there (the class has no intermediate_size)";
  }
  for (const UnmappedConfigType& unmapped : kAutomodelUnmapped) {
    if (model.hf_model_type == unmapped.model_type) {
      return "NeMo Automodel maps no formula from " + std::string(unmapped.config_class) + ", the class of " +
             std::string(unmapped.what) + " config" + std::string(kAutomodelFallback);
    }
  }
  if (has_mixer<DsaGqaAttention>(model)) {
    return "NeMo Automodel counts DSA only in its MLA formulas (deepseekv3_flops, mla_moe_flops: the indexer's queries "
           "from q_lora_rank); no formula, and no Hugging Face config type, has DSA over grouped-query attention";
  }
  if (has_mixer<GatedDeltaProduct>(model)) return "NeMo Automodel has no gated delta product formula";
  if (has_mixer<Mamba2>(model)) return automodel_nemotron_h_unexpressed(model);
  if (has_kpool(model)) return "NeMo Automodel has no KPool";
  if (has_mixer<CompressedSparseAttention>(model)) {
    return "NeMo Automodel has no DeepSeek-V4 formula (none is mapped from DeepseekV4Config)" +
           std::string(kAutomodelFallback);
  }
  if (has_shared_key_value(model) || has_per_layer_embedding(model)) {
    return "NeMo Automodel has no Gemma 4 formula (attention whose keys are its values or that reuses another "
           "layer's keys and values, per-layer embeddings)" +
           std::string(kAutomodelFallback);
  }
  if (has_mixer<BlockSparseAttention>(model)) {
    return "NeMo Automodel has no block-sparse attention formula (none is mapped from MiniMaxM3VLConfig or "
           "MiniMaxM3VLTextConfig)" +
           std::string(kAutomodelFallback);
  }
  if (has_mixer<KimiDeltaAttention>(model)) {
    return "NeMo Automodel has no Kimi Delta Attention formula (none is mapped from KimiLinearConfig or KimiK3Config)" +
           std::string(kAutomodelFallback);
  }
  if (has_mixer<SharedCompressedAttention>(model)) {
    const auto v41_layer = [](const Layer& l) {
      return l.mixer && std::holds_alternative<SharedCompressedAttention>(*l.mixer) && l.channel_mixer &&
             std::holds_alternative<Moe>(*l.channel_mixer);
    };
    const bool v41_layers = std::all_of(model.layers.begin(), model.layers.end(), v41_layer);
    if (!v41_layers || !model.mtp_depths.empty() ||
        (model.hyper_connections && model.hyper_connections->variant != HyperConnections::Variant::kManifold)) {
      return "NeMo Automodel's DeepSeek-V4.1 function needs every layer DeepSeek-V4.1 attention with MoE, "
             "no MTP depths and manifold hyper-connections (mHC) if any";
    }
    return "";
  }
  if (has_mixer<CompressedBlockSparseAttention>(model)) {
    const auto qwen38_layer = [](const Layer& l) {
      const auto* experts = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
      return l.mixer &&
             (std::holds_alternative<CompressedBlockSparseAttention>(*l.mixer) ||
              std::holds_alternative<GatedDeltaNet>(*l.mixer)) &&
             experts && experts->shared_expert_ffn_hidden_size;
    };
    if (!std::all_of(model.layers.begin(), model.layers.end(), qwen38_layer) ||
        (model.hyper_connections && model.hyper_connections->variant != HyperConnections::Variant::kGatedResidual)) {
      return "NeMo Automodel's Qwen3.8 function needs every layer QSA or a gated delta net, with MoE and a shared "
             "expert, and gated residual hyper-connections if any";
    }
    return "";
  }
  if (model.hyper_connections || has_ngram_memory(model)) {
    return "NeMo Automodel counts hyper-connections and n-gram memory only in its DeepSeek-V4.1 and Qwen3.8 "
           "functions";
  }
  if (has_head_gate(model) && !automodel_step_expressible(model)) {
    return "NeMo Automodel's Step-3.5 function needs every layer GQA with a per-head gate, the sliding layers of one "
           "window with the full layers' key/value heads and head width, one dense MLP and one MoE with a shared "
           "expert, and with MTP depths a last decoder layer of full attention and MoE (it charges each depth as one)";
  }
  if (has_latent_moe(model)) return "NeMo Automodel's formulas run experts in the hidden size: no latent MoE";
  if (has_gqa_where(model, [](const GqaAttention& a) { return a.chunk.has_value() || !a.head_dim; })) {
    return "NeMo Automodel's formulas have no chunked attention and need a head dimension";
  }
  const bool ungated = any_layer(model, [](const Layer& l) {
    return l.channel_mixer &&
           !std::visit(Overloaded{[](const OneOf<DenseMlp, Moe> auto& mlp) { return mlp.gated; }}, *l.channel_mixer);
  });
  if (ungated) {
    return "NeMo Automodel's formulas for these layers charge every MLP as SwiGLU; this model has an ungated one";
  }
  return "";
}

// NeMo Automodel's formulas charge L^2/2 causal pairs, except its gpt-oss
// formula (the one with sliding windows), which charges L(L+1)/2.
constexpr Conventions kAutomodelConventions{.causal = PairRule::kHalfSquare,
                                            .windows = WindowRule::kUncappedBand,
                                            .dsa_core = DsaCoreRule::kExpandedUncapped,
                                            .indexer = IndexerRule::kEveryLayerAllPairs,
                                            .head_gate = false,
                                            .norms = false};

Conventions automodel_conventions(const Model& model) {
  Conventions c = kAutomodelConventions;
  // nemotronh_flops: attention of query width h and key/value width g h/n over
  // L^2/2 pairs (no window, no gate), every dense MLP gated, the router, no MTP.
  if (has_mixer<Mamba2>(model)) {
    c.windows = WindowRule::kAsCausal;
    c.router = true;
    c.mtp = MtpRule::kOff;
    c.output_gate = false;
    c.attention_width_from_hidden = true;
    c.ungated_mlp_as_gated = true;
    return c;
  }
  // deepseek_v41_flops: the router, the mHC coefficient projections of the
  // layers (none before the head), Engram's key/value projection, every
  // entry scored by every indexer.
  if (has_mixer<SharedCompressedAttention>(model)) {
    c.router = true;
    c.hyper_connections = HyperConnectionRule::kLayerProjections;
    c.ngram_memory = NgramMemoryRule::kNoGates;
    c.candidate_blocks = false;
    return c;
  }
  // qwen3_8_flash_next_flops: the router and the shared expert's gate, the
  // hyper-connections' projections (the head's included), the PLE's
  // projections and convolution; the checkpoint's MTP head not loaded.
  if (has_mixer<CompressedBlockSparseAttention>(model)) {
    c.router = true;
    c.shared_expert_gate = true;
    c.hyper_connections = HyperConnectionRule::kProjections;
    c.ngram_memory = NgramMemoryRule::kNoGates;
    c.mtp = MtpRule::kOff;
    return c;
  }
  // step3_5_flash_flops: L(L+1)/2 pairs, as its gpt-oss formula, and each MTP
  // depth charged as a full-attention MoE layer of the decoder's widths
  // (automodel_step_expressible: the last one).
  if (has_head_gate(model)) {
    c.causal = PairRule::kExact;
    c.mtp_layer = MtpLayerRule::kLastDecoderLayerWhole;
    return c;
  }
  if (has_gqa_where(model, [](const GqaAttention& a) { return a.window.has_value(); })) c.causal = PairRule::kExact;
  return c;
}

constexpr Conventions kMaxTextConventions{.causal = PairRule::kHalfSquare,
                                          .windows = WindowRule::kArea,
                                          .router = true,
                                          .mtp = MtpRule::kLayersOnly,
                                          .mtp_layer = MtpLayerRule::kLastDecoderLayer,
                                          .dsa_core = DsaCoreRule::kExpandedArea,
                                          .indexer = IndexerRule::kTrainedFully,
                                          .compressed_pairs = CompressedPairsRule::kMaxText,
                                          .compressed_indexer = CompressedIndexerRule::kMaxText,
                                          .output_gate = false,
                                          .head_gate = false,
                                          .norms = false,
                                          .hyper_connections = HyperConnectionRule::kMaxText,
                                          .per_layer_embedding = PerLayerEmbeddingRule::kProjections};

// MaxText's DeepSeek-V4 function leaves MTP out: its DeepSeek-V4 configs drop
// the MTP layer.
Conventions maxtext_conventions(const Model& model) {
  Conventions c = kMaxTextConventions;
  if (has_mixer<CompressedSparseAttention>(model)) c.mtp = MtpRule::kOff;
  return c;
}

std::vector<std::string> maxtext_recipe(const Model& model) {
  if (!model.mtp_depths.empty() && has_mixer<CompressedSparseAttention>(model)) {
    return {
        "MaxText's DeepSeek-V4 configs drop the MTP layer (deepseek4-284b.yml): its number leaves it out; with "
        "mtp_num_layers set, its function would charge the layer as a dense GQA layer, which compare does not "
        "model"};
  }
  if (model.mtp_depths.empty() || !has_mixer<MlaAttention>(model)) return {};
  return {"MaxText's DeepSeek configs set no MTP (base.yml's mtp_num_layers is 0 and deepseek3-671b.yml leaves it): "
          "run with them, its number leaves out the MTP layers; shown with this model's, as mtp_num_layers = " +
          std::to_string(model.mtp_depths.size()) + " counts them"};
}

std::vector<std::string> automodel_recipe(const Model& model) {
  if (!model.mtp_depths.empty() && has_mixer<Mamba2>(model)) {
    return {
        "NeMo Automodel's benchmark recipe adds the MTP depths to its Nemotron-H formula's number "
        "(_nemotronh_mtp_flops: their layers, a 2h -> h projection without norms, their logits); its MFU "
        "callback, as this row, leaves them out"};
  }
  if (model.mtp_depths.empty() || !(has_mixer<MlaAttention>(model) || has_mixer<DsaAttention>(model))) return {};
  // A config of another class (GLM's, read by its MLA formula) counts the
  // MTP depths; a model from other sources may be either.
  constexpr std::array<std::string_view, 4> kDeepseekV3Class = {"", "deepseek_v3", "deepseek_v32", "kimi_k2"};
  if (std::find(kDeepseekV3Class.begin(), kDeepseekV3Class.end(), model.hf_model_type) == kDeepseekV3Class.end()) {
    return {};
  }
  return {"run on a DeepseekV3Config release (DeepSeek-V3, V3.2, Kimi-K2), NeMo Automodel's number leaves out the MTP "
          "depths: its DeepSeek-V3 formula reads mtp_num_layers, which those config.json files do not have (they name "
          "num_nextn_predict_layers); shown with them, as its MLA formula (GLM-5's class) counts them"};
}

std::vector<std::string> bridge_recipe(const Model& model) {
  if (model.mtp_depths.empty() || !has_mixer<BlockSparseAttention>(model)) return {};
  const std::string depths = std::to_string(model.mtp_depths.size());
  return {"Megatron-Bridge's MiniMax-M3 provider forces mtp_num_layers to None (the checkpoint ships no MTP "
          "weights): run with it, its number leaves out the " +
          depths + " MTP depths; shown with them, as mtp_num_layers = " + depths + " counts them"};
}

// Megatron-LM's main branch, its dev branch (with the DSA fix) and
// Megatron-Bridge on the transformer path.
constexpr Conventions kMegatronMainConventions{.causal = PairRule::kHalfSquare,
                                               .windows = WindowRule::kAsCausal,
                                               .dsa_core = DsaCoreRule::kDenseMla,
                                               .indexer = IndexerRule::kNone,
                                               .head_gate = false,
                                               .quick_geglu_as_ungated = true,
                                               .dsa_gqa = DsaGqaRule::kDenseGqa,
                                               .hyper_connections = HyperConnectionRule::kNotCounted,
                                               .ngram_memory = NgramMemoryRule::kNone,
                                               .per_layer_embedding = PerLayerEmbeddingRule::kNone};
constexpr Conventions kMegatronDevConventions{.causal = PairRule::kHalfSquare,
                                              .windows = WindowRule::kAsCausal,
                                              .dsa_core = DsaCoreRule::kAbsorbedArea,
                                              .indexer = IndexerRule::kMegatron,
                                              .compressed_pairs = CompressedPairsRule::kMegatron,
                                              .compressed_indexer = CompressedIndexerRule::kMegatron,
                                              .head_gate = false,
                                              .quick_geglu_as_ungated = true,
                                              .dsa_gqa = DsaGqaRule::kDenseGqa,
                                              .hyper_connections = HyperConnectionRule::kNotCounted,
                                              .ngram_memory = NgramMemoryRule::kNone,
                                              .per_layer_embedding = PerLayerEmbeddingRule::kNone};
constexpr Conventions kBridgeConventions{.causal = PairRule::kHalfSquare,
                                         .windows = WindowRule::kExactBelowLength,
                                         .mtp_layer = MtpLayerRule::kLastDecoderLayer,
                                         .dsa_core = DsaCoreRule::kAbsorbedExact,
                                         .indexer = IndexerRule::kExecuted,
                                         .compressed_pairs = CompressedPairsRule::kMegatron,
                                         .compressed_indexer = CompressedIndexerRule::kMegatron,
                                         .head_gate = false,
                                         .block_sparse_as_dense = true,
                                         .dsa_gqa = DsaGqaRule::kDenseGqa,
                                         .kda_gates_as_k3 = true,
                                         .hyper_connections = HyperConnectionRule::kNotCounted,
                                         .ngram_memory = NgramMemoryRule::kNone,
                                         .per_layer_embedding = PerLayerEmbeddingRule::kNone};

// Their hybrid functions (a hybrid layer pattern) count Mamba-2 2h wide and
// no attention output gate; each MTP depth's layers as its pattern has them
// and its logits, and only on Megatron-LM's dev branch its 2h -> h projection
// and norms. Only the dev branch's reads a pattern's D layers (as attention,
// dense grouped-query attention when not multi-latent); main's and
// Megatron-Bridge's count no D layer. Their transformer functions charge
// every layer of DSA over grouped-query attention as dense grouped-query
// attention.
Conventions on_megatron_path(Conventions c, const Model& model, bool dev_branch) {
  if (model.megatron_path == MegatronPath::kStandard) return c;
  c.mamba_width_doubled_hidden = true;
  c.output_gate = false;
  c.mtp_layer = MtpLayerRule::kAsDescribed;
  c.mtp = dev_branch ? MtpRule::kFull : MtpRule::kNoProjection;
  c.dsa_gqa = dev_branch ? DsaGqaRule::kDenseGqa : DsaGqaRule::kNotCounted;
  return c;
}
Conventions megatron_main_conventions(const Model& model) {
  return on_megatron_path(kMegatronMainConventions, model, false);
}
Conventions megatron_dev_conventions(const Model& model) {
  return on_megatron_path(kMegatronDevConventions, model, true);
}
Conventions bridge_conventions(const Model& model) { return on_megatron_path(kBridgeConventions, model, false); }

// The frameworks, as read from their sources (docs/compare.md cites each).
const std::array<FrameworkDefinition, 9>& definitions() {
  static const std::array<FrameworkDefinition, 9> kDefinitions = {{
      {Framework::kTrainflopsModel, "trainflops-model", "trainflops model", kModelConventions, expressible_everywhere,
       nullptr, nullptr},
      {Framework::kTrainflopsExecuted, "trainflops-executed", "trainflops executed",
       Conventions{.router = true,
                   .dsa_core = DsaCoreRule::kAbsorbedExact,
                   .indexer = IndexerRule::kExecuted,
                   .norms = false,
                   .mla_output_gate = true,
                   .chunked_delta_rule = true,
                   .zero_experts_free = true,
                   .attention_residuals = true},
       expressible_everywhere, nullptr, nullptr},
      {Framework::kMegatronMain, "megatron-lm", "Megatron-LM main", kMegatronMainConventions,
       megatron_main_cannot_express, megatron_main_conventions, nullptr},
      {Framework::kMegatronDsaFix, "megatron-lm-dsa-fix", "Megatron-LM DSA fix", kMegatronDevConventions,
       megatron_dev_cannot_express, megatron_dev_conventions, nullptr},
      {Framework::kMegatronBridge, "megatron-bridge", "Megatron-Bridge", kBridgeConventions, bridge_cannot_express,
       bridge_conventions, bridge_recipe},
      {Framework::kMaxText, "maxtext", "MaxText", kMaxTextConventions, maxtext_cannot_express, maxtext_conventions,
       maxtext_recipe},
      {Framework::kTorchtitan, "torchtitan", "torchtitan",
       Conventions{.causal = PairRule::kAll,
                   .windows = WindowRule::kAsCausal,
                   .router = true,
                   .mtp = MtpRule::kOff,
                   .linear_core = false,
                   .small_parameters = true},
       torchtitan_cannot_express, nullptr, nullptr},
      {Framework::kNemoRl, "nemo-rl", "NeMo-RL",
       Conventions{.causal = PairRule::kHalfSquare, .mtp = MtpRule::kOff, .norms = false, .dense_layers_as_moe = true},
       nemo_rl_cannot_express, nullptr, nullptr},
      {Framework::kNemoAutomodel, "nemo-automodel", "NeMo Automodel", kAutomodelConventions, automodel_cannot_express,
       automodel_conventions, automodel_recipe},
  }};
  return kDefinitions;
}

const FrameworkDefinition& definition(Framework framework) {
  return definitions()[static_cast<std::size_t>(framework)];
}

Error batch_overflow() { return Error(ErrorCode::kOverflow, "the FLOPs of the batch do not fit in 128 bits"); }

Result<FrameworkCount> count_framework(const FrameworkDefinition& framework, const Model& model,
                                       std::int64_t seq_length, std::int64_t sequences, Int128 model_doubled) {
  FrameworkCount count{framework.framework, std::nullopt, framework.cannot_express(model), {}, {}};
  if (!count.reason.empty()) return count;
  const Conventions theirs = framework.conventions_for ? framework.conventions_for(model) : framework.conventions;
  Conventions choices = kModelConventions;
  Int128 previous = model_doubled;
  for (ConventionKind kind : kAllConventionKinds) {
    take_choice(kind, theirs, choices);
    TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 doubled, doubled_flops(model, choices, seq_length));
    if (doubled != previous) {
      const auto flops = checked_mul((doubled - previous) / 2, sequences);
      if (!flops) return batch_overflow();
      count.differences.push_back({kind, choice_text(kind, choices), *flops});
    }
    previous = doubled;
  }
  const auto flops = checked_mul(previous / 2, sequences);
  if (!flops) return batch_overflow();
  count.flops = *flops;
  if (framework.recipe_differences) count.recipe_differences = framework.recipe_differences(model);
  return count;
}

}  // namespace

std::string_view framework_name(Framework framework) { return definition(framework).name; }
std::string_view framework_title(Framework framework) { return definition(framework).title; }

std::string_view convention_name(ConventionKind kind) {
  switch (kind) {
    case ConventionKind::kCausalPairs: return "causal_pairs";
    case ConventionKind::kSlidingWindows: return "sliding_windows";
    case ConventionKind::kMoeRouter: return "moe_router";
    case ConventionKind::kMtp: return "mtp";
    case ConventionKind::kMtpLayerKind: return "mtp_layer_kind";
    case ConventionKind::kDsaCore: return "dsa_core";
    case ConventionKind::kDsaIndexer: return "dsa_indexer";
    case ConventionKind::kCompressedPairs: return "compressed_pairs";
    case ConventionKind::kCompressedIndexer: return "compressed_indexer";
    case ConventionKind::kLinearAttentionCore: return "linear_attention_core";
    case ConventionKind::kMambaWidth: return "mamba_width";
    case ConventionKind::kAttentionWidth: return "attention_width";
    case ConventionKind::kUngatedMlp: return "ungated_mlp";
    case ConventionKind::kOutputGate: return "output_gate";
    case ConventionKind::kHeadGate: return "head_gate";
    case ConventionKind::kMlaOutputGate: return "mla_output_gate";
    case ConventionKind::kBlockSparse: return "block_sparse";
    case ConventionKind::kDsaGqa: return "dsa_gqa";
    case ConventionKind::kKdaGates: return "kda_gates";
    case ConventionKind::kDeltaRule: return "delta_rule";
    case ConventionKind::kNorms: return "norms";
    case ConventionKind::kDenseLayersAsMoe: return "dense_layers_as_moe";
    case ConventionKind::kQuickGeglu: return "quick_geglu";
    case ConventionKind::kSmallParameters: return "small_parameters";
    case ConventionKind::kHyperConnections: return "hyper_connections";
    case ConventionKind::kNgramMemory: return "ngram_memory";
    case ConventionKind::kCandidateBlocks: return "candidate_blocks";
    case ConventionKind::kSharedExpertGate: return "shared_expert_gate";
    case ConventionKind::kPerLayerEmbedding: return "per_layer_embedding";
    case ConventionKind::kAttentionResiduals: return "attention_residuals";
    case ConventionKind::kZeroExperts: return "zero_experts";
  }
  return "";
}

std::string_view convention_title(ConventionKind kind) {
  switch (kind) {
    case ConventionKind::kCausalPairs: return "causal attention";
    case ConventionKind::kSlidingWindows: return "sliding windows";
    case ConventionKind::kMoeRouter: return "MoE router";
    case ConventionKind::kMtp: return "MTP";
    case ConventionKind::kMtpLayerKind: return "MTP layer kind";
    case ConventionKind::kDsaCore: return "DSA core";
    case ConventionKind::kDsaIndexer: return "DSA indexer";
    case ConventionKind::kCompressedPairs: return "V4 attention pairs";
    case ConventionKind::kCompressedIndexer: return "V4 CSA indexer";
    case ConventionKind::kLinearAttentionCore: return "linear attention core";
    case ConventionKind::kMambaWidth: return "Mamba-2 width";
    case ConventionKind::kAttentionWidth: return "attention widths";
    case ConventionKind::kUngatedMlp: return "ungated MLP";
    case ConventionKind::kOutputGate: return "attention output gate";
    case ConventionKind::kHeadGate: return "attention head gate";
    case ConventionKind::kMlaOutputGate: return "MLA output gate";
    case ConventionKind::kBlockSparse: return "block-sparse attention";
    case ConventionKind::kDsaGqa: return "DSA over GQA";
    case ConventionKind::kKdaGates: return "KDA gates";
    case ConventionKind::kDeltaRule: return "delta rule";
    case ConventionKind::kNorms: return "norms";
    case ConventionKind::kDenseLayersAsMoe: return "dense layers as MoE";
    case ConventionKind::kQuickGeglu: return "quick-GeGLU MLP";
    case ConventionKind::kSmallParameters: return "norms, biases in 6N";
    case ConventionKind::kHyperConnections: return "hyper-connections";
    case ConventionKind::kNgramMemory: return "n-gram memory";
    case ConventionKind::kCandidateBlocks: return "candidate blocks";
    case ConventionKind::kSharedExpertGate: return "shared expert gate";
    case ConventionKind::kPerLayerEmbedding: return "per-layer embeddings";
    case ConventionKind::kAttentionResiduals: return "attention residuals";
    case ConventionKind::kZeroExperts: return "zero experts";
  }
  return "";
}

Result<Comparison> compare_frameworks(const Model& model, std::int64_t seq_length, std::int64_t sequences) {
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  TRAINFLOPS_RETURN_IF_ERROR(check_dsa_topk_given(model, "compare"));
  if (seq_length < 1) return Error("seq_length = " + std::to_string(seq_length) + ": must be at least 1");
  if (sequences < 1) return Error("sequences = " + std::to_string(sequences) + ": must be at least 1");
  TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 model_doubled, doubled_flops(model, kModelConventions, seq_length));
  Comparison comparison;
  comparison.model = summarize(model);
  comparison.seq_length = seq_length;
  comparison.sequences = sequences;
  const auto model_flops = checked_mul(model_doubled / 2, sequences);
  if (!model_flops) return batch_overflow();
  comparison.model_flops = *model_flops;
  for (const FrameworkDefinition& framework : definitions()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(FrameworkCount count,
                                count_framework(framework, model, seq_length, sequences, model_doubled));
    comparison.frameworks.push_back(std::move(count));
  }
  return comparison;
}

}  // namespace trainflops
