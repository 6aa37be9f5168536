// Internal: the options of Megatron-LM's argument parser and how many values
// each takes, so that the flags of a launch script can be told apart from
// typos and read as Megatron-LM reads them.
#ifndef TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_
#define TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_

#include <span>
#include <string_view>

namespace trainflops {

struct MegatronFlagShape {
  std::string_view name;  // with its leading "--"
  int fewest_values;
  int most_values;  // kUnlimitedValues: every word up to the next flag
};

inline constexpr int kUnlimitedValues = -1;

// Sorted bytewise by name, without duplicates.
std::span<const MegatronFlagShape> megatron_known_flags();

// nullptr when Megatron-LM's parser does not accept `flag`.
const MegatronFlagShape* find_megatron_known_flag(std::string_view flag);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_MEGATRON_KNOWN_FLAGS_H_
