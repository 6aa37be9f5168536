// Where the command line reads a model from: exactly one of --preset, --args,
// --config, --hf or --megatron -- <flags>.
#ifndef TRAINFLOPS_TOOLS_MODEL_SOURCE_H_
#define TRAINFLOPS_TOOLS_MODEL_SOURCE_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops::cli {

struct ModelOptions {
  std::string preset, args_file, config_file, hf_file;
  bool megatron = false;
  std::vector<std::string> megatron_flags;  // the words after -- (set by the runner, not by CLI11)
  std::string dsa_indexer_grad_mode;        // empty: as the source says
  bool verbose = false;
};

// Adds --preset, --args, --config, --hf, --megatron (with the words after --),
// --dsa-indexer-grad-mode and --verbose.
void add_model_options(CLI::App& command, ModelOptions& options);

// The model, and what its source says about the workload.
struct ModelSource {
  Model model;
  std::optional<std::int64_t> global_batch_size, seq_length;
  std::vector<std::string> ignored;  // inputs that do not change FLOPs
  std::vector<std::string> assumed;  // values the source leaves out, filled in (HfImport::assumed)
};

// Loads the model and applies --dsa-indexer-grad-mode; lists the assumed
// values on stderr, and with --verbose the ignored inputs too.
Result<ModelSource> load_model(const ModelOptions& options);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_MODEL_SOURCE_H_
