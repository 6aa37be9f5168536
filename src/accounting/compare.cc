#include "trainflops/compare.h"

#include <array>
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

bool has_kpool(const Model& model) {
  return has_dsa_where(model, [](const DsaAttention& a) { return a.indexer.pool_size > 1; });
}

std::string expressible_everywhere(const Model&) { return ""; }

// Gemma 4's key/value projections: only MaxText's function knows them.
bool has_shared_key_value(const Model& model) {
  return has_gqa_where(model, [](const GqaAttention& a) { return a.key_is_value || a.reuses_key_value; });
}
constexpr std::string_view kNoSharedKeyValue =
    " has no attention whose keys are its values, or that reuses another layer's keys and values (Gemma 4)";

std::string megatron_cannot_express(const Model& model) {
  if (has_shared_key_value(model)) return "Megatron-LM" + std::string(kNoSharedKeyValue);
  if (model.megatron_path != MegatronPath::kStandard) {
    return "a hybrid layer pattern is counted by Megatron-LM's hybrid function, which compare does not model";
  }
  return "";
}

std::string megatron_main_cannot_express(const Model& model) {
  if (has_kpool(model)) return "KPool is not on Megatron-LM's main branch";
  return megatron_cannot_express(model);
}

std::string bridge_cannot_express(const Model& model) {
  if (has_kpool(model)) return "Megatron-Bridge has no KPool";
  if (has_shared_key_value(model)) return "Megatron-Bridge" + std::string(kNoSharedKeyValue);
  if (has_dsa_where(model, [](const DsaAttention& a) { return a.indexer.grad_mode == DsaIndexer::GradMode::kFull; })) {
    return "Megatron-Bridge charges an indexer on detached inputs; grad mode full has no counterpart there";
  }
  if (model.megatron_path != MegatronPath::kStandard) {
    return "a hybrid layer pattern is counted by Megatron-Bridge's hybrid function, which compare does not model";
  }
  return "";
}

bool has_latent_moe(const Model& model) {
  return any_layer(model, [](const Layer& l) {
    const auto* moe = l.channel_mixer ? std::get_if<Moe>(&*l.channel_mixer) : nullptr;
    return moe && moe->latent_size.has_value();
  });
}

std::string maxtext_cannot_express(const Model& model) {
  if (has_kpool(model)) return "MaxText has no KPool";
  if (has_latent_moe(model)) return "MaxText's experts run in the hidden size: no latent MoE";
  if (has_gqa_where(model, [](const GqaAttention& a) { return a.chunk.has_value() || !a.head_dim; })) {
    return "compare models MaxText's GQA with a head dimension and without chunked attention only";
  }
  const bool unequal_gdn = any_layer(model, [](const Layer& l) {
    const auto* g = l.mixer ? std::get_if<GatedDeltaNet>(&*l.mixer) : nullptr;
    return g && (g->key_head_dim != g->value_head_dim || g->variant != GatedDeltaNet::Variant::kGdn);
  });
  if (unequal_gdn) return "MaxText's gated delta net rule is modelled for GDN with equal key and value head sizes only";
  return "";
}

std::string torchtitan_cannot_express(const Model& model) {
  if (has_mixer<DsaAttention>(model)) return "torchtitan has no DeepSeek Sparse Attention model";
  if (has_shared_key_value(model)) return "torchtitan" + std::string(kNoSharedKeyValue);
  return "";
}

std::string nemo_rl_cannot_express(const Model& model) {
  constexpr std::string_view kFormulas =
      "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only";
  // Its formulas' attention, listed: any other mixer has none.
  const bool other_mixer = any_layer(model, [](const Layer& l) {
    return l.mixer && !std::holds_alternative<GqaAttention>(*l.mixer) &&
           !std::holds_alternative<MlaAttention>(*l.mixer);
  });
  if (other_mixer) return std::string(kFormulas) + "; this model has other attention";
  if (has_latent_moe(model)) return std::string(kFormulas) + "; this model's experts run in a latent space";
  if (has_gqa_where(model, [](const GqaAttention& a) {
        return a.window.has_value() || a.chunk.has_value() || a.output_gate || !a.head_dim || a.key_is_value ||
               a.reuses_key_value;
      })) {
    return std::string(kFormulas) +
           "; windows, chunks, an output gate and shared key/value projections have no place in them";
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

std::string automodel_cannot_express(const Model& model) {
  if (has_kpool(model)) return "NeMo Automodel has no KPool";
  if (has_shared_key_value(model)) return "NeMo Automodel" + std::string(kNoSharedKeyValue);
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
                                            .windows = WindowRule::kExact,
                                            .dsa_core = DsaCoreRule::kExpandedUncapped,
                                            .indexer = IndexerRule::kEveryLayerAllPairs,
                                            .norms = false};

Conventions automodel_conventions(const Model& model) {
  Conventions c = kAutomodelConventions;
  if (has_gqa_where(model, [](const GqaAttention& a) { return a.window.has_value(); })) c.causal = PairRule::kExact;
  return c;
}

std::vector<std::string> maxtext_recipe(const Model& model) {
  if (model.mtp_depths.empty() || !has_mixer<MlaAttention>(model)) return {};
  return {"MaxText's DeepSeek configs set no MTP (base.yml's mtp_num_layers is 0 and deepseek3-671b.yml leaves it): "
          "run with them, its number leaves out the MTP layers; shown with this model's, as mtp_num_layers = " +
          std::to_string(model.mtp_depths.size()) + " counts them"};
}

std::vector<std::string> automodel_recipe(const Model& model) {
  if (model.mtp_depths.empty() || !(has_mixer<MlaAttention>(model) || has_mixer<DsaAttention>(model))) return {};
  return {"run on a DeepseekV3Config release (DeepSeek-V3, V3.2, Kimi-K2), NeMo Automodel's number leaves out the MTP "
          "depths: its DeepSeek-V3 formula reads mtp_num_layers, which those config.json files do not have (they name "
          "num_nextn_predict_layers); shown with them, as its MLA formula (GLM-5's class) counts them"};
}

// The frameworks, as read from their sources (docs/compare.md cites each).
const std::array<FrameworkDefinition, 9>& definitions() {
  static const std::array<FrameworkDefinition, 9> kDefinitions = {{
      {Framework::kTrainflopsModel, "trainflops-model", "trainflops model", kModelConventions, expressible_everywhere,
       nullptr, nullptr},
      {Framework::kTrainflopsExecuted, "trainflops-executed", "trainflops executed",
       Conventions{
           .router = true, .dsa_core = DsaCoreRule::kAbsorbedExact, .indexer = IndexerRule::kExecuted, .norms = false},
       expressible_everywhere, nullptr, nullptr},
      {Framework::kMegatronMain, "megatron-lm", "Megatron-LM main",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kAsCausal,
                   .dsa_core = DsaCoreRule::kDenseMla,
                   .indexer = IndexerRule::kNone,
                   .quick_geglu_as_ungated = true},
       megatron_main_cannot_express, nullptr, nullptr},
      {Framework::kMegatronDsaFix, "megatron-lm-dsa-fix", "Megatron-LM DSA fix",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kAsCausal,
                   .dsa_core = DsaCoreRule::kAbsorbedArea,
                   .indexer = IndexerRule::kMegatron,
                   .quick_geglu_as_ungated = true},
       megatron_cannot_express, nullptr, nullptr},
      {Framework::kMegatronBridge, "megatron-bridge", "Megatron-Bridge",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kExactBelowLength,
                   .mtp_layer = MtpLayerRule::kLastDecoderLayer,
                   .dsa_core = DsaCoreRule::kAbsorbedExact,
                   .indexer = IndexerRule::kExecuted},
       bridge_cannot_express, nullptr, nullptr},
      {Framework::kMaxText, "maxtext", "MaxText",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kArea,
                   .router = true,
                   .mtp = MtpRule::kLayersOnly,
                   .mtp_layer = MtpLayerRule::kLastDecoderLayer,
                   .dsa_core = DsaCoreRule::kExpandedArea,
                   .indexer = IndexerRule::kTrainedFully,
                   .output_gate = false,
                   .norms = false},
       maxtext_cannot_express, nullptr, maxtext_recipe},
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

// Whether compare models how the frameworks' functions count a layer type
// (convention_count.cc): one it does not makes every framework's count unknown.
bool frameworks_modelled(const Mixer& mixer) {
  return std::visit(
      Overloaded{
          [](const OneOf<GqaAttention, MlaAttention, DsaAttention, GatedDeltaNet> auto&) { return true; },
          [](const OneOf<CompressedSparseAttention, Mamba2, GatedDeltaProduct, BlockSparseAttention> auto&) {
            return false;
          },
      },
      mixer);
}
bool frameworks_modelled(const ChannelMixer& channel_mixer) {
  return std::visit(Overloaded{[](const OneOf<DenseMlp, Moe> auto&) { return true; }}, channel_mixer);
}

// Why no framework here can be compared on `model`, or empty: the layer
// kinds whose counts in the frameworks' functions compare does not model.
std::string unmodelled_layer_kind(const Model& model) {
  std::string kind;
  any_layer(model, [&](const Layer& l) {
    if (l.mixer && !frameworks_modelled(*l.mixer)) {
      kind = mixer_kind(*l.mixer);
    } else if (l.channel_mixer && !frameworks_modelled(*l.channel_mixer)) {
      kind = channel_mixer_kind(*l.channel_mixer);
    }
    return !kind.empty();
  });
  if (kind.empty()) return "";
  return "the model has " + kind +
         " layers; compare models the frameworks' counts of GQA, MLA, DSA and gated delta net layers only";
}

Error batch_overflow() { return Error(ErrorCode::kOverflow, "the FLOPs of the batch do not fit in 128 bits"); }

Result<FrameworkCount> count_framework(const FrameworkDefinition& framework, const Model& model,
                                       std::int64_t seq_length, std::int64_t sequences, Int128 model_doubled) {
  const bool trainflops =
      framework.framework == Framework::kTrainflopsModel || framework.framework == Framework::kTrainflopsExecuted;
  FrameworkCount count{framework.framework, std::nullopt, trainflops ? "" : unmodelled_layer_kind(model), {}, {}};
  if (count.reason.empty()) count.reason = framework.cannot_express(model);
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
    case ConventionKind::kLinearAttentionCore: return "linear_attention_core";
    case ConventionKind::kOutputGate: return "output_gate";
    case ConventionKind::kNorms: return "norms";
    case ConventionKind::kDenseLayersAsMoe: return "dense_layers_as_moe";
    case ConventionKind::kQuickGeglu: return "quick_geglu";
    case ConventionKind::kSmallParameters: return "small_parameters";
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
    case ConventionKind::kLinearAttentionCore: return "linear attention core";
    case ConventionKind::kOutputGate: return "attention output gate";
    case ConventionKind::kNorms: return "norms";
    case ConventionKind::kDenseLayersAsMoe: return "dense layers as MoE";
    case ConventionKind::kQuickGeglu: return "quick-GeGLU MLP";
    case ConventionKind::kSmallParameters: return "norms, biases in 6N";
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
