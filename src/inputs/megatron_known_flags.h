// Internal: the option strings of Megatron-LM's argument parser, so that the
// flags of a launch script can be told apart from typos.
#ifndef TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_
#define TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_

#include <span>
#include <string_view>

namespace trainflops {

// Each with its leading "--", sorted bytewise, without duplicates.
std::span<const std::string_view> megatron_known_flags();

bool is_megatron_known_flag(std::string_view flag);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_
