#include "request.h"

#include "base/decimal_text.h"
#include "inputs/flags_file.h"
#include "trainflops/workload_input.h"
#include "trainflops/workload_text.h"

namespace trainflops::web {

std::optional<std::string> option(const Options& options, const std::string& name) {
  const auto found = options.find(name);
  if (found == options.end() || found->second.empty()) return std::nullopt;
  return found->second;
}

namespace {

bool switched_on(const Options& options, const std::string& name) {
  const std::optional<std::string> value = option(options, name);
  return value && *value != "0" && *value != "false";
}

}  // namespace

Result<ResolvedModel> read_model(const Options& options, Mode mode) {
  ModelInput input;
  input.preset = option(options, "preset");
  input.hf_config_json = option(options, "hf");
  input.config_json = option(options, "config");
  input.args_json = option(options, "args");
  if (const std::optional<std::string> flags = option(options, "megatron")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.megatron_flags, split_flags_file(*flags, "flags"));
  }
  input.dsa_indexer_grad_mode = option(options, "dsa-indexer-grad-mode");
  input.strict = switched_on(options, "strict");
  input.allow_unknown_flags = switched_on(options, "allow-unknown-flags");
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel resolved, resolve_model(input));
  return counted_in(std::move(resolved), mode);
}

Result<std::int64_t> read_size(const Options& options, const std::string& name, std::int64_t minimum, bool suffixes) {
  return parse_size(options.at(name), "--" + name, minimum,
                    suffixes ? SizeSuffixes::kAccepted : SizeSuffixes::kRejected);
}

Result<double> read_number(const Options& options, const std::string& name) {
  const std::string& text = options.at(name);
  const std::optional<double> value = parse_double(text);
  if (!value) return Error("--" + name + " = \"" + text + "\": must be a number");
  return *value;
}

Result<Workload> read_workload(const Options& options, const ResolvedModel& source,
                               const std::vector<std::int64_t>* cu_seqlens) {
  WorkloadInput input;
  if (option(options, "global-batch-size")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.batch_size, read_size(options, "global-batch-size", 1, false));
  }
  if (option(options, "seq-length")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.seq_length, read_size(options, "seq-length", 1, true));
  }
  if (const std::optional<std::string> file = option(options, "cu-seqlens")) {
    if (cu_seqlens == nullptr) return Error("--cu-seqlens " + *file + ": the page has not read this file");
    input.cu_seqlens = *cu_seqlens;
  }
  return resolve_workload(input, source);
}

Result<Mode> read_mode(const Options& options) { return parse_mode(option(options, "mode").value_or("megatron")); }

Result<Recompute> read_recompute(const Options& options, const ResolvedModel& source, Mode mode) {
  if (const std::optional<std::string> recompute = option(options, "recompute")) return parse_recompute(*recompute);
  if (mode == Mode::kExecuted && source.recompute) return parse_recompute(*source.recompute);
  return Recompute::kNone;
}

}  // namespace trainflops::web
