#include "trainflops/presets.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/edit_distance.h"
#include "base/json_text.h"
#include "inputs/megatron_args_json.h"
#include "inputs/presets_data.h"
#include "trainflops/hf_config.h"

namespace trainflops {
namespace {

using nlohmann::json;

Result<std::int64_t> positive_count(const json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end()) return Error("published_parameters." + key + " is missing");
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1) {
    return Error("published_parameters." + key + " = " + it->dump() + ": must be a positive integer");
  }
  return it->get<std::int64_t>();
}

Result<std::vector<ParameterPart>> parts(const json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end()) return Error("published_parameters." + key + " is missing");
  std::vector<ParameterPart> out;
  for (const json& name : it->is_array() ? *it : json::array({*it})) {
    Result<ParameterPart> part = name.is_string() ? parse_parameter_part(name.get<std::string>())
                                                  : Error("parameter part " + name.dump() + ": must be a string");
    if (!part.ok()) return part.error().context("published_parameters." + key);
    out.push_back(part.value());
  }
  if (out.empty()) return Error("published_parameters." + key + ": must name at least one part");
  return out;
}

Result<PublishedParameters> published_parameters(const json& object) {
  if (!object.is_object()) return Error("published_parameters: must be an object");
  PublishedParameters published;
  TRAINFLOPS_ASSIGN_OR_RETURN(published.total, positive_count(object, "total"));
  TRAINFLOPS_ASSIGN_OR_RETURN(published.active, positive_count(object, "active"));
  TRAINFLOPS_ASSIGN_OR_RETURN(published.total_counts, parts(object, "total_counts"));
  TRAINFLOPS_ASSIGN_OR_RETURN(published.active_counts, parts(object, "active_counts"));
  if (object.contains("total_precision")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(published.total_precision, positive_count(object, "total_precision"));
  }
  if (object.contains("active_precision")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(published.active_precision, positive_count(object, "active_precision"));
  }
  const auto source = object.find("source");
  if (source == object.end() || !source->is_string() || source->get<std::string>().empty()) {
    return Error("published_parameters.source is missing: a non-empty string that says where the figures come from");
  }
  published.source = source->get<std::string>();
  return published;
}

// Megatron-LM's arguments hold no name for a norm over all heads: a preset
// with args says it here. A Hugging Face config's model type gives its own
// layout, so the key goes with args only.
Result<ParameterLayout::QkNorm> qk_norm_of(const json& layout) {
  if (!layout.is_object()) return Error("parameter_layout: must be an object");
  for (const auto& [key, value] : layout.items()) {
    if (key != "qk_norm") return Error("parameter_layout." + key + ": unknown key (known: qk_norm)");
  }
  const auto it = layout.find("qk_norm");
  if (it == layout.end()) return Error("parameter_layout.qk_norm is missing: per_head or all_heads");
  if (*it == "per_head") return ParameterLayout::QkNorm::kPerHead;
  if (*it == "all_heads") return ParameterLayout::QkNorm::kAllHeads;
  return Error("parameter_layout.qk_norm = " + it->dump() +
               ": must be per_head (a norm of head_dim shared by the heads) or all_heads (one norm over every "
               "query head together, one over every key head)");
}

// The files are part of the build and tested (every file must parse); one
// that does not is left out here.
std::vector<Preset> load_presets() {
  std::vector<Preset> loaded;
  for (std::string_view text : preset_files()) {
    Result<Preset> preset = parse_preset(text);
    if (preset.ok()) loaded.push_back(std::move(preset).value());
  }
  std::sort(loaded.begin(), loaded.end(), [](const Preset& a, const Preset& b) { return a.name < b.name; });
  return loaded;
}

}  // namespace

Result<Preset> parse_preset(std::string_view json_text) {
  Result<json> parsed = parse_json<json>(json_text, JsonComments::kRejected);
  if (!parsed.ok()) return parsed.error().context("preset");
  const json& file = parsed.value();
  if (!file.is_object()) return Error("preset: not a JSON object");
  for (const char* key : {"name", "title", "description", "source"}) {
    if (!file.contains(key) || !file[key].is_string() || file[key].get<std::string>().empty()) {
      return Error(std::string("preset: \"") + key + "\" is missing: a non-empty string is required");
    }
  }
  const std::string name = file["name"].get<std::string>();
  Preset preset;
  preset.name = name;
  preset.title = file["title"].get<std::string>();
  preset.description = file["description"].get<std::string>();
  preset.source = file["source"].get<std::string>();
  if (file.contains("args") == file.contains("hf_config")) {
    return Error("preset " + name + ": give the model as exactly one of \"args\" (Megatron-LM arguments) or "
                 "\"hf_config\" (a Hugging Face config.json)");
  }
  if (file.contains("args")) {
    Result<ParsedMegatronArgs> args = megatron_args_from_json(file["args"]);
    if (!args.ok()) return args.error().context("preset " + name);
    preset.args = std::move(args.value().args);
    preset.seq_length = preset.args->seq_length;
    if (file.contains("seq_length")) {
      return Error("preset " + name + ": \"seq_length\" belongs in \"args\" when the model is given as args");
    }
    if (file.contains("parameter_layout")) {
      Result<ParameterLayout::QkNorm> qk_norm = qk_norm_of(file["parameter_layout"]);
      if (!qk_norm.ok()) return qk_norm.error().context("preset " + name);
      preset.qk_norm = qk_norm.value();
    }
  } else {
    if (file.contains("parameter_layout")) {
      return Error("preset " + name + ": \"parameter_layout\" goes with \"args\" only: a Hugging Face config's "
                   "model type gives its own layout");
    }
    if (!file["hf_config"].is_object()) return Error("preset " + name + ": \"hf_config\" must be a JSON object");
    preset.hf_config = file["hf_config"].dump();
    const auto seq_length = file.find("seq_length");
    if (seq_length == file.end() || !seq_length->is_number_integer() || seq_length->get<std::int64_t>() < 1) {
      return Error("preset " + name + ": \"seq_length\" (the default context) must be a positive integer");
    }
    preset.seq_length = seq_length->get<std::int64_t>();
  }
  if (file.contains("published_parameters")) {
    Result<PublishedParameters> published = published_parameters(file["published_parameters"]);
    if (!published.ok()) return published.error().context("preset " + name);
    preset.published_parameters = std::move(published).value();
  }
  return preset;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = load_presets();
  return all;
}

Result<Preset> find_preset(std::string_view name) {
  std::string known;
  std::vector<std::string_view> names;
  for (const Preset& preset : presets()) {
    if (preset.name == name) return preset;
    known += (known.empty() ? "" : ", ") + preset.name;
    names.push_back(preset.name);
  }
  const std::optional<std::string> near = nearest_name(name, names, 2);
  return Error("preset = \"" + std::string(name) + "\": unknown" +
               (near ? "; did you mean \"" + *near + "\"?" : std::string()) + " (known: " + known + ")");
}

Result<Model> preset_model(const Preset& preset) {
  Model model;
  if (preset.args) {
    TRAINFLOPS_ASSIGN_OR_RETURN(model, model_from_megatron_args(*preset.args));
    if (preset.qk_norm) model.parameter_layout.qk_norm = *preset.qk_norm;
  } else {
    Result<HfImport> imported = import_hf_config(*preset.hf_config, UnknownFields::kRejected);
    if (!imported.ok()) return imported.error().context("preset " + preset.name);
    model = std::move(imported).value().model;
    // The default context is the seq_length a Megatron-LM run of the preset
    // reads, as args' seq_length is (its DeepSeek-V4 estimate on packed batches).
    model.megatron_seq_length = preset.seq_length;
  }
  model.name = preset.title;
  return model;
}

}  // namespace trainflops
