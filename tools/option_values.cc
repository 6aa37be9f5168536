#include "option_values.h"

#include <charconv>
#include <cstdint>

namespace trainflops::cli {

std::string option_value_problem(const std::string& type_name, const std::string& value) {
  if (value.empty()) return "must not be empty";
  if (type_name != "INT" && type_name != "UINT") return "";
  std::int64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, parsed);
  if (error == std::errc::result_out_of_range) {
    return "\"" + value + "\" must be " +
           (value.front() == '-' ? "at least " + std::to_string(INT64_MIN) : "at most " + std::to_string(INT64_MAX));
  }
  if (error != std::errc() || stop != end) return "\"" + value + "\" must be a decimal integer";
  return "";
}

void check_option_values(CLI::App& app) {
  for (CLI::App* command : app.get_subcommands({})) check_option_values(*command);
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size_max() == 0) continue;  // a flag: no value
    const std::string type_name = option->get_type_name();
    option->check(CLI::Validator(
        [type_name](std::string& value) { return option_value_problem(type_name, value); }, ""));
  }
}

}  // namespace trainflops::cli
