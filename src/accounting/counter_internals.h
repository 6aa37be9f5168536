// Internal: what FlopsCounter offers the library's own callers only.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_
#define TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_

#include <array>

#include "trainflops/component.h"
#include "trainflops/count.h"
#include "trainflops/result.h"
#include "trainflops/workload.h"

namespace trainflops {

class CounterInternals {
 public:
  // counter.total(workload), with components()' values written into
  // `per_component` (by the Component's value; 0 for the absent ones), from
  // one evaluation of the workload and without a list: what a sweep over many
  // workloads wants.
  static Result<Flops> total_and_components(const FlopsCounter& counter, const Workload& workload,
                                            std::array<double, kAllComponents.size()>& per_component) {
    return counter.total_and_components(workload, per_component);
  }
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_COUNTER_INTERNALS_H_
