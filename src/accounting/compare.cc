#include "trainflops/compare.h"

#include <array>
#include <functional>
#include <utility>
#include <variant>

#include "trainflops/layer_flops.h"
#include "trainflops/statistic.h"

namespace trainflops {
namespace {

// How a framework charges the pairs of one sequence of L tokens.
enum class PairRule {
  kExact,       // L(L+1)/2: each query sees itself and every earlier key
  kHalfSquare,  // L^2/2
  kAll,         // L^2: the causal mask ignored
};

enum class WindowRule {
  kExact,             // sum_i min(i, w)
  kAsCausal,          // the window ignored: charged as causal attention
  kExactBelowLength,  // exact when w < L, else L^2/2 (the average context's two branches)
  kArea,              // L w' - w'^2/2 with w' = min(w, L)
};

enum class MtpRule {
  kFull,        // the depth's layers, its 2h -> h projection with norms, its logits
  kLayersOnly,  // the layers alone: the output layer shared, no projection
  kOff,         // not counted
};

enum class MtpLayerRule {
  kAsDescribed,       // each MTP layer's own mixer
  kLastDecoderLayer,  // a copy of the last decoder layer's mixer kind
};

enum class DsaCoreRule {
  kExpandedExact,  // expanded MLA (n (qk + rope) + n v per pair) over the exact top-k pairs
  kAbsorbedExact,  // absorbed MLA (n (kv_lora + rope) + n kv_lora) over the exact top-k pairs
  kAbsorbedArea,   // absorbed over L e - e^2/2 pairs, e = min(k, L)
  kExpandedArea,   // expanded over L e - e^2/2 pairs
  kDenseMla,       // sparsity ignored: dense MLA over the causal pairs
};

enum class IndexerRule {
  kModel,         // by grad mode, scoring nh hd per pair, exact pairs
  kExecuted,      // also the head weighting (nh per pair) and the KL loss's teacher logits, exact pairs
  kMegatron,      // by grad mode, nh hd per pair over L^2/2 (top-k backward: L e - e^2/2)
  kTrainedFully,  // on every layer (no index sharing), every GEMM trained (x3), head weighting,
                  // L^2/2 pairs; none when L <= k
  kNone,          // not counted
};

// One choice per convention: what a framework's FLOPs function does.
struct Conventions {
  PairRule causal = PairRule::kExact;
  WindowRule windows = WindowRule::kExact;
  bool router = false;
  MtpRule mtp = MtpRule::kFull;
  MtpLayerRule mtp_layer = MtpLayerRule::kAsDescribed;
  DsaCoreRule dsa_core = DsaCoreRule::kExpandedExact;
  IndexerRule indexer = IndexerRule::kModel;
  bool linear_core = true;
  bool output_gate = true;
  bool norms = true;
  bool dense_layers_as_moe = false;
};

constexpr Conventions kModelConventions{};

// Sets `kind` in `to` to `from`'s choice.
void take_choice(ConventionKind kind, const Conventions& from, Conventions& to) {
  switch (kind) {
    case ConventionKind::kCausalPairs: to.causal = from.causal; return;
    case ConventionKind::kSlidingWindows: to.windows = from.windows; return;
    case ConventionKind::kMoeRouter: to.router = from.router; return;
    case ConventionKind::kMtp: to.mtp = from.mtp; return;
    case ConventionKind::kMtpLayerKind: to.mtp_layer = from.mtp_layer; return;
    case ConventionKind::kDsaCore: to.dsa_core = from.dsa_core; return;
    case ConventionKind::kDsaIndexer: to.indexer = from.indexer; return;
    case ConventionKind::kLinearAttentionCore: to.linear_core = from.linear_core; return;
    case ConventionKind::kOutputGate: to.output_gate = from.output_gate; return;
    case ConventionKind::kNorms: to.norms = from.norms; return;
    case ConventionKind::kDenseLayersAsMoe: to.dense_layers_as_moe = from.dense_layers_as_moe; return;
  }
}

std::string choice_text(ConventionKind kind, const Conventions& c) {
  switch (kind) {
    case ConventionKind::kCausalPairs:
      switch (c.causal) {
        case PairRule::kExact: return "L(L+1)/2 pairs";
        case PairRule::kHalfSquare: return "L^2/2 pairs";
        case PairRule::kAll: return "all L^2 pairs";
      }
      break;
    case ConventionKind::kSlidingWindows:
      switch (c.windows) {
        case WindowRule::kExact: return "exact window pairs";
        case WindowRule::kAsCausal: return "charged as full causal";
        case WindowRule::kExactBelowLength: return "W - W(W-1)/2L per query";
        case WindowRule::kArea: return "W - W^2/2L per query";
      }
      break;
    case ConventionKind::kMoeRouter: return c.router ? "counted" : "not counted";
    case ConventionKind::kMtp:
      switch (c.mtp) {
        case MtpRule::kFull: return "layers, projection, norms, logits";
        case MtpRule::kLayersOnly: return "layers only";
        case MtpRule::kOff: return "not counted";
      }
      break;
    case ConventionKind::kMtpLayerKind:
      return c.mtp_layer == MtpLayerRule::kAsDescribed ? "as described" : "a copy of the last decoder layer";
    case ConventionKind::kDsaCore:
      switch (c.dsa_core) {
        case DsaCoreRule::kExpandedExact: return "expanded MLA, exact top-k pairs";
        case DsaCoreRule::kAbsorbedExact: return "absorbed MLA, exact top-k pairs";
        case DsaCoreRule::kAbsorbedArea: return "absorbed MLA, Lk - k^2/2 pairs";
        case DsaCoreRule::kExpandedArea: return "expanded MLA, Lk - k^2/2 pairs";
        case DsaCoreRule::kDenseMla: return "dense MLA over causal pairs";
      }
      break;
    case ConventionKind::kDsaIndexer:
      switch (c.indexer) {
        case IndexerRule::kModel: return "by grad mode";
        case IndexerRule::kExecuted: return "by grad mode, head weighting, teacher logits";
        case IndexerRule::kMegatron: return "by grad mode, L^2/2 pairs";
        case IndexerRule::kTrainedFully: return "every layer, trained x3, head weighting, L^2/2 pairs";
        case IndexerRule::kNone: return "not counted";
      }
      break;
    case ConventionKind::kLinearAttentionCore: return c.linear_core ? "counted" : "not counted";
    case ConventionKind::kOutputGate: return c.output_gate ? "counted" : "not counted";
    case ConventionKind::kNorms: return c.norms ? "counted" : "not counted";
    case ConventionKind::kDenseLayersAsMoe: return c.dense_layers_as_moe ? "charged as MoE" : "as described";
  }
  return "";
}

// Sums of forward_flops * executions * (twice the statistic), so that the
// half pairs of L^2/2 stay integers; halved once at the end.
class DoubledSum {
 public:
  explicit DoubledSum(std::int64_t length) : length_(length) {}

  // Adds `terms` with `value` giving each statistic, doubled.
  void add(const Terms& terms, const std::function<std::optional<Int128>(const Statistic&)>& value) {
    for (const Term& term : terms) {
      const std::optional<Int128> doubled = value(term.per);
      const auto cost = checked_mul(term.forward_flops, term.executions);
      const auto product = doubled && cost ? checked_mul(*cost, *doubled) : std::nullopt;
      const auto sum = product ? checked_add(total_, *product / term.divisor) : std::nullopt;
      if (!sum)
        overflow_ = true;
      else
        total_ = *sum;
    }
  }

  std::optional<Int128> exact(const Statistic& statistic) const {
    const auto count = document_count(statistic, length_);
    return count ? checked_mul(*count, 2) : std::nullopt;
  }

  // Twice the causal pairs of one sequence by `rule`.
  std::optional<Int128> causal(PairRule rule) const {
    const Int128 l = length_;
    switch (rule) {
      case PairRule::kExact: return l * (l + 1);
      case PairRule::kHalfSquare: return l * l;
      case PairRule::kAll: return 2 * l * l;
    }
    return std::nullopt;
  }

  // Twice L e - e^2/2, e = min(span, L): a band of `span` keys per query, its
  // triangle taken as e^2/2.
  std::optional<Int128> area(std::int64_t span) const {
    const Int128 l = length_, e = std::min<Int128>(span, l);
    return 2 * l * e - e * e;
  }

  std::int64_t length() const { return length_; }
  bool overflowed() const { return overflow_; }
  Int128 doubled_total() const { return total_; }

 private:
  std::int64_t length_;
  Int128 total_ = 0;
  bool overflow_ = false;
};

bool is_indexer_component(Component component) {
  return component == Component::kIndexerProjections || component == Component::kIndexerScoring ||
         component == Component::kIndexerTeacher || component == Component::kKpoolGate ||
         component == Component::kKpoolPooling;
}

Terms select(const Terms& terms, const std::function<bool(Component)>& keep) {
  Terms kept;
  for (const Term& term : terms) {
    if (keep(term.component)) kept.push_back(term);
  }
  return kept;
}

constexpr Convention kModelMode{Mode::kModel};
constexpr Convention kExecutedMode{Mode::kExecuted};
constexpr Convention kMegatronMode{Mode::kMegatron};

// Projections count the norms (model mode) or the products alone (executed).
Convention projections_mode(const Conventions& c) { return c.norms ? kModelMode : kExecutedMode; }

void add_gqa(const GqaAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  GqaAttention charged = attention;
  charged.output_gate = attention.output_gate && c.output_gate;
  sum.add(gqa_attention_terms(charged, h, kModelMode), [&](const Statistic& s) -> std::optional<Int128> {
    switch (s.kind) {
      case StatisticKind::kCausalPairs: return sum.causal(c.causal);
      case StatisticKind::kChunkedPairs: return c.windows == WindowRule::kExact ? sum.exact(s) : sum.causal(c.causal);
      case StatisticKind::kWindowPairs:
        switch (c.windows) {
          case WindowRule::kExact: return sum.exact(s);
          case WindowRule::kAsCausal: return sum.causal(c.causal);
          case WindowRule::kExactBelowLength:
            return s.pool < sum.length() ? sum.exact(s) : sum.causal(PairRule::kHalfSquare);
          case WindowRule::kArea: return sum.area(s.pool);
        }
        return std::nullopt;
      default: return sum.exact(s);
    }
  });
}

void add_mla(const MlaAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  sum.add(mla_attention_terms(attention, h, projections_mode(c)), [&](const Statistic& s) {
    return s.kind == StatisticKind::kCausalPairs ? sum.causal(c.causal) : sum.exact(s);
  });
}

void add_dsa(const DsaAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  if (c.dsa_core == DsaCoreRule::kDenseMla) {
    add_mla(attention.mla, h, c, sum);
  } else {
    sum.add(select(mla_attention_terms(attention.mla, h, projections_mode(c)),
                   [](Component k) { return k == Component::kAttentionProjections; }),
            [&](const Statistic& s) { return sum.exact(s); });
    const bool expanded = c.dsa_core == DsaCoreRule::kExpandedExact || c.dsa_core == DsaCoreRule::kExpandedArea;
    const bool area = c.dsa_core == DsaCoreRule::kAbsorbedArea || c.dsa_core == DsaCoreRule::kExpandedArea;
    sum.add(select(dsa_attention_terms(attention, h, expanded ? kModelMode : kExecutedMode),
                   [](Component k) { return k == Component::kDsaCoreAttention; }),
            [&](const Statistic& s) {
              return area && s.kind == StatisticKind::kTopkPairs ? sum.area(s.topk) : sum.exact(s);
            });
  }
  // Charging every layer's indexer fully ignores index sharing too.
  const bool every_layer = c.indexer == IndexerRule::kTrainedFully;
  if ((!attention.runs_indexer && !every_layer) || c.indexer == IndexerRule::kNone) return;
  const DsaIndexer& indexer = attention.indexer;
  DsaAttention charged = attention;
  charged.runs_indexer = true;
  Convention mode = kModelMode;
  bool half_square = false;  // causal pairs as L^2/2, top-k pairs as L e - e^2/2
  switch (c.indexer) {
    case IndexerRule::kModel: break;
    case IndexerRule::kExecuted: mode = kExecutedMode; break;
    case IndexerRule::kMegatron: mode = kMegatronMode, half_square = true; break;
    case IndexerRule::kTrainedFully:
      if (sum.length() <= indexer.topk) return;  // the causal mask alone selects every key
      charged.indexer.grad_mode = DsaIndexer::GradMode::kFull;
      mode = kExecutedMode, half_square = true;
      break;
    case IndexerRule::kNone: return;
  }
  const bool with_teacher = c.indexer == IndexerRule::kExecuted;
  sum.add(
      select(dsa_attention_terms(charged, h, mode),
             [&](Component k) { return is_indexer_component(k) && (with_teacher || k != Component::kIndexerTeacher); }),
      [&](const Statistic& s) -> std::optional<Int128> {
        if (!half_square) return sum.exact(s);
        if (s.kind == StatisticKind::kCausalPairs) return sum.causal(PairRule::kHalfSquare);
        if (s.kind == StatisticKind::kTopkPairs) return sum.area(s.topk);
        return sum.exact(s);
      });
}

void add_mixer(const Mixer& mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  if (const auto* gqa = std::get_if<GqaAttention>(&mixer)) return add_gqa(*gqa, h, c, sum);
  if (const auto* mla = std::get_if<MlaAttention>(&mixer)) return add_mla(*mla, h, c, sum);
  if (const auto* dsa = std::get_if<DsaAttention>(&mixer)) return add_dsa(*dsa, h, c, sum);
  if (const auto* gdn = std::get_if<GatedDeltaNet>(&mixer)) {
    Terms terms = gated_delta_net_terms(*gdn, h);
    if (!c.linear_core) terms.front().forward_flops -= kFlopsPerFma * gated_delta_rule_fmas(*gdn);
    return sum.add(terms, [&](const Statistic& s) { return sum.exact(s); });
  }
  sum.add(mixer_terms(mixer, h, projections_mode(c)), [&](const Statistic& s) { return sum.exact(s); });
}

void add_channel_mixer(const ChannelMixer& channel_mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const bool with_router = c.router && std::holds_alternative<Moe>(channel_mixer);
  sum.add(channel_mixer_terms(channel_mixer, h, with_router ? kExecutedMode : kModelMode),
          [&](const Statistic& s) { return sum.exact(s); });
}

const Moe* first_moe(const Model& model) {
  for (const Layer& layer : model.layers) {
    if (layer.channel_mixer) {
      if (const auto* moe = std::get_if<Moe>(&*layer.channel_mixer)) return moe;
    }
  }
  return nullptr;
}

void add_layer(const Layer& layer, const Model& model, const Conventions& c, DoubledSum& sum) {
  if (layer.mixer) add_mixer(*layer.mixer, model.hidden_size, c, sum);
  if (!layer.channel_mixer) return;
  const Moe* moe = c.dense_layers_as_moe ? first_moe(model) : nullptr;
  if (moe && std::holds_alternative<DenseMlp>(*layer.channel_mixer)) {
    add_channel_mixer(*moe, model.hidden_size, c, sum);
  } else {
    add_channel_mixer(*layer.channel_mixer, model.hidden_size, c, sum);
  }
}

// An MTP layer charged as a copy of the last decoder layer's mixer when its
// own mixer is of another kind.
Layer mtp_layer_as_charged(const Layer& layer, const Model& model, const Conventions& c) {
  if (c.mtp_layer == MtpLayerRule::kAsDescribed || model.layers.empty()) return layer;
  const Layer& last = model.layers.back();
  Layer charged = layer;
  if (last.mixer && (!layer.mixer || layer.mixer->index() != last.mixer->index())) charged.mixer = last.mixer;
  return charged;
}

// One sequence's FLOPs under `c`, doubled.
Result<Int128> doubled_flops(const Model& model, const Conventions& c, std::int64_t seq_length) {
  DoubledSum sum(seq_length);
  for (const Layer& layer : model.layers) add_layer(layer, model, c, sum);
  const auto tokens = [&](const Statistic& s) { return sum.exact(s); };
  if (c.mtp != MtpRule::kOff) {
    for (const std::vector<Layer>& depth : model.mtp_depths) {
      for (const Layer& layer : depth) add_layer(mtp_layer_as_charged(layer, model, c), model, c, sum);
      if (c.mtp == MtpRule::kFull) {
        sum.add(mtp_projection_terms(model.hidden_size, projections_mode(c)), tokens);
        sum.add(logits_terms(model.hidden_size, model.vocab_size), tokens);
      }
    }
  }
  sum.add(logits_terms(model.hidden_size, model.vocab_size), tokens);
  if (sum.overflowed()) {
    return Error(ErrorCode::kOverflow,
                 "the FLOPs of one sequence of " + std::to_string(seq_length) + " tokens do not fit in 128 bits");
  }
  return sum.doubled_total();
}

// A framework: its choices, and the models and workloads it cannot express.
struct FrameworkDefinition {
  Framework framework;
  std::string_view name;
  std::string_view title;
  Conventions conventions;
  // Empty when the framework can count the model; else why not.
  std::string (*cannot_express)(const Model& model);
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

std::string megatron_cannot_express(const Model& model) {
  if (model.megatron_path == MegatronPath::kHybrid) {
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
  if (has_dsa_where(model, [](const DsaAttention& a) { return a.indexer.grad_mode == DsaIndexer::GradMode::kFull; })) {
    return "Megatron-Bridge charges an indexer on detached inputs; grad mode full has no counterpart there";
  }
  if (model.megatron_path == MegatronPath::kHybrid) {
    return "a hybrid layer pattern is counted by Megatron-Bridge's hybrid function, which compare does not model";
  }
  return "";
}

std::string maxtext_cannot_express(const Model& model) {
  if (has_kpool(model)) return "MaxText has no KPool";
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
  return "";
}

std::string nemo_rl_cannot_express(const Model& model) {
  constexpr std::string_view kFormulas =
      "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only";
  const bool other_mixer = any_layer(model, [](const Layer& l) {
    return l.mixer && !std::holds_alternative<GqaAttention>(*l.mixer) &&
           !std::holds_alternative<MlaAttention>(*l.mixer);
  });
  if (other_mixer) return std::string(kFormulas) + "; this model has other attention";
  if (has_gqa_where(model, [](const GqaAttention& a) {
        return a.window.has_value() || a.chunk.has_value() || a.output_gate || !a.head_dim;
      })) {
    return std::string(kFormulas) + "; windows, chunks and an output gate have no place in them";
  }
  const auto mlp_gated = [](const Layer& l) {
    if (!l.channel_mixer) return true;
    if (const auto* mlp = std::get_if<DenseMlp>(&*l.channel_mixer)) return mlp->gated;
    return std::get<Moe>(*l.channel_mixer).gated;
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

// The frameworks, as read from their sources (docs/compare.md cites each).
const std::array<FrameworkDefinition, 8>& definitions() {
  static const std::array<FrameworkDefinition, 8> kDefinitions = {{
      {Framework::kTrainflopsModel, "trainflops-model", "trainflops model", kModelConventions, expressible_everywhere},
      {Framework::kTrainflopsExecuted, "trainflops-executed", "trainflops executed",
       Conventions{
           .router = true, .dsa_core = DsaCoreRule::kAbsorbedExact, .indexer = IndexerRule::kExecuted, .norms = false},
       expressible_everywhere},
      {Framework::kMegatronMain, "megatron-lm", "Megatron-LM main",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kAsCausal,
                   .dsa_core = DsaCoreRule::kDenseMla,
                   .indexer = IndexerRule::kNone},
       megatron_main_cannot_express},
      {Framework::kMegatronDsaFix, "megatron-lm-dsa-fix", "Megatron-LM DSA fix",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kAsCausal,
                   .dsa_core = DsaCoreRule::kAbsorbedArea,
                   .indexer = IndexerRule::kMegatron},
       megatron_cannot_express},
      {Framework::kMegatronBridge, "megatron-bridge", "Megatron-Bridge",
       Conventions{.causal = PairRule::kHalfSquare,
                   .windows = WindowRule::kExactBelowLength,
                   .mtp_layer = MtpLayerRule::kLastDecoderLayer,
                   .dsa_core = DsaCoreRule::kAbsorbedExact,
                   .indexer = IndexerRule::kExecuted},
       bridge_cannot_express},
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
       maxtext_cannot_express},
      {Framework::kTorchtitan, "torchtitan", "torchtitan",
       Conventions{.causal = PairRule::kAll,
                   .windows = WindowRule::kAsCausal,
                   .router = true,
                   .mtp = MtpRule::kOff,
                   .linear_core = false},
       torchtitan_cannot_express},
      {Framework::kNemoRl, "nemo-rl", "NeMo-RL",
       Conventions{.causal = PairRule::kHalfSquare, .mtp = MtpRule::kOff, .norms = false, .dense_layers_as_moe = true},
       nemo_rl_cannot_express},
  }};
  return kDefinitions;
}

const FrameworkDefinition& definition(Framework framework) {
  return definitions()[static_cast<std::size_t>(framework)];
}

// Why no framework here can be compared on `model`, or empty: the layer
// kinds whose counts in the frameworks' functions compare does not model.
std::string unmodelled_layer_kind(const Model& model) {
  std::string kind;
  any_layer(model, [&](const Layer& l) {
    const bool unmodelled =
        l.mixer && (std::holds_alternative<Mamba2>(*l.mixer) || std::holds_alternative<GatedDeltaProduct>(*l.mixer) ||
                    std::holds_alternative<CompressedSparseAttention>(*l.mixer));
    if (unmodelled) kind = mixer_kind(*l.mixer);
    return unmodelled;
  });
  if (kind.empty()) return "";
  return "the model has " + kind +
         " layers; compare models the frameworks' counts of GQA, MLA, DSA and gated delta net layers only";
}

Result<FrameworkCount> count_framework(const FrameworkDefinition& framework, const Model& model,
                                       std::int64_t seq_length, std::int64_t sequences, Int128 model_doubled) {
  const bool trainflops =
      framework.framework == Framework::kTrainflopsModel || framework.framework == Framework::kTrainflopsExecuted;
  FrameworkCount count{framework.framework, std::nullopt, trainflops ? "" : unmodelled_layer_kind(model), {}};
  if (count.reason.empty()) count.reason = framework.cannot_express(model);
  if (!count.reason.empty()) return count;
  Conventions choices = kModelConventions;
  Int128 previous = model_doubled;
  for (ConventionKind kind : kAllConventionKinds) {
    take_choice(kind, framework.conventions, choices);
    TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 doubled, doubled_flops(model, choices, seq_length));
    if (doubled != previous) {
      const auto flops = checked_mul((doubled - previous) / 2, sequences);
      if (!flops) return Error(ErrorCode::kOverflow, "the FLOPs of the batch do not fit in 128 bits");
      count.differences.push_back({kind, choice_text(kind, choices), *flops});
    }
    previous = doubled;
  }
  const auto flops = checked_mul(previous / 2, sequences);
  if (!flops) return Error(ErrorCode::kOverflow, "the FLOPs of the batch do not fit in 128 bits");
  count.flops = *flops;
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
  }
  return "";
}

Result<Comparison> compare_frameworks(const Model& model, std::int64_t seq_length, std::int64_t sequences) {
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  if (seq_length < 1) return Error("seq_length = " + std::to_string(seq_length) + ": must be at least 1");
  if (sequences < 1) return Error("sequences = " + std::to_string(sequences) + ": must be at least 1");
  TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 model_doubled, doubled_flops(model, kModelConventions, seq_length));
  Comparison comparison;
  comparison.model = summarize(model);
  comparison.seq_length = seq_length;
  comparison.sequences = sequences;
  const auto model_flops = checked_mul(model_doubled / 2, sequences);
  if (!model_flops) return Error(ErrorCode::kOverflow, "the FLOPs of the batch do not fit in 128 bits");
  comparison.model_flops = *model_flops;
  for (const FrameworkDefinition& framework : definitions()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(FrameworkCount count,
                                count_framework(framework, model, seq_length, sequences, model_doubled));
    comparison.frameworks.push_back(std::move(count));
  }
  return comparison;
}

}  // namespace trainflops
