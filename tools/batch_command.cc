// trainflops batch: JSON Lines records on stdin, one JSON answer line each,
// in order, written as soon as it is known (a streaming protocol: a caller
// may write a record and wait for its answer).
#include <exception>
#include <iostream>

#include "command.h"
#include "trainflops/batch.h"

namespace trainflops::cli {

Runner add_batch_command(CLI::App& app) {
  app.add_subcommand("batch",
                     "Count JSON Lines records from stdin: one JSON answer line per input line, in order; exit "
                     "status 1 when any line was answered with an error");
  return [](const std::vector<std::string>& after_dashes) {
    if (const int status = reject_words_after_dashes(after_dashes)) return status;
    std::ios::sync_with_stdio(false);
    bool all_ok = true;
    std::int64_t number = 0;
    for (std::string line; std::getline(std::cin, line);) {
      BatchAnswer answer;
      try {
        answer = answer_batch_line(line, ++number);
      } catch (const std::exception& e) {  // e.g. out of memory: this record fails, the others go on
        answer = {R"({"error":"line )" + std::to_string(number) + R"(: not counted: out of resources"})", false};
      }
      all_ok = all_ok && answer.ok;
      std::cout << answer.json << '\n';
      // Answers go out before the next read could wait for input (a caller
      // may be waiting on each answer), and in one write while input is queued.
      if (std::cin.rdbuf()->in_avail() <= 0) std::cout.flush();
      if (!std::cout) break;
    }
    return finish_output(all_ok ? 0 : kSomeRecordsFailed);
  };
}

}  // namespace trainflops::cli
