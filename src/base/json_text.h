// Parsing JSON input (configs, arguments, batch records) with the limits
// every reader shares: at most kMaxJsonDepth levels of nesting, checked
// before parsing (the readers and the serializer recurse, so deeper input
// would exhaust the stack), and syntax errors that give line and column.
#ifndef TRAINFLOPS_SRC_BASE_JSON_TEXT_H_
#define TRAINFLOPS_SRC_BASE_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

inline constexpr int kMaxJsonDepth = 100;

enum class JsonComments { kRejected, kAllowed };

// Ok, or "not valid JSON: nested deeper than 100 levels (line L, column C)".
Status check_json_depth(std::string_view text, JsonComments comments);

// "not valid JSON (line L, column C: <what the parser expected>)".
Error json_syntax_error(const nlohmann::json::parse_error& error);
// "not valid JSON: a number does not fit in a double (<its first digits>...)".
Error json_number_error(const nlohmann::json::out_of_range& error);

template <typename Json>
Result<Json> parse_json(std::string_view text, JsonComments comments) {
  TRAINFLOPS_RETURN_IF_ERROR(check_json_depth(text, comments));
  try {
    return Json::parse(text, nullptr, /*allow_exceptions=*/true, comments == JsonComments::kAllowed);
  } catch (const nlohmann::json::parse_error& error) {
    return json_syntax_error(error);
  } catch (const nlohmann::json::out_of_range& error) {  // a number beyond a double's range: 1e999
    return json_number_error(error);
  }
}

// JSON as Python's json module writes it: also the constants NaN, Infinity
// and -Infinity, which json.dump writes for floats that are not finite (as in
// a Hugging Face config.json: Nemotron-H's "time_step_limit": [0.0, Infinity]),
// read as those doubles. Comments are rejected; errors as parse_json's, where
// a constant is a number ("{Infinity: 1}": "... unexpected number literal;
// expected string literal").
Result<nlohmann::json> parse_python_json(std::string_view text);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_JSON_TEXT_H_
