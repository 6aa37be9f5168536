// cu_seqlens files, text or NumPy .npy, read in one pass: the offsets are
// handed on in blocks as they are parsed, so that a file of a hundred million
// documents needs no array of them.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <functional>

#include "base/input_file.h"
#include "base/mapped_file.h"
#include "model/workload_offsets.h"
#include "trainflops/workload.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

// Offsets go on in blocks of this many: 512 KiB, a few hundred microseconds of work each.
constexpr std::size_t kBlockOffsets = std::size_t{1} << 16;

using OffsetSink = std::function<Status(std::span<const std::int64_t>)>;
// Called with the number of bytes of the contents no longer needed.
using Release = std::function<void(std::size_t)>;

// A value as an error shows it: a long one by its start, so that a 1 GiB
// entry gives a short message.
std::string bounded(std::string_view text) {
  constexpr std::size_t kShown = 100;
  if (text.size() <= kShown) return std::string(text);
  return std::string(text.substr(0, kShown)) + "... (" + std::to_string(text.size()) + " characters)";
}

// Collects offsets and passes them on a block at a time.
class OffsetBlocks {
 public:
  OffsetBlocks(const OffsetSink& sink, const Release& release)
      : sink_(sink), release_(release), block_(kBlockOffsets) {}

  Status add(std::int64_t offset, std::size_t bytes_done) {
    block_[size_++] = offset;
    if (size_ < block_.size()) return Ok{};
    return flush(bytes_done);
  }
  Status flush(std::size_t bytes_done) {
    if (size_ == 0) return Ok{};
    const Status status = sink_(std::span<const std::int64_t>(block_.data(), size_));
    size_ = 0;
    release_(bytes_done);
    return status;
  }

 private:
  const OffsetSink& sink_;
  const Release& release_;
  std::vector<std::int64_t> block_;
  std::size_t size_ = 0;
};

bool is_separator(char c) { return c == ',' || c == '[' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Status parse_text_offsets(const std::string& path, std::string_view text, const OffsetSink& sink,
                          const Release& release) {
  OffsetBlocks blocks(sink, release);
  std::size_t i = 0, entries = 0;
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
      return Error(path + ": entry " + std::to_string(entries) + " = \"" + bounded(text.substr(i, end - i)) +
                   "\": must be a 64-bit integer");
    }
    TRAINFLOPS_RETURN_IF_ERROR(blocks.add(value, end));
    ++entries;
    i = end;
  }
  return blocks.flush(text.size());
}

// The values of a .npy header, a Python dict literal such as
//   {'descr': '<i8', 'fortran_order': False, 'shape': (3,), }
// as text: the string's contents, the word, or what the tuple's brackets hold.
struct NpyHeader {
  std::string descr, fortran_order, shape;
};

Result<NpyHeader> parse_npy_header(std::string_view text) {
  const auto bad = [](const std::string& why) { return Error("the .npy header is not a dict of descr, fortran_order "
                                                              "and shape: " + why); };
  std::size_t i = 0;
  const auto skip_blanks = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
  };
  const auto quoted = [&]() -> std::optional<std::string> {
    if (i >= text.size() || (text[i] != '\'' && text[i] != '"')) return std::nullopt;
    const std::size_t close = text.find(text[i], i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string value(text.substr(i + 1, close - i - 1));
    i = close + 1;
    return value;
  };
  skip_blanks();
  if (i >= text.size() || text[i] != '{') return bad("no '{'");
  ++i;
  NpyHeader header;
  std::array<bool, 3> seen{};
  for (;;) {
    skip_blanks();
    if (i < text.size() && text[i] == '}') break;
    const std::optional<std::string> key = quoted();
    if (!key) return bad("a key is not a quoted string");
    skip_blanks();
    if (i >= text.size() || text[i] != ':') return bad("no ':' after '" + bounded(*key) + "'");
    ++i;
    skip_blanks();
    std::string value;
    if (i < text.size() && text[i] == '(') {
      const std::size_t close = text.find(')', i);
      if (close == std::string_view::npos) return bad("'(' is not closed");
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
    } else if (std::optional<std::string> string = quoted()) {
      value = *string;
    } else {
      const std::size_t end = std::min(text.find_first_of(",}", i), text.size());
      value = text.substr(i, end - i);
      while (!value.empty() && value.back() == ' ') value.pop_back();
      i = end;
    }
    const std::array<std::pair<const char*, std::string*>, 3> fields = {
        {{"descr", &header.descr}, {"fortran_order", &header.fortran_order}, {"shape", &header.shape}}};
    const auto field = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return *key == f.first; });
    if (field == fields.end()) return bad("unknown key '" + bounded(*key) + "'");
    const std::size_t index = static_cast<std::size_t>(field - fields.begin());
    if (seen[index]) return bad("'" + *key + "' twice");
    seen[index] = true;
    *field->second = std::move(value);
    skip_blanks();
    if (i < text.size() && text[i] == ',') {
      ++i;
    } else if (i >= text.size() || text[i] != '}') {
      return bad("no ',' or '}' after '" + *key + "'");
    }
  }
  ++i;  // '}'
  skip_blanks();
  if (i != text.size()) return bad("text after '}'");
  if (!seen[0] || !seen[1] || !seen[2]) return bad("descr, fortran_order and shape must all be given");
  if (header.fortran_order != "False" && header.fortran_order != "True") {
    return bad("fortran_order = " + bounded(header.fortran_order) + ": must be True or False");
  }
  return header;
}

// NumPy's .npy format, version 1-3: magic, header length, a Python-dict header
// with 'descr', 'fortran_order' and 'shape', then the raw array.
Status parse_npy_offsets(const std::string& path, std::string_view bytes, const OffsetSink& sink,
                         const Release& release) {
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
  if (header_length > bytes.size() - header_start) return fail("truncated .npy header");
  const Result<NpyHeader> header = parse_npy_header(bytes.substr(header_start, header_length));
  if (!header.ok()) return header.error().context(path);
  // Any little-endian integer type: the offsets are read as int64, and an
  // unsigned one past 2^63 - 1 is an error.
  const std::string& descr = header.value().descr;
  const bool integer = descr.size() == 3 && (descr[0] == '<' || descr[0] == '|') &&
                       (descr[1] == 'i' || descr[1] == 'u') && std::string_view("1248").find(descr[2]) != std::string_view::npos;
  if (!integer) {
    return fail("dtype '" + bounded(descr) +
                "': cu_seqlens must hold little-endian integers (int8 to int64, uint8 to uint64)");
  }
  const std::size_t width = static_cast<std::size_t>(descr[2] - '0');
  const bool is_signed = descr[1] == 'i';
  const std::string& shape = header.value().shape;
  const auto comma = shape.find(',');
  if (comma == std::string::npos || shape.find_first_not_of(" ", comma + 1) != std::string::npos) {
    return fail("cu_seqlens must be one-dimensional (shape (" + bounded(shape) + "))");
  }
  const std::optional<Int128> count = parse_decimal(shape.substr(0, comma));
  if (!count || *count < 0) return fail("bad shape (" + bounded(shape) + ")");
  const std::size_t data_start = header_start + header_length;
  const std::size_t data_bytes = bytes.size() - data_start;
  // Compared by division: the shape may be any size, and its product with the width could overflow.
  if (*count > static_cast<Int128>(data_bytes / width)) {
    return fail("holds " + std::to_string(data_bytes) + " data bytes, the shape (" + to_decimal(*count) + ",) needs " +
                std::to_string(width) + " bytes per entry");
  }
  const auto entries = static_cast<std::size_t>(*count);
  const char* data = bytes.data() + data_start;
  OffsetBlocks blocks(sink, release);
  const int unused_bits = static_cast<int>(64 - 8 * width);
  for (std::size_t i = 0; i < entries; ++i) {
    std::uint64_t raw = 0;
    std::memcpy(&raw, data + i * width, width);  // little-endian into the low bytes
    std::int64_t value = 0;
    if (is_signed) {
      value = static_cast<std::int64_t>(raw << unused_bits) >> unused_bits;  // sign-extended
    } else if (raw > static_cast<std::uint64_t>(INT64_MAX)) {
      return fail("cu_seqlens[" + std::to_string(i) + "] = " + std::to_string(raw) + ": does not fit in int64");
    } else {
      value = static_cast<std::int64_t>(raw);
    }
    TRAINFLOPS_RETURN_IF_ERROR(blocks.add(value, data_start + (i + 1) * width));
  }
  return blocks.flush(bytes.size());
}

Status parse_offsets(const std::string& path, std::string_view contents, const OffsetSink& sink,
                     const Release& release) {
  if (path.ends_with(".npy")) return parse_npy_offsets(path, contents, sink, release);
  return parse_text_offsets(path, contents, sink, release);
}

Result<std::vector<std::int64_t>> collect_offsets(const std::string& path, std::string_view contents) {
  std::vector<std::int64_t> offsets;
  const OffsetSink append = [&](std::span<const std::int64_t> block) {
    offsets.insert(offsets.end(), block.begin(), block.end());
    return Status(Ok{});
  };
  TRAINFLOPS_RETURN_IF_ERROR(parse_offsets(path, contents, append, [](std::size_t) {}));
  return offsets;
}

}  // namespace

Result<std::vector<std::int64_t>> read_cu_seqlens_file(const std::string& path) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const MappedFile file, MappedFile::open(path, kMaxCuSeqlensFileBytes));
  return collect_offsets(path, file.bytes());
}

Result<std::vector<std::int64_t>> parse_cu_seqlens_file(const std::string& path, const std::string& contents) {
  return collect_offsets(path, contents);
}

Status read_cu_seqlens_lengths(const std::string& path,
                               const std::function<Status(std::span<const std::int64_t>)>& consume) {
  TRAINFLOPS_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path, kMaxCuSeqlensFileBytes));
  std::vector<std::int64_t> lengths;
  lengths.reserve(kBlockOffsets);
  std::int64_t previous = 0, index = 0;
  const OffsetSink to_lengths = [&](std::span<const std::int64_t> offsets) -> Status {
    lengths.clear();
    for (const std::int64_t offset : offsets) {
      if (index == 0 && offset != 0) {
        return Error(path + ": cu_seqlens[0] = " + std::to_string(offset) + ": must be 0");
      }
      if (offset < previous) {
        return Error(path + ": cu_seqlens[" + std::to_string(index) + "] = " + std::to_string(offset) +
                     ": must not be smaller than the previous offset " + std::to_string(previous));
      }
      if (index > 0) lengths.push_back(offset - previous);
      previous = offset;
      ++index;
    }
    return consume(lengths);
  };
  TRAINFLOPS_RETURN_IF_ERROR(
      parse_offsets(path, file.bytes(), to_lengths, [&](std::size_t done) { file.release_before(done); }));
  if (index < 2) {
    return Error(path + ": cu_seqlens: needs at least two offsets (0 and the end of the first document), got " +
                 std::to_string(index));
  }
  const Status tokens = check_offsets_hold_tokens(previous);
  if (!tokens.ok()) return tokens.error().context(path);
  return Ok{};
}

}  // namespace trainflops
