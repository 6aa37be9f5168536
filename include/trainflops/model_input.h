// One way in for every front end: the command line, the Python module and
// `batch` describe where a model comes from with a ModelInput and turn it
// into a validated model here, so that they accept the same sources, apply
// the same rules and defaults, and give the same errors.
//
// Thread safety: ModelInput and ResolvedModel are plain values: several threads
// may read one at once, and a thread that changes one must be the only one
// using it. The functions here keep no state of their own: several threads may
// call them at once, given different objects to change.
#ifndef TRAINFLOPS_MODEL_INPUT_H_
#define TRAINFLOPS_MODEL_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/mode.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// Exactly one source must be set: a name, a file, or the same content in
// memory (what the Python module, a batch record or the web page holds).
struct ModelInput {
  std::optional<std::string> preset;                       // a built-in model's name
  std::optional<std::vector<std::string>> megatron_flags;  // Megatron-LM command-line words
  std::optional<std::string> args_file;                    // Megatron-LM arguments, a JSON file
  std::optional<std::string> config_file;                  // a trainflops config, a JSON file
  std::optional<std::string> hf_config;                    // a Hugging Face config.json, or its directory
  std::optional<MegatronArgs> megatron_args;               // Megatron-LM arguments, already read
  std::optional<std::string> args_json;                    // Megatron-LM arguments, JSON text
  std::optional<std::string> config_json;                  // a trainflops config, JSON text
  std::optional<std::string> hf_config_json;               // a Hugging Face config.json's text
  // How every DSA indexer trains, overriding what the source says: "off",
  // "detached", "sparse" or "full".
  std::optional<std::string> dsa_indexer_grad_mode;
  // How many of each token's top-k picks are real experts, on a model with
  // zero-computation experts (LongCat-Flash): measured on the data, in place
  // of the nominal value its source assumes (set_real_experts_per_token).
  std::optional<std::int64_t> real_experts_per_token;
  // Which Megatron-LM branch's function Megatron-LM arguments and flags (and
  // the arguments Megatron-Bridge sets for a Hugging Face config) are counted
  // by: "main" (unset) or "dev" (megatron_args.h, MegatronBranch).
  std::optional<std::string> megatron_branch;
  // A Hugging Face config field trainflops does not know: an error when
  // strict, else a warning.
  bool strict = false;
  // A Megatron-LM flag its parser does not accept (a fork's, a script's own
  // extra_args_provider's): a warning when allowed, else an error, as
  // Megatron-LM rejects it.
  bool allow_unknown_flags = false;
  // Megatron-LM's drop-in: arguments its function takes without complaint
  // are taken as it takes them (a NaN or negative dsa_indexer_loss_coeff:
  // no indexer loss) instead of refused as the strict front ends refuse them.
  bool megatron_parity = false;
};

// The model, and what its source says beyond it.
struct ResolvedModel {
  Model model;  // validated
  // What megatron mode counts instead of `model`: for a Hugging Face config
  // of a type whose Megatron-Bridge provider trainflops maps, the model of the
  // Megatron-LM arguments that provider sets (HfImport::bridge_args) as
  // Megatron-LM's function counts them, else as Megatron-Bridge's own
  // function does (`assumed` then says so), else why Megatron-LM's function
  // refuses them. Unset for every other source.
  std::optional<Result<Model>> megatron_model;
  // The workload a source may name: Megatron-LM's --global-batch-size and
  // seq_length, a preset's seq_length.
  std::optional<std::int64_t> global_batch_size, seq_length;
  // Megatron-LM flags name the pipeline split and the recomputation (for
  // executed mode: "full" or "selective") too.
  PipelineSplit pipeline;
  std::optional<std::string> recompute;
  std::vector<std::string> ignored;   // inputs that do not change FLOPs
  std::vector<std::string> assumed;   // values the source leaves out, filled in, one sentence each
  std::vector<std::string> warnings;  // inputs counted as if absent that may change FLOPs (unknown fields, flags)
};

// Errors: no source or several ("give exactly one model source: ..."), and
// whatever the source's reader reports, prefixed with the file it read.
Result<ResolvedModel> resolve_model(const ModelInput& input);

// `resolved` as `mode` counts it: in megatron mode with a megatron_model,
// that model replaces `model` (or its error is returned: "megatron mode
// counts the Megatron-LM arguments Megatron-Bridge sets for this config,
// which Megatron-LM's function refuses (model mode counts the config as it
// is): <Megatron-LM's rule>"); otherwise `resolved` as it is.
Result<ResolvedModel> counted_in(ResolvedModel resolved, Mode mode);

// Trains every DSA indexer of `model` as `grad_mode` ("off", "detached",
// "sparse", "full") says, and validates the result (KPool allows only off).
// Errors: 'dsa_indexer_grad_mode = "dense": must be one of off, detached,
// sparse, full', a model without DSA layers, the KPool rule.
Status apply_dsa_indexer_grad_mode(Model& model, std::string_view grad_mode);

}  // namespace trainflops

#endif  // TRAINFLOPS_MODEL_INPUT_H_
