// Megatron-LM's training log: the numbers of one iteration line, e.g.
//   [2026-01-01 12:00:00] iteration 100/ 5000 | consumed samples: 102400 |
//   elapsed time per iteration (ms): 24500.3 | throughput per GPU
//   (TFLOP/s/GPU): 43.5 | learning rate: 3.0E-04 | global batch size: 1024 | ...
// as megatron/training/training.py writes it every log_interval iterations.
//
// Thread safety: MegatronLogIteration is a plain value: several threads may
// read one at once, and a thread that changes one must be the only one using
// it. The functions here keep no state of their own: several threads may call
// them at once, given different objects to change.
#ifndef TRAINFLOPS_MEGATRON_LOG_H_
#define TRAINFLOPS_MEGATRON_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

struct MegatronLogIteration {
  std::int64_t line = 0;  // 1-based, in the text given
  std::optional<std::int64_t> iteration;
  double step_time_s = 0;  // "elapsed time per iteration (ms)", in seconds
  // "throughput per GPU (TFLOP/s/GPU)": Megatron-LM's own count over the step
  // time and its world size; absent unless it ran with --log-throughput.
  std::optional<double> tflops_per_gpu;
  std::optional<std::int64_t> global_batch_size;
};

// The last iteration line of `text` (a whole log, or one line): the one with
// "elapsed time per iteration (ms):". Errors: no such line ("no line has
// \"elapsed time per iteration (ms):\": give a Megatron-LM training log"); a
// field that is not a number ("line 12: elapsed time per iteration (ms) =
// \"abc\": must be a positive number").
Result<MegatronLogIteration> parse_megatron_log(std::string_view text);

// The last iteration line of the log file at `path`, read whole (at most
// 1 GiB). Errors: the file's ("PATH: cannot open (No such file or
// directory)", "PATH: larger than ...") and parse_megatron_log()'s, after
// "PATH: ".
Result<MegatronLogIteration> read_megatron_log(const std::string& path);

}  // namespace trainflops

#endif  // TRAINFLOPS_MEGATRON_LOG_H_
