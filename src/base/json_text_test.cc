// Parsing JSON as Python's json module writes it: its non-finite constants
// read as doubles wherever a value may stand, and nothing else changed.
#include "base/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace trainflops {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(JsonTextTest, PythonConstantsAreTheirDoubles) {
  struct Case {
    const char* text;
    json expected;  // NaN is checked apart: it equals nothing
  };
  const Case cases[] = {
      {"[0.0, Infinity]", json::array({0.0, kInf})},
      {"-Infinity", -kInf},
      // Numbers before, between and after keep their places.
      {R"({"a": 1, "b": [-2.5e-3, -Infinity, 0], "c": Infinity, "d": [null, 1E+2]})",
       {{"a", 1}, {"b", {-2.5e-3, -kInf, 0}}, {"c", kInf}, {"d", {nullptr, 1e2}}}},
      // The words inside strings are text.
      {R"({"Infinity": "NaN null -Infinity", "k\"NaN": Infinity})",
       {{"Infinity", "NaN null -Infinity"}, {"k\"NaN", kInf}}},
      // Without a constant, plain JSON.
      {R"({"time_step_limit": [0.0, 1e300]})", {{"time_step_limit", {0.0, 1e300}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<json> parsed = parse_python_json(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed.value(), c.expected);
  }
  const json nan = parse_python_json(R"([null, NaN, 1])").value();
  ASSERT_EQ(nan.size(), 3u);
  EXPECT_TRUE(nan[0].is_null());
  EXPECT_TRUE(nan[1].is_number_float() && std::isnan(nan[1].get<double>()));
  EXPECT_EQ(nan[2], 1);
}

TEST(JsonTextTest, PythonJsonErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {"[Infinit]",
       "not valid JSON (line 1, column 2: syntax error while parsing value - invalid literal; last read: '[I')"},
      {"[inf]", "not valid JSON (line 1, column 2: syntax error while parsing value - invalid literal; last read: '[i')"},
      // A constant is a number, where a key must be a string.
      {"{Infinity: 1}",
       "not valid JSON (line 1, column 9: syntax error while parsing object key - unexpected number literal; "
       "expected string literal)"},
      // Lines, columns and the text last read are the text's.
      {"[NaN,\n -Infinity, nul]", "not valid JSON (line 2, column 16: syntax error while parsing value - invalid "
                                  "literal; last read: '-Infinity, nul]')"},
      {"[Infinity, 1e999]", "not valid JSON: the number 1e999 does not fit in a double"},
      {std::string(101, '[') + "Infinity" + std::string(101, ']'),
       "not valid JSON: nested deeper than 100 levels (line 1, column 101)"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    const Result<json> parsed = parse_python_json(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message(), message);
  }
}

}  // namespace
}  // namespace trainflops
