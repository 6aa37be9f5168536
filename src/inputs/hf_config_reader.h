// Reads the fields of one object of a Hugging Face config.json (the top level,
// or a nested text_config) and keeps account of its keys: each key must be
// read or declared as not changing FLOPs, and finish() reports any other key as
// unknown (a warning or an error, as the caller decides), since trainflops
// cannot tell what an unknown field does.
#ifndef TRAINFLOPS_SRC_INPUTS_HF_CONFIG_READER_H_
#define TRAINFLOPS_SRC_INPUTS_HF_CONFIG_READER_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/result.h"

namespace trainflops::hf {

using nlohmann::json;

// A JSON value as the messages show it (invalid UTF-8 replaced).
std::string shown(const json& value);

class Fields {
 public:
  // `path` prefixes the keys in messages ("" at the top level); `model_type`
  // names the architecture in "required for ..." messages.
  static Result<Fields> open(const json& value, std::string path, std::string model_type);

  std::string path_of(std::string_view key) const;
  const std::string& model_type() const { return model_type_; }

  // Present and not null. Does not count as reading the key.
  bool has(std::string_view key) const;
  // Present, possibly null. Does not count as reading the key.
  bool present(std::string_view key) const;
  // Marks `key` read; nullptr when absent or null.
  const json* get(std::string_view key);

  // Typed reads; each marks the key read. "Required" fields that are absent or
  // null fail with "<path> is missing: required for model_type \"<type>\"".
  Result<std::int64_t> positive(std::string_view key);
  // A positive number of layers, at most kMaxLayers (model.h).
  Result<std::int64_t> layer_count(std::string_view key);
  Result<std::optional<std::int64_t>> optional_positive(std::string_view key);
  Result<std::int64_t> non_negative(std::string_view key);
  Result<std::optional<std::int64_t>> optional_non_negative(std::string_view key);
  // Absent or null is false.
  Result<bool> flag(std::string_view key);
  Result<std::optional<std::string>> optional_text(std::string_view key);
  // A list of strings; each entry must be one of `allowed`.
  Result<std::optional<std::vector<std::string>>> optional_words(std::string_view key,
                                                                 std::initializer_list<std::string_view> allowed);
  // A list of integers in [0, bound).
  Result<std::optional<std::vector<std::int64_t>>> optional_indices(std::string_view key, std::int64_t bound,
                                                                    const std::string& bound_name);

  // Errors about a field: "<path> is missing: required <when>" (with a
  // did-you-mean when an unread key of the config is one or two edits away)
  // and "<path> = <value>: <rule>".
  Error missing(std::string_view key, const std::string& when = "") const;
  Error invalid(std::string_view key, const json& value, const std::string& rule) const;
  Error invalid(std::string_view key, std::int64_t value, const std::string& rule) const;

  // Keys that do not change FLOPs: accepted, and listed by finish().
  void ignore(std::initializer_list<std::string_view> keys);
  // Every key not read so far (the other modalities of a multimodal config).
  void ignore_unread();
  // What every config may hold: Transformers' bookkeeping, token ids,
  // generation defaults, initialization, dropout, norms' epsilon, RoPE, biases
  // and tied embeddings (docs/hf-import.md lists them).
  void ignore_common();

  // The keys that were not read, by path, in the config's order: those
  // declared as not changing FLOPs, and the unknown ones, each as a sentence
  // ("<path> = <value>: not a field trainflops knows for model_type ...").
  struct Unread {
    std::vector<std::string> ignored, unknown;
  };
  Unread finish() const;

 private:
  Fields(const json& object, std::string path, std::string model_type)
      : object_(&object), path_(std::move(path)), model_type_(std::move(model_type)) {}

  Result<std::int64_t> integer(std::string_view key, const json& value, std::int64_t low, const char* rule) const;

  const json* object_;
  std::string path_;
  std::string model_type_;
  std::set<std::string, std::less<>> read_, ignored_;
};

}  // namespace trainflops::hf

#endif  // TRAINFLOPS_SRC_INPUTS_HF_CONFIG_READER_H_
