// printf-style formatting of one number, for the subcommands' tables.
#ifndef TRAINFLOPS_TOOLS_PRINTED_H_
#define TRAINFLOPS_TOOLS_PRINTED_H_

#include <cstdio>
#include <string>

namespace trainflops::cli {

// `format` holds one double conversion ("%.2f%%", "%g s").
inline std::string printed(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_PRINTED_H_
