#include "trainflops/mode.h"

#include <string>

namespace trainflops {

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kMegatron: return "megatron";
    case Mode::kModel: return "model";
    case Mode::kExecuted: return "executed";
  }
  return "unknown";
}

Result<Mode> parse_mode(std::string_view text) {
  for (Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
    if (text == mode_name(mode)) return mode;
  }
  return Error("mode = \"" + std::string(text) + "\": must be one of megatron, model, executed");
}

}  // namespace trainflops
