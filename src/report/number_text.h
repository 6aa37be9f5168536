// Internal: numbers as the machine-readable reports write them.
#ifndef TRAINFLOPS_SRC_REPORT_NUMBER_TEXT_H_
#define TRAINFLOPS_SRC_REPORT_NUMBER_TEXT_H_

#include <charconv>
#include <string>

namespace trainflops {

// The shortest decimal that reads back as exactly `value` (as JSON output
// writes it), e.g. "302592963584", "0.9283093991907119", "1e+20".
inline std::string shortest_decimal(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_REPORT_NUMBER_TEXT_H_
