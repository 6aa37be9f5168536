#include "trainflops/model_input.h"

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <variant>

#include "base/input_file.h"
#include "trainflops/hf_config.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/native_config.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

// Megatron-LM trains the indexer when the coefficient is > 0, so it reads a
// NaN or negative one as no indexer loss: a count Megatron-LM's drop-in
// reproduces, and a typo everywhere else.
Status check_indexer_loss_coeff(const MegatronArgs& args, bool megatron_parity) {
  const std::optional<double> coeff = args.dsa_indexer_loss_coeff;
  if (megatron_parity || !coeff || *coeff >= 0) return Ok{};
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", *coeff);
  return Error(std::string("dsa_indexer_loss_coeff = ") + shown +
               ": must be a number >= 0 (Megatron-LM would count it as no indexer loss)");
}

Result<ResolvedModel> from_megatron_args(const MegatronArgs& args, bool megatron_parity, MegatronBranch branch) {
  TRAINFLOPS_RETURN_IF_ERROR(check_indexer_loss_coeff(args, megatron_parity));
  ResolvedModel resolved;
  TRAINFLOPS_ASSIGN_OR_RETURN(resolved.model, model_from_megatron_args(args, branch));
  resolved.seq_length = args.seq_length;
  return resolved;
}

Result<ResolvedModel> from_parsed_args(ParsedMegatronArgs parsed, bool megatron_parity, MegatronBranch branch) {
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel resolved, from_megatron_args(parsed.args, megatron_parity, branch));
  resolved.ignored = std::move(parsed.ignored);
  return resolved;
}

// Megatron-Bridge's own function, which its training loop runs, takes a
// linear_attention_freq list of one entry per decoder layer with MTP depths
// (Megatron-LM's refuses it) and charges each MTP layer as the last decoder
// layer, whose spec Bridge's MTP reuses. Megatron-LM's function counts the
// same on the list with that last entry repeated once per depth.
std::optional<MegatronArgs> as_bridge_function_counts(const MegatronArgs& args) {
  if (!args.linear_attention_freq || !args.num_layers || args.mtp_num_layers.value_or(0) <= 0) return std::nullopt;
  const auto* decoder = std::get_if<std::vector<std::int64_t>>(&*args.linear_attention_freq);
  if (!decoder || decoder->empty() || std::ssize(*decoder) != *args.num_layers) return std::nullopt;
  MegatronArgs counted = args;
  auto& pattern = std::get<std::vector<std::int64_t>>(*counted.linear_attention_freq);
  pattern.insert(pattern.end(), static_cast<std::size_t>(*args.mtp_num_layers), decoder->back());
  return counted;
}

// Megatron mode counts the arguments Megatron-Bridge's provider sets with
// Megatron-LM's function, or where that refuses them and Bridge's own
// function counts them, with Bridge's (`assumed` says so).
Result<Model> megatron_mode_model(const MegatronArgs& bridge_args, MegatronBranch branch,
                                  std::vector<std::string>& assumed) {
  Result<Model> counted = model_from_megatron_args(bridge_args, branch);
  if (counted.ok()) return counted;
  const std::optional<MegatronArgs> bridge_function_args = as_bridge_function_counts(bridge_args);
  if (bridge_function_args) {
    Result<Model> bridge_counted = model_from_megatron_args(*bridge_function_args, branch);
    if (bridge_counted.ok()) {
      assumed.push_back(
          "Megatron-Bridge's function for megatron mode, as Bridge's training loop counts: Megatron-LM's refuses the "
          "arguments Bridge sets for this config (" +
          counted.error().message() + "); Bridge's charges each MTP depth as the last decoder layer");
      return bridge_counted;
    }
  }
  return counted.error().context(
      "megatron mode counts the Megatron-LM arguments Megatron-Bridge sets for this config, which Megatron-LM's "
      "function refuses (model mode counts the config as it is)");
}

Result<ResolvedModel> from_hf_import(Result<HfImport> import, std::string_view where, MegatronBranch branch) {
  TRAINFLOPS_ASSIGN_OR_RETURN(HfImport imported, std::move(import));
  ResolvedModel resolved;
  if (imported.bridge_args) {
    Result<Model> megatron = megatron_mode_model(*imported.bridge_args, branch, imported.assumed);
    if (megatron.ok()) megatron.value().name = imported.model.name;
    resolved.megatron_model = std::move(megatron);
  }
  resolved.model = std::move(imported.model);
  resolved.ignored = std::move(imported.ignored);
  resolved.assumed = std::move(imported.assumed);
  for (const std::string& unknown : imported.unknown) resolved.warnings.push_back(std::string(where) + ": " + unknown);
  return resolved;
}

Result<ResolvedModel> from_source(const ModelInput& in, MegatronBranch branch) {
  if (in.preset) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Preset preset, find_preset(*in.preset));
    ResolvedModel resolved;
    TRAINFLOPS_ASSIGN_OR_RETURN(resolved.model, preset_model(preset));
    resolved.seq_length = preset.seq_length;
    return resolved;
  }
  if (in.megatron_flags) {
    TRAINFLOPS_ASSIGN_OR_RETURN(
        ParsedMegatronFlags flags,
        parse_megatron_flags(*in.megatron_flags,
                             in.allow_unknown_flags ? UnknownFlags::kWarned : UnknownFlags::kRejected));
    TRAINFLOPS_RETURN_IF_ERROR(check_indexer_loss_coeff(flags.args, in.megatron_parity));
    ResolvedModel resolved;
    TRAINFLOPS_ASSIGN_OR_RETURN(resolved.model, model_from_megatron_flags(flags, branch));
    resolved.seq_length = flags.args.seq_length;
    resolved.global_batch_size = flags.global_batch_size;
    resolved.pipeline = flags.pipeline;
    resolved.recompute = flags.recompute;
    resolved.ignored = std::move(flags.ignored);
    resolved.warnings = std::move(flags.unknown);
    return resolved;
  }
  if (in.megatron_args) return from_megatron_args(*in.megatron_args, in.megatron_parity, branch);
  if (in.args_file) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(*in.args_file, kMaxConfigFileBytes));
    Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(text);
    if (!parsed.ok()) return parsed.error().context(*in.args_file);
    return from_parsed_args(std::move(parsed).value(), in.megatron_parity, branch);
  }
  if (in.args_json) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ParsedMegatronArgs parsed, parse_megatron_args_json(*in.args_json));
    return from_parsed_args(std::move(parsed), in.megatron_parity, branch);
  }
  if (in.config_file || in.config_json) {
    ResolvedModel resolved;
    TRAINFLOPS_ASSIGN_OR_RETURN(resolved.model,
                                in.config_file ? read_native_config(*in.config_file) : parse_native_config(*in.config_json));
    return resolved;
  }
  const UnknownFields unknown_fields = in.strict ? UnknownFields::kRejected : UnknownFields::kWarned;
  if (in.hf_config_json) {
    return from_hf_import(import_hf_config(*in.hf_config_json, unknown_fields), "config.json", branch);
  }
  // A release is a directory whose config.json describes the model.
  std::string path = *in.hf_config;
  std::error_code ignored_error;
  if (std::filesystem::is_directory(path, ignored_error)) path = (std::filesystem::path(path) / "config.json").string();
  return from_hf_import(read_hf_import(path, unknown_fields), path, branch);
}

}  // namespace

Result<ResolvedModel> resolve_model(const ModelInput& in) {
  const int sources = in.preset.has_value() + in.megatron_flags.has_value() + in.args_file.has_value() +
                      in.config_file.has_value() + in.hf_config.has_value() + in.megatron_args.has_value() +
                      in.args_json.has_value() + in.config_json.has_value() + in.hf_config_json.has_value();
  if (sources != 1) {
    return Error(std::string(sources == 0 ? "no model" : "several models") +
                 ": give exactly one model source: preset (a built-in model; trainflops presets lists them), "
                 "args (Megatron-LM arguments, JSON), config (a trainflops config), hf (a Hugging Face "
                 "config.json or its directory) or Megatron-LM flags");
  }
  MegatronBranch branch = MegatronBranch::kMain;
  if (in.megatron_branch) {
    TRAINFLOPS_ASSIGN_OR_RETURN(branch, parse_megatron_branch(*in.megatron_branch));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel resolved, from_source(in, branch));
  if (in.dsa_indexer_grad_mode) {
    TRAINFLOPS_RETURN_IF_ERROR(apply_dsa_indexer_grad_mode(resolved.model, *in.dsa_indexer_grad_mode));
    if (resolved.megatron_model && resolved.megatron_model->ok()) {
      const Status applied = apply_dsa_indexer_grad_mode(resolved.megatron_model->value(), *in.dsa_indexer_grad_mode);
      if (!applied.ok()) resolved.megatron_model = applied.error();
    }
  }
  if (in.real_experts_per_token) {
    TRAINFLOPS_RETURN_IF_ERROR(set_real_experts_per_token(resolved.model, *in.real_experts_per_token));
    if (resolved.megatron_model && resolved.megatron_model->ok()) {
      const Status applied = set_real_experts_per_token(resolved.megatron_model->value(), *in.real_experts_per_token);
      if (!applied.ok()) resolved.megatron_model = applied.error();
    }
    // The measured value replaces the nominal one the source assumed.
    std::erase_if(resolved.assumed, [](const std::string& note) { return note.starts_with("real_experts_per_token"); });
  }
  return resolved;
}

Result<ResolvedModel> counted_in(ResolvedModel resolved, Mode mode) {
  if (mode != Mode::kMegatron || !resolved.megatron_model) return resolved;
  if (!resolved.megatron_model->ok()) return resolved.megatron_model->error();
  resolved.model = std::move(resolved.megatron_model->value());
  resolved.megatron_model.reset();
  return resolved;
}

Status apply_dsa_indexer_grad_mode(Model& model, std::string_view grad_mode) {
  Result<DsaIndexer::GradMode> mode = parse_grad_mode(grad_mode);
  if (!mode.ok()) return Error("dsa_indexer_" + mode.error().message());
  TRAINFLOPS_RETURN_IF_ERROR(set_dsa_indexer_grad_mode(model, mode.value()));
  return validate(model);
}

}  // namespace trainflops
