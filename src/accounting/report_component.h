// Tests' reading of one component's exact FLOPs in a report.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_REPORT_COMPONENT_H_
#define TRAINFLOPS_SRC_ACCOUNTING_REPORT_COMPONENT_H_

#include "trainflops/count.h"

namespace trainflops {

// The exact FLOPs of `wanted` in an exact-mode report; 0 when the report has none.
inline Int128 flops_of(const Report& report, Component wanted) {
  for (const ComponentFlops& part : report.components) {
    if (part.component == wanted) return *part.flops.exact;
  }
  return 0;
}

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_REPORT_COMPONENT_H_
