#include "inputs/batch_record.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "inputs/megatron_args_json.h"
#include "base/edit_distance.h"
#include "trainflops/int128.h"

namespace trainflops {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 18> kKeys = {
    "mode",  "recompute", "args",       "preset",     "hf",        "config",
    "flags", "dsa_indexer_grad_mode",   "real_experts_per_token", "megatron_branch", "strict", "allow_unknown_flags",
    "batch_size",         "seq_length", "docs",       "cu_seqlens", "total_real_tokens",
    "seqlen_squared_sum"};

std::string shown(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

Status check_keys(const json& record) {
  for (const auto& [key, value] : record.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end()) continue;
    const std::string name = key.size() <= 100 ? key : key.substr(0, 100) + "...";
    const std::optional<std::string> near =
        nearest_name(key, std::vector<std::string_view>(kKeys.begin(), kKeys.end()), key.size() > 8 ? 2 : 1);
    if (near) return Error("unknown key " + name + "; did you mean " + *near + "?");
    std::string known;
    for (std::string_view name : kKeys) known += (known.empty() ? "" : ", ") + std::string(name);
    return Error("unknown key " + name + ": a record takes " + known);
  }
  return Ok{};
}

bool is_int64(const json& value) {
  return value.is_number_integer() &&
         !(value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX));
}

Result<std::int64_t> read_int(const json& value, const char* key) {
  if (!is_int64(value)) return Error(std::string(key) + " = " + shown(value) + ": must be a 64-bit integer");
  return value.get<std::int64_t>();
}

// Aggregates can exceed 64 bits; they may be written as decimal strings too.
Result<Int128> read_wide_int(const json& value, const char* key) {
  if (value.is_string()) {
    if (auto parsed = parse_decimal(value.get<std::string>())) return *parsed;
  } else if (value.is_number_unsigned()) {
    return Int128{value.get<std::uint64_t>()};
  } else if (value.is_number_integer()) {
    return Int128{value.get<std::int64_t>()};
  }
  return Error(std::string(key) + " = " + shown(value) + ": must be an integer (a number or a decimal string)");
}

// A list of 64-bit integers ("docs", "cu_seqlens").
Result<std::vector<std::int64_t>> read_int_list(const json& list, const char* key) {
  if (!list.is_array()) return Error(std::string(key) + " = " + shown(list) + ": must be a list of integers");
  std::vector<std::int64_t> values;
  values.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!is_int64(list[i])) {
      return Error(std::string(key) + "[" + std::to_string(i) + "] = " + shown(list[i]) + ": must be a 64-bit integer");
    }
    values.push_back(list[i].get<std::int64_t>());
  }
  return values;
}

Result<std::string> read_text(const json& value, const char* key) {
  if (!value.is_string()) return Error(std::string(key) + " = " + shown(value) + ": must be a string");
  return value.get<std::string>();
}

Result<bool> read_switch(const json& value, const char* key) {
  if (!value.is_boolean()) return Error(std::string(key) + " = " + shown(value) + ": must be true or false");
  return value.get<bool>();
}

Result<std::vector<std::string>> read_words(const json& flags) {
  std::vector<std::string> words;
  if (!flags.is_array()) return Error("flags = " + shown(flags) + ": must be a list of strings");
  for (const json& word : flags) {
    if (!word.is_string()) return Error("flags = " + shown(flags) + ": must be a list of strings");
    words.push_back(word.get<std::string>());
  }
  return words;
}

// Reads `key` into `target` with `read` when the record has it.
template <typename T, typename Reader>
Status read_optional(const json& record, const char* key, std::optional<T>& target, Reader read) {
  const auto found = record.find(key);
  if (found == record.end()) return Ok{};
  TRAINFLOPS_ASSIGN_OR_RETURN(target, read(*found, key));
  return Ok{};
}

Status read_model(const json& record, ModelInput& in) {
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "preset", in.preset, read_text));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "hf", in.hf_config, read_text));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "config", in.config_file, read_text));
  TRAINFLOPS_RETURN_IF_ERROR(
      read_optional(record, "flags", in.megatron_flags, [](const json& value, const char*) { return read_words(value); }));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "dsa_indexer_grad_mode", in.dsa_indexer_grad_mode, read_text));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "real_experts_per_token", in.real_experts_per_token, read_int));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "megatron_branch", in.megatron_branch, read_text));
  std::optional<bool> strict, allow_unknown_flags;
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "strict", strict, read_switch));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "allow_unknown_flags", allow_unknown_flags, read_switch));
  in.strict = strict.value_or(false);
  in.allow_unknown_flags = allow_unknown_flags.value_or(false);
  return read_optional(record, "args", in.megatron_args, [](const json& value, const char*) -> Result<MegatronArgs> {
    TRAINFLOPS_ASSIGN_OR_RETURN(ParsedMegatronArgs parsed, megatron_args_from_json(value));
    return std::move(parsed.args);
  });
}

// Documents with the aggregates they imply, as reference vectors give them:
// the aggregates are checked, the documents kept.
Status check_aggregates_of_docs(WorkloadInput& in) {
  Int128 tokens = 0, squares = 0;
  for (const std::int64_t length : *in.docs) {
    const std::optional<Int128> new_tokens = checked_add(tokens, length);
    const std::optional<Int128> square = checked_mul(length, length);
    const std::optional<Int128> new_squares = square ? checked_add(squares, *square) : std::nullopt;
    if (!new_tokens || !new_squares) {
      return Error(ErrorCode::kOverflow, "docs: the sum of squared lengths exceeds 128 bits");
    }
    tokens = *new_tokens;
    squares = *new_squares;
  }
  if (tokens != *in.total_real_tokens || squares != *in.seqlen_squared_sum) {
    return Error("total_real_tokens = " + to_decimal(*in.total_real_tokens) +
                 ", seqlen_squared_sum = " + to_decimal(*in.seqlen_squared_sum) + ": do not match docs (sum " +
                 to_decimal(tokens) + ", sum of squares " + to_decimal(squares) + ")");
  }
  in.total_real_tokens.reset();
  in.seqlen_squared_sum.reset();
  return Ok{};
}

Status read_workload(const json& record, WorkloadInput& in) {
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "batch_size", in.batch_size, read_int));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "seq_length", in.seq_length, read_int));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "docs", in.docs, read_int_list));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "cu_seqlens", in.cu_seqlens, read_int_list));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "total_real_tokens", in.total_real_tokens, read_wide_int));
  TRAINFLOPS_RETURN_IF_ERROR(read_optional(record, "seqlen_squared_sum", in.seqlen_squared_sum, read_wide_int));
  const bool documents_with_their_aggregates =
      in.docs && in.total_real_tokens && in.seqlen_squared_sum && !in.batch_size && !in.cu_seqlens;
  return documents_with_their_aggregates ? check_aggregates_of_docs(in) : Ok{};
}

}  // namespace

Result<BatchRecord> read_batch_record(std::string_view record_json) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const json record, parse_json<json>(record_json, JsonComments::kRejected));
  if (!record.is_object()) return Error("a record must be a JSON object, got " + shown(record));
  TRAINFLOPS_RETURN_IF_ERROR(check_keys(record));
  BatchRecord out;
  TRAINFLOPS_RETURN_IF_ERROR(read_model(record, out.model));
  const auto mode = record.find("mode");
  if (mode == record.end()) return Error("mode is missing: one of megatron, model, executed");
  if (!mode->is_string()) return Error("mode = " + shown(*mode) + ": must be one of megatron, model, executed");
  out.mode = mode->get<std::string>();
  const auto recompute = record.find("recompute");
  if (recompute != record.end()) {
    if (!recompute->is_string()) {
      return Error("recompute = " + shown(*recompute) + ": must be one of none, selective, full");
    }
    out.recompute = recompute->get<std::string>();
  }
  TRAINFLOPS_RETURN_IF_ERROR(read_workload(record, out.workload));
  return out;
}

}  // namespace trainflops
