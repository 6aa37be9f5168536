// Well-known models, built in: each is a data file presets/<name>.json holding
// the model's Megatron-LM arguments with its name, a description and the
// source of its numbers, compiled into the library.
#ifndef TRAINFLOPS_PRESETS_H_
#define TRAINFLOPS_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "trainflops/megatron_args.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

struct Preset {
  std::string name;         // what --preset takes, e.g. "glm-5"
  std::string title;        // e.g. "GLM-5"
  std::string description;  // one line
  std::string source;       // where the numbers come from
  MegatronArgs args;        // with seq_length, the default context
};

// Every preset, sorted by name.
const std::vector<Preset>& presets();

// The preset called `name`; the error lists the known names.
Result<Preset> find_preset(std::string_view name);

// The preset's model (model_from_megatron_args of its args, named by title).
Result<Model> preset_model(const Preset& preset);

}  // namespace trainflops

#endif  // TRAINFLOPS_PRESETS_H_
