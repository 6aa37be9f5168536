// The subcommands of the trainflops command line. Each add_*_command adds its
// options to the application and returns what runs it once argv is parsed.
#ifndef TRAINFLOPS_TOOLS_COMMAND_H_
#define TRAINFLOPS_TOOLS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "trainflops/result.h"

namespace trainflops::cli {

// Exit status of a run: 0 success, 2 invalid input (nothing on stdout then).
inline constexpr int kBadInput = 2;

using Runner = std::function<int()>;

Runner add_count_command(CLI::App& app);
Runner add_batch_command(CLI::App& app);
Runner add_sweep_command(CLI::App& app);
Runner add_presets_command(CLI::App& app);
Runner add_mfu_command(CLI::App& app);

// Prints "trainflops: <message>" on stderr and returns kBadInput.
int report_error(const Error& error);

// Prints `output` on stdout, or the error; the status to exit with.
int print_result(const Result<std::string>& output);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_COMMAND_H_
