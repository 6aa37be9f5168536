#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/input_file.h"

namespace trainflops {

Result<MappedFile> MappedFile::open(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(ErrorCode::kIo, path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat status {};
  const bool regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
  MappedFile file;
  void* mapping = MAP_FAILED;
  if (regular && status.st_size > 0) {
    mapping = ::mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);
  if (mapping == MAP_FAILED) {  // not a regular file, empty, or not mappable: read it
    TRAINFLOPS_ASSIGN_OR_RETURN(file.read_, read_input_file(path, max_bytes));
    file.bytes_ = file.read_;
    return file;
  }
  ::madvise(mapping, static_cast<std::size_t>(status.st_size), MADV_SEQUENTIAL);
  file.mapping_ = mapping;
  file.bytes_ = std::string_view(static_cast<const char*>(mapping), static_cast<std::size_t>(status.st_size));
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : bytes_(other.bytes_), mapping_(other.mapping_), released_(other.released_), read_(std::move(other.read_)) {
  if (!mapping_) bytes_ = read_;
  other.mapping_ = nullptr;
  other.bytes_ = {};
}

MappedFile::~MappedFile() {
  if (mapping_) ::munmap(mapping_, bytes_.size());
}

void MappedFile::release_before(std::size_t offset) {
  if (!mapping_) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t end = offset / page * page;
  if (end <= released_) return;
  ::madvise(static_cast<char*>(mapping_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

}  // namespace trainflops
