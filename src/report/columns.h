// Fixed-width columns of the text tables (internal to src/report).
#ifndef TRAINFLOPS_REPORT_COLUMNS_H_
#define TRAINFLOPS_REPORT_COLUMNS_H_

#include <cstddef>
#include <string>

namespace trainflops {

// `text` left-aligned in `width` columns (never cut).
inline std::string pad_right(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// `text` right-aligned in `width` columns (never cut).
inline std::string pad_left(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

}  // namespace trainflops

#endif  // TRAINFLOPS_REPORT_COLUMNS_H_
