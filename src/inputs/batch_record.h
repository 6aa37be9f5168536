// Internal: one `batch` record (a JSON object on one line) read into the
// inputs every front end resolves: a ModelInput, a WorkloadInput, the mode
// and the recomputation, as text. Every key is checked here; a key the record
// format does not have is an error, with the nearest known key.
#ifndef TRAINFLOPS_SRC_INPUTS_BATCH_RECORD_H_
#define TRAINFLOPS_SRC_INPUTS_BATCH_RECORD_H_

#include <optional>
#include <string>
#include <string_view>

#include "trainflops/model_input.h"
#include "trainflops/result.h"
#include "trainflops/workload_input.h"

namespace trainflops {

struct BatchRecord {
  ModelInput model;
  WorkloadInput workload;
  std::string mode;                      // "megatron", "model" or "executed" (not yet checked)
  std::optional<std::string> recompute;  // "none", "selective" or "full" (not yet checked)
};

// The keys (include/trainflops/batch.h lists them with their meaning):
//   model:    args (an object of Megatron-LM arguments), preset, hf, config,
//             flags (a list of strings), dsa_indexer_grad_mode,
//             real_experts_per_token, strict, allow_unknown_flags
//   workload: batch_size, seq_length, docs, cu_seqlens, total_real_tokens,
//             seqlen_squared_sum (these two: a number or a decimal string)
//   count:    mode (required), recompute
// With docs and the aggregates together (as in reference vectors) the
// aggregates must equal the documents' sum and sum of squares, and the
// workload is the documents. Errors name the key, the value and the rule.
Result<BatchRecord> read_batch_record(std::string_view record_json);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_BATCH_RECORD_H_
