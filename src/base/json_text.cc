#include "base/json_text.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

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

Result<nlohmann::json> parse_python_json(std::string_view text) {
  // Each non-finite constant becomes a number of its length (so that lines
  // and columns stay those of the text), and the parser's callback, which
  // sees every number in the order of the text, puts the constant back.
  struct Constant {
    std::string_view word, stand_in;
    double value;
  };
  static constexpr Constant kConstants[] = {
      {"NaN", "0E0", std::numeric_limits<double>::quiet_NaN()},
      {"Infinity", "0.0E-000", std::numeric_limits<double>::infinity()},
      {"-Infinity", "-0.0E-000", -std::numeric_limits<double>::infinity()}};
  std::string rewritten(text);
  std::vector<std::optional<double>> numbers;  // each number of the text: the constant it stands for, if any
  bool replaced = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\';
      continue;
    }
    const Constant* constant = nullptr;
    for (const Constant& c : kConstants) constant = text.substr(i, c.word.size()) == c.word ? &c : constant;
    if (constant) {
      rewritten.replace(i, constant->word.size(), constant->stand_in);
      numbers.emplace_back(constant->value);
      replaced = true;
      i += constant->word.size() - 1;
    } else if (text[i] == '-' || (text[i] >= '0' && text[i] <= '9')) {
      numbers.emplace_back();
      while (i + 1 < text.size() && std::string_view("0123456789+-.eE").find(text[i + 1]) != std::string_view::npos) ++i;
    }
  }
  if (!replaced) return parse_json<nlohmann::json>(text, JsonComments::kRejected);
  TRAINFLOPS_RETURN_IF_ERROR(check_json_depth(rewritten, JsonComments::kRejected));
  std::size_t next_number = 0;
  const auto restore = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& value) {
    if (event == nlohmann::json::parse_event_t::value && value.is_number() && next_number < numbers.size()) {
      if (numbers[next_number]) value = *numbers[next_number];
      ++next_number;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(rewritten, restore);
  } catch (const nlohmann::json::parse_error& error) {
    // The message may quote the text it last read: the constants, not their stand-ins.
    std::string message = json_syntax_error(error).message();
    const std::size_t quoted = std::min(message.find("last read: '"), message.size());
    for (const Constant& c : kConstants) {
      for (std::size_t at = message.find(c.stand_in, quoted); at != std::string::npos;
           at = message.find(c.stand_in, at)) {
        message.replace(at, c.stand_in.size(), c.word);
        at += c.word.size();
      }
    }
    return Error(message);
  } catch (const nlohmann::json::out_of_range& error) {
    return json_number_error(error);
  }
}

}  // namespace trainflops
