// Where the command line reads a model from: exactly one of --preset, --args,
// --config, --hf or --megatron -- <flags>, resolved by the library
// (model_input.h) as the Python module and `batch` resolve theirs.
#ifndef TRAINFLOPS_TOOLS_MODEL_SOURCE_H_
#define TRAINFLOPS_TOOLS_MODEL_SOURCE_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model_input.h"
#include "trainflops/result.h"

namespace trainflops::cli {

struct ModelOptions {
  std::string preset, args_file, config_file, hf_file;
  bool megatron = false;
  std::vector<std::string> megatron_flags;  // the words after -- (set by the runner, not by CLI11)
  std::string dsa_indexer_grad_mode;        // empty: as the source says
  std::string real_experts_per_token;       // empty: as the source says
  std::string megatron_branch;              // empty: main
  bool strict = false;
  bool allow_unknown_flags = false;
  bool verbose = false;
};

// Adds --preset, --args, --config, --hf, --megatron, --dsa-indexer-grad-mode,
// --real-experts-per-token and --verbose.
void add_model_options(CLI::App& command, ModelOptions& options);

using ModelSource = ResolvedModel;

// Resolves the model as `mode` counts it (counted_in: megatron mode counts a
// Hugging Face config by the Megatron-LM arguments Megatron-Bridge sets for
// it); lists the assumed values on stderr, and with --verbose the ignored
// inputs too.
Result<ModelSource> load_model(const ModelOptions& options, Mode mode);

// The recomputation to count: --recompute when given (`option` not empty),
// else, in executed mode, what the source says (Megatron-LM's
// --recompute-granularity), else none.
Result<Recompute> recompute_to_count(const std::string& option, const ModelSource& source, Mode mode);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_MODEL_SOURCE_H_
