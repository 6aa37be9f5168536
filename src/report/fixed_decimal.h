// Fixed-point decimal text of doubles (internal to src/report): what a table
// of thousands of rows prints, written as printf's %.<digits>f writes it.
// Both writers work backwards from the end of the text, so that a
// right-aligned column is written in place.
#ifndef TRAINFLOPS_REPORT_FIXED_DECIMAL_H_
#define TRAINFLOPS_REPORT_FIXED_DECIMAL_H_

#include <cstdint>

namespace trainflops {

// The widest text write_fixed_before() writes: 309 integer digits, a point and the decimals.
inline constexpr int kMaxFixedDecimals = 6;
inline constexpr int kFixedDecimalCapacity = 320;

// Writes `value` with `decimals` (0..kMaxFixedDecimals) digits after the
// point, rounded as printf("%.*f") rounds the exact binary value, so that the
// text ends just before `end` (with kFixedDecimalCapacity chars of room
// before it); returns where the text starts.
char* write_fixed_before(char* end, double value, int decimals);

// The decimal digits of `value` (at most 20), ending just before `end`;
// returns where they start.
char* write_integer_before(char* end, std::uint64_t value);

}  // namespace trainflops

#endif  // TRAINFLOPS_REPORT_FIXED_DECIMAL_H_
