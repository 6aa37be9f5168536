#include "trainflops/batch.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "inputs/megatron_args_json.h"
#include "trainflops/model_input.h"

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

Result<PackedDocuments> read_docs(const json& record) {
  const json& docs = record.at("docs");
  if (!docs.is_array()) return Error("docs = " + shown(docs) + ": must be a list of document lengths");
  PackedDocuments packed;
  packed.lengths.reserve(docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const json& length = docs[i];
    if (!length.is_number_integer() ||
        (length.is_number_unsigned() && length.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      return Error("docs[" + std::to_string(i) + "] = " + shown(length) + ": must be a 64-bit integer");
    }
    packed.lengths.push_back(length.get<std::int64_t>());
  }
  return packed;
}

Result<Workload> read_workload(const json& record, Mode mode, std::optional<std::int64_t> model_seq_length) {
  const bool has_batch = record.contains("batch_size");
  const bool has_docs = record.contains("docs");
  const bool has_tokens = record.contains("total_real_tokens");
  const bool has_squares = record.contains("seqlen_squared_sum");
  if (has_tokens != has_squares) {
    return Error(std::string(has_tokens ? "seqlen_squared_sum" : "total_real_tokens") +
                 " is missing: total_real_tokens and seqlen_squared_sum come together");
  }
  if (has_batch && (has_docs || has_tokens)) {
    return Error("batch_size: give one workload, either batch_size or docs or total_real_tokens + seqlen_squared_sum");
  }
  if (record.contains("seq_length") && !has_batch) {
    return Error("seq_length = " + shown(record.at("seq_length")) +
                 ": goes with batch_size (BSHD); docs and the aggregates carry their own lengths");
  }
  if (has_batch) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t batch_size, read_int(record, "batch_size"));
    if (record.contains("seq_length")) {
      TRAINFLOPS_ASSIGN_OR_RETURN(model_seq_length, read_int(record, "seq_length"));
    }
    if (!model_seq_length) {
      return Error("seq_length is missing: required with batch_size (BSHD); the model's source gives none");
    }
    return Workload{Bshd{batch_size, *model_seq_length}};
  }
  std::optional<Workload> docs;
  if (has_docs) {
    TRAINFLOPS_ASSIGN_OR_RETURN(docs, read_docs(record));
  }
  if (!has_tokens) {
    if (!docs)
      return Error("the record has no workload: give batch_size, docs, or total_real_tokens + seqlen_squared_sum");
    return *docs;
  }
  SequenceAggregates aggregates;
  TRAINFLOPS_ASSIGN_OR_RETURN(aggregates.total_tokens, read_wide_int(record, "total_real_tokens"));
  TRAINFLOPS_ASSIGN_OR_RETURN(aggregates.squared_sum, read_wide_int(record, "seqlen_squared_sum"));
  if (docs) {
    Int128 tokens = 0, squares = 0;
    for (std::int64_t length : std::get<PackedDocuments>(*docs).lengths) {
      tokens += length;
      squares += Int128{length} * length;  // lengths < 2^63, count < 2^60: fits
    }
    if (tokens != aggregates.total_tokens || squares != aggregates.squared_sum) {
      return Error("total_real_tokens = " + to_decimal(aggregates.total_tokens) +
                   ", seqlen_squared_sum = " + to_decimal(aggregates.squared_sum) + ": do not match docs (sum " +
                   to_decimal(tokens) + ", sum of squares " + to_decimal(squares) + ")");
    }
    if (mode != Mode::kMegatron) return *docs;
  }
  return Workload{aggregates};
}

// A string member, or an error naming it.
Result<std::string> read_text(const json& record, const char* key) {
  const json& value = record.at(key);
  if (!value.is_string()) return Error(std::string(key) + " = " + shown(value) + ": must be a string");
  return value.get<std::string>();
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
  request.model = std::move(resolved.model);
  TRAINFLOPS_ASSIGN_OR_RETURN(request.workload, read_workload(record, request.mode, resolved.seq_length));
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
  return BatchAnswer{out.dump(), true};
}

}  // namespace trainflops
