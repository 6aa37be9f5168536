// Workload inputs as text, as the command line and files give them:
// cu_seqlens files, sizes such as 4k, lists of context lengths.
//
// Thread safety: SizeSuffixes is a plain value: several threads may read one at
// once, and a thread that changes one must be the only one using it. The
// functions here keep no state of their own: several threads may call them at
// once, given different objects to change.
#ifndef TRAINFLOPS_WORKLOAD_TEXT_H_
#define TRAINFLOPS_WORKLOAD_TEXT_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/int128.h"
#include "trainflops/result.h"

namespace trainflops {

// Reads cu_seqlens from a file: NumPy .npy (int32 or int64, little-endian, one
// dimension) when the name ends in .npy, else text with integers separated by
// whitespace or commas (brackets allowed, as print() writes a list).
Result<std::vector<std::int64_t>> read_cu_seqlens_file(const std::string& path);
// The same from the file's contents (`path` picks the format and names the
// file in errors), e.g. for bytes that never were a file.
Result<std::vector<std::int64_t>> parse_cu_seqlens_file(const std::string& path, const std::string& contents);
// The documents of a cu_seqlens file, by their lengths, handed to `consume`
// a block at a time in one pass: a regular file is memory-mapped and the
// pages read are given back, so that memory stays bounded whatever the
// file's size. Errors: read_cu_seqlens_file's, then lengths_from_cu_seqlens'
// and check_offsets_hold_tokens', prefixed with the path; the first error
// `consume` returns.
Status read_cu_seqlens_lengths(const std::string& path,
                               const std::function<Status(std::span<const std::int64_t>)>& consume);

// A size given as text, as the command line takes batch sizes and lengths: a
// decimal integer of at least `minimum`, and with `suffixes` also a k (x 1024)
// or m (x 1024^2) suffix, as in 4k or 128K. Errors name `field`:
//   --seq-length = "4g": must be an integer >= 1, optionally with k or m
//   --global-batch-size = "99999999999999999999": must be at most 9223372036854775807
enum class SizeSuffixes { kRejected, kAccepted };
Result<std::int64_t> parse_size(std::string_view text, std::string_view field, std::int64_t minimum,
                                SizeSuffixes suffixes);

// A number of tokens as budgets are written: a decimal number with an
// optional K, M, B or T suffix (powers of 1000, in any case), e.g. 15T,
// 14.8T, 500B, 16M, 4194304; the value must be a whole number >= 1. Errors:
//   --tokens = "15X": must be a whole number of tokens >= 1, optionally with K, M, B or T (15T, 500B)
Result<Int128> parse_token_count(std::string_view text, std::string_view field);

// "4k,32k,128k,256k" -> 4096, 32768, 131072, 262144: positive integers with an
// optional k (x1024) or m (x1048576) suffix, separated by commas.
Result<std::vector<std::int64_t>> parse_seq_lengths(std::string_view text);

}  // namespace trainflops

#endif  // TRAINFLOPS_WORKLOAD_TEXT_H_
