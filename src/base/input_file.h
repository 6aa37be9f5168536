// Internal: reading the files a user names (model configs, Megatron-LM
// arguments, cu_seqlens): whole, but never more than a limit, so that
// /dev/zero or a mistaken multi-gigabyte file is a clear error instead of
// exhausting memory.
#ifndef TRAINFLOPS_SRC_BASE_INPUT_FILE_H_
#define TRAINFLOPS_SRC_BASE_INPUT_FILE_H_

#include <cstddef>
#include <string>

#include "trainflops/result.h"

namespace trainflops {

// JSON configs and arguments: published configs are a few kilobytes.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{16} << 20;
// cu_seqlens files: 1 GiB holds 134 million int64 offsets.
inline constexpr std::size_t kMaxCuSeqlensFileBytes = std::size_t{1} << 30;

// The bytes of the file at `path` (a regular file, a pipe or a device).
// Errors (code kIo): "PATH: cannot open (No such file or directory)",
// "PATH: is a directory", "PATH: larger than MAX bytes, the limit for ...".
Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_INPUT_FILE_H_
