// Internal: the rule of workload.h's validate() that a batch holds a token,
// for the readers of cu_seqlens offsets (counting in place, workload inputs).
#ifndef TRAINFLOPS_SRC_MODEL_WORKLOAD_OFFSETS_H_
#define TRAINFLOPS_SRC_MODEL_WORKLOAD_OFFSETS_H_

#include <cstdint>

#include "trainflops/result.h"

namespace trainflops {

// For documents given by their cu_seqlens offsets (0 first, non-decreasing,
// as lengths_from_cu_seqlens() checks): an error naming cu_seqlens when the
// last offset, `last`, is 0 (defined in workload.cc).
Status check_offsets_hold_tokens(std::int64_t last);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_MODEL_WORKLOAD_OFFSETS_H_
