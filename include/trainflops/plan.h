// Run plans: the FLOPs, iterations, wall-clock time, GPU-hours and cost of a
// whole training run from the FLOPs of one iteration, a token budget and a
// cluster sustaining a given MFU; or the tokens a given time buys. A run may
// train in stages of different context lengths (4K for most tokens, then
// 32K and 128K extensions), each with its own iterations.
//
// Thread safety: PlanStage, PlanBatch, Cluster, StagePlan and RunPlan are plain
// values: several threads may read one at once, and a thread that changes one
// must be the only one using it. The functions here keep no state of their own:
// several threads may call them at once, given different objects to change.
#ifndef TRAINFLOPS_PLAN_H_
#define TRAINFLOPS_PLAN_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/int128.h"
#include "trainflops/result.h"

namespace trainflops {

// One stage: at least `tokens` tokens in sequences of `seq_length`.
struct PlanStage {
  Int128 tokens = 0;            // >= 1
  std::int64_t seq_length = 0;  // >= 1
};

// The global batch of every stage: a number of sequences, or a number of
// tokens per iteration that each stage's sequence length divides.
struct PlanBatch {
  std::optional<std::int64_t> sequences;
  std::optional<std::int64_t> tokens;
};

struct Cluster {
  std::int64_t num_gpus = 0;                 // >= 1
  double peak_tflops = 0;                    // dense peak of one GPU, TFLOP/s, > 0
  double mfu = 0;                            // the utilization the run sustains, in (0, 1]
  std::optional<double> price_per_gpu_hour;  // >= 0, any currency
};

struct StagePlan {
  std::int64_t seq_length = 0;
  std::int64_t sequences = 0;  // per iteration
  Int128 tokens_asked = 0;     // the stage's budget
  Int128 iterations = 0;       // enough whole iterations to train the budget
  Int128 tokens = 0;           // trained: iterations x sequences x seq_length
  Flops flops_per_iteration;   // as the counter counts (its mode)
  double flops = 0;            // iterations x flops_per_iteration
  double seconds = 0;          // flops / (num_gpus x peak x mfu)
  double gpu_hours = 0;
  std::optional<double> cost;  // gpu_hours x price
};

struct RunPlan {
  std::vector<StagePlan> stages;
  double sustained_flops_per_s = 0;  // num_gpus x peak x mfu
  Int128 tokens = 0;                 // over the stages
  double flops = 0, seconds = 0, gpu_hours = 0;
  std::optional<double> cost;
};

// The plan of `stages` on `cluster`, each iteration counted by `counter`.
// Errors: no stage; a stage, batch or cluster value out of range, naming the
// field ("stages[1].seq_length = 0: must be >= 1", "mfu = 1.2: must be in (0,
// 1]", "batch_tokens = 1000: seq_length = 4096 of stage 1 does not divide
// it"); both or neither batch form.
Result<RunPlan> plan_run(const FlopsCounter& counter, const std::vector<PlanStage>& stages, const PlanBatch& batch,
                         const Cluster& cluster);

// The inverse: the tokens of sequences of `seq_length` that `seconds` of the
// cluster train, in whole iterations (a one-stage plan whose budget is what
// fits). Errors as plan_run's, and a time too short for one iteration.
Result<RunPlan> plan_for_time(const FlopsCounter& counter, std::int64_t seq_length, const PlanBatch& batch,
                              const Cluster& cluster, double seconds);

// "0.4" or "40%" as a fraction in (0, 1]; errors name `field`:
//   --mfu = "140%": must be a fraction in (0, 1] or a percentage in (0, 100]
Result<double> parse_utilization(std::string_view text, std::string_view field);

}  // namespace trainflops

#endif  // TRAINFLOPS_PLAN_H_
