#include "trainflops/hf_config.h"

#include <algorithm>
#include <iterator>

#include "base/input_file.h"
#include "base/json_text.h"
#include "inputs/hf_config_reader.h"
#include "inputs/hf_models.h"

namespace trainflops {
namespace hf {

Result<GqaAttention> grouped_query_attention(Fields& config, std::int64_t hidden_size, bool explicit_sizes) {
  GqaAttention attention;
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_heads, config.positive("num_attention_heads"));
  if (explicit_sizes) {
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_query_groups, config.positive("num_key_value_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, config.positive("head_dim"));
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> groups,
                                config.optional_positive("num_key_value_heads"));
    attention.num_query_groups = groups.value_or(attention.num_heads);
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, config.optional_positive("head_dim"));
    if (!attention.head_dim) {
      if (hidden_size % attention.num_heads != 0) {
        return config.missing("head_dim",
                              "when hidden_size = " + std::to_string(hidden_size) +
                                  " is not a multiple of num_attention_heads = " + std::to_string(attention.num_heads));
      }
      attention.head_dim = hidden_size / attention.num_heads;
    }
  }
  if (attention.num_heads % attention.num_query_groups != 0) {
    return config.invalid("num_key_value_heads", attention.num_query_groups,
                          "must divide num_attention_heads = " + std::to_string(attention.num_heads));
  }
  return attention;
}

Result<std::int64_t> mtp_depth_count(Fields& config) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> depths,
                              config.optional_non_negative("num_nextn_predict_layers"));
  if (depths) TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(config.path_of("num_nextn_predict_layers"), *depths));
  return depths.value_or(0);
}

std::string assumed_delta_rule_chunk_size(std::int64_t chunk_size, std::string_view kernel) {
  return "chunk_size = " + std::to_string(chunk_size) +
         ": the config does not say in what chunks training runs the delta rule; executed mode counts "
         "flash-linear-attention's " +
         std::string(kernel) + " at its default (give another with the native config's chunk_size)";
}

Status check_topk(const Fields& config, const Moe& moe, std::string_view experts_key) {
  if (moe.topk <= moe.num_experts.value_or(moe.topk)) return Ok{};
  return config.invalid("num_experts_per_tok", moe.topk,
                        "must not exceed " + std::string(experts_key) + " = " + std::to_string(*moe.num_experts));
}

Error list_length_error(const Fields& config, std::string_view key, std::size_t size, const std::string& rule) {
  return Error(config.path_of(key) + ": the list has " + std::to_string(size) + " entries; it must have " + rule);
}

std::vector<bool> qwen_moe_layers(std::int64_t layers, std::int64_t sparse_step,
                                  const std::vector<std::int64_t>& mlp_only_layers) {
  std::vector<bool> moe(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) moe[static_cast<std::size_t>(i)] = (i + 1) % sparse_step == 0;
  for (const std::int64_t i : mlp_only_layers) moe[static_cast<std::size_t>(i)] = false;
  return moe;
}

namespace {

struct Entry {
  std::string_view model_type;
  Importer import;
  BridgeMapping bridge = nullptr;  // null: counted as imported in megatron mode too
};

// Sorted by model_type.
constexpr Entry kImporters[] = {
    {"deepseek_v2", import_deepseek},
    {"deepseek_v3", import_deepseek},
    {"deepseek_v32", import_deepseek},
    {"deepseek_v4", import_deepseek_v4},
    {"deepseek_v41_text", import_deepseek_v41},
    {"gemma3", import_gemma3},
    {"gemma3_text", import_gemma3},
    {"gemma4_text", import_gemma4},
    {"glm4_moe", import_glm4_moe},
    {"glm4_moe_lite", import_deepseek},
    {"glm_moe_dsa", import_deepseek},
    {"gpt_oss", import_gpt_oss},
    {"kimi_k2", import_deepseek},
    {"kimi_linear", import_kimi_linear},
    {"llama", import_transformer},
    {"llama4_text", import_llama4_text},
    {"longcat_flash", import_longcat_flash},
    {"minimax_m2", import_minimax_m2},
    {"minimax_m3", import_minimax_m3},
    {"mistral", import_transformer},
    {"mistral4", import_deepseek},
    {"mixtral", import_transformer},
    {"nemotron_h", import_nemotron_h},
    {"qwen2", import_transformer},
    {"qwen3", import_transformer},
    {"qwen3_5_moe_text", import_qwen3_5, bridge_args_qwen_hybrid},
    {"qwen3_5_text", import_qwen3_5, bridge_args_qwen_hybrid},
    {"qwen3_moe", import_transformer},
    {"qwen3_next", import_qwen3_next, bridge_args_qwen_hybrid},
    {"qwen4_exp_text", import_qwen3_8},
    {"step3p5", import_step3p5},
};
static_assert(std::is_sorted(std::begin(kImporters), std::end(kImporters),
                             [](const Entry& a, const Entry& b) { return a.model_type < b.model_type; }));

const Entry* entry_of(std::string_view model_type) {
  for (const Entry& entry : kImporters) {
    if (entry.model_type == model_type) return &entry;
  }
  return nullptr;
}

std::string supported_list() {
  std::string list;
  for (const Entry& entry : kImporters) list += (list.empty() ? "" : ", ") + std::string(entry.model_type);
  return list;
}

// A model type's model, and the Megatron-LM arguments Megatron-Bridge sets
// for it where it maps the type.
struct Imported {
  Model model;
  std::optional<MegatronArgs> bridge_args;
};

// Runs the importer of `entry` over `object` (read through `fields`) and adds
// what it left unread to `notes`.
Result<Imported> import_object(const Entry& entry, const json& object, Fields& fields, Notes& notes) {
  fields.get("model_type");
  fields.ignore_common();
  Imported imported;
  TRAINFLOPS_ASSIGN_OR_RETURN(imported.model, entry.import(fields, notes));
  TRAINFLOPS_RETURN_IF_ERROR(read_parameter_layout(fields, imported.model));
  const Fields::Unread unread = fields.finish();
  notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  notes.unknown.insert(notes.unknown.end(), unread.unknown.begin(), unread.unknown.end());
  if (entry.bridge) imported.bridge_args = entry.bridge(object);
  return imported;
}

// Multimodal wrappers whose text_config may name no model_type: the text
// model type their configuration class builds it as. Sorted by wrapper.
struct ImpliedTextModel {
  std::string_view wrapper;
  std::string_view text_model_type;
};
constexpr ImpliedTextModel kImpliedTextModels[] = {
    // MiniMax-M3's MiniMaxM3VLConfig builds its text_config as minimax_m3.
    {"minimax_m3_vl", "minimax_m3"},
};
static_assert(std::is_sorted(std::begin(kImpliedTextModels), std::end(kImpliedTextModels),
                             [](const ImpliedTextModel& a, const ImpliedTextModel& b) {
                               return a.wrapper < b.wrapper;
                             }));

std::optional<std::string> implied_text_model_type(std::string_view wrapper) {
  for (const ImpliedTextModel& implied : kImpliedTextModels) {
    if (implied.wrapper == wrapper) return std::string(implied.text_model_type);
  }
  return std::nullopt;
}

// A multimodal release whose language model is text_config, of a supported
// model type: that model is counted, the other modalities are not.
Result<Imported> import_text_config(const json& config, const std::string& model_type, Notes& notes) {
  const auto unsupported = [&](const std::string& why) {
    return Error(ErrorCode::kUnsupported,
                 "model_type = \"" + model_type + "\": not supported" + why + " (supported: " + supported_list() + ")");
  };
  const auto text = config.find("text_config");
  if (text == config.end() || !text->is_object()) return unsupported("");
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields text_fields, Fields::open(*text, "text_config", ""));
  TRAINFLOPS_ASSIGN_OR_RETURN(std::optional<std::string> text_type, text_fields.optional_text("model_type"));
  if (!text_type) text_type = implied_text_model_type(model_type);
  if (!text_type) return unsupported(", and its text_config names no model_type");
  const Entry* entry = entry_of(*text_type);
  if (!entry) return unsupported(", nor is its text_config's \"" + *text_type + "\"");
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields fields, Fields::open(*text, "text_config", *text_type));
  TRAINFLOPS_ASSIGN_OR_RETURN(Imported imported, import_object(*entry, *text, fields, notes));
  notes.assumed.push_back("the language model is text_config (model_type \"" + *text_type +
                          "\"), counted alone: the other modalities of model_type \"" + model_type +
                          "\" are not counted");
  return imported;
}

Result<HfImport> import_config(const json& config, UnknownFields unknown_fields) {
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields top, Fields::open(config, "", ""));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> model_type, top.optional_text("model_type"));
  if (!model_type) {
    return Error("model_type is missing: config.json names its architecture there (supported: " + supported_list() +
                 ")");
  }
  Notes notes;
  TRAINFLOPS_ASSIGN_OR_RETURN(Fields fields, Fields::open(config, "", *model_type));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::string> name, fields.optional_text("_name_or_path"));
  Imported imported;
  if (const Entry* entry = entry_of(*model_type)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(imported, import_object(*entry, config, fields, notes));
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(imported, import_text_config(config, *model_type, notes));
    fields.get("text_config");
    fields.ignore_unread();
    const Fields::Unread unread = fields.finish();
    notes.ignored.insert(notes.ignored.end(), unread.ignored.begin(), unread.ignored.end());
  }
  if (unknown_fields == UnknownFields::kRejected && !notes.unknown.empty()) return Error(notes.unknown.front());
  Model& model = imported.model;
  model.name = name && !name->empty() ? *name : *model_type;
  model.hf_model_type = *model_type;
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  return HfImport{std::move(model), std::move(imported.bridge_args), std::move(notes.ignored),
                  std::move(notes.assumed), std::move(notes.unknown)};
}

}  // namespace
}  // namespace hf

Result<HfImport> import_hf_config(std::string_view json_text, UnknownFields unknown_fields) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const hf::json config, parse_python_json(json_text));
  return hf::import_config(config, unknown_fields);
}

Result<Model> parse_hf_config(std::string_view json_text) {
  TRAINFLOPS_ASSIGN_OR_RETURN(HfImport imported, import_hf_config(json_text, UnknownFields::kRejected));
  return std::move(imported.model);
}

Result<HfImport> read_hf_import(const std::string& path, UnknownFields unknown_fields) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(path, kMaxConfigFileBytes));
  Result<HfImport> imported = import_hf_config(text, unknown_fields);
  if (!imported.ok()) return imported.error().context(path);
  return imported;
}

Result<Model> read_hf_config(const std::string& path) {
  TRAINFLOPS_ASSIGN_OR_RETURN(HfImport imported, read_hf_import(path, UnknownFields::kRejected));
  return std::move(imported.model);
}

const std::vector<std::string>& supported_hf_model_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (const hf::Entry& entry : hf::kImporters) names.emplace_back(entry.model_type);
    return names;
  }();
  return types;
}

}  // namespace trainflops
