// The trainflops command line: parses arguments, calls the library, prints.
#include <iostream>
#include <utility>
#include <vector>

#include "command.h"

namespace trainflops::cli {

int report_error(const Error& error) {
  std::cerr << "trainflops: " << error.message() << "\n";
  return kBadInput;
}

int print_result(const Result<std::string>& output) {
  if (!output.ok()) return report_error(output.error());
  std::cout << output.value();
  return 0;
}

}  // namespace trainflops::cli

int main(int argc, char** argv) {
  using namespace trainflops::cli;
  CLI::App app{"trainflops: FLOPs of one training iteration, with Megatron-LM parity and exact per-document counts"};
  app.require_subcommand(1);
  const std::vector<Runner> runners = {
      add_count_command(app),
      add_batch_command(app),
      add_sweep_command(app),
      add_presets_command(app),
      add_mfu_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kBadInput;  // --help exits 0
  }
  const auto subcommands = app.get_subcommands({});
  for (std::size_t i = 0; i < subcommands.size(); ++i) {
    if (subcommands[i]->parsed()) return runners[i]();
  }
  return kBadInput;
}
