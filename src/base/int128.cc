#include "trainflops/int128.h"

#include <algorithm>

namespace trainflops {

std::optional<Int128> checked_wide_mul(Int128 a, Int128 b) {
  Int128 product;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::string to_decimal(Int128 value) {
  // Work on the magnitude as unsigned so that the minimum value has one.
  unsigned __int128 magnitude = value < 0 ? static_cast<unsigned __int128>(0) - static_cast<unsigned __int128>(value)
                                          : static_cast<unsigned __int128>(value);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<Int128> parse_decimal(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  Int128 value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    auto shifted = checked_mul(value, 10);
    if (!shifted) return std::nullopt;
    auto next = checked_add(*shifted, negative ? -digit : digit);
    if (!next) return std::nullopt;
    value = *next;
  }
  return value;
}

}  // namespace trainflops
