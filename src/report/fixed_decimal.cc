#include "report/fixed_decimal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "base/decimal_text.h"

namespace trainflops {

namespace {

// "00" to "99": two digits per division.
constexpr auto kDigitPairs = [] {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[2 * i] = static_cast<char>('0' + i / 10);
    pairs[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}();

}  // namespace

char* write_integer_before(char* end, std::uint64_t value) {
  for (; value >= 100; value /= 100) {
    end -= 2;
    std::memcpy(end, &kDigitPairs[2 * (value % 100)], 2);
  }
  if (value < 10) {
    *--end = static_cast<char>('0' + value);
    return end;
  }
  end -= 2;
  std::memcpy(end, &kDigitPairs[2 * value], 2);
  return end;
}

char* write_fixed_before(char* end, double value, int decimals) {
  static constexpr double kScale[kMaxFixedDecimals + 1] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
  // Most values are scaled and rounded as an integer, which is far cheaper
  // than an exact conversion. The product is within half a unit
  // in the last place (below 2^-12 under 2^40) of the exact one, so a scaled
  // value farther than 2^-10 from a rounding boundary rounds as the exact one
  // does; the others, negative values, large ones, infinities and NaN are
  // converted exactly (fixed_point_text).
  const double scaled = value * kScale[decimals];
  if (!std::signbit(value) && scaled < 0x1p40) {
    // Truncating a non-negative value floors it (std::floor is a call where
    // the baseline instruction set has no rounding instruction).
    auto units = static_cast<std::uint64_t>(scaled + 0.5);
    if (std::fabs(scaled - static_cast<double>(units)) < 0.5 - 0x1p-10) {
      for (int i = 0; i < decimals; ++i, units /= 10) *--end = static_cast<char>('0' + units % 10);
      if (decimals > 0) *--end = '.';
      return write_integer_before(end, units);
    }
  }
  const std::string text = fixed_point_text(value, decimals);
  return std::copy_backward(text.begin(), text.end(), end);
}

}  // namespace trainflops
