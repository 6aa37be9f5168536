// The trainflops command line: parses arguments, calls the library, prints.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "command.h"
#include "option_values.h"

namespace trainflops::cli {

int report_error(const Error& error) {
  std::cerr << "trainflops: " << error.message() << "\n";
  return kBadInput;
}

int print_result(const Result<std::string>& output) {
  if (!output.ok()) return report_error(output.error());
  std::cout << output.value();
  return finish_output(0);
}

int finish_output(int status) {
  if (std::cout) {  // else errno still says why an earlier write failed
    errno = 0;
    std::cout.flush();
  }
  if (std::cout) return status;
  std::cerr << "trainflops: cannot write the output"
            << (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string()) << "\n";
  return kCannotWrite;
}

int reject_words_after_dashes(const std::vector<std::string>& after_dashes) {
  if (after_dashes.empty()) return 0;
  return report_error(
      Error("unexpected \"" + after_dashes.front() +
            "\" after --: only count, sweep, mfu, plan and compare read Megatron-LM flags there (with --megatron)"));
}

}  // namespace trainflops::cli

int main(int argc, char** argv) {
  using namespace trainflops::cli;
  CLI::App app{"trainflops: FLOPs of one training iteration, with Megatron-LM parity and exact per-document counts"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainflops " TRAINFLOPS_VERSION);
  using Adder = Runner (*)(CLI::App&);
  constexpr std::pair<std::string_view, Adder> kCommands[] = {
      {"count", add_count_command},     {"batch", add_batch_command},     {"sweep", add_sweep_command},
      {"presets", add_presets_command}, {"mfu", add_mfu_command},         {"gpus", add_gpus_command},
      {"plan", add_plan_command},       {"compare", add_compare_command},
  };
  // The subcommand named first is the only one built: building the others'
  // options cost a sixth of a count's page faults (each one tens of
  // microseconds in a VM). Without one (--help, a mistyped name) all are built.
  const std::string_view first = argc > 1 ? argv[1] : "";
  const bool named = std::any_of(std::begin(kCommands), std::end(kCommands),
                                 [&](const auto& command) { return command.first == first; });
  std::vector<Runner> runners;
  for (const auto& [name, add] : kCommands) {
    if (!named || name == first) runners.push_back(add(app));
  }
  // The words after the first `--` go to the subcommand as they are.
  std::vector<char*> before_dashes;
  std::vector<std::string> after_dashes;
  int i = 0;
  for (; i < argc && (i == 0 || std::string_view(argv[i]) != "--"); ++i) before_dashes.push_back(argv[i]);
  for (++i; i < argc; ++i) after_dashes.emplace_back(argv[i]);
  check_option_values(app);
  try {
    app.parse(static_cast<int>(before_dashes.size()), before_dashes.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help and --version: printed on stdout, which may fail
      app.exit(e);
      return finish_output(0);
    }
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    // Megatron-LM flags given without the `--` that separates them from trainflops' own options.
    const bool megatron = std::find_if(before_dashes.begin(), before_dashes.end(), [](const char* word) {
                            return std::string_view(word) == "--megatron";
                          }) != before_dashes.end();
    if (megatron && dynamic_cast<const CLI::ExtrasError*>(&e)) {
      return report_error(trainflops::Error(message +
                                            "; Megatron-LM flags go after --, as in: trainflops count --megatron -- "
                                            "--num-layers 32 --hidden-size 4096 ..."));
    }
    return report_error(trainflops::Error(message));
  }
  const auto subcommands = app.get_subcommands({});
  for (std::size_t i = 0; i < subcommands.size(); ++i) {
    if (subcommands[i]->parsed()) return runners[i](std::move(after_dashes));
  }
  return kBadInput;
}
