#include "model_source.h"

#include <charconv>
#include <iostream>

#include "trainflops/megatron_flags.h"

namespace trainflops::cli {
namespace {

std::optional<std::string> given(const std::string& value) {
  return value.empty() ? std::nullopt : std::optional(value);
}

}  // namespace

void add_model_options(CLI::App& command, ModelOptions& options) {
  command.add_option("--preset", options.preset, "A built-in model (trainflops presets lists them)");
  command.add_option("--args", options.args_file, "Megatron-LM arguments as a JSON object (file)");
  command.add_option("--config", options.config_file, "trainflops model config (JSON, docs/config-format.md)");
  command.add_option("--hf", options.hf_file, "Hugging Face config.json, or its directory (docs/hf-import.md)");
  command.add_flag("--megatron", options.megatron, "Read the model from Megatron-LM flags given after --");
  command.add_option("--dsa-indexer-grad-mode", options.dsa_indexer_grad_mode,
                     "How every DSA indexer trains, whatever the model source: off, detached (dense KL loss), "
                     "sparse (sparse KL loss) or full (inputs not detached); overrides the source's setting");
  command.add_option("--real-experts-per-token", options.real_experts_per_token,
                     "How many of each token's top-k picks are real experts on a model with zero (identity) "
                     "experts, measured on the data; overrides the nominal value the source assumes");
  command.add_option("--megatron-branch", options.megatron_branch,
                     "Which Megatron-LM branch's FLOPs function counts Megatron-LM arguments and flags: main "
                     "(the default) or dev; they differ on hybrid layer patterns (docs/accounting.md, 6)");
  command.add_flag("--strict", options.strict,
                   "A Hugging Face config field trainflops does not know is an error (else a warning)");
  command.add_flag("--allow-unknown-flags", options.allow_unknown_flags,
                   "A Megatron-LM flag its parser does not accept is a warning, and the model is counted without it "
                   "(else an error)");
  command.add_flag("--verbose", options.verbose, "List inputs that do not change FLOPs (on stderr)");
}

Result<ModelSource> load_model(const ModelOptions& o, Mode mode) {
  if (!o.megatron && !o.megatron_flags.empty()) {
    return Error("unexpected \"" + o.megatron_flags.front() +
                 "\" after --: Megatron-LM flags need --megatron (--megatron -- <flags>)");
  }
  ModelInput input;
  input.preset = given(o.preset);
  input.args_file = given(o.args_file);
  input.config_file = given(o.config_file);
  input.hf_config = given(o.hf_file);
  if (o.megatron) input.megatron_flags = o.megatron_flags;
  input.dsa_indexer_grad_mode = given(o.dsa_indexer_grad_mode);
  input.megatron_branch = given(o.megatron_branch);
  if (!o.real_experts_per_token.empty()) {
    std::int64_t real = 0;
    const std::string& text = o.real_experts_per_token;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), real);
    if (error != std::errc{} || end != text.data() + text.size()) {
      return Error("real_experts_per_token = \"" + text + "\": must be a whole number of experts");
    }
    input.real_experts_per_token = real;
  }
  input.strict = o.strict;
  input.allow_unknown_flags = o.allow_unknown_flags;
  Result<ModelSource> resolved = resolve_model(input);
  if (!resolved.ok()) return resolved;
  Result<ModelSource> source = counted_in(std::move(resolved).value(), mode);
  if (!source.ok()) return source;
  for (const std::string& warning : source.value().warnings) std::cerr << "trainflops: warning: " << warning << "\n";
  for (const std::string& assumed : source.value().assumed) std::cerr << "trainflops: assumed " << assumed << "\n";
  if (o.verbose) {
    for (const std::string& ignored : source.value().ignored) {
      const std::optional<std::string_view> effect = uncounted_effect(ignored.substr(0, ignored.find(' ')));
      if (effect) {
        std::cerr << "not counted: " << ignored << ": " << *effect << "\n";
      } else {
        std::cerr << "ignored (does not change FLOPs): " << ignored << "\n";
      }
    }
  }
  return source;
}

Result<Recompute> recompute_to_count(const std::string& option, const ModelSource& source, Mode mode) {
  if (!option.empty()) return parse_recompute(option);
  if (mode == Mode::kExecuted && source.recompute) return parse_recompute(*source.recompute);
  return Recompute::kNone;
}

}  // namespace trainflops::cli
