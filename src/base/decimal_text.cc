#include "base/decimal_text.h"

#include <fmt/format.h>
#include <locale.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace trainflops {
namespace {

// The significant digits of fmt's shortest text of a finite value
// ("1.0905e+18", "0.00012", "1e+15", "1000000000000000"): its digits less
// leading and trailing zeros, at least one.
int significant_digits(std::string_view shortest) {
  const std::string_view mantissa = shortest.substr(0, shortest.find('e'));
  int digits = 0, trailing_zeros = 0;
  for (char c : mantissa) {
    if (c < '0' || c > '9' || (digits == 0 && c == '0')) continue;
    ++digits;
    trailing_zeros = c == '0' ? trailing_zeros + 1 : 0;
  }
  return std::max(1, digits - trailing_zeros);
}

locale_t c_locale() {
  static const locale_t locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  return locale;
}

}  // namespace

std::string shortest_round_trip(double value) {
  // fmt's "{}" writes the shortest digits but chooses the notation by the
  // exponent alone; std::to_chars writes both with those digits and keeps
  // the shorter.
  std::string shortest = fmt::format("{}", value);
  if (!std::isfinite(value)) return shortest;
  const int digits = significant_digits(shortest);
  std::string scientific = fmt::format("{:.{}e}", value, digits - 1);
  const int exponent = std::atoi(scientific.c_str() + scientific.find('e') + 1);
  std::string fixed = fmt::format("{:.{}f}", value, std::max(0, digits - 1 - exponent));
  return fixed.size() <= scientific.size() ? fixed : scientific;
}

std::string fixed_point_text(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

std::optional<double> parse_double(std::string_view text) {
  // strtod also reads leading space, a '+' and hexadecimal, which
  // std::from_chars does not.
  const std::string_view magnitude = text.starts_with('-') ? text.substr(1) : text;
  if (magnitude.empty() || magnitude.front() == '+' || magnitude.front() == ' ' ||
      (magnitude.front() >= '\t' && magnitude.front() <= '\r') || magnitude.starts_with("0x") ||
      magnitude.starts_with("0X")) {
    return std::nullopt;
  }
  const std::string terminated(text);
  char* end = nullptr;
  errno = 0;
  const double value = strtod_l(terminated.c_str(), &end, c_locale());
  if (end != terminated.c_str() + terminated.size()) return std::nullopt;
  // Out of range as std::from_chars has it: too large, or so small that it
  // reads as zero (strtod also says so of a subnormal result).
  if (errno == ERANGE && (value == 0 || std::isinf(value))) return std::nullopt;
  return value;
}

}  // namespace trainflops
