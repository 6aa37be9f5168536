// Counts a preset through the installed library and prints the exact total.
#include <iostream>

#include "trainflops/count.h"
#include "trainflops/presets.h"

int main() {
  using namespace trainflops;
  const Result<Preset> preset = find_preset("llama-3.1-8b");
  if (!preset.ok()) return 1;
  const Result<Model> model = preset_model(preset.value());
  if (!model.ok()) return 1;
  const Result<Report> report = count(model.value(), Bshd{1, 4096}, Mode::kModel);
  if (!report.ok()) {
    std::cerr << report.error().message() << "\n";
    return 1;
  }
  std::cout << to_decimal(*report.value().total.exact) << "\n";
  return 0;
}
