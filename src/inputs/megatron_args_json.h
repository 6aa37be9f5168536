// Internal: Megatron-LM arguments from an already parsed JSON value.
#ifndef TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_
#define TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "trainflops/megatron_args.h"

namespace trainflops {

Result<ParsedMegatronArgs> megatron_args_from_json(const nlohmann::json& object);

// The same from one value per argument, in for_each_megatron_arg's order
// (null: unset); `values` holds exactly one per argument.
Result<MegatronArgs> megatron_args_from_values(const std::vector<nlohmann::json>& values);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_
