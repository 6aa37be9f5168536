// Exact integer arithmetic for the exact modes: signed 128-bit values whose
// every operation detects overflow instead of wrapping.
//
// Thread safety: Int128 is a plain value: several threads may read one at once,
// and a thread that changes one must be the only one using it. The functions
// here keep no state of their own: several threads may call them at once, given
// different objects to change.
#ifndef TRAINFLOPS_INT128_H_
#define TRAINFLOPS_INT128_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainflops {

using Int128 = __int128;

// Each returns nullopt when the exact result does not fit in Int128.
inline std::optional<Int128> checked_add(Int128 a, Int128 b) {
  Int128 sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}
std::optional<Int128> checked_wide_mul(Int128 a, Int128 b);
// Inline, as counts multiply many: two factors that fit in 64 bits (every
// length, batch size and width) multiply in one instruction and cannot
// overflow 128 bits.
inline std::optional<Int128> checked_mul(Int128 a, Int128 b) {
  const auto narrow_a = static_cast<std::int64_t>(a), narrow_b = static_cast<std::int64_t>(b);
  if (narrow_a == a && narrow_b == b) return Int128{narrow_a} * narrow_b;
  return checked_wide_mul(a, b);
}

// Decimal text of `value`, e.g. "-170141183460469231731687303715884105728".
std::string to_decimal(Int128 value);

// Parses an optionally signed decimal integer; nullopt on any other text or
// when the value does not fit.
std::optional<Int128> parse_decimal(std::string_view text);

// Nearest double (round to nearest, ties to even). Inline, as counts convert
// many: a value that fits in 64 bits converts in one instruction, to the same
// double.
inline double to_double(Int128 value) {
  const auto narrow = static_cast<std::int64_t>(value);
  return narrow == value ? static_cast<double>(narrow) : static_cast<double>(value);
}

}  // namespace trainflops

#endif  // TRAINFLOPS_INT128_H_
