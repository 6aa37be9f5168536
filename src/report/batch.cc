#include "trainflops/batch.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "inputs/megatron_args_json.h"
#include "trainflops/model_input.h"
#include "trainflops/workload_input.h"

namespace trainflops {
namespace {

using nlohmann::json;

std::string shown(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

Result<std::int64_t> read_int(const json& record, const char* key) {
  const json& value = record.at(key);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
    return Error(std::string(key) + " = " + shown(value) + ": must be a 64-bit integer");
  }
  return value.get<std::int64_t>();
}

// Aggregates can exceed 64 bits; they may be written as decimal strings too.
Result<Int128> read_wide_int(const json& record, const char* key) {
  const json& value = record.at(key);
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
Result<std::vector<std::int64_t>> read_int_list(const json& record, const char* key) {
  const json& list = record.at(key);
  if (!list.is_array()) return Error(std::string(key) + " = " + shown(list) + ": must be a list of integers");
  std::vector<std::int64_t> values;
  values.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& value = list[i];
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      return Error(std::string(key) + "[" + std::to_string(i) + "] = " + shown(value) + ": must be a 64-bit integer");
    }
    values.push_back(value.get<std::int64_t>());
  }
  return values;
}

// The record's workload, by the rules every front end shares
// (resolve_workload), with one addition for reference vectors: documents and
// the aggregates together, which must agree (megatron mode then reads the
// aggregates, the exact modes the documents).
Result<Workload> read_workload(const json& record, Mode mode, const ResolvedModel& model) {
  WorkloadInput input;
  if (record.contains("batch_size")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.batch_size, read_int(record, "batch_size"));
  }
  if (record.contains("seq_length")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.seq_length, read_int(record, "seq_length"));
  }
  if (record.contains("docs")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.docs, read_int_list(record, "docs"));
  }
  if (record.contains("cu_seqlens")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.cu_seqlens, read_int_list(record, "cu_seqlens"));
  }
  if (record.contains("total_real_tokens")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.total_real_tokens, read_wide_int(record, "total_real_tokens"));
  }
  if (record.contains("seqlen_squared_sum")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.seqlen_squared_sum, read_wide_int(record, "seqlen_squared_sum"));
  }
  if (!input.docs || !input.total_real_tokens || !input.seqlen_squared_sum || input.batch_size || input.cu_seqlens) {
    return resolve_workload(input, model);
  }
  Int128 tokens = 0, squares = 0;
  for (std::int64_t length : *input.docs) {
    tokens += length;
    squares += Int128{length} * length;  // lengths < 2^63, count < 2^60: fits
  }
  if (tokens != *input.total_real_tokens || squares != *input.seqlen_squared_sum) {
    return Error("total_real_tokens = " + to_decimal(*input.total_real_tokens) +
                 ", seqlen_squared_sum = " + to_decimal(*input.seqlen_squared_sum) + ": do not match docs (sum " +
                 to_decimal(tokens) + ", sum of squares " + to_decimal(squares) + ")");
  }
  if (mode != Mode::kMegatron) return Workload{PackedDocuments{*input.docs}};
  return Workload{SequenceAggregates{*input.total_real_tokens, *input.seqlen_squared_sum}};
}

// A string member, or an error naming it.
Result<std::string> read_text(const json& record, const char* key) {
  const json& value = record.at(key);
  if (!value.is_string()) return Error(std::string(key) + " = " + shown(value) + ": must be a string");
  return value.get<std::string>();
}

// A boolean member, or an error naming it.
Result<bool> read_switch(const json& record, const char* key) {
  const json& value = record.at(key);
  if (!value.is_boolean()) return Error(std::string(key) + " = " + shown(value) + ": must be true or false");
  return value.get<bool>();
}

// The record's model: Megatron-LM arguments inline ("args"), or any source
// the other front ends take ("preset", "hf", "config", "flags"), resolved as
// they resolve it.
Result<ResolvedModel> read_model(const json& record) {
  ModelInput input;
  if (record.contains("preset")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.preset, read_text(record, "preset"));
  }
  if (record.contains("hf")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.hf_config, read_text(record, "hf"));
  }
  if (record.contains("config")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.config_file, read_text(record, "config"));
  }
  if (record.contains("flags")) {
    const json& flags = record.at("flags");
    std::vector<std::string> words;
    for (const json& word : flags.is_array() ? flags : json::array({nullptr})) {
      if (!word.is_string()) return Error("flags = " + shown(flags) + ": must be a list of strings");
      words.push_back(word.get<std::string>());
    }
    input.megatron_flags = std::move(words);
  }
  if (record.contains("dsa_indexer_grad_mode")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.dsa_indexer_grad_mode, read_text(record, "dsa_indexer_grad_mode"));
  }
  if (record.contains("strict")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.strict, read_switch(record, "strict"));
  }
  if (record.contains("allow_unknown_flags")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.allow_unknown_flags, read_switch(record, "allow_unknown_flags"));
  }
  if (!record.contains("args")) return resolve_model(input);
  // Inline arguments are one more source: with another, the resolver words the error.
  if (input.preset || input.hf_config || input.config_file || input.megatron_flags) {
    input.args_file = "";
    return resolve_model(input);
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const ParsedMegatronArgs args, megatron_args_from_json(record.at("args")));
  ResolvedModel resolved;
  TRAINFLOPS_ASSIGN_OR_RETURN(resolved.model, model_from_megatron_args(args.args));
  resolved.seq_length = args.args.seq_length;
  if (input.dsa_indexer_grad_mode) {
    TRAINFLOPS_RETURN_IF_ERROR(apply_dsa_indexer_grad_mode(resolved.model, *input.dsa_indexer_grad_mode));
  }
  return resolved;
}

}  // namespace

Result<CountRequest> parse_count_request(std::string_view record_json) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const json record, parse_json<json>(record_json, JsonComments::kRejected));
  if (!record.is_object()) return Error("a record must be a JSON object, got " + shown(record));
  TRAINFLOPS_ASSIGN_OR_RETURN(ResolvedModel resolved, read_model(record));
  CountRequest request;
  if (!record.contains("mode")) return Error("mode is missing: one of megatron, model, executed");
  const json& mode = record.at("mode");
  if (!mode.is_string()) return Error("mode = " + shown(mode) + ": must be one of megatron, model, executed");
  TRAINFLOPS_ASSIGN_OR_RETURN(request.mode, parse_mode(mode.get<std::string>()));
  if (record.contains("recompute")) {
    const json& recompute = record.at("recompute");
    if (!recompute.is_string())
      return Error("recompute = " + shown(recompute) + ": must be one of none, selective, full");
    TRAINFLOPS_ASSIGN_OR_RETURN(request.recompute, parse_recompute(recompute.get<std::string>()));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(request.workload, read_workload(record, request.mode, resolved));
  request.model = std::move(resolved.model);
  request.warnings = std::move(resolved.warnings);
  return request;
}

BatchAnswer answer_batch_line(std::string_view line, std::int64_t line_number) {
  auto fail = [&](const Error& error) {
    const std::string message = error.context("line " + std::to_string(line_number)).message();
    return BatchAnswer{json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace), false};
  };
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    return fail(Error("blank: every line must hold one JSON record"));
  }
  const Result<CountRequest> request = parse_count_request(line);
  if (!request.ok()) return fail(request.error());
  const Result<FlopsCounter> counter =
      FlopsCounter::create(request.value().model, request.value().mode, request.value().recompute);
  if (!counter.ok()) return fail(counter.error());
  const Result<Flops> flops = counter.value().total(request.value().workload);
  if (!flops.ok()) return fail(flops.error());
  json out = {{"flops", flops.value().value}};
  if (flops.value().exact) out["exact"] = to_decimal(*flops.value().exact);
  if (!request.value().warnings.empty()) out["warnings"] = request.value().warnings;
  return BatchAnswer{out.dump(), true};
}

}  // namespace trainflops
