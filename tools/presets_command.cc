// trainflops presets: the built-in models.
#include "command.h"
#include "trainflops/presets.h"

namespace trainflops::cli {

Runner add_presets_command(CLI::App& app) {
  app.add_subcommand("presets", "List the built-in models (--preset NAME)");
  return [] {
    std::string out;
    for (const Preset& preset : presets()) {
      out += preset.name + std::string(preset.name.size() < 18 ? 18 - preset.name.size() : 1, ' ') +
             preset.description + "\n";
    }
    return print_result(out);
  };
}

}  // namespace trainflops::cli
