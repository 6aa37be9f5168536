// Workloads from text: cu_seqlens files (text or NumPy .npy), sizes such as
// 4k, and lists of context lengths.
#include "trainflops/workload_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "base/input_file.h"
#include "trainflops/workload.h"

namespace trainflops {
namespace {

Result<std::vector<std::int64_t>> parse_text_cu_seqlens(const std::string& path, const std::string& text) {
  std::vector<std::int64_t> values;
  std::size_t i = 0;
  auto is_separator = [](char c) {
    return c == ',' || c == '[' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (i < text.size()) {
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_separator(text[end])) ++end;
    // Parsed in place: no string or 128-bit work per entry (files hold millions).
    const char* first = text.data() + i + (text[i] == '+' && end - i > 1 && text[i + 1] != '-' ? 1 : 0);
    std::int64_t value = 0;
    const auto [stop, error] = std::from_chars(first, text.data() + end, value);
    if (error != std::errc() || stop != text.data() + end) {
      return Error(path + ": entry " + std::to_string(values.size()) + " = \"" + text.substr(i, end - i) +
                   "\": must be a 64-bit integer");
    }
    values.push_back(value);
    i = end;
  }
  return values;
}

// NumPy's .npy format, version 1-3: magic, header length, a Python-dict header
// with 'descr', 'fortran_order' and 'shape', then the raw array.
Result<std::vector<std::int64_t>> parse_npy_cu_seqlens(const std::string& path, const std::string& bytes) {
  const auto fail = [&](const std::string& why) { return Error(path + ": " + why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return fail("not a .npy file (bad magic)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated .npy header");
    for (int b = 3; b >= 0; --b) header_length = header_length << 8 | static_cast<unsigned char>(bytes[8 + b]);
    header_start = 12;
  } else {
    return fail(".npy version " + std::to_string(major) + " is not supported (1, 2 or 3)");
  }
  if (header_start + header_length > bytes.size()) return fail("truncated .npy header");
  const std::string header = bytes.substr(header_start, header_length);
  // Any little-endian integer type: the offsets are read as int64, and an
  // unsigned one past 2^63 - 1 is an error.
  std::size_t width = 0;
  bool is_signed = true;
  for (const char* order : {"<", "|"}) {
    for (const char kind : {'i', 'u'}) {
      for (const char bytes_per_entry : {'1', '2', '4', '8'}) {
        if (header.find(std::string("'") + order + kind + bytes_per_entry + "'") == std::string::npos) continue;
        width = static_cast<std::size_t>(bytes_per_entry - '0');
        is_signed = kind == 'i';
      }
    }
  }
  if (width == 0) {
    const std::size_t descr = header.find("'descr': ");
    const std::string dtype =
        descr == std::string::npos ? "?" : header.substr(descr + 9, header.find(',', descr) - descr - 9);
    return fail("dtype " + dtype + ": cu_seqlens must hold little-endian integers (int8 to int64, uint8 to uint64)");
  }
  const auto shape_at = header.find("'shape': (");
  if (shape_at == std::string::npos) return fail("no shape in the .npy header");
  const auto shape_end = header.find(')', shape_at);
  const std::string shape = header.substr(shape_at + 10, shape_end - shape_at - 10);
  const auto comma = shape.find(',');
  if (comma == std::string::npos || shape.find_first_not_of(" ", comma + 1) != std::string::npos) {
    return fail("cu_seqlens must be one-dimensional (shape (" + shape + "))");
  }
  auto count = parse_decimal(shape.substr(0, comma));
  if (!count || *count < 0) return fail("bad shape (" + shape + ")");
  const std::size_t data_start = header_start + header_length;
  const std::size_t data_bytes = bytes.size() - data_start;
  // Compared by division: the shape may be any size, and its product with the width could overflow.
  if (*count > static_cast<Int128>(data_bytes / width)) {
    return fail("holds " + std::to_string(data_bytes) + " data bytes, the shape (" + to_decimal(*count) + ",) needs " +
                std::to_string(width) + " bytes per entry");
  }
  std::vector<std::int64_t> values(static_cast<std::size_t>(*count));
  const char* data = bytes.data() + data_start;
  if (width == 8 && is_signed) {
    if (!values.empty()) std::memcpy(values.data(), data, values.size() * 8);  // an empty vector's data may be null
    return values;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint64_t raw = 0;
    std::memcpy(&raw, data + i * width, width);  // little-endian into the low bytes
    const int unused_bits = static_cast<int>(64 - 8 * width);
    if (is_signed) {
      values[i] = static_cast<std::int64_t>(raw << unused_bits) >> unused_bits;  // sign-extended
    } else if (raw > static_cast<std::uint64_t>(INT64_MAX)) {
      return fail("cu_seqlens[" + std::to_string(i) + "] = " + std::to_string(raw) + ": does not fit in int64");
    } else {
      values[i] = static_cast<std::int64_t>(raw);
    }
  }
  return values;
}

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

Result<std::vector<std::int64_t>> read_cu_seqlens_file(const std::string& path) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string contents, read_input_file(path, kMaxCuSeqlensFileBytes));
  return parse_cu_seqlens_file(path, contents);
}

Result<std::vector<std::int64_t>> parse_cu_seqlens_file(const std::string& path, const std::string& contents) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return parse_npy_cu_seqlens(path, contents);
  return parse_text_cu_seqlens(path, contents);
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
