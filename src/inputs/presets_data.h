// Internal: the presets/*.json files, compiled in (see CMakeLists.txt).
#ifndef TRAINFLOPS_SRC_INPUTS_PRESETS_DATA_H_
#define TRAINFLOPS_SRC_INPUTS_PRESETS_DATA_H_

#include <span>
#include <string_view>

namespace trainflops {

std::span<const std::string_view> preset_files();

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_INPUTS_PRESETS_DATA_H_
