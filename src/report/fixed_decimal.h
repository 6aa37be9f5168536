// Fixed-point decimal text of doubles (internal to src/report): what a table
// of thousands of rows prints, written as printf's %.<digits>f writes it.
#ifndef TRAINFLOPS_REPORT_FIXED_DECIMAL_H_
#define TRAINFLOPS_REPORT_FIXED_DECIMAL_H_

namespace trainflops {

// The widest text write_fixed() writes: 309 integer digits, a point and the decimals.
inline constexpr int kMaxFixedDecimals = 6;
inline constexpr int kFixedDecimalCapacity = 320;

// Writes `value` with `decimals` (0..kMaxFixedDecimals) digits after the
// point, rounded as printf("%.*f") rounds the exact binary value, to
// `buffer` (kFixedDecimalCapacity chars); returns the end of the text.
char* write_fixed(char* buffer, double value, int decimals);

}  // namespace trainflops

#endif  // TRAINFLOPS_REPORT_FIXED_DECIMAL_H_
