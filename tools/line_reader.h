// Lines of a file descriptor (stdin for `batch`), each at most a cap long,
// read with read(2) so that a failed read (a directory, a closed descriptor)
// is told apart from the end of the input.
#ifndef TRAINFLOPS_TOOLS_LINE_READER_H_
#define TRAINFLOPS_TOOLS_LINE_READER_H_

#include <cstddef>
#include <string>
#include <vector>

namespace trainflops::cli {

class LineReader {
 public:
  enum class Status {
    kLine,     // `line` holds the next line, without its '\n'
    kTooLong,  // the next line was longer than the cap; it was skipped up to its '\n'
    kEnd,      // the input ended
    kFailed,   // read(2) failed: error() says why
  };

  LineReader(int fd, std::size_t max_line_bytes) : fd_(fd), max_line_bytes_(max_line_bytes), buffer_(1 << 16) {}

  Status next(std::string& line);
  // Whether input is already read that next() has not returned: a caller
  // that answers each line flushes only when there is none (then the next
  // read may wait for whoever writes the input).
  bool has_buffered_input() const { return begin_ < end_; }
  // strerror of the failed read.
  const std::string& error() const { return error_; }

 private:
  bool fill();  // false at the end of the input or on an error

  int fd_;
  std::size_t max_line_bytes_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  std::string error_;
};

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_LINE_READER_H_
