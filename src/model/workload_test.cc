#include "trainflops/workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "model/workload_offsets.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A version-1 .npy file as NumPy writes it: magic, header padded with spaces
// to a multiple of 64 bytes (ending in a newline), then the data.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string bytes;
  for (T v : values) bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  return bytes;
}

TEST(WorkloadTest, ReadsCuSeqlensFiles) {
  struct Case {
    const char* name;
    std::string bytes;
    std::vector<std::int64_t> offsets;
  };
  const std::vector<Case> cases = {
      {"plain.txt", "0 5 12\n20\n", {0, 5, 12, 20}},
      {"list.txt", "[0, 3, 3, 10]", {0, 3, 3, 10}},
      {"int64.npy", npy("<i8", "(3,)", raw<std::int64_t>({0, 7, 9})), {0, 7, 9}},
      {"int32.npy", npy("<i4", "(4,)", raw<std::int32_t>({0, 1, 2, 4})), {0, 1, 2, 4}},
      // Any integer type whose values fit in int64.
      {"int16.npy", npy("<i2", "(3,)", raw<std::int16_t>({0, -1, 300})), {0, -1, 300}},
      {"uint8.npy", npy("|u1", "(3,)", raw<std::uint8_t>({0, 200, 255})), {0, 200, 255}},
      {"uint32.npy", npy("<u4", "(2,)", raw<std::uint32_t>({0, 4000000000u})), {0, 4000000000}},
      {"uint64.npy", npy("<u8", "(2,)", raw<std::uint64_t>({0, 9223372036854775807u})), {0, INT64_MAX}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<std::vector<std::int64_t>> offsets = read_cu_seqlens_file(temp_file(c.name, c.bytes));
    ASSERT_TRUE(offsets.ok()) << offsets.error().message();
    EXPECT_EQ(offsets.value(), c.offsets);
  }
}

TEST(WorkloadTest, CuSeqlensErrors) {
  struct Case {
    const char* name;
    std::string bytes;
    std::string message;  // after "<path>: "
  };
  const std::vector<Case> cases = {
      {"word.txt", "0 5 x", "entry 2 = \"x\": must be a 64-bit integer"},
      {"float.npy", npy("<f8", "(1,)", raw<double>({0})),
       "dtype '<f8': cu_seqlens must hold little-endian integers (int8 to int64, uint8 to uint64)"},
      {"big.npy", npy("<u8", "(2,)", raw<std::uint64_t>({0, 9223372036854775808u})),
       "cu_seqlens[1] = 9223372036854775808: does not fit in int64"},
      {"matrix.npy", npy("<i8", "(1, 2)", raw<std::int64_t>({0, 1})),
       "cu_seqlens must be one-dimensional (shape (1, 2))"},
      {"short.npy", npy("<i8", "(3,)", raw<std::int64_t>({0, 1})),
       "holds 16 data bytes, the shape (3,) needs 8 bytes per entry"},
      // A shape whose product with the width overflows 128 bits must not wrap into "fits".
      {"huge.npy", npy("<i8", "(21267647932558653966460912964485513216,)", raw<std::int64_t>({0, 1})),
       "holds 16 data bytes, the shape (21267647932558653966460912964485513216,) needs 8 bytes per entry"},
      {"wide.npy", npy("<i4", "(4611686018427387904,)", raw<std::int32_t>({0})),
       "holds 4 data bytes, the shape (4611686018427387904,) needs 4 bytes per entry"},
      {"magic.npy", "PK\x03\x04", "not a .npy file (bad magic)"},
      // The header is a dict, read as one: a stray '<i4' is not the dtype of these big-endian int64.
      {"stray.npy", npy(">i8', 'stray': '<i4", "(2,)", raw<std::int64_t>({0, 1})),
       "the .npy header is not a dict of descr, fortran_order and shape: unknown key 'stray'"},
      {"trailing.npy", npy(">i8", "(2,)", raw<std::int64_t>({0, 1})).replace(10 + 58, 5, "'<i4'"),
       "the .npy header is not a dict of descr, fortran_order and shape: text after '}'"},
      {"big_endian.npy", npy(">i8", "(2,)", raw<std::int64_t>({0, 1})),
       "dtype '>i8': cu_seqlens must hold little-endian integers (int8 to int64, uint8 to uint64)"},
      // A long entry is shown by its start: the message stays short.
      {"long.txt", "0 " + std::string(1 << 20, '1'),
       "entry 1 = \"" + std::string(100, '1') + "... (1048576 characters)\": must be a 64-bit integer"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = temp_file(c.name, c.bytes);
    const Result<std::vector<std::int64_t>> offsets = read_cu_seqlens_file(path);
    ASSERT_FALSE(offsets.ok());
    std::string message = offsets.error().message();
    ASSERT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    message = message.substr(path.size() + 2);
    EXPECT_EQ(message, c.message);
  }
  const Result<std::vector<std::int64_t>> missing = read_cu_seqlens_file("/nonexistent/cu.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "/nonexistent/cu.npy: cannot open (No such file or directory)");
}

TEST(WorkloadTest, LengthsFromCuSeqlens) {
  EXPECT_EQ(lengths_from_cu_seqlens({0, 5, 5, 12}).value(), (std::vector<std::int64_t>{5, 0, 7}));
  struct Case {
    std::vector<std::int64_t> offsets;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{0}, "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 1"},
      {{1, 5}, "cu_seqlens[0] = 1: must be 0"},
      {{0, 5, 4}, "cu_seqlens[2] = 4: must not be smaller than the previous offset 5"},
  };
  for (const Case& c : cases) {
    const auto lengths = lengths_from_cu_seqlens(c.offsets);
    ASSERT_FALSE(lengths.ok());
    EXPECT_EQ(lengths.error().message(), c.message);
  }
}

TEST(WorkloadTest, OffsetsHoldTokens) {
  EXPECT_TRUE(check_offsets_hold_tokens(1).ok());
  const Status empty = check_offsets_hold_tokens(0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message(), "cu_seqlens: the batch holds no tokens (the last offset must be positive)");
}

TEST(WorkloadTest, Describe) {
  EXPECT_EQ(describe(Bshd{8, 4096}), "BSHD, 8 sequences x 4,096 tokens = 32,768 tokens");
  EXPECT_EQ(describe(Bshd{1, 4096}), "BSHD, 1 sequence x 4,096 tokens = 4,096 tokens");
  EXPECT_EQ(describe(PackedDocuments{{1000, 24}}), "THD, 2 packed documents, 1,024 tokens");
  EXPECT_EQ(describe(SequenceAggregates{1024, 1000576}), "aggregates, 1,024 tokens, sum of squared lengths 1,000,576");
}

}  // namespace
}  // namespace trainflops
