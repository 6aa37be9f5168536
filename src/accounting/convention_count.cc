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

// A statistic's value, doubled, as a fraction: some frameworks charge L^2/2r
// compressed entries or other fractional counts (denominator > 0).
struct Doubled {
  Doubled(Int128 value) : numerator(value) {}  // NOLINT(google-explicit-constructor): most values are whole
  Doubled(Int128 n, Int128 d) : numerator(n), denominator(d) {}
  Int128 numerator;
  Int128 denominator = 1;
};

// Sums of forward_flops * executions * (twice the statistic), so that the
// half pairs of L^2/2 stay integers; halved once at the end. A fractional
// statistic's product is rounded to the nearest unit.
class DoubledSum {
 public:
  explicit DoubledSum(std::int64_t length) : length_(length) {}

  // Adds `terms` with `value` giving each statistic, doubled.
  void add(const Terms& terms, const std::function<std::optional<Doubled>(const Statistic&)>& value) {
    for (const Term& term : terms) {
      const std::optional<Doubled> doubled = value(term.per);
      const auto cost = checked_mul(term.forward_flops, term.executions);
      const auto product = doubled && cost ? checked_mul(*cost, doubled->numerator) : std::nullopt;
      if (product) {
        // A fractional statistic's share rounded to the nearest unit.
        const Int128 d = doubled->denominator;
        add_doubled((*product / term.divisor + d / 2) / d);
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

  // Twice w(w+1)/2 + (L - w) w: a window's triangle and band, w not capped at L.
  Int128 uncapped_band(std::int64_t window) const {
    const Int128 l = length_, w = window;
    return w * (w + 1) + 2 * (l - w) * w;
  }

  // Twice L w - w^2/2: a window's band with its triangle taken as w^2/2, w not capped at L.
  Int128 uncapped_area(std::int64_t window) const {
    const Int128 l = length_, w = window;
    return 2 * l * w - w * w;
  }

  // Twice L^2/2r: every query sees L/r entries of an r-times compressed cache, halved for causality.
  Doubled half_square_over(std::int64_t ratio) const { return {Int128{length_} * length_, ratio}; }

  // Twice L e - r e^2/2, e = min(k, floor(L/r)): Megatron-LM's selected compressed entries.
  Int128 selected_area(std::int64_t topk, std::int64_t ratio) const {
    const Int128 l = length_, e = std::min<Int128>(topk, l / ratio);
    return 2 * l * e - ratio * e * e;
  }

  // Twice L^2/r (e/T - e^2/2T^2), T = floor(L/r), e = min(k, T): MaxText's
  // selected compressed entries (its indexer mask ratio over a T x T grid).
  Doubled selected_ratio(std::int64_t topk, std::int64_t ratio) const {
    const Int128 l = length_, t = l / ratio, e = std::min<Int128>(topk, t);
    if (t == 0) return 0;
    return {l * l * e * (2 * t - e), ratio * t * t};
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
  charged.head_gate = attention.head_gate && c.head_gate;
  // Megatron mode's count of a layer without a head width is the query width
  // h and the key/value width g h/n, as a fraction.
  if (c.attention_width_from_hidden) charged.head_dim.reset();
  const Convention widths = c.attention_width_from_hidden ? kMegatronMode : kModelMode;
  sum.add(gqa_attention_terms(charged, h, widths), [&](const Statistic& s) -> std::optional<Int128> {
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
          case WindowRule::kUncappedBand: return sum.uncapped_band(s.pool);
        }
        return std::nullopt;
      default: return sum.exact(s);
    }
  });
}

void add_mla(const MlaAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  MlaAttention charged = attention;
  charged.output_gate = attention.output_gate && c.mla_output_gate;
  sum.add(mla_attention_terms(charged, h, projections_mode(c)), [&](const Statistic& s) {
    return s.kind == StatisticKind::kCausalPairs ? sum.causal(c.causal) : sum.exact(s);
  });
}

void add_dsa(const DsaAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  if (c.dsa_core == DsaCoreRule::kDenseMla) {
    add_mla(attention.mla, h, c, sum);
  } else {
    MlaAttention charged = attention.mla;
    charged.output_gate = attention.mla.output_gate && c.mla_output_gate;
    sum.add(select(mla_attention_terms(charged, h, projections_mode(c)),
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
    case IndexerRule::kMegatron:
      charged.indexer.megatron_charges_dense_loss = true;
      mode = kMegatronMode, half_square = true;
      break;
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

// DeepSeek-V4 attention: its projections, compressors and indexer
// projections as model mode counts them (norms by `c.norms`), its window,
// compressed and selected entries by `c.compressed_pairs`, its indexer's
// scoring by `c.compressed_indexer`.
void add_compressed(const CompressedSparseAttention& attention, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const auto pairs = [&](const Statistic& s) -> std::optional<Doubled> {
    switch (c.compressed_pairs) {
      case CompressedPairsRule::kExact: break;
      case CompressedPairsRule::kMegatron:
        if (s.kind == StatisticKind::kWindowPairs) return 2 * Int128{sum.length()} * s.pool;
        if (s.kind == StatisticKind::kCompressedEntries) return sum.half_square_over(s.pool);
        if (s.kind == StatisticKind::kSelectedCompressed) return sum.selected_area(s.topk, s.pool);
        break;
      case CompressedPairsRule::kMaxText:
        if (s.kind == StatisticKind::kWindowPairs) return sum.uncapped_area(s.pool);
        if (s.kind == StatisticKind::kCompressedEntries) return sum.half_square_over(s.pool);
        if (s.kind == StatisticKind::kSelectedCompressed) return sum.selected_ratio(s.topk, s.pool);
        break;
    }
    return sum.exact(s);
  };
  const auto scoring = [&](const Statistic& s) -> std::optional<Doubled> {
    switch (c.compressed_indexer) {
      case CompressedIndexerRule::kExact: return sum.exact(s);
      case CompressedIndexerRule::kMegatron: return sum.half_square_over(s.pool);
      case CompressedIndexerRule::kMaxText: return Doubled{Int128{sum.length()} * sum.length(), 2 * Int128{s.pool}};
    }
    return std::nullopt;
  };
  const Terms terms = compressed_sparse_attention_terms(attention, h, projections_mode(c));
  sum.add(select(terms, [](Component k) { return k != Component::kIndexerScoring; }), pairs);
  const Terms indexer = select(terms, [](Component k) { return k == Component::kIndexerScoring; });
  sum.add(indexer, scoring);
  if (c.compressed_indexer == CompressedIndexerRule::kMaxText && !indexer.empty()) {
    // The head weighting: one weight per indexer head and entry, over L^2/2r entries.
    sum.add({trained_gemm(Component::kIndexerScoring, indexer.front().per, attention.indexer_num_heads)},
            [&](const Statistic& s) { return sum.half_square_over(s.pool); });
  }
}

// DeepSeek-V4.1: the frameworks' choices are whether the norms count, how the
// indexer is charged (executed: with the heads' weighting, every entry) and
// whether the candidate consumers score and select among the candidates'
// entries alone.
void add_shared_compressed(const SharedCompressedAttention& attention, std::int64_t h, const Conventions& c,
                           DoubledSum& sum) {
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  SharedCompressedAttention charged = attention;
  if (!c.candidate_blocks) charged.candidate_role = SharedCompressedAttention::CandidateRole::kNone;
  sum.add(select(shared_compressed_attention_terms(charged, h, projections_mode(c)),
                 [](Component k) { return !is_indexer_component(k); }),
          exact);
  if (c.indexer == IndexerRule::kNone) return;
  sum.add(select(shared_compressed_attention_terms(charged, h,
                                                   c.indexer == IndexerRule::kExecuted ? kExecutedMode : kModelMode),
                 is_indexer_component),
          exact);
}

// Qwen3.8's QSA: whether the output gate counts and whether the indexer does
// (as described, forward only, or not at all), or dense grouped-query
// attention without the indexer.
void add_compressed_block_sparse(const CompressedBlockSparseAttention& attention, std::int64_t h,
                                 const Conventions& c, DoubledSum& sum) {
  if (c.block_sparse_as_dense) {
    add_gqa(attention.attention, h, c, sum);
    return;
  }
  CompressedBlockSparseAttention charged = attention;
  charged.attention.output_gate = attention.attention.output_gate && c.output_gate;
  charged.attention.head_gate = attention.attention.head_gate && c.head_gate;
  sum.add(select(compressed_block_sparse_attention_terms(charged, h, kModelMode),
                 [&](Component k) { return c.indexer != IndexerRule::kNone || !is_indexer_component(k); }),
          [&](const Statistic& s) { return sum.exact(s); });
}

void add_mixer(const Mixer& mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  std::visit(Overloaded{
                 [&](const GqaAttention& a) { add_gqa(a, h, c, sum); },
                 [&](const MlaAttention& a) { add_mla(a, h, c, sum); },
                 [&](const DsaAttention& a) { add_dsa(a, h, c, sum); },
                 [&](const CompressedSparseAttention& a) { add_compressed(a, h, c, sum); },
                 [&](const SharedCompressedAttention& a) { add_shared_compressed(a, h, c, sum); },
                 [&](const CompressedBlockSparseAttention& a) { add_compressed_block_sparse(a, h, c, sum); },
                 [&](const GatedDeltaNet& g) {
                   const bool chunked = c.linear_core && c.chunked_delta_rule;
                   Terms terms = gated_delta_net_terms(g, h, chunked ? kExecutedMode : kModelMode);
                   if (!c.linear_core) terms.front().forward_flops -= kFlopsPerFma * gated_delta_rule_fmas(g);
                   sum.add(terms, exact);
                 },
                 [&](const KimiDeltaAttention& k) {
                   // Kimi K3's gates, as Megatron-Bridge charges every layer: a
                   // forget gate of rank head_dim and a full-rank output gate.
                   KimiDeltaAttention charged = k;
                   if (c.kda_gates_as_k3) {
                     charged.forget_gate_rank = k.head_dim;
                     charged.output_gate_rank.reset();
                   }
                   Terms terms = kimi_delta_attention_terms(charged, h, kModelMode);
                   if (!c.linear_core || c.chunked_delta_rule) {
                     terms.front().forward_flops -= kFlopsPerFma * kimi_delta_rule_fmas(k);
                   }
                   if (c.linear_core && c.chunked_delta_rule) {
                     const Terms chunked = kimi_chunked_delta_rule_terms(k);
                     terms.insert(terms.end(), chunked.begin(), chunked.end());
                   }
                   sum.add(terms, exact);
                 },
                 // Megatron mode's Mamba-2 is 2h wide.
                 [&](const Mamba2& m) {
                   sum.add(mamba2_terms(m, h, c.mamba_width_doubled_hidden ? kMegatronMode : kModelMode), exact);
                 },
                 [&](const BlockSparseAttention& a) {
                   if (c.block_sparse_as_dense) {
                     add_gqa(a.attention, h, c, sum);
                   } else {
                     sum.add(terms_of(a, h, projections_mode(c)), exact);
                   }
                 },
                 [&](const DsaGqaAttention& a) {
                   switch (c.dsa_gqa) {
                     case DsaGqaRule::kModel: sum.add(terms_of(a, h, projections_mode(c)), exact); return;
                     case DsaGqaRule::kDenseGqa: add_gqa(a.attention, h, c, sum); return;
                     case DsaGqaRule::kNotCounted: return;
                   }
                 },
                 // A gated delta product has no norm terms: only its delta rule's form changes.
                 [&](const GatedDeltaProduct& g) {
                   sum.add(gated_delta_product_terms(g, h, c.chunked_delta_rule ? kExecutedMode : kModelMode), exact);
                 },
             },
             mixer);
}

void add_channel_mixer(const ChannelMixer& channel_mixer, std::int64_t h, const Conventions& c, DoubledSum& sum) {
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  // Megatron mode charges quick-GeGLU as ungated.
  const Convention charged = c.quick_geglu_as_ungated ? kMegatronMode : kModelMode;
  std::visit(Overloaded{
                 [&](const DenseMlp& described) {
                   DenseMlp mlp = described;
                   mlp.gated = described.gated || c.ungated_mlp_as_gated;
                   sum.add(terms_of(mlp, h, charged), exact);
                 },
                 [&](const Moe& described) {
                   Moe moe = described;
                   if (!c.zero_experts_free && moe.zero_experts) moe.real_experts_per_token = moe.topk;
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
  const auto exact = [&](const Statistic& s) { return sum.exact(s); };
  if (layer.ngram_memory && c.ngram_memory != NgramMemoryRule::kNone) {
    Terms terms = terms_of(*layer.ngram_memory, model.hidden_size, kModelMode);
    if (c.ngram_memory == NgramMemoryRule::kNoGates) {
      terms.front().forward_flops -= kFlopsPerFma * ngram_memory_gate_fmas(*layer.ngram_memory, model.hidden_size);
    }
    sum.add(terms, exact);
  }
  if (model.hyper_connections && c.hyper_connections != HyperConnectionRule::kNotCounted) {
    const std::int64_t sublayers = (layer.mixer ? 1 : 0) + (layer.channel_mixer ? 1 : 0);
    const HyperConnections& hc = *model.hyper_connections;
    if (c.hyper_connections == HyperConnectionRule::kProjections ||
        c.hyper_connections == HyperConnectionRule::kLayerProjections) {
      sum.add({trained_gemm(Component::kHyperConnections, kTokens,
                            sublayers * hyper_connection_weights(hc, model.hidden_size, false))},
              exact);
    } else {
      Terms terms = hyper_connection_terms(hc, sublayers, model.hidden_size, kModelMode);
      if (c.hyper_connections == HyperConnectionRule::kMaxText && !terms.empty()) {
        // The write adds the output to each stream: n h products, one FLOP each.
        terms.front().forward_flops -= Int128{sublayers} * hc.streams * model.hidden_size;
      }
      sum.add(terms, exact);
    }
  }
  if (layer.per_layer_embedding && c.per_layer_embedding != PerLayerEmbeddingRule::kNone) {
    Terms terms = terms_of(*layer.per_layer_embedding, model.hidden_size, kModelMode);
    if (c.per_layer_embedding == PerLayerEmbeddingRule::kProjections) {
      terms.front().forward_flops -= kFlopsPerFma * per_layer_embedding_product_fmas(*layer.per_layer_embedding);
    }
    sum.add(terms, exact);
  }
  if (layer.mixer) add_mixer(*layer.mixer, model.hidden_size, c, sum);
  if (!layer.channel_mixer) return;
  const auto* experts = std::get_if<Moe>(&*layer.channel_mixer);
  if (c.shared_expert_gate && model.parameter_layout.shared_expert_gate && experts &&
      experts->shared_expert_ffn_hidden_size) {
    sum.add({trained_gemm(Component::kMoeShared, kTokens, model.hidden_size)}, exact);
  }
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
// own mixer is of another kind, or as the last decoder layer whole.
Layer mtp_layer_as_charged(const Layer& layer, const Model& model, const Conventions& c) {
  if (c.mtp_layer == MtpLayerRule::kAsDescribed || model.layers.empty()) return layer;
  const Layer& last = model.layers.back();
  if (c.mtp_layer == MtpLayerRule::kLastDecoderLayerWhole) return last;
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
    case ConventionKind::kCompressedPairs: to.compressed_pairs = from.compressed_pairs; return;
    case ConventionKind::kCompressedIndexer: to.compressed_indexer = from.compressed_indexer; return;
    case ConventionKind::kLinearAttentionCore: to.linear_core = from.linear_core; return;
    case ConventionKind::kMambaWidth: to.mamba_width_doubled_hidden = from.mamba_width_doubled_hidden; return;
    case ConventionKind::kAttentionWidth: to.attention_width_from_hidden = from.attention_width_from_hidden; return;
    case ConventionKind::kUngatedMlp: to.ungated_mlp_as_gated = from.ungated_mlp_as_gated; return;
    case ConventionKind::kOutputGate: to.output_gate = from.output_gate; return;
    case ConventionKind::kHeadGate: to.head_gate = from.head_gate; return;
    case ConventionKind::kMlaOutputGate: to.mla_output_gate = from.mla_output_gate; return;
    case ConventionKind::kBlockSparse: to.block_sparse_as_dense = from.block_sparse_as_dense; return;
    case ConventionKind::kDsaGqa: to.dsa_gqa = from.dsa_gqa; return;
    case ConventionKind::kKdaGates: to.kda_gates_as_k3 = from.kda_gates_as_k3; return;
    case ConventionKind::kDeltaRule: to.chunked_delta_rule = from.chunked_delta_rule; return;
    case ConventionKind::kNorms: to.norms = from.norms; return;
    case ConventionKind::kDenseLayersAsMoe: to.dense_layers_as_moe = from.dense_layers_as_moe; return;
    case ConventionKind::kQuickGeglu: to.quick_geglu_as_ungated = from.quick_geglu_as_ungated; return;
    case ConventionKind::kSmallParameters: to.small_parameters = from.small_parameters; return;
    case ConventionKind::kHyperConnections: to.hyper_connections = from.hyper_connections; return;
    case ConventionKind::kNgramMemory: to.ngram_memory = from.ngram_memory; return;
    case ConventionKind::kCandidateBlocks: to.candidate_blocks = from.candidate_blocks; return;
    case ConventionKind::kSharedExpertGate: to.shared_expert_gate = from.shared_expert_gate; return;
    case ConventionKind::kPerLayerEmbedding: to.per_layer_embedding = from.per_layer_embedding; return;
    case ConventionKind::kAttentionResiduals: to.attention_residuals = from.attention_residuals; return;
    case ConventionKind::kZeroExperts: to.zero_experts_free = from.zero_experts_free; return;
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
        case WindowRule::kUncappedBand: return "w(w+1)/2 + (L-w)w pairs";
      }
      break;
    case ConventionKind::kMoeRouter: return c.router ? "counted" : "not counted";
    case ConventionKind::kMtp:
      switch (c.mtp) {
        case MtpRule::kFull: return "layers, projection, norms, logits";
        case MtpRule::kLayersOnly: return "layers only";
        case MtpRule::kNoProjection: return "layers, logits (no projection)";
        case MtpRule::kOff: return "not counted";
      }
      break;
    case ConventionKind::kMtpLayerKind:
      switch (c.mtp_layer) {
        case MtpLayerRule::kAsDescribed: return "as described";
        case MtpLayerRule::kLastDecoderLayer: return "a copy of the last decoder layer";
        case MtpLayerRule::kLastDecoderLayerWhole: return "the last decoder layer, its MLP included";
      }
      break;
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
        case IndexerRule::kMegatron: return "by grad mode (a sparse loss as the dense one), L^2/2 pairs";
        case IndexerRule::kTrainedFully: return "every layer, trained x3, head weighting, L^2/2 pairs";
        case IndexerRule::kEveryLayerAllPairs: return "every layer, trained x3, all L^2 pairs";
        case IndexerRule::kNone: return "not counted";
      }
      break;
    case ConventionKind::kCompressedPairs:
      switch (c.compressed_pairs) {
        case CompressedPairsRule::kExact: return "exact entries";
        case CompressedPairsRule::kMegatron: return "window Lw, HCA L^2/256, CSA Le - 2e^2";
        case CompressedPairsRule::kMaxText: return "window Lw - w^2/2, HCA L^2/256, mask ratio";
      }
      break;
    case ConventionKind::kCompressedIndexer:
      switch (c.compressed_indexer) {
        case CompressedIndexerRule::kExact: return "exact entries";
        case CompressedIndexerRule::kMegatron: return "L^2/8 entries";
        case CompressedIndexerRule::kMaxText: return "half scoring, head weighting, L^2/8";
      }
      break;
    case ConventionKind::kLinearAttentionCore: return c.linear_core ? "counted" : "not counted";
    case ConventionKind::kMambaWidth: return c.mamba_width_doubled_hidden ? "2h" : "heads x head width";
    case ConventionKind::kAttentionWidth:
      return c.attention_width_from_hidden ? "query h, keys and values g h/n" : "heads x head width";
    case ConventionKind::kUngatedMlp: return c.ungated_mlp_as_gated ? "charged as gated" : "as described";
    case ConventionKind::kOutputGate: return c.output_gate ? "counted" : "not counted";
    case ConventionKind::kHeadGate: return c.head_gate ? "counted" : "not counted";
    case ConventionKind::kMlaOutputGate: return c.mla_output_gate ? "counted" : "not counted";
    case ConventionKind::kBlockSparse:
      return c.block_sparse_as_dense ? "dense GQA over causal pairs, no indexer"
                                     : "selected blocks, indexer forward only";
    case ConventionKind::kDsaGqa:
      switch (c.dsa_gqa) {
        case DsaGqaRule::kModel: return "top-k pairs, indexer by grad mode";
        case DsaGqaRule::kDenseGqa: return "dense GQA over causal pairs, no indexer";
        case DsaGqaRule::kNotCounted: return "not counted";
      }
      break;
    case ConventionKind::kKdaGates: return c.kda_gates_as_k3 ? "as Kimi K3's" : "as described";
    case ConventionKind::kDeltaRule: return c.chunked_delta_rule ? "chunked" : "recurrent";
    case ConventionKind::kNorms: return c.norms ? "counted" : "not counted";
    case ConventionKind::kDenseLayersAsMoe: return c.dense_layers_as_moe ? "charged as MoE" : "as described";
    case ConventionKind::kQuickGeglu: return c.quick_geglu_as_ungated ? "charged as ungated" : "charged as gated";
    case ConventionKind::kSmallParameters: return c.small_parameters ? "6 per parameter per token" : "not counted";
    case ConventionKind::kHyperConnections:
      switch (c.hyper_connections) {
        case HyperConnectionRule::kCounted: return "counted";
        case HyperConnectionRule::kNotCounted: return "not counted";
        case HyperConnectionRule::kMaxText: return "write 1 FLOP per product, no head read";
        case HyperConnectionRule::kProjections: return "projections only";
        case HyperConnectionRule::kLayerProjections: return "the layers' projections only";
      }
      break;
    case ConventionKind::kNgramMemory:
      switch (c.ngram_memory) {
        case NgramMemoryRule::kModel: return "counted";
        case NgramMemoryRule::kNoGates: return "projections and convolution only";
        case NgramMemoryRule::kNone: return "not counted";
      }
      break;
    case ConventionKind::kCandidateBlocks: return c.candidate_blocks ? "candidate entries" : "every entry";
    case ConventionKind::kSharedExpertGate: return c.shared_expert_gate ? "counted" : "not counted";
    case ConventionKind::kPerLayerEmbedding:
      switch (c.per_layer_embedding) {
        case PerLayerEmbeddingRule::kModel: return "counted";
        case PerLayerEmbeddingRule::kProjections: return "projections only";
        case PerLayerEmbeddingRule::kNone: return "not counted";
      }
      break;
    case ConventionKind::kAttentionResiduals: return c.attention_residuals ? "counted" : "not counted";
    case ConventionKind::kZeroExperts: return c.zero_experts_free ? "free" : "charged as real experts";
  }
  return "";
}

Result<Int128> doubled_flops(const Model& model, const Conventions& c, std::int64_t seq_length) {
  DoubledSum sum(seq_length);
  const Moe* moe = c.dense_layers_as_moe ? first_moe(model) : nullptr;
  add_layers(model.layers, model, moe, c, sum, [](const Layer& layer) { return layer; });
  const auto tokens = [&](const Statistic& s) { return sum.exact(s); };
  if (model.attention_residuals && c.attention_residuals) {
    sum.add(attention_residual_terms(*model.attention_residuals, static_cast<std::int64_t>(model.layers.size()),
                                     model.hidden_size, projections_mode(c)),
            tokens);
  }
  // Each output head's final read of the residual streams.
  const auto add_head = [&] {
    if (!model.hyper_connections) return;
    const HyperConnections& hc = *model.hyper_connections;
    switch (c.hyper_connections) {
      case HyperConnectionRule::kCounted: sum.add({hyper_connection_head_term(hc, model.hidden_size)}, tokens); return;
      case HyperConnectionRule::kProjections:
        sum.add({trained_gemm(Component::kHyperConnections, kTokens,
                              hyper_connection_weights(hc, model.hidden_size, true))},
                tokens);
        return;
      case HyperConnectionRule::kMaxText:
      case HyperConnectionRule::kLayerProjections:
      case HyperConnectionRule::kNotCounted: return;
    }
  };
  if (c.mtp != MtpRule::kOff) {
    for (const LayerStack& depth : model.mtp_depths) {
      add_layers(depth, model, moe, c, sum, [&](const Layer& layer) { return mtp_layer_as_charged(layer, model, c); });
      if (c.mtp == MtpRule::kFull) sum.add({mtp_projection_term(model.hidden_size, projections_mode(c))}, tokens);
      if (c.mtp == MtpRule::kFull || c.mtp == MtpRule::kNoProjection) {
        sum.add({logits_term(model.hidden_size, model.vocab_size)}, tokens);
        add_head();
      }
    }
  }
  sum.add({logits_term(model.hidden_size, model.vocab_size)}, tokens);
  if (c.small_parameters) {  // the final norm
    const bool layer_norm = model.parameter_layout.normalization == ParameterLayout::Normalization::kLayerNorm;
    sum.add({trained_gemm(Component::kLogits, kTokens, Int128{model.hidden_size} * (layer_norm ? 2 : 1))}, tokens);
  }
  add_head();
  if (sum.overflowed()) {
    return Error(ErrorCode::kOverflow,
                 "the FLOPs of one sequence of " + std::to_string(seq_length) + " tokens do not fit in 128 bits");
  }
  return sum.doubled_total();
}

}  // namespace trainflops
