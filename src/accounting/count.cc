#include "trainflops/count.h"

#include <algorithm>
#include <array>
#include <map>

#include "accounting/statistic_sums.h"
#include "trainflops/layer_flops.h"
#include "trainflops/parameters.h"

namespace trainflops {

// Sums of per-document statistics stay below 2^126; larger ones are counted
// one by one, where checked arithmetic names the overflow.
constexpr int kDocumentSumBits = 126;

struct FlopsCounter::Row {
  std::string name;
  std::string kind;
  // Shared by identical layers, whose terms are built and summed once.
  std::shared_ptr<const Terms> terms;
  // On the row that built `terms`: how many rows share them; 0 on the others.
  std::int64_t uses = 1;
};
namespace {

// Recomputation adds one forward to the terms it re-executes.
void add_recomputed_forwards(Terms& terms, Recompute recompute) {
  for (Term& term : terms) {
    const bool core = term.component == Component::kCoreAttention || term.component == Component::kDsaCoreAttention;
    if (term.forward && (recompute == Recompute::kFull || (recompute == Recompute::kSelective && core))) {
      term.executions += kForwardOnly;
    }
  }
}

// Executed mode counts the router GEMM, whose width is the number of experts.
Status check_router_widths(const std::string& path, const std::vector<Layer>& layers) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto* moe = layers[i].channel_mixer ? std::get_if<Moe>(&*layers[i].channel_mixer) : nullptr;
    if (moe && !moe->num_experts) {
      return Error(path + "[" + std::to_string(i) +
                   "].channel_mixer.num_experts is missing: executed mode counts the router GEMM (h x num_experts)");
    }
  }
  return Ok{};
}

Error overflow_error(const std::string& what) {
  return Error(ErrorCode::kOverflow, what + " does not fit in 128 bits; the workload is too large to count exactly");
}

Terms layer_terms(const Layer& layer, std::int64_t hidden_size, Convention convention) {
  Terms terms;
  if (layer.mixer) terms = mixer_terms(*layer.mixer, hidden_size, convention);
  if (layer.channel_mixer) {
    Terms channel = channel_mixer_terms(*layer.channel_mixer, hidden_size, convention);
    terms.insert(terms.end(), channel.begin(), channel.end());
  }
  return terms;
}

double estimate_of(const Term& term) {
  return to_double(term.forward_flops) * term.executions / to_double(term.divisor);
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

// Adds `value` to the accumulator for `component`.
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

 private:
  std::array<Flops, kAllComponents.size()> sums_{};
  std::array<bool, kAllComponents.size()> present_{};
};

}  // namespace

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kMegatron: return "megatron";
    case Mode::kModel: return "model";
    case Mode::kExecuted: return "executed";
  }
  return "unknown";
}

Result<Mode> parse_mode(std::string_view text) {
  for (Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
    if (text == mode_name(mode)) return mode;
  }
  return Error("mode = \"" + std::string(text) + "\": must be one of megatron, model, executed");
}

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

struct FlopsCounter::StatisticValues {
  std::vector<Int128> exact;     // exact modes
  std::vector<double> estimate;  // megatron mode
  Int128 tokens = 0;
};

FlopsCounter::FlopsCounter(Mode mode, Recompute recompute, std::string model_summary, std::vector<Row> rows)
    : mode_(mode),
      recompute_(recompute),
      model_summary_(std::move(model_summary)),
      rows_(std::make_shared<const std::vector<Row>>(std::move(rows))) {
  std::map<Statistic, std::pair<Int128, double>> coefficients;
  std::map<std::pair<Component, Statistic>, std::pair<Int128, double>> by_component;
  const auto add_run = [&](const Terms& terms, std::int64_t rows) {
    for (const Term& term : terms) {
      for (auto* sums : {&coefficients[term.per], &by_component[{term.component, term.per}]}) {
        sums->first += term.forward_flops * term.executions * rows;  // sizes are capped: no overflow here
        sums->second += estimate_of(term) * static_cast<double>(rows);
      }
    }
  };
  for (const Row& row : *rows_) {
    if (row.uses > 0) add_run(*row.terms, row.uses);
  }
  for (const auto& [statistic, coefficient] : coefficients) {
    statistics_.push_back(statistic);
    exact_coefficients_.push_back(coefficient.first);
    megatron_coefficients_.push_back(coefficient.second);
  }
  document_sums_ = std::make_shared<const StatisticSums>(statistics_, kDocumentSumBits);
  for (const auto& [key, coefficient] : by_component) {
    const auto index = static_cast<std::size_t>(std::lower_bound(statistics_.begin(), statistics_.end(), key.second) -
                                                statistics_.begin());
    component_coefficients_.push_back({key.first, index, coefficient.first, coefficient.second});
  }
}

Result<FlopsCounter> FlopsCounter::create(const Model& model, Mode mode, Recompute recompute) {
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  if (recompute != Recompute::kNone && mode != Mode::kExecuted) {
    return Error("recompute = \"" + std::string(recompute_name(recompute)) +
                 "\": applies to executed mode only (model FLOPs, MFU's numerator, exclude re-executed work)");
  }
  if (mode == Mode::kExecuted) {
    TRAINFLOPS_RETURN_IF_ERROR(check_router_widths("layers", model.layers));
    for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
      TRAINFLOPS_RETURN_IF_ERROR(check_router_widths("mtp_depths[" + std::to_string(d) + "]", model.mtp_depths[d]));
    }
  }
  FlopsCounter counter = of_valid_model(model, mode, recompute);
  // Executed reports carry the model-mode total beside theirs (MFU's numerator).
  if (mode == Mode::kExecuted) {
    counter.model_counter_ =
        std::make_shared<const FlopsCounter>(of_valid_model(model, Mode::kModel, Recompute::kNone));
  }
  return counter;
}

FlopsCounter FlopsCounter::of_valid_model(const Model& model, Mode mode, Recompute recompute) {
  const Convention convention{mode, model.megatron_path};
  const std::int64_t h = model.hidden_size;
  std::vector<Row> rows;
  rows.reserve(model.layers.size() + 2 * model.mtp_depths.size() + 1);
  // Models repeat a few distinct layers: the rows that built their terms.
  std::vector<std::pair<const Layer*, std::size_t>> built;  // the last one first
  auto add_layer = [&](std::string name, const Layer& layer) {
    const auto same = std::find_if(built.rbegin(), built.rend(), [&](const auto& b) { return *b.first == layer; });
    if (same != built.rend()) {
      Row& owner = rows[same->second];
      ++owner.uses;
      rows.push_back({std::move(name), owner.kind, owner.terms, 0});
      if (same != built.rbegin()) std::iter_swap(same, built.rbegin());  // the next layer is likely the same
      return;
    }
    Terms terms = layer_terms(layer, h, convention);
    add_recomputed_forwards(terms, recompute);
    if (built.size() == 8) built.erase(built.begin());
    built.emplace_back(&layer, rows.size());
    rows.push_back({std::move(name), layer_kind(layer), std::make_shared<const Terms>(std::move(terms))});
  };
  for (std::size_t i = 0; i < model.layers.size(); ++i) add_layer("decoder." + std::to_string(i + 1), model.layers[i]);
  for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
    const std::string depth = "mtp" + std::to_string(d + 1);
    if (!is_megatron_hybrid(convention)) {
      rows.push_back(
          {depth + ".projection", "projection", std::make_shared<const Terms>(mtp_projection_terms(h, convention))});
    }
    for (std::size_t i = 0; i < model.mtp_depths[d].size(); ++i) {
      add_layer(depth + "." + std::to_string(i + 1), model.mtp_depths[d][i]);
    }
  }
  Terms logits;
  for (std::size_t head = 0; head <= model.mtp_depths.size(); ++head) {
    Terms one_head = logits_terms(h, model.vocab_size);
    logits.insert(logits.end(), one_head.begin(), one_head.end());
  }
  rows.push_back({"logits", "logits", std::make_shared<const Terms>(std::move(logits))});
  FlopsCounter counter(mode, recompute, summarize(model), std::move(rows));
  counter.megatron_seq_length_ = model.megatron_seq_length;
  return counter;
}

Result<FlopsCounter::StatisticValues> FlopsCounter::evaluate_statistics(const Workload& workload) const {
  TRAINFLOPS_RETURN_IF_ERROR(validate(workload));
  StatisticValues values;
  values.tokens = total_tokens(workload);
  if (mode_ == Mode::kMegatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const auto aggregates, aggregates_of(workload));
    const auto* bshd = std::get_if<Bshd>(&workload);
    return megatron_values(aggregates[0], aggregates[1], bshd ? std::optional(bshd->seq_length) : megatron_seq_length_);
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    // The block sums SeqStats uses: a pass over the lengths for every statistic at once.
    values.exact.assign(statistics_.size(), 0);
    if (document_sums_->add_lengths(packed->lengths, values.exact).ok()) return values;
    values.exact.clear();  // a sum past 2^126: one by one below, to name the overflow
  }
  values.exact.reserve(statistics_.size());
  for (const Statistic& statistic : statistics_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 value, exact_statistic(statistic, workload));
    values.exact.push_back(value);
  }
  return values;
}

Result<FlopsCounter::StatisticValues> FlopsCounter::megatron_values(Int128 tokens, Int128 squared_sum,
                                                                    std::optional<std::int64_t> seq_length) const {
  StatisticValues values;
  values.tokens = tokens;
  const MegatronAggregates megatron{to_double(tokens), to_double(squared_sum), seq_length};
  values.estimate.reserve(statistics_.size());
  for (const Statistic& statistic : statistics_) {
    const std::optional<double> estimate = megatron_estimate(statistic, megatron);
    if (!estimate) {
      return Error(
          "seq_length is missing: Megatron-LM estimates DeepSeek-V4's selected entries from it; give "
          "the model's seq_length (args) or a BSHD batch");
    }
    values.estimate.push_back(*estimate);
  }
  return values;
}

template <typename Offset>
Result<FlopsCounter::StatisticValues> FlopsCounter::statistics_of_offsets(std::span<const Offset> cu_seqlens) const {
  // Megatron mode needs T and S2 = 2 x causal pairs - T; the exact modes every statistic.
  static const StatisticSums aggregates({kTokens, kCausalPairs}, kDocumentSumBits);
  const bool megatron = mode_ == Mode::kMegatron;
  std::vector<Int128> sums(megatron ? 2 : statistics_.size(), 0);
  TRAINFLOPS_RETURN_IF_ERROR((megatron ? aggregates : *document_sums_).add_cu_seqlens(cu_seqlens, sums));
  const Int128 tokens = Int128{cu_seqlens.back()} - cu_seqlens.front();
  if (tokens == 0) return Error("docs: the batch holds no tokens (at least one length must be positive)");
  if (megatron) return megatron_values(tokens, 2 * sums[1] - tokens, megatron_seq_length_);
  StatisticValues values;
  values.exact = std::move(sums);
  values.tokens = tokens;
  return values;
}

template <typename Offset>
Result<Report> FlopsCounter::report_of_offsets(std::span<const Offset> cu_seqlens) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, statistics_of_offsets(cu_seqlens));
  TRAINFLOPS_ASSIGN_OR_RETURN(
      Report report, report_of(values, describe_packed(static_cast<Int128>(cu_seqlens.size()) - 1, values.tokens)));
  if (model_counter_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues model_values, model_counter_->statistics_of_offsets(cu_seqlens));
    TRAINFLOPS_ASSIGN_OR_RETURN(report.model_total, model_counter_->total_of(model_values));
  }
  return report;
}

Result<Report> FlopsCounter::report_cu_seqlens(std::span<const std::int64_t> cu_seqlens) const {
  return report_of_offsets(cu_seqlens);
}

Result<Report> FlopsCounter::report_cu_seqlens(std::span<const std::int32_t> cu_seqlens) const {
  return report_of_offsets(cu_seqlens);
}

Result<Flops> FlopsCounter::total(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  return total_of(values);
}

Result<Flops> FlopsCounter::total_from_statistics(const std::vector<Int128>& sums) const {
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

Result<Flops> FlopsCounter::total_of(const StatisticValues& values) const {
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

Result<Report> FlopsCounter::report(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, report_of(values, describe(workload)));
  if (model_counter_) {
    TRAINFLOPS_ASSIGN_OR_RETURN(report.model_total, model_counter_->total(workload));
  }
  return report;
}

Result<Report> FlopsCounter::report_of(const StatisticValues& values, std::string workload_description) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Flops total_flops, total_of(values));
  const bool exact = mode_ != Mode::kMegatron;
  Report report;
  report.mode = mode_;
  report.recompute = recompute_;
  report.model = model_summary_;
  report.workload = std::move(workload_description);
  report.total = total_flops;
  report.tokens = values.tokens;
  report.per_token = total_flops.value / to_double(values.tokens);
  ComponentSums model_sums;
  for (const Row& row : *rows_) {
    ComponentSums row_sums;
    for (const Term& term : *row.terms) {
      const auto index = static_cast<std::size_t>(std::lower_bound(statistics_.begin(), statistics_.end(), term.per) -
                                                  statistics_.begin());
      std::optional<Int128> exact_value;
      double estimate = 0;
      if (exact) {
        exact_value = checked_mul(term.forward_flops * term.executions, values.exact[index]);
        if (!exact_value) return overflow_error("the FLOPs of " + row.name);
      } else {
        estimate = estimate_of(term) * values.estimate[index];
      }
      TRAINFLOPS_RETURN_IF_ERROR(row_sums.add(term.component, estimate, exact_value));
      TRAINFLOPS_RETURN_IF_ERROR(model_sums.add(term.component, estimate, exact_value));
    }
    LayerFlops layer{row.name, row.kind, {}, row_sums.list()};
    for (const ComponentFlops& part : layer.components) {
      layer.flops.value += part.flops.value;
      if (part.flops.exact) layer.flops.exact = layer.flops.exact.value_or(0) + *part.flops.exact;
    }
    if (layer.flops.exact) layer.flops.value = to_double(*layer.flops.exact);
    report.layers.push_back(std::move(layer));
  }
  report.components = model_sums.list();
  return report;
}

Result<std::vector<ComponentFlops>> FlopsCounter::components(const Workload& workload) const {
  TRAINFLOPS_ASSIGN_OR_RETURN(const StatisticValues values, evaluate_statistics(workload));
  const bool exact = mode_ != Mode::kMegatron;
  ComponentSums sums;
  for (const ComponentCoefficient& c : component_coefficients_) {
    std::optional<Int128> exact_value;
    double estimate = 0;
    if (exact) {
      exact_value = checked_mul(c.exact, values.exact[c.statistic]);
      if (!exact_value) return overflow_error("the FLOPs of " + std::string(component_name(c.component)));
    } else {
      estimate = c.megatron * values.estimate[c.statistic];
    }
    TRAINFLOPS_RETURN_IF_ERROR(sums.add(c.component, estimate, exact_value));
  }
  return sums.list();
}

Result<Report> count(const Model& model, const Workload& workload, Mode mode, Recompute recompute) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, mode, recompute));
  TRAINFLOPS_ASSIGN_OR_RETURN(Report report, counter.report(workload));
  add_parameter_summary(model, report);
  return report;
}

void add_parameter_summary(const Model& model, Report& report) {
  const Result<ModelParameters> parameters = count_parameters(model);
  if (!parameters.ok()) return;  // an MoE layer without num_experts: no total to give
  const ParameterCount all = parameters.value().total();
  // "6 N D": one FMA per active parameter and token, trained (x3).
  const auto per_token = checked_mul(all.active, Int128{kFlopsPerFma * kTrainingExpansion});
  const auto six_n_d = per_token ? checked_mul(*per_token, report.tokens) : std::nullopt;
  if (!six_n_d) return;  // past 128 bits: megatron mode's aggregates allow such a count
  report.parameters = ParameterSummary{all.total, all.active, parameters.value().embedding.total, *six_n_d};
}

}  // namespace trainflops
