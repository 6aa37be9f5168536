// Workloads from text: sizes such as 4k, token budgets and lists of context
// lengths (cu_seqlens files: cu_seqlens_file.cc).
#include "trainflops/workload_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "trainflops/workload.h"

namespace trainflops {
namespace {

}  // namespace

Result<Int128> parse_token_count(std::string_view text, std::string_view field) {
  const auto invalid = [&] {
    return Error(std::string(field) + " = \"" + std::string(text) +
                 "\": must be a whole number of tokens >= 1, optionally with K, M, B or T (15T, 500B)");
  };
  int zeros = 0;  // the suffix's power of ten
  std::string_view number = text;
  if (!number.empty()) {
    switch (number.back()) {
      case 'k':
      case 'K': zeros = 3; break;
      case 'm':
      case 'M': zeros = 6; break;
      case 'b':
      case 'B': zeros = 9; break;
      case 't':
      case 'T': zeros = 12; break;
      default: break;
    }
    if (zeros > 0) number.remove_suffix(1);
  }
  // Digits with at most one point: the decimals shift into the suffix's zeros.
  const std::size_t point = number.find('.');
  std::string digits(number.substr(0, point));
  if (point != std::string_view::npos) {
    std::string_view decimals = number.substr(point + 1);
    while (!decimals.empty() && decimals.back() == '0') decimals.remove_suffix(1);
    if (static_cast<int>(decimals.size()) > zeros) return invalid();  // not a whole number of tokens
    digits += decimals;
    zeros -= static_cast<int>(decimals.size());
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return invalid();
  digits.append(static_cast<std::size_t>(zeros), '0');
  const std::optional<Int128> value = digits.size() <= 36 ? parse_decimal(digits) : std::nullopt;
  if (!value) {
    return Error(ErrorCode::kOverflow,
                 std::string(field) + " = \"" + std::string(text) + "\": too many tokens to count");
  }
  if (*value < 1) return invalid();
  return *value;
}

Result<std::int64_t> parse_size(std::string_view text, std::string_view field, std::int64_t minimum,
                                SizeSuffixes suffixes) {
  const bool with_suffixes = suffixes == SizeSuffixes::kAccepted;
  const auto invalid = [&] {
    return Error(std::string(field) + " = \"" + std::string(text) + "\": must be an integer >= " +
                 std::to_string(minimum) + (with_suffixes ? ", optionally with k or m" : ""));
  };
  std::int64_t scale = 1;
  std::string_view digits = text;
  if (with_suffixes && !digits.empty()) {
    const char last = digits.back();
    if (last == 'k' || last == 'K') scale = 1024;
    if (last == 'm' || last == 'M') scale = 1024 * 1024;
    if (scale != 1) digits.remove_suffix(1);
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return invalid();
  }
  // Only digits: std::from_chars reads them all, unless the number passes 64 bits.
  std::int64_t number = 0, value = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), number).ec != std::errc() ||
      __builtin_mul_overflow(number, scale, &value)) {
    return Error(ErrorCode::kOverflow,
                 std::string(field) + " = \"" + std::string(text) + "\": must be at most " + std::to_string(INT64_MAX));
  }
  if (value < minimum) return invalid();
  return value;
}

Result<std::vector<std::int64_t>> parse_seq_lengths(std::string_view text) {
  std::vector<std::int64_t> lengths;
  lengths.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const Result<std::int64_t> length = parse_size(item, "length", 1, SizeSuffixes::kAccepted);
    if (!length.ok()) {
      return Error("--seq-lengths: \"" + std::string(item) +
                   "\" is not a context length (a positive integer, optionally with k or m)");
    }
    lengths.push_back(length.value());
    start = end + 1;
  }
  return lengths;
}

}  // namespace trainflops
