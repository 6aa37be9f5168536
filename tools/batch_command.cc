// trainflops batch: JSON Lines records on stdin, one JSON answer line each,
// in order, written as soon as it is known (a streaming protocol: a caller
// may write a record and wait for its answer).
#include <unistd.h>

#include <exception>
#include <iostream>
#include <new>

#include "command.h"
#include "line_reader.h"
#include "trainflops/batch.h"

namespace trainflops::cli {
namespace {

// A record is a model and a workload; 16 MiB holds a million document lengths.
constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;

std::string error_answer(std::int64_t number, const std::string& problem) {
  return R"({"error":"line )" + std::to_string(number) + ": " + problem + "\"}";
}

int run_batch() {
  std::ios::sync_with_stdio(false);
  LineReader reader(STDIN_FILENO, kMaxLineBytes);
  bool all_ok = true;
  std::int64_t number = 0;
  std::string line;
  for (;;) {
    LineReader::Status status = LineReader::Status::kEnd;
    try {
      status = reader.next(line);
    } catch (const std::bad_alloc&) {
      std::cerr << "trainflops: out of memory reading line " << number + 1 << " of stdin\n";
      return finish_output(kCannotRead);
    }
    if (status == LineReader::Status::kEnd) break;
    if (status == LineReader::Status::kFailed) {
      std::cerr << "trainflops: cannot read stdin after line " << number << " (" << reader.error() << ")\n";
      return finish_output(kCannotRead);
    }
    ++number;
    BatchAnswer answer;
    if (status == LineReader::Status::kTooLong) {
      answer = {error_answer(number, "longer than " + std::to_string(kMaxLineBytes) +
                                         " bytes, the most a batch line may hold"),
                false};
    } else {
      try {
        answer = answer_batch_line(line, number);
      } catch (const std::exception&) {  // e.g. out of memory: this record fails, the others go on
        answer = {error_answer(number, "not counted: out of resources"), false};
      }
    }
    all_ok = all_ok && answer.ok;
    std::cout << answer.json << '\n';
    // Answers go out before the next read could wait for input (a caller
    // may be waiting on each answer), and in one write while input is queued.
    if (!reader.has_buffered_input()) std::cout.flush();
    if (!std::cout) break;
  }
  return finish_output(all_ok ? 0 : kSomeRecordsFailed);
}

}  // namespace

Runner add_batch_command(CLI::App& app) {
  app.add_subcommand("batch",
                     "Count JSON Lines records from stdin: one JSON answer line per input line, in order; exit "
                     "status 1 when any line was answered with an error, 4 when stdin cannot be read");
  return [](const std::vector<std::string>& after_dashes) {
    if (const int status = reject_words_after_dashes(after_dashes)) return status;
    return run_batch();
  };
}

}  // namespace trainflops::cli
