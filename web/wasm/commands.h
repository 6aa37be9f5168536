// What the web page asks of the library, one function per view. Each returns
// a JSON object as text: the command line's own JSON output where the
// library renders it (count, sweep, compare), else the command line's keys.
#ifndef TRAINFLOPS_WEB_WASM_COMMANDS_H_
#define TRAINFLOPS_WEB_WASM_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "request.h"
#include "trainflops/result.h"

namespace trainflops::web {

// `trainflops count --format json` as "report", its table as "table", and the
// source's "warnings" and "assumed" values (what the command line prints on
// stderr).
Result<std::string> count_view(const Options& options, const std::vector<std::int64_t>* cu_seqlens);

// `trainflops sweep --format json` over "seq-lengths" in "mode".
Result<std::string> sweep_view(const Options& options);

// `trainflops compare --format json` at "seq-length" with "global-batch-size"
// sequences.
Result<std::string> compare_view(const Options& options);

// A one-stage `trainflops plan`: "tokens" in sequences of "seq-length",
// "global-batch-size" per iteration, on "num-gpus" GPUs of "gpu" (with
// "dtype") or "peak-tflops", at "mfu", optionally with "price-per-gpu-hour";
// the keys of `trainflops plan --format json`.
Result<std::string> plan_view(const Options& options);

// `trainflops mfu` from "step-time" and "num-gpus" with the peak options; the
// keys of `trainflops mfu --format json`.
Result<std::string> mfu_view(const Options& options, const std::vector<std::int64_t>* cu_seqlens);

// The presets (name, title, description, context length) and the GPUs of
// the peak table (key, product, datatypes), for the page's lists.
std::string catalog();

}  // namespace trainflops::web

#endif  // TRAINFLOPS_WEB_WASM_COMMANDS_H_
