// Internal: what FlopsCounter offers the library's own callers (and its
// Python module's Megatron-LM drop-in) only.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_
#define TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_

#include <array>

#include "trainflops/component.h"
#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/result.h"
#include "trainflops/statistic.h"
#include "trainflops/workload.h"

namespace trainflops {

class CounterInternals {
 public:
  // counter.total(workload), with components()' values written into
  // `per_component` (by the Component's value; 0 for the absent ones), from
  // one evaluation of the workload and without a list: what a sweep over many
  // workloads wants.
  static Result<Flops> total_and_components(const FlopsCounter& counter, const Workload& workload,
                                            std::array<double, kAllComponents.size()>& per_component);

  // Megatron mode: the total of Megatron-LM's aggregates as its
  // num_floating_point_operations receives them, T and S2 as doubles that need
  // not be whole nor describe a batch (Megatron-LM checks neither): zero
  // tokens count 0, and S2 < T is counted as given. Thread-safe.
  // Errors: another mode; a statistic whose estimate needs the model's
  // seq_length when aggregates.seq_length is unset.
  static Result<Flops> megatron_total(const FlopsCounter& counter, const MegatronAggregates& aggregates);
};

// Megatron mode's total of one workload without preparing a counter: what a
// model counted once wants, as preparing one costs several counts. Equal, bit
// for bit, to FlopsCounter::create(model, Mode::kMegatron) then total(workload),
// errors included.
Result<Flops> megatron_total(const Model& model, const Workload& workload);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_
