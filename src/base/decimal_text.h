// Decimal text of doubles, written and read as std::to_chars and
// std::from_chars write and read it, whatever the C locale: formatted by fmt
// (its shortest round-trip digits), read by the C library's strtod_l in the
// "C" locale. The C++ libraries that lack floating-point to_chars and
// from_chars (WebAssembly's) build them the same way.
#ifndef TRAINFLOPS_SRC_BASE_DECIMAL_TEXT_H_
#define TRAINFLOPS_SRC_BASE_DECIMAL_TEXT_H_

#include <optional>
#include <string>
#include <string_view>

namespace trainflops {

// The fewest significant digits that read back as exactly `value`, in fixed
// or scientific notation, whichever is shorter (fixed on a tie): what
// std::to_chars(first, last, value) writes. "302592963584",
// "0.9283093991907119", "1e+20", "-0", "inf", "-nan".
std::string shortest_round_trip(double value);

// `value` with `decimals` (>= 0) digits after the point, rounded as printf's
// %.*f rounds the exact binary value: what std::to_chars with
// std::chars_format::fixed and that precision writes.
std::string fixed_point_text(double value, int decimals);

// The double that all of `text` spells, as std::from_chars reads it: decimal
// or scientific, an optional leading '-', "inf", "infinity", "nan" in any
// case; no leading space or '+', no hexadecimal. nullopt when `text` is not
// such a number, or spells one too large for a double or so small that it
// would read as zero (a subnormal one reads).
std::optional<double> parse_double(std::string_view text);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_DECIMAL_TEXT_H_
