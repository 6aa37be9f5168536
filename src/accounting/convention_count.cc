#include "accounting/convention_count.h"

#include <algorithm>
#include <functional>
#include <variant>

#include "accounting/layer_terms.h"
#include "base/overloaded.h"
#include "trainflops/parameters.h"
#include "trainflops/statistic.h"

namespace trainflops {
namespace {

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
      if (product) {
        add_doubled(*product / term.divisor);
      } else {
        overflow_ = true;
      }
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

  // Twice L k: `k` keys per query, the causal mask ignored.
  Int128 uncapped(std::int64_t k) const { return 2 * Int128{length_} * k; }

  // Twice L e - e^2/2, e = min(span, L): a band of `span` keys per query, its
  // triangle taken as e^2/2.
  std::optional<Int128> area(std::int64_t span) const {
    const Int128 l = length_, e = std::min<Int128>(span, l);
    return 2 * l * e - e * e;
  }

  // Adds `copies` times a sum add() gave before (a repeated layer's).
  void add_doubled(Int128 doubled, std::int64_t copies = 1) {
    const auto product = checked_mul(doubled, copies);
    const auto sum = product ? checked_add(total_, *product) : std::nullopt;
    if (!sum) {
      overflow_ = true;
    } else {
      total_ = *sum;
    }
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
    const bool expanded = c.dsa_core == DsaCoreRule::kExpandedExact || c.dsa_core == DsaCoreRule::kExpandedArea ||
                          c.dsa_core == DsaCoreRule::kExpandedUncapped;
    const bool area = c.dsa_core == DsaCoreRule::kAbsorbedArea || c.dsa_core == DsaCoreRule::kExpandedArea;
    sum.add(select(dsa_attention_terms(attention, h, expanded ? kModelMode : kExecutedMode),
                   [](Component k) { return k == Component::kDsaCoreAttention; }),
            [&](const Statistic& s) -> std::optional<Int128> {
              if (s.kind != StatisticKind::kTopkPairs) return sum.exact(s);
              if (area) return sum.area(s.topk);
              if (c.dsa_core == DsaCoreRule::kExpandedUncapped) return sum.uncapped(s.topk);
              return sum.exact(s);
            });
  }
  // Charging every layer's indexer fully ignores index sharing too.
  const bool every_layer = c.indexer == IndexerRule::kTrainedFully || c.indexer == IndexerRule::kEveryLayerAllPairs;
  if ((!attention.runs_indexer && !every_layer) || c.indexer == IndexerRule::kNone) return;
  const DsaIndexer& indexer = attention.indexer;
  DsaAttention charged = attention;
  charged.runs_indexer = true;
  Convention mode = kModelMode;
  bool half_square = false;  // causal pairs as L^2/2, top-k pairs as L e - e^2/2
  bool all_pairs = false;    // causal pairs as L^2
  switch (c.indexer) {
    case IndexerRule::kModel: break;
    case IndexerRule::kExecuted: mode = kExecutedMode; break;
    case IndexerRule::kMegatron: mode = kMegatronMode, half_square = true; break;
    case IndexerRule::kTrainedFully:
      if (sum.length() <= *indexer.topk) return;  // the causal mask alone selects every key
      charged.indexer.grad_mode = DsaIndexer::GradMode::kFull;
      mode = kExecutedMode, half_square = true;
      break;
    case IndexerRule::kEveryLayerAllPairs:
      charged.indexer.grad_mode = DsaIndexer::GradMode::kFull;
      all_pairs = true;
      break;
    case IndexerRule::kNone: return;
  }
  const bool with_teacher = c.indexer == IndexerRule::kExecuted;
  sum.add(
      select(dsa_attention_terms(charged, h, mode),
             [&](Component k) { return is_indexer_component(k) && (with_teacher || k != Component::kIndexerTeacher); }),
      [&](const Statistic& s) -> std::optional<Int128> {
        if (all_pairs && s.kind == StatisticKind::kCausalPairs) return sum.causal(PairRule::kAll);
        if (!half_square) return sum.exact(s);
        if (s.kind == StatisticKind::kCausalPairs) return sum.causal(PairRule::kHalfSquare);
        if (s.kind == StatisticKind::kTopkPairs) return sum.area(s.topk);
        return sum.exact(s);
      });
}

void add_mixer(const Mixer& mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  std::visit(
      Overloaded{
          [&](const GqaAttention& a) { add_gqa(a, h, c, sum); },
          [&](const MlaAttention& a) { add_mla(a, h, c, sum); },
          [&](const DsaAttention& a) { add_dsa(a, h, c, sum); },
          [&](const GatedDeltaNet& g) {
            Terms terms = gated_delta_net_terms(g, h);
            if (!c.linear_core) terms.front().forward_flops -= kFlopsPerFma * gated_delta_rule_fmas(g);
            sum.add(terms, exact);
          },
          // No framework's choice changes these but whether norms count.
          [&](const OneOf<CompressedSparseAttention, Mamba2, GatedDeltaProduct, BlockSparseAttention> auto& other) {
            sum.add(terms_of(other, h, projections_mode(c)), exact);
          },
      },
      mixer);
}

void add_channel_mixer(const ChannelMixer& channel_mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  // Megatron mode charges quick-GeGLU as ungated.
  const Convention charged = c.quick_geglu_as_ungated ? kMegatronMode : kModelMode;
  std::visit(Overloaded{
                 [&](const DenseMlp& mlp) { sum.add(terms_of(mlp, h, charged), exact); },
                 [&](const Moe& moe) {
                   Terms terms = terms_of(moe, h, charged);
                   if (c.router) {  // as executed mode adds it
                     for (const Term& term : terms_of(moe, h, kExecutedMode)) {
                       if (term.component == Component::kMoeRouter) terms.push_back(term);
                     }
                   }
                   sum.add(terms, exact);
                 },
             },
             channel_mixer);
}

const Moe* first_moe(const Model& model) {
  for (const Layer& layer : model.layers) {
    if (layer.channel_mixer) {
      if (const auto* moe = std::get_if<Moe>(&*layer.channel_mixer)) return moe;
    }
  }
  return nullptr;
}

// The MLA LoRA norms of `mixer` (q_lora_rank + kv_lora_rank), which the
// `norms` choice charges as products; 0 for other mixers.
Int128 lora_norms(const Mixer& mixer) {
  const MlaAttention* mla = std::get_if<MlaAttention>(&mixer);
  if (const auto* dsa = std::get_if<DsaAttention>(&mixer)) mla = &dsa->mla;
  if (!mla) return 0;
  return Int128{mla->kv_lora_rank} + mla->q_lora_rank.value_or(0);
}

// Adds 6 per token for each of the layer's small parameters (Conventions::small_parameters).
void add_small_parameters(const Layer& layer, const Model& model, DoubledSum& sum) {
  const Result<std::vector<KindParameters>> kinds = layer_parameters(layer, model.hidden_size, model.parameter_layout);
  if (!kinds.ok()) return;  // a valid model's MoE layers have num_experts: compare checked it
  Int128 small = layer.mixer ? -lora_norms(*layer.mixer) : 0;
  for (const KindParameters& part : kinds.value()) {
    if (part.kind == ParameterKind::kNorm || part.kind == ParameterKind::kBias ||
        part.kind == ParameterKind::kPerHeadScalar || part.kind == ParameterKind::kGate) {
      small += part.count.active;
    }
  }
  sum.add({trained_gemm(Component::kMlp, kTokens, small)}, [&](const Statistic& s) { return sum.exact(s); });
}

// `moe`: the MoE layer dense layers are charged as, or null.
void add_layer(const Layer& layer, const Model& model, const Moe* moe, const Conventions& c, DoubledSum& sum) {
  if (c.small_parameters) add_small_parameters(layer, model, sum);
  if (layer.mixer) add_mixer(*layer.mixer, model.hidden_size, c, sum);
  if (!layer.channel_mixer) return;
  if (moe && std::holds_alternative<DenseMlp>(*layer.channel_mixer)) {
    add_channel_mixer(*moe, model.hidden_size, c, sum);
  } else {
    add_channel_mixer(*layer.channel_mixer, model.hidden_size, c, sum);
  }
}

// Adds `layers`, each distinct layer counted once and multiplied by its
// repeats: the cost is that of the distinct layers and runs.
void add_layers(const LayerStack& layers, const Model& model, const Moe* moe, const Conventions& c, DoubledSum& sum,
                const std::function<Layer(const Layer&)>& as_charged) {
  std::vector<std::optional<Int128>> per_layer(layers.distinct().size());
  for (const LayerStack::Run& run : layers.runs()) {
    std::optional<Int128>& flops = per_layer[run.layer];
    std::int64_t copies = run.count;
    if (!flops) {
      const Int128 before = sum.doubled_total();
      add_layer(as_charged(layers.distinct()[run.layer]), model, moe, c, sum);
      flops = sum.doubled_total() - before;
      --copies;
    }
    sum.add_doubled(*flops, copies);
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

}  // namespace

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
    case ConventionKind::kQuickGeglu: to.quick_geglu_as_ungated = from.quick_geglu_as_ungated; return;
    case ConventionKind::kSmallParameters: to.small_parameters = from.small_parameters; return;
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
        case DsaCoreRule::kExpandedUncapped: return "expanded MLA, L k pairs";
      }
      break;
    case ConventionKind::kDsaIndexer:
      switch (c.indexer) {
        case IndexerRule::kModel: return "by grad mode";
        case IndexerRule::kExecuted: return "by grad mode, head weighting, teacher logits";
        case IndexerRule::kMegatron: return "by grad mode, L^2/2 pairs";
        case IndexerRule::kTrainedFully: return "every layer, trained x3, head weighting, L^2/2 pairs";
        case IndexerRule::kEveryLayerAllPairs: return "every layer, trained x3, all L^2 pairs";
        case IndexerRule::kNone: return "not counted";
      }
      break;
    case ConventionKind::kLinearAttentionCore: return c.linear_core ? "counted" : "not counted";
    case ConventionKind::kOutputGate: return c.output_gate ? "counted" : "not counted";
    case ConventionKind::kNorms: return c.norms ? "counted" : "not counted";
    case ConventionKind::kDenseLayersAsMoe: return c.dense_layers_as_moe ? "charged as MoE" : "as described";
    case ConventionKind::kQuickGeglu: return c.quick_geglu_as_ungated ? "charged as ungated" : "charged as gated";
    case ConventionKind::kSmallParameters: return c.small_parameters ? "6 per parameter per token" : "not counted";
  }
  return "";
}

Result<Int128> doubled_flops(const Model& model, const Conventions& c, std::int64_t seq_length) {
  DoubledSum sum(seq_length);
  const Moe* moe = c.dense_layers_as_moe ? first_moe(model) : nullptr;
  add_layers(model.layers, model, moe, c, sum, [](const Layer& layer) { return layer; });
  const auto tokens = [&](const Statistic& s) { return sum.exact(s); };
  if (c.mtp != MtpRule::kOff) {
    for (const LayerStack& depth : model.mtp_depths) {
      add_layers(depth, model, moe, c, sum, [&](const Layer& layer) { return mtp_layer_as_charged(layer, model, c); });
      if (c.mtp == MtpRule::kFull) {
        sum.add({mtp_projection_term(model.hidden_size, projections_mode(c))}, tokens);
        sum.add({logits_term(model.hidden_size, model.vocab_size)}, tokens);
      }
    }
  }
  sum.add({logits_term(model.hidden_size, model.vocab_size)}, tokens);
  if (c.small_parameters) {  // the final norm
    const bool layer_norm = model.parameter_layout.normalization == ParameterLayout::Normalization::kLayerNorm;
    sum.add({trained_gemm(Component::kLogits, kTokens, Int128{model.hidden_size} * (layer_norm ? 2 : 1))}, tokens);
  }
  if (sum.overflowed()) {
    return Error(ErrorCode::kOverflow,
                 "the FLOPs of one sequence of " + std::to_string(seq_length) + " tokens do not fit in 128 bits");
  }
  return sum.doubled_total();
}

}  // namespace trainflops
