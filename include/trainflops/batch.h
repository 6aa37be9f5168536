// `trainflops batch`: one JSON record in, one JSON result out. A record is a
// reference vector (tests/data/*.jsonl) without its answer:
//   {"args": {...Megatron-LM arguments...}, "mode": "megatron" | "model" | "executed",
//    optionally "recompute": "none" | "selective" | "full" (executed mode),
//    and one workload: "batch_size" (BSHD of seq_length tokens), "docs"
//    (packed lengths), "cu_seqlens" or "total_real_tokens" + "seqlen_squared_sum"}
// Instead of "args" a record may name the model as the other front ends do:
// "preset", "hf", "config" or "flags" (model_input.h), with
// "dsa_indexer_grad_mode", "real_experts_per_token", "megatron_branch" ("main" or "dev"), "strict",
// "allow_unknown_flags" and, for BSHD, "seq_length".
//
// Thread safety: CountRequest and BatchAnswer are plain values: several threads
// may read one at once, and a thread that changes one must be the only one
// using it. The functions here keep no state of their own: several threads may
// call them at once, given different objects to change.
#ifndef TRAINFLOPS_BATCH_H_
#define TRAINFLOPS_BATCH_H_

#include <string>
#include <string_view>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/result.h"
#include "trainflops/workload.h"

namespace trainflops {

struct CountRequest {
  Model model;
  Workload workload;
  Mode mode = Mode::kMegatron;
  Recompute recompute = Recompute::kNone;  // "recompute": executed mode only
  std::vector<std::string> warnings;       // inputs counted as if absent (model_input.h)
};

// Parses one record. With both documents and aggregates (as in the reference
// vectors), megatron mode reads the aggregates after checking that they match
// the documents, and the exact modes read the documents.
Result<CountRequest> parse_count_request(std::string_view record_json);

// The answer to line `line_number` (from 1) of a batch, one JSON object
// without a newline:
//   {"flops": <number>}                       megatron mode
//   {"flops": <number>, "exact": "<integer>"} exact modes
//   ... "warnings": ["<warning>", ...]        when the model source had any
//   {"error": "line N: <message>"}            a blank line or anything invalid
struct BatchAnswer {
  std::string json;
  bool ok = false;  // false: the answer is an error
};
BatchAnswer answer_batch_line(std::string_view line, std::int64_t line_number);

}  // namespace trainflops

#endif  // TRAINFLOPS_BATCH_H_
