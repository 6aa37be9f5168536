// Every option value is checked as text before CLI11 converts it: left to
// itself, CLI11 takes an empty value as an unset option, clamps an
// out-of-range integer to its type's limit and reads "010" as octal.
#ifndef TRAINFLOPS_TOOLS_OPTION_VALUES_H_
#define TRAINFLOPS_TOOLS_OPTION_VALUES_H_

#include <CLI/CLI.hpp>
#include <string>

namespace trainflops::cli {

// The problem with `value` of an option CLI11 types `type_name` ("INT",
// "FLOAT", "TEXT", ...), or "" when there is none:
//   must not be empty
//   "1.5" must be a decimal integer
//   "99999999999999999999" must be at most 9223372036854775807
std::string option_value_problem(const std::string& type_name, const std::string& value);

// Adds that check to every option of `app` and its subcommands that takes a
// value; CLI11 then reports "--num-gpus: must not be empty".
void check_option_values(CLI::App& app);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_OPTION_VALUES_H_
