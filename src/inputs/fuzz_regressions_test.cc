// Inputs that `make fuzz` (fuzz/) found to crash or to reach undefined
// behaviour, each kept as a test of what happens now.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "base/input_file.h"
#include "trainflops/batch.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/hybrid_pattern.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/native_config.h"
#include "trainflops/statistic.h"
#include "trainflops/sweep.h"
#include "trainflops/workload.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

// megatron_flags_fuzzer, seed glm-5-kpool: megatron mode evaluates KPool
// counts at the mean length m = S2 / T, which for documents near INT64_MAX
// tokens reaches 2^63, past what document_count() takes (a double to int64
// conversion out of range). Such means now count at INT64_MAX tokens.
TEST(FuzzRegressionsTest, KpoolEstimatesAtMeansPast2To63) {
  const double t = 0x1p63 + 5, s2 = 0x1p126 + 25;  // documents of INT64_MAX and 5 tokens, about
  for (const Statistic& statistic :
       {complete_pool_pairs(4), pooled_keys(4), pooled_attended_pairs(2048, 4, true), chunked_pairs(64)}) {
    SCOPED_TRACE(statistic_name(statistic));
    const std::optional<double> estimate = megatron_estimate(statistic, MegatronAggregates{t, s2, std::nullopt});
    ASSERT_TRUE(estimate.has_value());
    const double at_max = to_double(*document_count(statistic, INT64_MAX));
    EXPECT_NEAR(*estimate / (t / (s2 / t) * at_max), 1.0, 1e-12);
  }
  Model model;
  model.hidden_size = 64;
  model.vocab_size = 128;
  const MlaAttention mla{2, 16, 16, 16, 8, 16};
  model.layers = {
      Layer{Mixer{DsaAttention{mla, DsaIndexer{2, 8, 2048, DsaIndexer::GradMode::kOff, 4, true}, true}}, std::nullopt}};
  const Result<Flops> flops =
      FlopsCounter::create(model, Mode::kMegatron).value().total(PackedDocuments{{INT64_MAX, 5}});
  ASSERT_TRUE(flops.ok()) << flops.error().message();
  EXPECT_TRUE(std::isfinite(flops.value().value));
}

// small_parsers_fuzzer: a context length with a k or m suffix whose digits
// overflow 128 bits once scaled (signed overflow in the multiplication).
TEST(FuzzRegressionsTest, ContextLengthsThatOverflowOnceScaled) {
  for (const std::string item : {"61410000000000000000000000000000000000m", "170141183460469231731687303715884105k"}) {
    EXPECT_EQ(parse_seq_lengths("4k," + item).error().message(),
              "--seq-lengths: \"" + item + "\" is not a context length (a positive integer, optionally with k or m)");
  }
}

// hf_config_fuzzer and native_config_fuzzer, seeds number-overflow: a number
// beyond a double's range (1e888888888) made the JSON parser throw
// std::out_of_range out of the library. Every JSON reader now says so.
TEST(FuzzRegressionsTest, JsonNumbersBeyondADouble) {
  const std::string message = "not valid JSON: the number 1e888888888 does not fit in a double";
  EXPECT_EQ(import_hf_config(R"({"model_type": "llama", "hidden_size": 1e888888888})").error().message(), message);
  EXPECT_EQ(parse_native_config(R"({"hidden_size": 1e888888888})").error().message(), message);
  EXPECT_EQ(parse_megatron_args_json(R"({"hidden_size": 1e888888888})").error().message(), "args: " + message);
  EXPECT_EQ(answer_batch_line(R"({"args": {"hidden_size": 1e888888888}})", 3).json,
            R"({"error":"line 3: not valid JSON: the number 1e888888888 does not fit in a double"})");
  EXPECT_EQ(parse_native_config("[" + std::string(60, '9') + "e999]").error().message(),
            "not valid JSON: the number " + std::string(40, '9') + "... does not fit in a double");
}

// cu_seqlens_fuzzer: a .npy header with a negative shape, (-5,), which sized
// the array as 2^64 - 5 elements (std::length_error thrown out of the library).
TEST(FuzzRegressionsTest, NpyWithANegativeShape) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (-5,), }";
  header.resize(118, ' ');
  header += '\n';
  const std::string bytes =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + std::string(40, '\0');
  const Result<std::vector<std::int64_t>> parsed = parse_cu_seqlens_file("cu.npy", bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(), "cu.npy: bad shape (-5,)");
}

// cu_seqlens_fuzzer: a .npy of int64 with the shape (0,) copied zero bytes to
// an empty vector's data, a null pointer (undefined behaviour).
TEST(FuzzRegressionsTest, NpyOfNoEntries) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }";
  header.resize(118, ' ');
  header += '\n';
  const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  const Result<std::vector<std::int64_t>> parsed = parse_cu_seqlens_file("cu.npy", bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(parsed.value().empty());
  EXPECT_EQ(lengths_from_cu_seqlens(parsed.value()).error().message(),
            "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 0");
}

// Every seed of fuzz/corpus/ through the parser its fuzz target starts
// from, in every build (the sanitizer build of `make test` included): the
// inputs that once crashed (JSON and list expressions nested 70,000 levels
// deep, a .npy shape whose size overflows) are among them. Each must give a
// value or an error, never a crash.
TEST(FuzzRegressionsTest, EverySeedOfTheCorpusParsesOrFails) {
  const std::filesystem::path corpus = TRAINFLOPS_FUZZ_CORPUS;
  std::size_t inputs = 0;
  for (const auto& target : std::filesystem::directory_iterator(corpus)) {
    const std::string name = target.path().filename();
    for (const auto& seed : std::filesystem::directory_iterator(target.path())) {
      SCOPED_TRACE(name + "/" + seed.path().filename().string());
      const std::string text = read_input_file(seed.path(), kMaxConfigFileBytes).value();
      ++inputs;
      if (name == "batch") {
        EXPECT_FALSE(answer_batch_line(text, 1).json.empty());
      } else if (name == "megatron_args") {
        const Result<ParsedMegatronArgs> args = parse_megatron_args_json(text);
        if (args.ok()) (void)model_from_megatron_args(args.value().args).ok();
      } else if (name == "native_config") {
        (void)parse_native_config(text).ok();
      } else if (name == "hf_config") {
        (void)import_hf_config(text).ok();
      } else if (name == "hybrid_pattern") {
        (void)parse_hybrid_pattern(text).ok();
      } else if (name == "megatron_flags") {
        std::vector<std::string> argv;
        std::string word;
        for (char c : text) {
          if (c != '\n') {
            word += c;
            continue;
          }
          argv.push_back(word);
          word.clear();
        }
        if (!word.empty()) argv.push_back(word);
        const Result<ParsedMegatronFlags> flags = parse_megatron_flags(argv);
        if (flags.ok()) (void)model_from_megatron_args(flags.value().args).ok();
      } else if (name == "cu_seqlens" && !text.empty()) {
        const std::string file = text[0] % 2 == 0 ? "cu_seqlens.npy" : "cu_seqlens.txt";
        (void)parse_cu_seqlens_file(file, text.substr(1)).ok();
      } else {
        --inputs;  // seq_stats and small_parsers: binary inputs of their own
      }
    }
  }
  EXPECT_GE(inputs, 40u);
}

}  // namespace
}  // namespace trainflops
