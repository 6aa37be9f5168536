// trainflops presets: the built-in models, with the parameters trainflops
// counts for each (parameters.h), not the published figures.
#include <algorithm>
#include <utility>
#include <vector>

#include "command.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops::cli {
namespace {

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text + (text.size() > width ? " " : "");
}

// "744B total, 40.3B active (+ 9.95B MTP)": the main model's total and active
// parameters (the embedding table is a lookup, not active), and the MTP depths'.
Result<std::string> parameter_summary(const Preset& preset) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Model model, preset_model(preset));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelParameters parameters, count_parameters(model));
  const ParameterCount main = parameters.main_model();
  std::string text = format_parameters(main.total) + " total, " + format_parameters(main.active) + " active";
  if (parameters.mtp.total > 0) text += " (+ " + format_parameters(parameters.mtp.total) + " MTP)";
  return text;
}

// Columns as wide as their longest entry, two spaces apart.
Result<std::string> list_presets() {
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t name_width = 0, summary_width = 0;
  for (const Preset& preset : presets()) {
    Result<std::string> summary = parameter_summary(preset);
    if (!summary.ok()) return summary.error().context("preset " + preset.name);
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
  app.add_subcommand("presets", "List the built-in models (--preset NAME) with their parameters");
  return [](const std::vector<std::string>& after_dashes) {
    if (const int status = reject_words_after_dashes(after_dashes)) return status;
    return print_result(list_presets());
  };
}

}  // namespace trainflops::cli
