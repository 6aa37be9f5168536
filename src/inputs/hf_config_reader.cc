#include "inputs/hf_config_reader.h"

#include <cmath>
#include <limits>

#include "base/edit_distance.h"
#include "trainflops/model.h"

namespace trainflops::hf {

std::string shown(const json& value) {
  // nlohmann writes a number that is not finite as null; Python's json module
  // (which wrote the config) as NaN, Infinity or -Infinity.
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    return std::isnan(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
  }
  const auto text = [](const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); };
  if (value.is_array()) {
    std::string list = "[";
    for (const json& entry : value) list += (list.size() > 1 ? "," : "") + shown(entry);
    return list + "]";
  }
  if (value.is_object()) {
    std::string object = "{";
    for (const auto& [key, entry] : value.items()) {
      object += (object.size() > 1 ? "," : "") + text(json(key)) + ":" + shown(entry);
    }
    return object + "}";
  }
  return text(value);
}

namespace {

// A value shown in full up to a line's worth, else its start.
std::string brief(const json& value) {
  constexpr std::size_t kMaxChars = 60;
  const std::string text = shown(value);
  if (text.size() <= kMaxChars) return text;
  std::size_t cut = kMaxChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "...";
}

}  // namespace

Result<Fields> Fields::open(const json& value, std::string path, std::string model_type) {
  if (!value.is_object()) {
    return Error((path.empty() ? "the config" : path) + " = " + shown(value) + ": must be a JSON object");
  }
  return Fields(value, std::move(path), std::move(model_type));
}

std::string Fields::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool Fields::has(std::string_view key) const {
  const auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

bool Fields::present(std::string_view key) const { return object_->find(key) != object_->end(); }

const json* Fields::get(std::string_view key) {
  read_.emplace(key);
  const auto it = object_->find(key);
  return it == object_->end() || it->is_null() ? nullptr : &*it;
}

Error Fields::missing(std::string_view key, const std::string& when) const {
  std::vector<std::string_view> unread;
  for (const auto& [present, value] : object_->items()) {
    if (!read_.count(present) && !ignored_.count(present)) unread.push_back(present);
  }
  // One edit for short names: two would pair q_lora_rank with kv_lora_rank.
  const std::optional<std::string> typo = nearest_name(key, unread, key.size() > 12 ? 2 : 1);
  return Error(path_of(key) + " is missing: required " +
               (when.empty() ? "for model_type \"" + model_type_ + "\"" : when) +
               (typo ? " (the config has " + path_of(*typo) + ": a misspelling?)" : ""));
}

Error Fields::invalid(std::string_view key, const json& value, const std::string& rule) const {
  return Error(path_of(key) + " = " + shown(value) + ": " + rule);
}

Error Fields::invalid(std::string_view key, std::int64_t value, const std::string& rule) const {
  return Error(path_of(key) + " = " + std::to_string(value) + ": " + rule);
}

Result<std::int64_t> Fields::integer(std::string_view key, const json& value, std::int64_t low,
                                     const char* rule) const {
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    return invalid(key, value, rule);
  }
  const auto number = value.get<std::int64_t>();
  if (number < low) return invalid(key, value, rule);
  return number;
}

Result<std::int64_t> Fields::positive(std::string_view key) {
  const json* value = get(key);
  if (!value) return missing(key);
  return integer(key, *value, 1, "must be a positive integer");
}

Result<std::int64_t> Fields::layer_count(std::string_view key) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t layers, positive(key));
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(path_of(key), layers));
  return layers;
}

Result<std::optional<std::int64_t>> Fields::optional_positive(std::string_view key) {
  const json* value = get(key);
  if (!value) return std::optional<std::int64_t>();
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t number, integer(key, *value, 1, "must be a positive integer"));
  return std::optional<std::int64_t>(number);
}

Result<std::int64_t> Fields::non_negative(std::string_view key) {
  const json* value = get(key);
  if (!value) return missing(key);
  return integer(key, *value, 0, "must be a non-negative integer");
}

Result<std::optional<std::int64_t>> Fields::optional_non_negative(std::string_view key) {
  const json* value = get(key);
  if (!value) return std::optional<std::int64_t>();
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t number, integer(key, *value, 0, "must be a non-negative integer"));
  return std::optional<std::int64_t>(number);
}

Result<bool> Fields::flag(std::string_view key) {
  const json* value = get(key);
  if (!value) return false;
  if (!value->is_boolean()) return invalid(key, *value, "must be true or false");
  return value->get<bool>();
}

Result<std::optional<std::string>> Fields::optional_text(std::string_view key) {
  const json* value = get(key);
  if (!value) return std::optional<std::string>();
  if (!value->is_string()) return invalid(key, *value, "must be a string");
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::optional<std::vector<std::string>>> Fields::optional_words(
    std::string_view key, std::initializer_list<std::string_view> allowed) {
  const json* value = get(key);
  if (!value) return std::optional<std::vector<std::string>>();
  if (!value->is_array()) return invalid(key, *value, "must be a list of strings");
  std::string alternatives;
  for (const std::string_view word : allowed) {
    alternatives += (alternatives.empty() ? "" : ", ") + std::string(word);
  }
  std::vector<std::string> words;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& entry = (*value)[i];
    const std::string entry_key = std::string(key) + "[" + std::to_string(i) + "]";
    if (!entry.is_string()) return invalid(entry_key, entry, "must be one of " + alternatives);
    const auto word = entry.get<std::string>();
    bool known = false;
    for (const std::string_view a : allowed) known = known || word == a;
    if (!known) return invalid(entry_key, entry, "must be one of " + alternatives);
    words.push_back(word);
  }
  return std::optional<std::vector<std::string>>(std::move(words));
}

Result<std::optional<std::vector<std::int64_t>>> Fields::optional_indices(std::string_view key, std::int64_t bound,
                                                                          const std::string& bound_name) {
  const json* value = get(key);
  if (!value) return std::optional<std::vector<std::int64_t>>();
  if (!value->is_array()) return invalid(key, *value, "must be a list of layer indices");
  const std::string rule = "must be a layer index from 0 to " + bound_name + " - 1 = " + std::to_string(bound - 1);
  std::vector<std::int64_t> indices;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const std::string entry_key = std::string(key) + "[" + std::to_string(i) + "]";
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t index, integer(entry_key, (*value)[i], 0, rule.c_str()));
    if (index >= bound) return invalid(entry_key, index, rule);
    indices.push_back(index);
  }
  return std::optional<std::vector<std::int64_t>>(std::move(indices));
}

void Fields::ignore(std::initializer_list<std::string_view> keys) {
  for (const std::string_view key : keys) ignored_.emplace(key);
}

void Fields::ignore_unread() {
  for (const auto& [key, value] : object_->items()) {
    if (!read_.count(key)) ignored_.insert(key);
  }
}

void Fields::ignore_common() {
  ignore({
      // Transformers' bookkeeping and serialization
      "architectures",
      "auto_map",
      "transformers_version",
      "_name_or_path",
      "_commit_hash",
      "_attn_implementation",
      "_attn_implementation_autoset",
      "torch_dtype",
      "dtype",
      "use_bfloat16",
      "return_dict",
      "output_hidden_states",
      "output_attentions",
      "torchscript",
      "pruned_heads",
      "tf_legacy_loss",
      "is_encoder_decoder",
      "is_decoder",
      "add_cross_attention",
      "tie_encoder_decoder",
      "cross_attention_hidden_size",
      "chunk_size_feed_forward",
      "id2label",
      "label2id",
      "num_labels",
      "problem_type",
      "tokenizer_class",
      "prefix",
      "task_specific_params",
      "finetuning_task",
      "keys_to_ignore_at_inference",
      "quantization_config",
      // token ids and generation defaults
      "bos_token_id",
      "eos_token_id",
      "pad_token_id",
      "sep_token_id",
      "decoder_start_token_id",
      "use_cache",
      "max_length",
      "min_length",
      "do_sample",
      "early_stopping",
      "num_beams",
      "num_beam_groups",
      "diversity_penalty",
      "temperature",
      "top_k",
      "top_p",
      "typical_p",
      "repetition_penalty",
      "length_penalty",
      "no_repeat_ngram_size",
      "encoder_no_repeat_ngram_size",
      "bad_words_ids",
      "num_return_sequences",
      "output_scores",
      "return_dict_in_generate",
      "forced_bos_token_id",
      "forced_eos_token_id",
      "remove_invalid_values",
      "exponential_decay_length_penalty",
      "suppress_tokens",
      "begin_suppress_tokens",
      // numerics that are not products: initialization, dropout, norms, RoPE,
      // activations, biases; tied embeddings share weights, not FLOPs
      "initializer_range",
      "attention_dropout",
      "hidden_dropout",
      "rms_norm_eps",
      "layer_norm_eps",
      "layer_norm_epsilon",
      "max_position_embeddings",
      "rope_theta",
      "rope_scaling",
      "rope_parameters",
      "partial_rotary_factor",
      "hidden_act",
      "attention_bias",
      "mlp_bias",
      "tie_word_embeddings",
      "norm_eps",
      // tensor-parallel pretraining splits, router precision, RoPE variants
      "pretraining_tp",
      "moe_router_dtype",
      "router_dtype",
      "llama_4_scaling",
      "use_mrope",
  });
}

Fields::Unread Fields::finish() const {
  Unread unread;
  for (const auto& [key, value] : object_->items()) {
    if (read_.count(key)) continue;
    if (ignored_.count(key)) {
      unread.ignored.push_back(path_of(key));
      continue;
    }
    unread.unknown.push_back(path_of(key) + " = " + brief(value) + ": not a field trainflops knows for model_type \"" +
                             model_type_ +
                             "\", so it cannot tell whether it changes FLOPs (docs/hf-import.md lists the known "
                             "fields)");
  }
  return unread;
}

}  // namespace trainflops::hf
