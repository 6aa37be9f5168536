#include "base/json_text.h"

namespace trainflops {

Status check_json_depth(std::string_view text, JsonComments comments) {
  int depth = 0;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (c == '"') {
      // A string: skip to its closing quote, past escaped characters.
      for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\';
    } else if (c == '/' && comments == JsonComments::kAllowed && i + 1 < text.size() &&
               (text[i + 1] == '/' || text[i + 1] == '*')) {
      const std::string_view end = text[i + 1] == '/' ? "\n" : "*/";
      const std::size_t close = text.find(end, i + 2);
      if (close == std::string_view::npos) break;
      for (std::size_t k = i; k < close; ++k) {
        if (text[k] == '\n') {
          ++line;
          line_start = k + 1;
        }
      }
      i = close + end.size() - 1;
      if (end == "\n") {
        ++line;
        line_start = i + 1;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return Error("not valid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (line " +
                     std::to_string(line) + ", column " + std::to_string(i - line_start + 1) + ")");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Ok{};
}

Error json_syntax_error(const nlohmann::json::parse_error& error) {
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: <what>".
  const std::string what = error.what();
  const std::string marker = "parse error at ";
  const std::size_t at = what.find(marker);
  if (at == std::string::npos) return Error("not valid JSON (" + what + ")");
  return Error("not valid JSON (" + what.substr(at + marker.size()) + ")");
}

Error json_number_error(const nlohmann::json::out_of_range& error) {
  // nlohmann's text: "[json.exception.out_of_range.406] number overflow parsing '<the number>'".
  const std::string what = error.what();
  const std::size_t quote = what.find('\'');
  constexpr std::size_t kShown = 40;
  std::string number = quote == std::string::npos ? what : what.substr(quote + 1);
  if (!number.empty() && number.back() == '\'') number.pop_back();
  if (number.size() > kShown) number = number.substr(0, kShown) + "...";
  return Error("not valid JSON: the number " + number + " does not fit in a double");
}

}  // namespace trainflops
