#include "trainflops/count.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <mutex>

#include "accounting/counter_internals.h"
#include "accounting/layer_terms.h"
#include "accounting/statistic_sums.h"
#include "model/workload_offsets.h"
#include "trainflops/layer_flops.h"
#include "trainflops/parameters.h"

namespace trainflops {

// Sums of per-document statistics stay below 2^126; larger ones are counted
// one by one, where checked arithmetic names the overflow.
constexpr int kDocumentSumBits = 126;

namespace {

struct Rows {
  // A distinct layer, an MTP projection or the logits: its terms, built once.
  struct Part {
    std::string kind;       // layer_kind(), or "projection" / "logits"
    std::size_t first = 0;  // its terms: terms[first, first + count)
    std::size_t count = 0;
    std::int64_t uses = 0;  // the rows that show it
  };
  // Consecutive report rows of one part: "decoder.4" to "decoder.78", or one
  // row named by its prefix alone ("logits") when `first` is 0.
  struct Run {
    std::size_t part = 0;
    std::size_t prefix = 0;  // index into prefixes: a stack's runs share theirs
    std::int64_t first = 0;
    std::int64_t count = 1;
  };
  std::vector<Part> parts;
  std::vector<Run> runs;
  std::vector<std::string> prefixes;
  Terms terms;  // every part's, one list

  std::span<const Term> terms_of(const Part& part) const { return {terms.data() + part.first, part.count}; }

  // The name of the `i`th row of `run`, written into `out`: a report names
  // every layer, and a name this short needs no allocation of its own.
  void write_name(const Run& run, std::int64_t i, std::string& out) const {
    out = prefixes[run.prefix];
    if (run.first == 0) return;
    char number[24];
    out += '.';
    out.append(number, std::to_chars(number, number + sizeof number, run.first + i).ptr);
  }
  std::string name(const Run& run, std::int64_t i) const {
    std::string out;
    write_name(run, i, out);
    return out;
  }

  // What the model's one-line summary needs, which is written only when a
  // report asks for it: the decoder's parts come first.
  std::string model_name;
  std::size_t decoder_parts = 0, mtp_depths = 0;
  std::int64_t hidden_size = 0, vocab_size = 0;
  mutable std::once_flag summarized;
  mutable std::string summary;

  const std::string& model_summary() const {
    std::call_once(summarized, [&] {
      std::vector<KindCount> layers;
      for (std::size_t i = 0; i < decoder_parts; ++i) layers.push_back({parts[i].kind, parts[i].uses});
      summary = summarize(model_name, layers, mtp_depths, hidden_size, vocab_size);
    });
    return summary;
  }
};

// Whether selective recomputation (Megatron-LM's recompute of core attention)
// runs a component's forward again. No default: a component added without a
// case here is a compiler warning.
bool selectively_recomputed(Component component) {
  switch (component) {
    case Component::kCoreAttention:
    case Component::kDsaCoreAttention: return true;
    case Component::kAttentionProjections:
    case Component::kIndexerProjections:
    case Component::kIndexerScoring:
    case Component::kIndexerTeacher:
    case Component::kKpoolGate:
    case Component::kKpoolPooling:
    case Component::kKvCompressor:
    case Component::kMlp:
    case Component::kMoeRouted:
    case Component::kMoeShared:
    case Component::kMoeRouter:
    case Component::kMamba:
    case Component::kGatedDeltaNet:
    case Component::kGatedDeltaProduct:
    case Component::kKimiDeltaAttention:
    case Component::kHyperConnections:
    case Component::kNgramMemory:
    case Component::kPerLayerEmbedding:
    case Component::kAttentionResiduals:
    case Component::kMtp:
    case Component::kLogits: return false;
  }
  return false;
}

// Whether full recomputation runs a component's forward twice. Megatron-LM's
// DSA computes the indexer's KL teacher only where gradients are enabled, and
// the first forward of a fully recomputed layer runs without them: the
// teacher runs once, in the recomputation.
bool fully_recomputed(Component component) { return component != Component::kIndexerTeacher; }

// Recomputation adds one forward to the terms it re-executes.
void add_recomputed_forwards(std::span<Term> terms, Recompute recompute) {
  if (recompute == Recompute::kNone) return;
  for (Term& term : terms) {
    const bool selective = recompute == Recompute::kSelective && selectively_recomputed(term.component);
    const bool full = recompute == Recompute::kFull && fully_recomputed(term.component);
    if (term.forward && (full || selective)) {
      term.executions += kForwardOnly;
    }
  }
}

// A layer's sublayers that hyper-connections wrap: its mixer, its channel mixer.
std::int64_t sublayers(const Layer& layer) { return (layer.mixer ? 1 : 0) + (layer.channel_mixer ? 1 : 0); }

// A part of a count: a distinct layer of a stack, the decoder's attention
// residuals, an MTP depth's projection, or the output layer.
struct CountPart {
  std::size_t first = 0;  // its terms: CountParts::terms[first, first + count)
  std::size_t count = 0;
  std::int64_t uses = 0;              // the layers of the stack that are this one; 1 for the others
  const LayerStack* stack = nullptr;  // null for a projection or the output layer
  std::size_t layer = 0;              // the index of the layer in stack->distinct()
  std::size_t depth = 0;              // 1 and up for an MTP depth's parts, 0 for the others
  bool attention_residuals = false;   // the decoder's attention residuals, one part for all its reads
};

struct CountParts {
  Terms terms;  // every part's, one list
  std::vector<CountPart> parts;
};

// Every part of a count, in the one order that each sum of its terms
// follows: the decoder's distinct layers, its attention residuals (whose
// reads differ from layer to layer, so that no distinct layer holds them;
// none in megatron mode), then each MTP depth's projection
// (none on Megatron-LM's hybrid path) and distinct layers, then the output
// layer, its terms once per head (the decoder's and each depth's). Replaces
// what `counted` held, keeping its room.
void parts_of(const Model& model, Convention convention, Recompute recompute, CountParts& counted) {
  const std::int64_t h = model.hidden_size;
  counted.terms.clear();
  counted.parts.clear();
  std::size_t parts = model.layers.distinct().size() + 1;
  for (const LayerStack& depth : model.mtp_depths) parts += depth.distinct().size() + 1;
  counted.parts.reserve(parts);
  constexpr std::size_t kUsualTermsPerPart = 8;  // room enough for most parts, not a limit
  counted.terms.reserve(kUsualTermsPerPart * parts);
  const auto add_stack = [&](const LayerStack& stack, std::size_t depth) {
    const std::size_t first_part = counted.parts.size();
    for (std::size_t i = 0; i < stack.distinct().size(); ++i) {
      const std::size_t first = counted.terms.size();
      const Layer& layer = stack.distinct()[i];
      append_layer_terms(layer, h, convention, counted.terms);
      if (model.hyper_connections) {
        append_terms(*model.hyper_connections, sublayers(layer), h, convention, counted.terms);
      }
      add_recomputed_forwards(std::span(counted.terms).subspan(first), recompute);
      counted.parts.push_back({first, counted.terms.size() - first, 0, &stack, i, depth});
    }
    for (const LayerStack::Run& run : stack.runs()) counted.parts[first_part + run.layer].uses += run.count;
  };
  const auto add_term = [&](const Term& term, std::size_t copies, std::size_t depth) {
    counted.parts.push_back({counted.terms.size(), copies, 1, nullptr, 0, depth});
    counted.terms.insert(counted.terms.end(), copies, term);
  };
  add_stack(model.layers, 0);
  if (model.attention_residuals && convention.mode != Mode::kMegatron) {
    const std::size_t first = counted.terms.size();
    append_terms(*model.attention_residuals, static_cast<std::int64_t>(model.layers.size()), h, convention,
                 counted.terms);
    add_recomputed_forwards(std::span(counted.terms).subspan(first, 1), recompute);  // the layers' reads
    counted.parts.push_back({first, counted.terms.size() - first, 1, nullptr, 0, 0, true});
  }
  for (std::size_t d = 1; d <= model.mtp_depths.size(); ++d) {
    if (!omits_mtp_projection(convention)) add_term(mtp_projection_term(h, convention), 1, d);
    add_stack(model.mtp_depths[d - 1], d);
  }
  const std::size_t heads = model.mtp_depths.size() + 1;
  add_term(logits_term(h, model.vocab_size), heads, 0);
  // Each head's final read of the residual streams belongs to its output layer.
  if (model.hyper_connections && is_exact(convention)) {
    counted.parts.back().count += heads;
    counted.terms.insert(counted.terms.end(), heads, hyper_connection_head_term(*model.hyper_connections, h));
  }
}

// The name of a part's row, or of its stack's rows before their numbers:
// "decoder", "attention_residuals", "mtp2", "mtp2.projection", "logits".
std::string row_prefix(const CountPart& part) {
  if (part.attention_residuals) return "attention_residuals";
  if (part.depth == 0) return part.stack ? "decoder" : "logits";
  std::string prefix = "mtp" + std::to_string(part.depth);
  if (!part.stack) prefix += ".projection";
  return prefix;
}

// Executed mode counts the router GEMM, whose width is the number of experts.
Status check_router_widths(const std::string& path, const LayerStack& layers) {
  for (const LayerStack::Run& run : layers.runs()) {
    const Layer& layer = layers.distinct()[run.layer];
    const auto* moe = layer.channel_mixer ? std::get_if<Moe>(&*layer.channel_mixer) : nullptr;
    if (moe && !moe->num_experts) {
      return Error(path + "[" + std::to_string(run.start) +
                   "].channel_mixer.num_experts is missing: executed mode counts the router GEMM (h x num_experts)");
    }
  }
  return Ok{};
}

Error overflow_error(const std::string& what) {
  return Error(ErrorCode::kOverflow, what + " does not fit in 128 bits; the workload is too large to count exactly");
}

double estimate_of(const Term& term) {
  const double estimate = to_double(term.forward_flops) * term.executions;
  return term.divisor == 1 ? estimate : estimate / to_double(term.divisor);  // x / 1.0 is x: no division to wait on
}

// What a term of a part adds to its statistic's coefficient in megatron mode.
double megatron_contribution(const Term& term, std::int64_t uses) {
  return estimate_of(term) * static_cast<double>(uses);
}

// Why a statistic has no Megatron-LM estimate.
Error no_megatron_estimate() {
  return Error(
      "seq_length is missing: Megatron-LM estimates DeepSeek-V4's selected entries from it; give "
      "the model's seq_length (args) or a BSHD batch");
}

// Megatron-LM's estimate of every statistic, in `estimates` (its storage reused).
Status megatron_estimates(std::span<const Statistic> statistics, const MegatronAggregates& megatron,
                          std::vector<double>& estimates) {
  estimates.clear();
  for (const Statistic& statistic : statistics) {
    const std::optional<double> estimate = megatron_estimate(statistic, megatron);
    if (!estimate) return no_megatron_estimate();
    estimates.push_back(*estimate);
  }
  return Ok{};
}

// Sum of `length`'s per-document count over a workload's documents.
Result<Int128> exact_statistic(const Statistic& statistic, const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    auto per_sequence = document_count(statistic, bshd->seq_length);
    auto total = per_sequence ? checked_mul(*per_sequence, bshd->batch_size) : std::nullopt;
    if (!total) return overflow_error("the " + statistic_name(statistic) + " of the batch");
    return *total;
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    Int128 total = 0;
    for (std::int64_t length : packed->lengths) {
      auto count = document_count(statistic, length);
      auto sum = count ? checked_add(total, *count) : std::nullopt;
      if (!sum) return overflow_error("the " + statistic_name(statistic) + " of the batch");
      total = *sum;
    }
    return total;
  }
  return Error(
      "model mode counts every document exactly and needs their lengths (docs, cu_seqlens or a "
      "BSHD batch); total_real_tokens and seqlen_squared_sum allow megatron mode only");
}

// T and S2 as Megatron-LM sees them.
Result<std::array<Int128, 2>> aggregates_of(const Workload& workload) {
  if (const auto* aggregates = std::get_if<SequenceAggregates>(&workload)) {
    return std::array<Int128, 2>{aggregates->total_tokens, aggregates->squared_sum};
  }
  Int128 tokens = 0, squares = 0;
  auto add_sequence = [&](std::int64_t length, std::int64_t copies) -> Status {
    const Int128 l = length;
    auto t = checked_mul(l, copies);
    auto s = checked_mul(l * l, copies);
    auto new_tokens = t ? checked_add(tokens, *t) : std::nullopt;
    auto new_squares = s ? checked_add(squares, *s) : std::nullopt;
    if (!new_tokens || !new_squares) return overflow_error("the sum of squared lengths");
    tokens = *new_tokens;
    squares = *new_squares;
    return Ok{};
  };
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    TRAINFLOPS_RETURN_IF_ERROR(add_sequence(bshd->seq_length, bshd->batch_size));
  } else {
    for (std::int64_t length : std::get<PackedDocuments>(workload).lengths) {
      TRAINFLOPS_RETURN_IF_ERROR(add_sequence(length, 1));
    }
  }
  return std::array<Int128, 2>{tokens, squares};
}

// What Megatron-LM estimates statistics from, over a valid workload: its T
// and S2, with the sequence length of a BSHD batch, else the model's.
Result<MegatronAggregates> megatron_aggregates_of(const Workload& workload,
                                                  std::optional<std::int64_t> model_seq_length) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const auto aggregates, aggregates_of(workload));
  const auto* bshd = std::get_if<Bshd>(&workload);
  return MegatronAggregates{to_double(aggregates[0]), to_double(aggregates[1]),
                            bshd ? std::optional(bshd->seq_length) : model_seq_length};
}

// The FLOPs of each component, summed term by term.
class ComponentSums {
 public:
  Status add(Component component, double estimate, const std::optional<Int128>& exact) {
    Flops& sum = sums_[static_cast<std::size_t>(component)];
    sum.value += estimate;
    if (exact) {
      auto next = checked_add(sum.exact.value_or(0), *exact);
      if (!next) return overflow_error("the FLOPs of " + std::string(component_name(component)));
      sum.exact = *next;
    }
    present_[static_cast<std::size_t>(component)] = true;
    return Ok{};
  }

  // The components that received a term, in Component order. Exact sums
  // replace the running double by the correctly rounded exact value.
  std::vector<ComponentFlops> list() const {
    std::vector<ComponentFlops> out;
    out.reserve(kAllComponents.size());
    for (Component c : kAllComponents) {
      const auto i = static_cast<std::size_t>(c);
      if (!present_[i]) continue;
      Flops flops = sums_[i];
      if (flops.exact) flops.value = to_double(*flops.exact);
      out.push_back({c, flops});
    }
    return out;
  }

  // list()'s values, by the Component's value (0 for the absent ones).
  void values(std::array<double, kAllComponents.size()>& out) const {
    for (std::size_t i = 0; i < sums_.size(); ++i) {
      out[i] = !present_[i] ? 0 : sums_[i].exact ? to_double(*sums_[i].exact) : sums_[i].value;
    }
  }

 private:
  std::array<Flops, kAllComponents.size()> sums_{};
  std::array<bool, kAllComponents.size()> present_{};
};

}  // namespace

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "unknown";
}

Result<Recompute> parse_recompute(std::string_view text) {
  for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (text == recompute_name(recompute)) return recompute;
  }
  return Error("recompute = \"" + std::string(text) + "\": must be one of none, selective, full");
}

namespace {

// The value of every distinct statistic over the workload, exact or estimated.
struct StatisticValues {
  std::vector<Int128> exact;     // exact modes
  std::vector<double> estimate;  // megatron mode
  Int128 tokens = 0;
};

}  // namespace

class FlopsCounter::Impl {
 public:
  // FlopsCounter::create(), and the model-mode counter of executed mode.
  static Result<std::shared_ptr<const Impl>> create(const Model& model, Mode mode, Recompute recompute);

  Mode mode() const { return mode_; }
  const std::vector<Statistic>& statistics() const { return statistics_; }

  // FlopsCounter's and CounterInternals' functions.
  Result<Flops> total(const Workload& workload) const;
  Result<Report> report(const Workload& workload) const;
  template <typename Offset>
  Result<Report> report_of_offsets(std::span<const Offset> cu_seqlens) const;
  Result<Report> report_length_blocks(const LengthBlocks& feed) const;
  Result<Flops> megatron_total(const MegatronAggregates& aggregates) const;
  Result<std::vector<ComponentFlops>> components(const Workload& workload) const;
  Result<Flops> total_from_statistics(const std::vector<Int128>& sums) const;
  Result<Flops> total_and_components(const Workload& workload,
                                     std::array<double, kAllComponents.size()>& per_component) const;

 private:
  Impl(Mode mode, Recompute recompute, std::shared_ptr<const Rows> rows);
  // create() after its checks: the model is valid.
  static std::shared_ptr<Impl> of_valid_model(const Model& model, Mode mode, Recompute recompute);

  // The value of every distinct statistic over the workload, exact or estimated.
  Result<StatisticValues> evaluate_statistics(const Workload& workload) const;
  // Megatron mode: the estimate of every statistic from T and S2 (values.tokens is the caller's).
  Result<StatisticValues> megatron_values(const MegatronAggregates& aggregates) const;
  template <typename Offset>
  Result<StatisticValues> statistics_of_offsets(std::span<const Offset> cu_seqlens) const;
  // The report of evaluated statistics; model_total is the caller's.
  Result<Report> report_of(const StatisticValues& values, std::string workload_description) const;
  Result<Flops> total_of(const StatisticValues& values) const;
  Status add_components(const StatisticValues& values, ComponentSums& sums) const;
  // One row of the report's run `run_index` (named ""): its FLOPs and components.
  Result<LayerFlops> row_flops(std::size_t run_index, const StatisticValues& values) const;

  Mode mode_;
  Recompute recompute_;
  std::optional<std::int64_t> megatron_seq_length_;
  std::shared_ptr<const Rows> rows_;
  std::vector<Statistic> statistics_;  // distinct, sorted
  // Per statistic: the sum of flops * executions in the exact modes, of the
  // terms' estimates in megatron mode; the other mode's are zeros.
  std::vector<Int128> exact_coefficients_;
  std::vector<double> megatron_coefficients_;
  // Per component and statistic, the same coefficients (components()).
  struct ComponentCoefficient {
    Component component;
    std::size_t statistic;  // index into statistics_
    Int128 exact;
    double megatron;
  };
  std::vector<ComponentCoefficient> component_coefficients_;
  // Megatron mode's estimate of one component's part.
  static double megatron_part(const ComponentCoefficient& c, const StatisticValues& values);
  std::shared_ptr<const StatisticSums> document_sums_;  // exact modes: sums over packed documents
  std::shared_ptr<const Impl> model_counter_;           // executed mode: the model-mode count beside it
};

FlopsCounter::Impl::Impl(Mode mode, Recompute recompute, std::shared_ptr<const Rows> rows)
    : mode_(mode), recompute_(recompute), rows_(std::move(rows)) {
  // Megatron mode's coefficients add their terms in the parts' order. The components' coefficients (and the exact ones,
  // whose order does not matter) take every term by statistic then component
  // and, within one (statistic, component), in the order of the parts: a
  // counting sort over the few (statistic, component) slots puts them in that
  // order without comparing terms.
  struct Contribution {
    std::size_t slot;  // statistic index * components + component
    Int128 exact;
    double megatron;
  };
  constexpr std::size_t kComponents = kAllComponents.size();
  std::size_t terms = 0;
  for (const Rows::Part& part : rows_->parts) terms += part.uses == 0 ? 0 : part.count;
  statistics_.reserve(terms);
  component_coefficients_.reserve(terms);
  for (const Rows::Part& part : rows_->parts) {
    if (part.uses == 0) continue;
    for (const Term& term : rows_->terms_of(part)) {
      if (std::find(statistics_.begin(), statistics_.end(), term.per) == statistics_.end()) {
        statistics_.push_back(term.per);
      }
    }
  }
  std::sort(statistics_.begin(), statistics_.end());
  const auto index_of = [&](const Statistic& statistic) {
    return static_cast<std::size_t>(std::lower_bound(statistics_.begin(), statistics_.end(), statistic) -
                                    statistics_.begin());
  };
  std::vector<std::size_t> slot_starts(statistics_.size() * kComponents + 1, 0);
  std::vector<Contribution> contributions(terms);
  std::vector<std::size_t> slots;
  slots.reserve(terms);
  for (const Rows::Part& part : rows_->parts) {
    if (part.uses == 0) continue;
    for (const Term& term : rows_->terms_of(part)) {
      slots.push_back(index_of(term.per) * kComponents + static_cast<std::size_t>(term.component));
      ++slot_starts[slots.back() + 1];
    }
  }
  for (std::size_t i = 1; i < slot_starts.size(); ++i) slot_starts[i] += slot_starts[i - 1];
  // Each mode sums one kind: the exact modes integers, megatron mode estimates.
  const bool exact = mode != Mode::kMegatron;
  exact_coefficients_.assign(statistics_.size(), 0);
  megatron_coefficients_.assign(statistics_.size(), 0);
  std::size_t next = 0;
  for (const Rows::Part& part : rows_->parts) {
    if (part.uses == 0) continue;
    for (const Term& term : rows_->terms_of(part)) {
      const std::size_t slot = slots[next++];
      const Int128 exact_flops = exact ? term.forward_flops * term.executions * part.uses : 0;  // sizes are capped
      const double megatron = exact ? 0 : megatron_contribution(term, part.uses);
      megatron_coefficients_[slot / kComponents] += megatron;
      contributions[slot_starts[slot]++] = {slot, exact_flops, megatron};
    }
  }
  for (const Contribution& c : contributions) {
    const std::size_t statistic = c.slot / kComponents;
    const auto component = static_cast<Component>(c.slot % kComponents);
    exact_coefficients_[statistic] += c.exact;
    ComponentCoefficient* last = component_coefficients_.empty() ? nullptr : &component_coefficients_.back();
    if (!last || last->statistic != statistic || last->component != component) {
      component_coefficients_.push_back({component, statistic, 0, 0});
      last = &component_coefficients_.back();
    }
    last->exact += c.exact;
    last->megatron += c.megatron;
  }
  if (exact) document_sums_ = std::make_shared<const StatisticSums>(statistics_, kDocumentSumBits);
}

Result<std::shared_ptr<const FlopsCounter::Impl>> FlopsCounter::Impl::create(const Model& model, Mode mode,
                                                                             Recompute recompute) {
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  if (recompute != Recompute::kNone && mode != Mode::kExecuted) {
    return Error("recompute = \"" + std::string(recompute_name(recompute)) +
                 "\": applies to executed mode only (model FLOPs, MFU's numerator, exclude re-executed work)");
  }
  if (mode != Mode::kMegatron) {
    TRAINFLOPS_RETURN_IF_ERROR(check_dsa_topk_given(model, std::string(mode_name(mode)) + " mode"));
  }
  if (mode == Mode::kExecuted) {
    TRAINFLOPS_RETURN_IF_ERROR(check_router_widths("layers", model.layers));
    for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
      TRAINFLOPS_RETURN_IF_ERROR(check_router_widths("mtp_depths[" + std::to_string(d) + "]", model.mtp_depths[d]));
    }
  }
  std::shared_ptr<Impl> counter = of_valid_model(model, mode, recompute);
  // Executed reports carry the model-mode total beside theirs (MFU's numerator).
  if (mode == Mode::kExecuted) counter->model_counter_ = of_valid_model(model, Mode::kModel, Recompute::kNone);
  return std::shared_ptr<const Impl>(std::move(counter));
}

std::shared_ptr<FlopsCounter::Impl> FlopsCounter::Impl::of_valid_model(const Model& model, Mode mode,
                                                                       Recompute recompute) {
  CountParts counted;
  parts_of(model, Convention{mode, model.megatron_path}, recompute, counted);
  auto rows = std::make_shared<Rows>();
  std::size_t runs = 1;  // the output layer's
  for (const CountPart& part : counted.parts) runs += !part.stack ? 1 : part.layer == 0 ? part.stack->runs().size() : 0;
  rows->runs.reserve(runs);
  rows->parts.reserve(counted.parts.size());
  for (std::size_t i = 0; i < counted.parts.size(); ++i) {
    const CountPart& part = counted.parts[i];
    if (!part.stack) {  // one row of its own
      rows->prefixes.push_back(row_prefix(part));
      rows->runs.push_back({i, rows->prefixes.size() - 1, 0, 1});
    } else if (part.layer == 0) {  // the first of its stack: the stack's rows
      rows->prefixes.push_back(row_prefix(part));
      for (const LayerStack::Run& run : part.stack->runs()) {
        rows->runs.push_back({i + run.layer, rows->prefixes.size() - 1, run.start + 1, run.count});
      }
    }
    rows->parts.push_back({part.stack                 ? layer_kind(part.stack->distinct()[part.layer])
                           : part.attention_residuals ? "attention_residuals"
                           : part.depth == 0          ? "logits"
                                                      : "projection",
                           part.first, part.count, part.uses});
  }
  rows->terms = std::move(counted.terms);
  rows->model_name = model.name;
  rows->decoder_parts = model.layers.distinct().size();
  rows->mtp_depths = model.mtp_depths.size();
  rows->hidden_size = model.hidden_size;
  rows->vocab_size = model.vocab_size;
  // The constructor is private: make_shared cannot reach it.
  std::shared_ptr<Impl> counter(new Impl(mode, recompute, std::move(rows)));
  counter->megatron_seq_length_ = model.megatron_seq_length;
  return counter;
}

Result<StatisticValues> FlopsCounter::Impl::evaluate_statistics(const Workload& workload) const {
  TRAINFLOPS_RETURN_IF_ERROR(validate(workload));
  if (mode_ == Mode::kMegatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const MegatronAggregates megatron,
                                megatron_aggregates_of(workload, megatron_seq_length_));
    TRAINFLOPS_ASSIGN_OR_RETURN(StatisticValues values, megatron_values(megatron));
    values.tokens = total_tokens(workload);
    return values;
  }
  StatisticValues values;
  values.tokens = total_tokens(workload);
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    // The block sums SeqStats uses: a pass over the lengths for every statistic at once.
    values.exact.assign(statistics_.size(), 0);
    if (document_sums_->add_lengths(packed->lengths, values.exact).ok()) return values;
  }
  // Each statistic in turn: a BSHD batch, or packed sums past 2^126 (to name the overflow).
  values.exact.clear();
  for (const Statistic& statistic : statistics_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 value, exact_statistic(statistic, workload));
    values.exact.push_back(value);
  }
  return values;
}

Result<StatisticValues> FlopsCounter::Impl::megatron_values(const MegatronAggregates& aggregates) const {
  StatisticValues values;
  TRAINFLOPS_RETURN_IF_ERROR(megatron_estimates(statistics_, aggregates, values.estimate));
  return values;
}

template <typename Offset>
Result<StatisticValues> FlopsCounter::Impl::statistics_of_offsets(std::span<const Offset> cu_seqlens) const {
  // Megatron mode needs T and S2 = 2 x causal pairs - T; the exact modes every statistic.
  static const StatisticSums aggregates({kTokens, kCausalPairs}, kDocumentSumBits);
  const bool megatron = mode_ == Mode::kMegatron;
  std::vector<Int128> sums(megatron ? 2 : statistics_.size(), 0);
  TRAINFLOPS_RETURN_IF_ERROR((megatron ? aggregates : *document_sums_).add_cu_seqlens(cu_seqlens, sums));
  TRAINFLOPS_RETURN_IF_ERROR(check_offsets_hold_tokens(cu_seqlens.back()));
  const Int128 tokens = cu_seqlens.back();
  if (megatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(
        StatisticValues values,
        megatron_values(MegatronAggregates{to_double(tokens), to_double(2 * sums[1] - tokens), megatron_seq_length_}));
    values.tokens = tokens;
    return values;
  }
  StatisticValues values;
  values.exact = std::move(sums);
  values.tokens = tokens;
  return values;
}

template <typename Offset>
Result<Report> FlopsCounter::Impl::report_of_offsets(std::span<const Offset> cu_seqlens) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, statistics_of_offsets(cu_seqlens));
  TRAINFLOPS_ASSIGN_OR_RETURN(
      Report report, report_of(values, describe_packed(static_cast<Int128>(cu_seqlens.size()) - 1, values.tokens)));
  if (model_counter_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues model_values, model_counter_->statistics_of_offsets(cu_seqlens));
    TRAINFLOPS_ASSIGN_OR_RETURN(report.model_total, model_counter_->total_of(model_values));
  }
  return report;
}

Result<Report> FlopsCounter::Impl::report_length_blocks(const LengthBlocks& feed) const {
  // Megatron mode needs T and S2 = 2 x causal pairs - T; the exact modes every statistic.
  static const StatisticSums aggregates({kTokens, kCausalPairs}, kDocumentSumBits);
  const bool megatron = mode_ == Mode::kMegatron;
  std::vector<Int128> sums(megatron ? 2 : statistics_.size(), 0);
  std::vector<Int128> model_sums(model_counter_ ? model_counter_->statistics_.size() : 0, 0);
  Int128 documents = 0, tokens = 0;
  TRAINFLOPS_RETURN_IF_ERROR(feed([&](std::span<const std::int64_t> lengths) -> Status {
    TRAINFLOPS_RETURN_IF_ERROR((megatron ? aggregates : *document_sums_).add_lengths(lengths, sums));
    if (model_counter_) TRAINFLOPS_RETURN_IF_ERROR(model_counter_->document_sums_->add_lengths(lengths, model_sums));
    documents += static_cast<Int128>(lengths.size());
    for (const std::int64_t length : lengths) tokens += length;  // below 2^63 documents of below 2^63 tokens
    return Ok{};
  }));
  if (tokens == 0) return validate(Workload{PackedDocuments{}}).error();  // the message of a batch without tokens
  StatisticValues values;
  if (megatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(values, megatron_values(MegatronAggregates{
                                            to_double(tokens), to_double(2 * sums[1] - tokens), megatron_seq_length_}));
  } else {
    values.exact = std::move(sums);
  }
  values.tokens = tokens;
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, report_of(values, describe_packed(documents, tokens)));
  if (model_counter_) {
    StatisticValues model_values;
    model_values.exact = std::move(model_sums);
    model_values.tokens = tokens;
    TRAINFLOPS_ASSIGN_OR_RETURN(report.model_total, model_counter_->total_of(model_values));
  }
  return report;
}

Result<Flops> FlopsCounter::Impl::total(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  return total_of(values);
}

Result<Flops> FlopsCounter::Impl::megatron_total(const MegatronAggregates& aggregates) const {
  if (mode_ != Mode::kMegatron) return Error("Megatron-LM's aggregates T and S2 allow megatron mode only");
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, megatron_values(aggregates));
  return total_of(values);
}

Result<Flops> FlopsCounter::Impl::total_from_statistics(const std::vector<Int128>& sums) const {
  if (mode_ == Mode::kMegatron) return Error("megatron mode counts from T and S2, not from exact statistics");
  if (sums.size() != statistics_.size()) {
    return Error("expected " + std::to_string(statistics_.size()) + " statistic sums, got " +
                 std::to_string(sums.size()));
  }
  for (std::size_t i = 0; i < sums.size(); ++i) {
    if (sums[i] < 0) return Error(statistic_name(statistics_[i]) + " = " + to_decimal(sums[i]) + ": must be >= 0");
  }
  StatisticValues values;
  values.exact = sums;
  return total_of(values);
}

Result<Flops> FlopsCounter::Impl::total_of(const StatisticValues& values) const {
  if (mode_ == Mode::kMegatron) {
    double sum = 0;
    for (std::size_t i = 0; i < statistics_.size(); ++i) sum += megatron_coefficients_[i] * values.estimate[i];
    return Flops{sum, std::nullopt};
  }
  Int128 sum = 0;
  for (std::size_t i = 0; i < statistics_.size(); ++i) {
    auto product = checked_mul(exact_coefficients_[i], values.exact[i]);
    auto next = product ? checked_add(sum, *product) : std::nullopt;
    if (!next) return overflow_error("the FLOPs of the iteration");
    sum = *next;
  }
  return Flops{to_double(sum), sum};
}

Result<Report> FlopsCounter::Impl::report(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, report_of(values, describe(workload)));
  if (model_counter_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(report.model_total, model_counter_->total(workload));
  }
  return report;
}

Result<Report> FlopsCounter::Impl::report_of(const StatisticValues& values, std::string workload_description) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Flops total_flops, total_of(values));
  Report report;
  report.mode = mode_;
  report.recompute = recompute_;
  report.model = rows_->model_summary();
  report.workload = std::move(workload_description);
  report.total = total_flops;
  report.tokens = values.tokens;
  report.per_token = total_flops.value / to_double(values.tokens);
  ComponentSums model_sums;
  // Each part's FLOPs once, however many rows show it.
  std::vector<std::optional<LayerFlops>> part_flops(rows_->parts.size());
  std::size_t rows = 0;
  for (const Rows::Run& run : rows_->runs) rows += static_cast<std::size_t>(run.count);
  report.layers.reserve(rows);
  for (std::size_t r = 0; r < rows_->runs.size(); ++r) {
    const Rows::Run& run = rows_->runs[r];
    const Rows::Part& part = rows_->parts[run.part];
    std::optional<LayerFlops>& one = part_flops[run.part];
    if (!one) {
      TRAINFLOPS_ASSIGN_OR_RETURN(one, row_flops(r, values));
      // The model's components: each part's once, times the rows that show it.
      for (const ComponentFlops& component : one->components) {
        std::optional<Int128> exact_value;
        if (component.flops.exact) {
          exact_value = checked_mul(*component.flops.exact, part.uses);
          if (!exact_value) return overflow_error("the FLOPs of " + std::string(component_name(component.component)));
        }
        TRAINFLOPS_RETURN_IF_ERROR(
            model_sums.add(component.component, component.flops.value * static_cast<double>(part.uses), exact_value));
      }
    }
    for (std::int64_t i = 0; i < run.count; ++i) {
      LayerFlops& layer = report.layers.emplace_back(*one);
      rows_->write_name(run, i, layer.name);
    }
  }
  report.components = model_sums.list();
  return report;
}

Result<LayerFlops> FlopsCounter::Impl::row_flops(std::size_t run_index, const StatisticValues& values) const {
  const Rows::Run& run = rows_->runs[run_index];
  const Rows::Part& part = rows_->parts[run.part];
  ComponentSums sums;
  for (const Term& term : rows_->terms_of(part)) {
    const auto index = static_cast<std::size_t>(std::lower_bound(statistics_.begin(), statistics_.end(), term.per) -
                                                statistics_.begin());
    std::optional<Int128> exact_value;
    double estimate = 0;
    if (mode_ != Mode::kMegatron) {
      exact_value = checked_mul(term.forward_flops * term.executions, values.exact[index]);
      if (!exact_value) {
        return overflow_error("the FLOPs of " + rows_->name(run, 0));
      }
    } else {
      estimate = estimate_of(term) * values.estimate[index];
    }
    TRAINFLOPS_RETURN_IF_ERROR(sums.add(term.component, estimate, exact_value));
  }
  LayerFlops flops{"", part.kind, {}, sums.list()};
  for (const ComponentFlops& component : flops.components) {
    flops.flops.value += component.flops.value;
    if (component.flops.exact) flops.flops.exact = flops.flops.exact.value_or(0) + *component.flops.exact;
  }
  if (flops.flops.exact) flops.flops.value = to_double(*flops.flops.exact);
  return flops;
}

inline double FlopsCounter::Impl::megatron_part(const ComponentCoefficient& c, const StatisticValues& values) {
  return c.megatron * values.estimate[c.statistic];
}

Status FlopsCounter::Impl::add_components(const StatisticValues& values, ComponentSums& sums) const {
  const bool exact = mode_ != Mode::kMegatron;
  for (const ComponentCoefficient& c : component_coefficients_) {
    std::optional<Int128> exact_value;
    double estimate = 0;
    if (exact) {
      exact_value = checked_mul(c.exact, values.exact[c.statistic]);
      if (!exact_value) return overflow_error("the FLOPs of " + std::string(component_name(c.component)));
    } else {
      estimate = megatron_part(c, values);
    }
    TRAINFLOPS_RETURN_IF_ERROR(sums.add(c.component, estimate, exact_value));
  }
  return Ok{};
}

Result<std::vector<ComponentFlops>> FlopsCounter::Impl::components(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  ComponentSums sums;
  TRAINFLOPS_RETURN_IF_ERROR(add_components(values, sums));
  return sums.list();
}

Result<Flops> FlopsCounter::Impl::total_and_components(const Workload& workload,
                                                       std::array<double, kAllComponents.size()>& per_component) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  ComponentSums sums;
  TRAINFLOPS_RETURN_IF_ERROR(add_components(values, sums));
  sums.values(per_component);
  return total_of(values);
}

FlopsCounter::FlopsCounter(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Result<FlopsCounter> FlopsCounter::create(const Model& model, Mode mode, Recompute recompute) {
  TRAINFLOPS_ASSIGN_OR_RETURN(std::shared_ptr<const Impl> impl, Impl::create(model, mode, recompute));
  return FlopsCounter(std::move(impl));
}

Result<Flops> FlopsCounter::total(const Workload& workload) const { return impl_->total(workload); }

Result<Report> FlopsCounter::report(const Workload& workload) const { return impl_->report(workload); }

Result<Report> FlopsCounter::report_cu_seqlens(std::span<const std::int64_t> cu_seqlens) const {
  return impl_->report_of_offsets(cu_seqlens);
}

Result<Report> FlopsCounter::report_cu_seqlens(std::span<const std::int32_t> cu_seqlens) const {
  return impl_->report_of_offsets(cu_seqlens);
}

Result<Report> FlopsCounter::report_length_blocks(const LengthBlocks& feed) const {
  return impl_->report_length_blocks(feed);
}

Result<std::vector<ComponentFlops>> FlopsCounter::components(const Workload& workload) const {
  return impl_->components(workload);
}

Mode FlopsCounter::mode() const { return impl_->mode(); }

const std::vector<Statistic>& FlopsCounter::statistics() const { return impl_->statistics(); }

Result<Flops> FlopsCounter::total_from_statistics(const std::vector<Int128>& sums) const {
  return impl_->total_from_statistics(sums);
}

Result<Flops> CounterInternals::total_and_components(const FlopsCounter& counter, const Workload& workload,
                                                     std::array<double, kAllComponents.size()>& per_component) {
  return counter.impl_->total_and_components(workload, per_component);
}

Result<Flops> CounterInternals::megatron_total(const FlopsCounter& counter, const MegatronAggregates& aggregates) {
  return counter.impl_->megatron_total(aggregates);
}

Result<Report> count(const Model& model, const Workload& workload, Mode mode, Recompute recompute) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, mode, recompute));
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, counter.report(workload));
  add_parameter_summary(count_parameter_totals(model), report);
  TRAINFLOPS_RETURN_IF_ERROR(add_megatron_omissions(model, workload, report));
  return report;
}

Result<Report> count(const Model& model, const LengthBlocks& feed, Mode mode, Recompute recompute) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, mode, recompute));
  // Megatron mode's omissions are counted per distinct length: the blocks pass once.
  DocumentsByLength documents;
  const LengthBlocks counted_feed = [&](const std::function<Status(std::span<const std::int64_t>)>& take) {
    return feed([&](std::span<const std::int64_t> lengths) -> Status {
      if (mode == Mode::kMegatron) {
        for (const std::int64_t length : lengths) ++documents[length];
      }
      return take(lengths);
    });
  };
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, counter.report_length_blocks(counted_feed));
  add_parameter_summary(count_parameter_totals(model), report);
  TRAINFLOPS_RETURN_IF_ERROR(add_megatron_omissions(model, documents, report));
  return report;
}

Result<Flops> megatron_total(const Model& model, const Workload& workload) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, Mode::kMegatron));
  return counter.total(workload);
}

void add_parameter_summary(const Result<ModelParameters>& parameters, Report& report) {
  if (!parameters.ok()) return;
  const ParameterCount all = parameters.value().total();
  // "6 N D": one FMA per active parameter and token, trained (x3).
  const auto per_token = checked_mul(all.active, Int128{kFlopsPerFma * kTrainingExpansion});
  const auto six_n_d = per_token ? checked_mul(*per_token, report.tokens) : std::nullopt;
  if (!six_n_d) return;  // past 128 bits: megatron mode's aggregates allow such a count
  report.parameters = ParameterSummary{.total = all.total,
                                       .active = all.active,
                                       .embedding = parameters.value().embedding.total,
                                       .costing_flops = parameters.value().costing_flops().total,
                                       .not_costing_flops = parameters.value().not_costing_flops().total,
                                       .six_n_d = *six_n_d};
}

}  // namespace trainflops
