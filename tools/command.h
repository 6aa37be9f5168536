// The subcommands of the trainflops command line. Each add_*_command adds its
// options to the application and returns what runs it once argv is parsed.
#ifndef TRAINFLOPS_TOOLS_COMMAND_H_
#define TRAINFLOPS_TOOLS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "trainflops/result.h"

namespace trainflops::cli {

// Exit status of a run: 0 success; 1 `batch` answered at least one line with
// an error; 2 invalid input (nothing on stdout then); 3 the output could not
// be written (a full disk, a closed pipe); 4 the input could not be read
// (stdin a directory or closed, out of memory).
inline constexpr int kSomeRecordsFailed = 1;
inline constexpr int kBadInput = 2;
inline constexpr int kCannotWrite = 3;
inline constexpr int kCannotRead = 4;

// Runs a parsed subcommand. `after_dashes` holds the words after the first
// `--` of the command line, which CLI11 never sees (it would rewrite values
// in brackets): the Megatron-LM flags of `--megatron -- ...`.
using Runner = std::function<int(std::vector<std::string> after_dashes)>;

Runner add_count_command(CLI::App& app);
Runner add_batch_command(CLI::App& app);
Runner add_sweep_command(CLI::App& app);
Runner add_presets_command(CLI::App& app);
Runner add_mfu_command(CLI::App& app);
Runner add_gpus_command(CLI::App& app);
Runner add_plan_command(CLI::App& app);
Runner add_compare_command(CLI::App& app);

// Prints "trainflops: <message>" on stderr and returns kBadInput.
int report_error(const Error& error);

// Prints `output` on stdout, or the error; the status to exit with.
int print_result(const Result<std::string>& output);

// Flushes stdout; kCannotWrite with a message on stderr when what was
// printed did not all reach it, else `status`.
int finish_output(int status);

// kBadInput with a message when `after_dashes` is not empty: for the
// subcommands that read no Megatron-LM flags.
int reject_words_after_dashes(const std::vector<std::string>& after_dashes);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_COMMAND_H_
