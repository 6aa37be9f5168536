#include "trainflops/workload.h"

#include <cstdint>
#include <cstring>

#include "trainflops/input_file.h"

namespace trainflops {
namespace {

std::string with_thousands(Int128 value) {
  const std::string digits = to_decimal(value);
  const std::size_t sign = digits[0] == '-' ? 1 : 0;
  std::string grouped = digits.substr(0, sign);
  for (std::size_t i = sign; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

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
    const std::string token = text.substr(i, end - i);
    auto value = parse_decimal(token);
    if (!value || *value < INT64_MIN || *value > INT64_MAX) {
      return Error(path + ": entry " + std::to_string(values.size()) + " = \"" + token +
                   "\": must be a 64-bit integer");
    }
    values.push_back(static_cast<std::int64_t>(*value));
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
  int width = 0;
  if (header.find("'<i8'") != std::string::npos || header.find("'|i8'") != std::string::npos) {
    width = 8;
  } else if (header.find("'<i4'") != std::string::npos || header.find("'|i4'") != std::string::npos) {
    width = 4;
  } else {
    return fail("dtype must be little-endian int32 or int64 (header " +
                header.substr(0, header.find_last_not_of(" \n") + 1) + ")");
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
    return fail("holds " + std::to_string(data_bytes) + " data bytes, the shape (" + to_decimal(*count) +
                ",) needs " + std::to_string(width) + " bytes per entry");
  }
  std::vector<std::int64_t> values(static_cast<std::size_t>(*count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const char* at = bytes.data() + data_start + i * width;
    if (width == 8) {
      std::memcpy(&values[i], at, 8);
    } else {
      std::int32_t narrow;
      std::memcpy(&narrow, at, 4);
      values[i] = narrow;
    }
  }
  return values;
}

}  // namespace

Result<std::int64_t> parse_size(std::string_view text, std::string_view field, std::int64_t minimum,
                                SizeSuffixes suffixes) {
  const bool with_suffixes = suffixes == SizeSuffixes::kAccepted;
  const auto invalid = [&] {
    return Error(std::string(field) + " = \"" + std::string(text) + "\": must be an integer >= " +
                 std::to_string(minimum) + (with_suffixes ? ", optionally with k or m" : ""));
  };
  Int128 scale = 1;
  std::string_view digits = text;
  if (with_suffixes && !digits.empty()) {
    const char last = digits.back();
    if (last == 'k' || last == 'K') scale = 1024;
    if (last == 'm' || last == 'M') scale = 1024 * 1024;
    if (scale != 1) digits.remove_suffix(1);
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return invalid();
  const std::optional<Int128> number = parse_decimal(digits);
  const std::optional<Int128> value = number ? checked_mul(*number, scale) : std::nullopt;
  if (!value || *value > INT64_MAX) {
    return Error(ErrorCode::kOverflow, std::string(field) + " = \"" + std::string(text) + "\": must be at most " +
                                           std::to_string(INT64_MAX));
  }
  if (*value < minimum) return invalid();
  return static_cast<std::int64_t>(*value);
}

Status validate(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    if (bshd->batch_size < 1) {
      return Error("batch_size = " + std::to_string(bshd->batch_size) + ": must be a positive integer");
    }
    if (bshd->seq_length < 1) {
      return Error("seq_length = " + std::to_string(bshd->seq_length) + ": must be a positive integer");
    }
    return Ok{};
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    bool any_token = false;
    for (std::size_t i = 0; i < packed->lengths.size(); ++i) {
      if (packed->lengths[i] < 0) {
        return Error("docs[" + std::to_string(i) + "] = " + std::to_string(packed->lengths[i]) +
                     ": a document length must be >= 0");
      }
      any_token |= packed->lengths[i] > 0;
    }
    if (!any_token) return Error("docs: the batch holds no tokens (at least one length must be positive)");
    return Ok{};
  }
  const auto& aggregates = std::get<SequenceAggregates>(workload);
  const Int128 t = aggregates.total_tokens, s2 = aggregates.squared_sum;
  if (t < 1) return Error("total_real_tokens = " + to_decimal(t) + ": must be a positive integer");
  if (s2 < t) {
    return Error("seqlen_squared_sum = " + to_decimal(s2) + ": must be at least total_real_tokens = " + to_decimal(t) +
                 " (every L^2 >= L)");
  }
  auto t_squared = checked_mul(t, t);
  if (t_squared && s2 > *t_squared) {
    return Error("seqlen_squared_sum = " + to_decimal(s2) +
                 ": must be at most total_real_tokens^2 = " + to_decimal(*t_squared) + " (sum L^2 <= (sum L)^2)");
  }
  return Ok{};
}

Int128 total_tokens(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) return Int128{bshd->batch_size} * bshd->seq_length;
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    Int128 sum = 0;
    for (std::int64_t length : packed->lengths) sum += length;  // < 2^63 lengths of < 2^63: fits
    return sum;
  }
  return std::get<SequenceAggregates>(workload).total_tokens;
}

Result<std::vector<std::int64_t>> lengths_from_cu_seqlens(const std::vector<std::int64_t>& cu_seqlens) {
  if (cu_seqlens.size() < 2) {
    return Error("cu_seqlens: needs at least two offsets (0 and the end of the first document), got " +
                 std::to_string(cu_seqlens.size()));
  }
  if (cu_seqlens[0] != 0) return Error("cu_seqlens[0] = " + std::to_string(cu_seqlens[0]) + ": must be 0");
  std::vector<std::int64_t> lengths;
  lengths.reserve(cu_seqlens.size() - 1);
  for (std::size_t i = 1; i < cu_seqlens.size(); ++i) {
    if (cu_seqlens[i] < cu_seqlens[i - 1]) {
      return Error("cu_seqlens[" + std::to_string(i) + "] = " + std::to_string(cu_seqlens[i]) +
                   ": must not be smaller than the previous offset " + std::to_string(cu_seqlens[i - 1]));
    }
    lengths.push_back(cu_seqlens[i] - cu_seqlens[i - 1]);
  }
  return lengths;
}

Result<std::vector<std::int64_t>> read_cu_seqlens_file(const std::string& path) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string contents, read_input_file(path, kMaxCuSeqlensFileBytes));
  return parse_cu_seqlens_file(path, contents);
}

Result<std::vector<std::int64_t>> parse_cu_seqlens_file(const std::string& path, const std::string& contents) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return parse_npy_cu_seqlens(path, contents);
  return parse_text_cu_seqlens(path, contents);
}

std::string describe(const Workload& workload) {
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    return "BSHD, " + with_thousands(bshd->batch_size) + (bshd->batch_size == 1 ? " sequence x " : " sequences x ") +
           with_thousands(bshd->seq_length) + " tokens = " + with_thousands(total_tokens(workload)) + " tokens";
  }
  if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    return "THD, " + with_thousands(static_cast<Int128>(packed->lengths.size())) + " packed documents, " +
           with_thousands(total_tokens(workload)) + " tokens";
  }
  const auto& aggregates = std::get<SequenceAggregates>(workload);
  return "aggregates, " + with_thousands(aggregates.total_tokens) + " tokens, sum of squared lengths " +
         with_thousands(aggregates.squared_sum);
}

}  // namespace trainflops
