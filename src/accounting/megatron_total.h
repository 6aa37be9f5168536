// Internal: megatron_total() (count.h) for a caller whose models are
// validated when they are made, such as the Python module's trainflops.Model.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_MEGATRON_TOTAL_H_
#define TRAINFLOPS_SRC_ACCOUNTING_MEGATRON_TOTAL_H_

#include "trainflops/count.h"

namespace trainflops {

// megatron_total(model, workload) without validating the model again.
// Precondition: validate(model) succeeds.
Result<Flops> megatron_total_of_valid_model(const Model& model, const Workload& workload);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_MEGATRON_TOTAL_H_
