// The three ways trainflops counts a model.
//
// Thread safety: Mode is a plain value: several threads may read one at once,
// and a thread that changes one must be the only one using it. The functions
// here keep no state of their own: several threads may call them at once, given
// different objects to change.
#ifndef TRAINFLOPS_MODE_H_
#define TRAINFLOPS_MODE_H_

#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

enum class Mode {
  kMegatron,  // Megatron-LM's num_floating_point_operations: documents reduced to T and S2
  kModel,     // the same definitions counted exactly per document, in integers
  kExecuted,  // what the kernels execute, exactly (README, "Executed mode")
};

// "megatron", "model", "executed"; parse_mode() names them in its error.
std::string_view mode_name(Mode mode);
Result<Mode> parse_mode(std::string_view text);

}  // namespace trainflops

#endif  // TRAINFLOPS_MODE_H_
