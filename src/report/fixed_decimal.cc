#include "report/fixed_decimal.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace trainflops {

char* write_fixed(char* buffer, double value, int decimals) {
  static constexpr double kScale[kMaxFixedDecimals + 1] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
  static constexpr std::uint64_t kUnits[kMaxFixedDecimals + 1] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  // Most values are scaled and rounded as an integer, which is far cheaper
  // than std::to_chars' exact conversion. The product is within half a unit
  // in the last place (below 2^-12 under 2^40) of the exact one, so a scaled
  // value farther than 2^-10 from a rounding boundary rounds as the exact one
  // does; the others, negative values, large ones, infinities and NaN go to
  // std::to_chars.
  const double scaled = value * kScale[decimals];
  if (!std::signbit(value) && scaled < 0x1p40) {
    const double rounded = std::floor(scaled + 0.5);
    if (std::fabs(scaled - rounded) < 0.5 - 0x1p-10) {
      const auto units = static_cast<std::uint64_t>(rounded);
      char* end = std::to_chars(buffer, buffer + kFixedDecimalCapacity, units / kUnits[decimals]).ptr;
      if (decimals == 0) return end;
      *end++ = '.';
      std::uint64_t fraction = units % kUnits[decimals];
      for (int i = decimals - 1; i >= 0; --i, fraction /= 10) end[i] = static_cast<char>('0' + fraction % 10);
      return end + decimals;
    }
  }
  return std::to_chars(buffer, buffer + kFixedDecimalCapacity, value, std::chars_format::fixed, decimals).ptr;
}

}  // namespace trainflops
