#include "trainflops/presets.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "megatron_args_json.h"
#include "presets_data.h"

namespace trainflops {
namespace {

using nlohmann::json;

// The files are part of the build and tested; a malformed one is a bug
// reported by the preset tests, and skipped here.
std::vector<Preset> load_presets() {
  std::vector<Preset> loaded;
  for (std::string_view text : preset_files()) {
    const json file = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!file.is_object() || !file.contains("args")) continue;
    Result<ParsedMegatronArgs> args = megatron_args_from_json(file["args"]);
    if (!args.ok()) continue;
    loaded.push_back(Preset{file.value("name", ""), file.value("title", ""), file.value("description", ""),
                            file.value("source", ""), std::move(args.value().args)});
  }
  std::sort(loaded.begin(), loaded.end(), [](const Preset& a, const Preset& b) { return a.name < b.name; });
  return loaded;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = load_presets();
  return all;
}

Result<Preset> find_preset(std::string_view name) {
  std::string known;
  for (const Preset& preset : presets()) {
    if (preset.name == name) return preset;
    known += (known.empty() ? "" : ", ") + preset.name;
  }
  return Error("preset = \"" + std::string(name) + "\": unknown (known: " + known + ")");
}

Result<Model> preset_model(const Preset& preset) {
  TRAINFLOPS_ASSIGN_OR_RETURN(Model model, model_from_megatron_args(preset.args));
  model.name = preset.title;
  return model;
}

}  // namespace trainflops
