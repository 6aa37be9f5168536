// Counting: the FLOPs of one training iteration of a model over a workload,
// with the breakdown by component and by layer.
//
// Thread safety: Recompute, Flops, ComponentFlops, LayerFlops, ParameterSummary
// and Report are plain values: several threads may read one at once, and a
// thread that changes one must be the only one using it. FlopsCounter: as its
// comment below says. The functions here keep no state of their own: several
// threads may call them at once, given different objects to change.
#ifndef TRAINFLOPS_COUNT_H_
#define TRAINFLOPS_COUNT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/compare.h"
#include "trainflops/component.h"
#include "trainflops/int128.h"
#include "trainflops/mode.h"
#include "trainflops/model.h"
#include "trainflops/parameters.h"
#include "trainflops/result.h"
#include "trainflops/statistic.h"
#include "trainflops/workload.h"

namespace trainflops {

// Forwards re-executed in the backward pass (activation recomputation):
// counted in executed mode only, since model FLOPs (MFU's numerator) exclude them.
enum class Recompute {
  kNone,
  kSelective,  // core attention (dense and DSA) runs its forward again
  kFull,       // every decoder and MTP layer runs its forward again
};

// "none", "selective", "full".
std::string_view recompute_name(Recompute recompute);
Result<Recompute> parse_recompute(std::string_view text);

// A FLOPs figure: `value` always; `exact` in the exact modes.
struct Flops {
  double value = 0;
  std::optional<Int128> exact;
};

struct ComponentFlops {
  Component component;
  Flops flops;
};

// One row of the per-layer breakdown: a decoder layer ("decoder.1", 1-based),
// an MTP layer ("mtp1.1"), an MTP projection ("mtp1.projection") or the
// output layer ("logits", every head).
struct LayerFlops {
  std::string name;
  std::string kind;  // layer_kind(), or "attention_residuals" / "projection" / "logits"
  Flops flops;
  std::vector<ComponentFlops> components;  // non-zero ones, in Component order
};

// The model's parameters beside its FLOPs (parameters.h counts them): N of
// the usual "6 N D" approximation, and that approximation for the workload.
struct ParameterSummary {
  Int128 total = 0;      // every parameter: embedding, decoder, MTP depths, output layer
  Int128 active = 0;     // N: the parameters one token uses, norms and biases included (not the embedding table)
  Int128 embedding = 0;  // the embedding table (V x h)
  // Of the total: the weights of the products model mode counts, and the rest
  // (the embedding table, routers, norms, biases, ...: parameters.h).
  Int128 costing_flops = 0;
  Int128 not_costing_flops = 0;
  Int128 six_n_d = 0;  // 6 x active x the workload's tokens, in FLOPs
};

// A feature of the model that megatron mode, as Megatron-LM's function (or
// Megatron-Bridge's, for its Kimi fields) does, leaves out or charges
// otherwise for want of a term of its own: compare's convention of that
// name, megatron mode's choice for it, and what that choice alone changes in
// model mode's count of the workload.
struct MegatronOmission {
  ConventionKind kind;
  std::string choice;  // megatron mode's: "not counted", "dense GQA over causal pairs, no indexer", ...
  // Model mode's count with this choice alone minus model mode's count, over
  // the workload's documents (negative: the model-mode FLOPs of what is left
  // out). Unset when the workload gives only T and S2, which model mode
  // cannot count.
  std::optional<Int128> flops;
};

// FLOPs of one training iteration (forward and backward) over the workload.
// The components sum to the total, and so do the layers: exactly in the exact
// modes; in megatron mode each is a double that sums to the total within
// rounding (relative 1e-15).
struct Report {
  Mode mode = Mode::kMegatron;
  Recompute recompute = Recompute::kNone;
  std::string model;     // summarize(model)
  std::string workload;  // describe(workload)
  Flops total;
  Int128 tokens = 0;                       // T
  double per_token = 0;                    // total / T
  std::vector<ComponentFlops> components;  // non-zero ones, in Component order
  std::vector<LayerFlops> layers;
  // Executed mode: the model-mode total beside the executed one, the
  // numerators of MFU and HFU.
  std::optional<Flops> model_total;
  // count() only, when the parameters can be counted (every MoE layer has
  // num_experts): what total / 6 N D shows attention and the indexer add.
  std::optional<ParameterSummary> parameters;
  // Megatron mode, count() only: what it leaves out of the model, or charges
  // otherwise, in kAllConventionKinds order; empty in the exact modes.
  std::vector<MegatronOmission> megatron_omissions;
};

// Document lengths given a block at a time, in order: the function calls
// its argument once per block and stops at the first error it returns.
using LengthBlocks = std::function<Status(const std::function<Status(std::span<const std::int64_t>)>&)>;

// A model prepared for counting in one mode: its terms are built once, so that
// counting many workloads costs little more than one multiply-add per
// distinct statistic.
// Thread safety: immutable once created; several threads may count with one
// counter (or its copies, which share its prepared terms) at once.
class FlopsCounter {
 public:
  // Validates the model. Executed mode needs num_experts on every MoE layer
  // (it counts the router); recompute other than kNone needs executed mode.
  static Result<FlopsCounter> create(const Model& model, Mode mode, Recompute recompute = Recompute::kNone);

  // Total FLOPs of one iteration. Errors: an invalid workload; aggregates in
  // an exact mode; a count that does not fit in 128 bits.
  Result<Flops> total(const Workload& workload) const;

  // The total with its breakdown by component and by layer; in executed mode
  // also the model-mode total (Report::model_total).
  Result<Report> report(const Workload& workload) const;

  // report() over packed documents given by their cu_seqlens offsets (0
  // first, non-decreasing), read in place in one pass: neither the offsets
  // nor their lengths are copied. Equal to the report of the PackedDocuments
  // of those lengths, errors included.
  Result<Report> report_cu_seqlens(std::span<const std::int64_t> cu_seqlens) const;
  Result<Report> report_cu_seqlens(std::span<const std::int32_t> cu_seqlens) const;
  // report() over packed documents whose lengths arrive in blocks (a large
  // cu_seqlens file read in one pass): equal to the report of the
  // PackedDocuments of every length, without holding them. Errors: those
  // of `feed`, a negative length ("lengths[i] = -1: must be >= 0", i within
  // its block), no tokens, a count past 128 bits.
  Result<Report> report_length_blocks(const LengthBlocks& feed) const;

  // Report::components alone, without the per-layer rows: as fast as total()
  // times the number of components. Equal to report()'s exactly in the exact
  // modes, within rounding in megatron mode.
  Result<std::vector<ComponentFlops>> components(const Workload& workload) const;

  Mode mode() const;

  // The distinct statistics the count depends on, in a fixed order.
  const std::vector<Statistic>& statistics() const;

  // Exact modes: the total from the batch sums of statistics(), in the same
  // order (what SeqStats accumulates). Errors: a wrong number of sums, a
  // negative sum, a count that does not fit in 128 bits, megatron mode.
  Result<Flops> total_from_statistics(const std::vector<Int128>& sums) const;

 private:
  friend class CounterInternals;  // the library's own callers (src/accounting/counter_internals.h)
  class Impl;                     // the prepared terms (src/accounting/count.cc)

  explicit FlopsCounter(std::shared_ptr<const Impl> impl);

  std::shared_ptr<const Impl> impl_;  // immutable, shared by copies
};

// Sets report.parameters from `parameters`, count_parameter_totals() of the
// model the report counts, when they were counted; leaves it unset when they
// were not (an MoE layer without num_experts) or when 6 N D passes 128 bits.
void add_parameter_summary(const Result<ModelParameters>& parameters, Report& report);

// Documents by length: how many of each length (packed documents read in
// blocks, or a cu_seqlens array).
using DocumentsByLength = std::map<std::int64_t, std::int64_t>;

// In megatron mode, sets report.megatron_omissions for `model` over the
// workload's documents (does nothing in the exact modes). The features are
// those compare's Megatron-LM rows leave out or charge otherwise for want of
// a term: the MTP projection (the hybrid function of Megatron-LM's main
// branch), block-sparse attention and QSA (dense, without the indexer), DSA
// over grouped-query attention, the attention output gate (hybrid path), the
// head gate, the MLA output gate, hyper-connections, n-gram memory,
// per-layer embeddings, attention residuals and zero-computation experts;
// each is listed when its difference is not zero. Cost: a few counts of the
// model per distinct document length. Errors: a count past 128 bits.
Status add_megatron_omissions(const Model& model, const Workload& workload, Report& report);
Status add_megatron_omissions(const Model& model, const DocumentsByLength& documents, Report& report);

// One-shot convenience: FlopsCounter::create(model, mode, recompute).report(workload),
// with Report::parameters and Report::megatron_omissions.
Result<Report> count(const Model& model, const Workload& workload, Mode mode, Recompute recompute = Recompute::kNone);
// The same over packed documents given in blocks (FlopsCounter::report_length_blocks).
Result<Report> count(const Model& model, const LengthBlocks& feed, Mode mode, Recompute recompute = Recompute::kNone);

}  // namespace trainflops

#endif  // TRAINFLOPS_COUNT_H_
