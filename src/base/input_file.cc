#include "base/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace trainflops {

Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes) {
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    return Error(ErrorCode::kIo, path + ": is a directory, not a file");
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Error(ErrorCode::kIo, path + ": cannot open (" + std::strerror(errno) + ")");
  std::string contents;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t read = std::fread(buffer, 1, sizeof buffer, file.get());
    if (read == 0) break;
    if (contents.size() + read > max_bytes) {
      return Error(ErrorCode::kIo, path + ": larger than " + std::to_string(max_bytes) +
                                       " bytes, the most trainflops reads from one such file");
    }
    contents.append(buffer, read);
  }
  if (std::ferror(file.get())) return Error(ErrorCode::kIo, path + ": cannot read (" + std::strerror(errno) + ")");
  return contents;
}

}  // namespace trainflops
