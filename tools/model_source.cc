#include "model_source.h"

#include <iostream>

#include "trainflops/hf_config.h"
#include "trainflops/input_file.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/native_config.h"
#include "trainflops/presets.h"

namespace trainflops::cli {
namespace {

Result<ModelSource> load(const ModelOptions& o) {
  if (!o.megatron && !o.megatron_flags.empty()) {
    return Error("unexpected \"" + o.megatron_flags.front() + "\" after --: Megatron-LM flags need --megatron "
                 "(--megatron -- <flags>)");
  }
  const int sources =
      !o.preset.empty() + !o.args_file.empty() + !o.config_file.empty() + !o.hf_file.empty() + o.megatron;
  if (sources != 1) {
    return Error(
        "give exactly one model: --preset NAME (trainflops presets lists them), --args FILE (Megatron-LM args "
        "JSON), --config FILE (trainflops config), --hf FILE (Hugging Face config.json) or --megatron -- "
        "<Megatron-LM flags>");
  }
  ModelSource source;
  if (!o.preset.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Preset preset, find_preset(o.preset));
    TRAINFLOPS_ASSIGN_OR_RETURN(source.model, preset_model(preset));
    source.seq_length = preset.args.seq_length;
    return source;
  }
  if (!o.config_file.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(source.model, read_native_config(o.config_file));
    return source;
  }
  if (!o.hf_file.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(HfImport imported, read_hf_import(o.hf_file));
    source.model = std::move(imported.model);
    source.ignored = std::move(imported.ignored);
    source.assumed = std::move(imported.assumed);
    return source;
  }
  MegatronArgs args;
  if (o.megatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ParsedMegatronFlags flags, parse_megatron_flags(o.megatron_flags));
    args = std::move(flags.args);
    source.global_batch_size = flags.global_batch_size;
    source.ignored = std::move(flags.ignored);
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(o.args_file, kMaxConfigFileBytes));
    Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(text);
    if (!parsed.ok()) return parsed.error().context(o.args_file);
    args = std::move(parsed.value().args);
    source.ignored = std::move(parsed.value().ignored);
  }
  source.seq_length = args.seq_length;
  TRAINFLOPS_ASSIGN_OR_RETURN(source.model, model_from_megatron_args(args));
  return source;
}

}  // namespace

void add_model_options(CLI::App& command, ModelOptions& options) {
  command.add_option("--preset", options.preset, "A built-in model (trainflops presets lists them)");
  command.add_option("--args", options.args_file, "Megatron-LM arguments as a JSON object (file)");
  command.add_option("--config", options.config_file, "trainflops model config (JSON, docs/config-format.md)");
  command.add_option("--hf", options.hf_file, "Hugging Face config.json (docs/hf-import.md)");
  command.add_flag("--megatron", options.megatron, "Read the model from Megatron-LM flags given after --");
  command.add_option("--dsa-indexer-grad-mode", options.dsa_indexer_grad_mode,
                     "How every DSA indexer trains, whatever the model source: off, detached (dense KL loss), "
                     "sparse (sparse KL loss) or full (inputs not detached); overrides the source's setting");
  command.add_flag("--verbose", options.verbose, "List inputs that do not change FLOPs (on stderr)");
}

Result<ModelSource> load_model(const ModelOptions& options) {
  Result<ModelSource> source = load(options);
  if (!source.ok()) return source;
  if (!options.dsa_indexer_grad_mode.empty()) {
    Result<DsaIndexer::GradMode> mode = parse_grad_mode(options.dsa_indexer_grad_mode);
    if (!mode.ok()) {  // "grad_mode = ...", named as the option is spelt
      return Error("--dsa-indexer-grad-mode" + mode.error().message().substr(std::string_view("grad_mode").size()));
    }
    TRAINFLOPS_RETURN_IF_ERROR(set_dsa_indexer_grad_mode(source.value().model, mode.value()));
  }
  for (const std::string& assumed : source.value().assumed) std::cerr << "trainflops: assumed " << assumed << "\n";
  if (options.verbose) {
    for (const std::string& ignored : source.value().ignored) {
      std::cerr << "ignored (does not change FLOPs): " << ignored << "\n";
    }
  }
  return source;
}

}  // namespace trainflops::cli
