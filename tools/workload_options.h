// The workload options shared by subcommands that count one iteration:
// BSHD (--global-batch-size, --seq-length), packed documents (--docs,
// --cu-seqlens) or Megatron-LM's aggregates (--total-real-tokens,
// --seqlen-squared-sum).
#ifndef TRAINFLOPS_TOOLS_WORKLOAD_OPTIONS_H_
#define TRAINFLOPS_TOOLS_WORKLOAD_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "model_source.h"
#include "trainflops/count.h"
#include "trainflops/result.h"
#include "trainflops/workload.h"
#include "trainflops/workload_input.h"
#include "trainflops/workload_text.h"

namespace trainflops::cli {

struct WorkloadOptions {
  // Parsed by the library (parse_size): range errors, and 4k-style lengths.
  std::optional<std::string> global_batch_size, seq_length;
  std::string docs, cu_seqlens_file;
  std::optional<std::string> total_real_tokens, seqlen_squared_sum;
};

void add_workload_options(CLI::App& command, WorkloadOptions& options);

// count() of exactly one workload; BSHD takes the batch size and sequence
// length the model source gives (Megatron-LM flags or args) unless the
// options set them. A --cu-seqlens file is read in one pass, a block of
// documents at a time, with memory bounded whatever its size.
Result<Report> count_workload(const WorkloadOptions& options, const ModelSource& source, Mode mode,
                              Recompute recompute);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_WORKLOAD_OPTIONS_H_
