// The web page's requests: the command line's options by their names
// ("preset", "seq-length", "mode", ...), each a text as the page's form and
// its link (the URL query) hold them, read into the library's inputs with the
// same parsers and error text as the command line.
#ifndef TRAINFLOPS_WEB_WASM_REQUEST_H_
#define TRAINFLOPS_WEB_WASM_REQUEST_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model_input.h"
#include "trainflops/result.h"
#include "trainflops/workload.h"

namespace trainflops::web {

using Options = std::map<std::string, std::string>;

// The option's text, if the request has it and it is not empty.
std::optional<std::string> option(const Options& options, const std::string& name);

// The model from exactly one of "preset" (a name), "hf" (a Hugging Face
// config.json's text), "config" (a trainflops config's text), "args"
// (Megatron-LM arguments as JSON text) or "megatron" (Megatron-LM flags as a
// launch script writes them), with "dsa-indexer-grad-mode", "strict" and
// "allow-unknown-flags", as `mode` counts it (counted_in).
Result<ResolvedModel> read_model(const Options& options, Mode mode);

// The workload of "global-batch-size" with "seq-length", or of "cu-seqlens"
// (the name of the file the page read, whose offsets are `cu_seqlens`).
Result<Workload> read_workload(const Options& options, const ResolvedModel& source,
                               const std::vector<std::int64_t>* cu_seqlens);

// "mode" (megatron when absent) and "recompute" (else what the source says in
// executed mode, else none).
Result<Mode> read_mode(const Options& options);
Result<Recompute> read_recompute(const Options& options, const ResolvedModel& source, Mode mode);

// A size option ("--seq-length" in errors) with or without k/m suffixes.
Result<std::int64_t> read_size(const Options& options, const std::string& name, std::int64_t minimum, bool suffixes);

// A number option: a decimal as the command line reads it ("--step-time =
// \"x\": must be a number").
Result<double> read_number(const Options& options, const std::string& name);

}  // namespace trainflops::web

#endif  // TRAINFLOPS_WEB_WASM_REQUEST_H_
