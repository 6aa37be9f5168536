// One way in for workloads: the command line, the Python module and `batch`
// say which workload they were given with a WorkloadInput and turn it into a
// Workload here, with the same rules, defaults and error text.
//
// Thread safety: WorkloadInput is a plain value: several threads may read one
// at once, and a thread that changes one must be the only one using it. The
// functions here keep no state of their own: several threads may call them at
// once, given different objects to change.
#ifndef TRAINFLOPS_WORKLOAD_INPUT_H_
#define TRAINFLOPS_WORKLOAD_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainflops/int128.h"
#include "trainflops/model_input.h"
#include "trainflops/result.h"
#include "trainflops/workload.h"

namespace trainflops {

// At most one workload: batch_size (with seq_length), docs, cu_seqlens (the
// offsets, or a file of them), or total_real_tokens with seqlen_squared_sum.
struct WorkloadInput {
  std::optional<std::int64_t> batch_size, seq_length;
  std::optional<std::vector<std::int64_t>> docs;
  std::optional<std::vector<std::int64_t>> cu_seqlens;
  std::optional<std::string> cu_seqlens_file;
  std::optional<Int128> total_real_tokens, seqlen_squared_sum;
};

// BSHD takes the batch size and sequence length the model's source gives
// (Megatron-LM flags and arguments, a preset) unless the input sets them.
// Errors name the workload fields: "give one workload: ...", "seq_length = 5:
// goes with batch_size (BSHD); ...", "total_real_tokens and seqlen_squared_sum
// come together", "no workload: ...", "seq_length is missing: ...", and the
// cu_seqlens readers' errors. Sizes are checked later, by validate().
Result<Workload> resolve_workload(const WorkloadInput& input, const ResolvedModel& model);

// resolve_workload()'s rules on which fields go together, alone: for a
// caller that reads cu_seqlens_file in blocks (read_cu_seqlens_lengths)
// instead of resolving it.
Status check_one_workload(const WorkloadInput& input);

}  // namespace trainflops

#endif  // TRAINFLOPS_WORKLOAD_INPUT_H_
