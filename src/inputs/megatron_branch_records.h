// Test support: the records scripts/megatron-kda and scripts/megatron-dsa-gqa
// write from a Megatron-LM branch's own function (tests/data), read back as
// trainflops' inputs.
#ifndef TRAINFLOPS_INPUTS_MEGATRON_BRANCH_RECORDS_H_
#define TRAINFLOPS_INPUTS_MEGATRON_BRANCH_RECORDS_H_

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "trainflops/megatron_args.h"
#include "trainflops/workload.h"

namespace trainflops::branch_records {

// tests/data/`name`, parsed.
inline nlohmann::json read_branch_records(const std::string& name) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/" + name);
  return nlohmann::json::parse(in);
}

// A record's workload: {batch_size, seq_length} (BSHD), or packed documents as
// {total_real_tokens, seqlen_squared_sum}.
inline Workload workload_of(const nlohmann::json& w) {
  if (w.contains("seq_length")) return Bshd{w.at("batch_size"), w.at("seq_length")};
  return SequenceAggregates{w.at("total_real_tokens").get<std::int64_t>(),
                            w.at("seqlen_squared_sum").get<std::int64_t>()};
}

// The model of a record's Megatron-LM arguments on `branch`.
inline Result<Model> model_of(const nlohmann::json& args, MegatronBranch branch = MegatronBranch::kMain) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const ParsedMegatronArgs parsed, parse_megatron_args_json(args.dump()));
  return model_from_megatron_args(parsed.args, branch);
}

}  // namespace trainflops::branch_records

#endif  // TRAINFLOPS_INPUTS_MEGATRON_BRANCH_RECORDS_H_
