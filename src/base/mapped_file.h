// Internal: a file's bytes, memory-mapped for one pass over them. Pages the
// pass is done with are handed back (release_before), so that the resident
// memory stays a window's worth however large the file is.
#ifndef TRAINFLOPS_SRC_BASE_MAPPED_FILE_H_
#define TRAINFLOPS_SRC_BASE_MAPPED_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "trainflops/result.h"

namespace trainflops {

class MappedFile {
 public:
  // A regular file is mapped; anything else (a pipe, a device) is read
  // whole, at most `max_bytes` (read_input_file's errors). Errors (kIo):
  // "PATH: cannot open (...)", "PATH: is a directory, not a file".
  static Result<MappedFile> open(const std::string& path, std::size_t max_bytes);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return bytes_; }
  // The bytes before `offset` will not be read again.
  void release_before(std::size_t offset);

 private:
  MappedFile() = default;

  std::string_view bytes_;
  void* mapping_ = nullptr;  // null when the bytes are in `read_`
  std::size_t released_ = 0;
  std::string read_;
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_MAPPED_FILE_H_
