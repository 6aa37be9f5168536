// Internal: Megatron-LM arguments from an already parsed JSON value.
#ifndef TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_
#define TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_

#include <nlohmann/json.hpp>

#include "trainflops/megatron_args.h"

namespace trainflops {

Result<ParsedMegatronArgs> megatron_args_from_json(const nlohmann::json& object);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_MEGATRON_ARGS_JSON_H_
