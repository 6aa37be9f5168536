// How the per-token cost of training changes with context length, beside what
// dense-attention accounting (every DSA layer charged as dense MLA attention,
// no indexer, Megatron-LM's count before DSA support; every sliding window or
// chunk as full causal attention) reports for the same model.
//
// Thread safety: SweepPoint is a plain value: several threads may read one at
// once, and a thread that changes one must be the only one using it. Sweeper:
// as its comment below says. The functions here keep no state of their own:
// several threads may call them at once, given different objects to change.
#ifndef TRAINFLOPS_SWEEP_H_
#define TRAINFLOPS_SWEEP_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// FLOPs per token of one training iteration (forward + backward) over BSHD
// sequences of `seq_length` tokens.
struct SweepPoint {
  std::int64_t seq_length = 0;
  double per_token = 0;        // the model as described
  double dense_per_token = 0;  // with_dense_attention(model)
  // per_token by component (index: the Component's value), per token; 0 for
  // the components the model does not have. Fixed size: a sweep of many
  // lengths holds no allocation per point.
  std::array<double, kAllComponents.size()> components{};
};

// `model` with every DSA layer replaced by its MLA attention (dense core
// attention over all causal pairs, no indexer), and every windowed or chunked
// attention by full causal attention.
Model with_dense_attention(const Model& model);

// A sweep's two counters (the model's and its dense accounting's), prepared
// once: points one length at a time, for sweeps of more lengths than are
// worth holding at once.
// Thread safety: immutable once created; several threads may take points
// from one Sweeper at once.
class Sweeper {
 public:
  // Errors: the model's, as FlopsCounter::create reports them.
  static Result<Sweeper> create(const Model& model, Mode mode);

  // The point of one sequence of `seq_length` (> 0) tokens. Errors: counts
  // past the mode's limit.
  Result<SweepPoint> point(std::int64_t seq_length) const;

  // Whether dense-attention accounting counts differently from the model at
  // any of `seq_lengths` (the sweep's dense columns mean something): false at
  // once for a model without DSA, windows or chunks; else the points in turn
  // up to the first that differs. Errors: point()'s.
  Result<bool> dense_differs(std::span<const std::int64_t> seq_lengths) const;

 private:
  Sweeper(FlopsCounter counter, FlopsCounter dense, bool attention_changes)
      : counter_(std::move(counter)), dense_(std::move(dense)), attention_changes_(attention_changes) {}
  FlopsCounter counter_, dense_;
  bool attention_changes_;  // with_dense_attention changed a layer
};

// Every point of `seq_lengths` (at least one).
Result<std::vector<SweepPoint>> sweep(const Model& model, const std::vector<std::int64_t>& seq_lengths, Mode mode);

}  // namespace trainflops

#endif  // TRAINFLOPS_SWEEP_H_
