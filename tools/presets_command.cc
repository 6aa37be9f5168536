// trainflops presets: the built-in models, with the parameters trainflops
// counts for each (parameters.h), not the published figures.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "command.h"
#include "trainflops/model_input.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops::cli {
namespace {

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text + (text.size() > width ? " " : "");
}

Result<ModelParameters> parameters_of(const Preset& preset) {
  ModelInput input;
  input.preset = preset.name;
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel resolved, resolve_model(input));
  Result<ModelParameters> parameters = count_parameters(resolved.model);
  if (!parameters.ok()) return parameters.error().context("preset " + preset.name);
  return parameters;
}

// "744B total, 40.3B active (+ 9.95B MTP)": the main model's total and active
// parameters (the embedding table is a lookup, not active), and the MTP depths'.
Result<std::string> parameter_summary(const Preset& preset) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelParameters parameters, parameters_of(preset));
  const ParameterCount main = parameters.main_model();
  std::string text = format_parameters(main.total) + " total, " + format_parameters(main.active) + " active";
  if (parameters.mtp.total > 0) text += " (+ " + format_parameters(parameters.mtp.total) + " MTP)";
  return text;
}

// One object per preset: its name, title, description, source, context
// length and the parameters of the table (as decimal strings).
Result<std::string> presets_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Preset& preset : presets()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const ModelParameters parameters, parameters_of(preset));
    const ParameterCount main = parameters.main_model();
    nlohmann::ordered_json row = {
        {"name", preset.name}, {"title", preset.title}, {"description", preset.description}, {"source", preset.source}};
    if (preset.seq_length) row["seq_length"] = *preset.seq_length;
    row["parameters"] = {{"total", to_decimal(main.total)},
                         {"active", to_decimal(main.active)},
                         {"mtp", to_decimal(parameters.mtp.total)}};
    out.push_back(std::move(row));
  }
  return out.dump(2) + "\n";
}

// Columns as wide as their longest entry, two spaces apart.
Result<std::string> list_presets() {
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t name_width = 0, summary_width = 0;
  for (const Preset& preset : presets()) {
    Result<std::string> summary = parameter_summary(preset);
    if (!summary.ok()) return summary.error();
    name_width = std::max(name_width, preset.name.size() + 2);
    summary_width = std::max(summary_width, summary.value().size() + 2);
    rows.emplace_back(preset.name, summary.value());
  }
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += padded(rows[i].first, name_width) + padded(rows[i].second, summary_width) + presets()[i].description + "\n";
  }
  return out;
}

}  // namespace

Runner add_presets_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* command = app.add_subcommand("presets", "List the built-in models (--preset NAME) with their parameters");
  command->add_option("--format", *format, "table (default) or json");
  return [format](const std::vector<std::string>& after_dashes) {
    if (const int status = reject_words_after_dashes(after_dashes)) return status;
    if (*format == "json") return print_result(presets_json());
    if (*format != "table") return report_error(Error("--format = \"" + *format + "\": presets prints table or json"));
    return print_result(list_presets());
  };
}

}  // namespace trainflops::cli
