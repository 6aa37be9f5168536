// cu_seqlens files read in one pass, a block of documents at a time: the
// lengths are those of the whole file, and counting them in blocks gives the
// report of the whole list of documents, in every mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/presets.h"
#include "trainflops/render.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

std::string temp_path(const std::string& name) {
  return testing::TempDir() + std::to_string(getpid()) + "_streamed_" + name;
}

// A .npy of int32 offsets, as NumPy writes it.
std::string write_npy(const std::string& name, const std::vector<std::int64_t>& offsets) {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (" + std::to_string(offsets.size()) + ",), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size() & 0xff) +
                      static_cast<char>(header.size() >> 8) + header;
  for (const std::int64_t offset : offsets) {
    const auto value = static_cast<std::int32_t>(offset);
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string write_text(const std::string& name, const std::vector<std::int64_t>& offsets) {
  std::string text = "[";
  for (const std::int64_t offset : offsets) text += std::to_string(offset) + ", ";
  const std::string path = temp_path(name);
  std::ofstream(path) << text << "]\n";
  return path;
}

TEST(CuSeqlensFileTest, CountingInBlocksEqualsCountingTheWholeList) {
  // More documents than one block holds (65,536), so that blocks meet.
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> lengths, offsets = {0};
  for (int i = 0; i < 150000; ++i) {
    lengths.push_back(std::uniform_int_distribution<std::int64_t>(0, 4000)(rng));
    offsets.push_back(offsets.back() + lengths.back());
  }
  const Model model = preset_model(find_preset("llama-3.1-8b").value()).value();
  for (const std::string& path : {write_npy("cu.npy", offsets), write_text("cu.txt", offsets)}) {
    SCOPED_TRACE(path);
    std::vector<std::int64_t> streamed;
    std::size_t blocks = 0;
    const Status read = read_cu_seqlens_lengths(path, [&](std::span<const std::int64_t> block) {
      streamed.insert(streamed.end(), block.begin(), block.end());
      ++blocks;
      return Status(Ok{});
    });
    ASSERT_TRUE(read.ok()) << read.error().message();
    EXPECT_EQ(streamed, lengths);
    EXPECT_GE(blocks, 3u);
    const LengthBlocks file = [&](const std::function<Status(std::span<const std::int64_t>)>& consume) {
      return read_cu_seqlens_lengths(path, consume);
    };
    for (const Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
      SCOPED_TRACE(mode_name(mode));
      const Result<Report> in_blocks = count(model, file, mode, Recompute::kNone);
      const Result<Report> whole = count(model, PackedDocuments{lengths}, mode, Recompute::kNone);
      ASSERT_TRUE(in_blocks.ok()) << in_blocks.error().message();
      EXPECT_EQ(render(in_blocks.value(), Format::kJson, LayerRows::kAll),
                render(whole.value(), Format::kJson, LayerRows::kAll));
    }
  }
}

TEST(CuSeqlensFileTest, ErrorsNameTheFileAndTheEntry) {
  struct Case {
    std::vector<std::int64_t> offsets;
    std::string message;  // after "<path>: "
  };
  std::vector<std::int64_t> late_decrease(70000);
  for (std::size_t i = 0; i < late_decrease.size(); ++i) late_decrease[i] = static_cast<std::int64_t>(i);
  late_decrease[69999] = 5;  // in the second block
  const std::vector<Case> cases = {
      {{3, 5}, "cu_seqlens[0] = 3: must be 0"},
      {late_decrease, "cu_seqlens[69999] = 5: must not be smaller than the previous offset 69998"},
      {{0}, "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 1"},
      {{0, 0, 0}, "cu_seqlens: the batch holds no tokens (the last offset must be positive)"},
  };
  for (const Case& c : cases) {
    const std::string path = write_npy("bad.npy", c.offsets);
    const Status read = read_cu_seqlens_lengths(path, [](std::span<const std::int64_t>) { return Status(Ok{}); });
    ASSERT_FALSE(read.ok()) << c.message;
    EXPECT_EQ(read.error().message(), path + ": " + c.message);
  }
}

}  // namespace
}  // namespace trainflops
