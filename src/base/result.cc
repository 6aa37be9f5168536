#include "trainflops/result.h"

#include <algorithm>
#include <cstdint>

namespace trainflops {
namespace {

// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 when
// the bytes there are not one.
std::size_t utf8_sequence_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t at) { return static_cast<std::uint8_t>(text[at]); };
  const std::uint8_t lead = byte(i);
  std::size_t length = 0;
  if (lead >= 0xc2 && lead <= 0xdf)
    length = 2;
  else if (lead >= 0xe0 && lead <= 0xef)
    length = 3;
  else if (lead >= 0xf0 && lead <= 0xf4)
    length = 4;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  // Overlong encodings, surrogates and code points past U+10FFFF.
  if ((lead == 0xe0 && byte(i + 1) < 0xa0) || (lead == 0xed && byte(i + 1) > 0x9f) ||
      (lead == 0xf0 && byte(i + 1) < 0x90) || (lead == 0xf4 && byte(i + 1) > 0x8f)) {
    return 0;
  }
  return length;
}

std::string printable(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), Error::kMaxErrorMessageBytes) + 16);
  std::size_t i = 0;
  while (i < text.size() && out.size() < Error::kMaxErrorMessageBytes) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    const std::size_t length =
        byte < 0x80 ? ((byte >= 0x20 && byte < 0x7f) || byte == '\n') : utf8_sequence_length(text, i);
    if (length > 0) {
      out.append(text, i, length);
      i += length;
      continue;
    }
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
    ++i;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
  return out;
}

}  // namespace

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidInput: return "invalid input";
    case ErrorCode::kIo: return "I/O";
    case ErrorCode::kOverflow: return "overflow";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kFailedAssertion: return "failed assertion";
  }
  return "unknown";
}

Error::Error(ErrorCode code, std::string message) : code_(code), message_(printable(message)) {}

Result<Ok>::Result(Error error) : error_(std::make_unique<Error>(std::move(error))) {}

}  // namespace trainflops
