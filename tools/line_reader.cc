#include "line_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainflops::cli {

bool LineReader::fill() {
  for (;;) {
    const ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
    if (got > 0) {
      begin_ = 0;
      end_ = static_cast<std::size_t>(got);
      return true;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    error_ = std::strerror(errno);
    return false;
  }
}

LineReader::Status LineReader::next(std::string& line) {
  line.clear();
  bool too_long = false, any = false;
  for (;;) {
    if (begin_ == end_ && !fill()) {
      if (!error_.empty()) return Status::kFailed;
      if (!any) return Status::kEnd;
      return too_long ? Status::kTooLong : Status::kLine;  // a last line without '\n'
    }
    any = true;
    const char* start = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    const void* newline = std::memchr(start, '\n', available);
    const std::size_t length = newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - start) : available;
    if (!too_long && line.size() + length > max_line_bytes_) {
      too_long = true;
      line.clear();
      line.shrink_to_fit();
    }
    if (!too_long) line.append(start, length);
    begin_ += length;
    if (newline) {
      ++begin_;
      return too_long ? Status::kTooLong : Status::kLine;
    }
  }
}

}  // namespace trainflops::cli
