// trainflops batch: JSON Lines records on stdin, one JSON result line each.
#include <iostream>

#include "command.h"
#include "trainflops/batch.h"

namespace trainflops::cli {

Runner add_batch_command(CLI::App& app) {
  app.add_subcommand("batch", "Count JSON Lines records from stdin, one JSON result line each");
  return [] {
    std::ios::sync_with_stdio(false);
    std::string line, out;
    while (std::getline(std::cin, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      out += batch_result_line(line);
      out += '\n';
      if (out.size() > (1 << 16)) {
        std::cout << out;
        out.clear();
      }
    }
    std::cout << out << std::flush;
    return 0;
  };
}

}  // namespace trainflops::cli
