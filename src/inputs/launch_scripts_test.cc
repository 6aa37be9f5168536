// Megatron-LM's own example launch scripts (tests/data/megatron_launch.jsonl:
// their model flags as the scripts pass them, and the FLOPs Megatron-LM's
// argument parsing and num_floating_point_operations give for them). Each
// counts equal to Megatron-LM's number once the flags a user must add are
// there; where the vocabulary comes from a tokenizer, the flags alone are an
// error that says so.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trainflops/count.h"
#include "trainflops/model_input.h"

namespace trainflops {
namespace {

using nlohmann::json;

Result<Flops> megatron_count(const std::vector<std::string>& flags) {
  ModelInput input;
  input.megatron_flags = flags;
  TRAINFLOPS_ASSIGN_OR_RETURN(const ResolvedModel resolved, resolve_model(input));
  if (!resolved.global_batch_size || !resolved.seq_length) return Error("no BSHD workload in the flags");
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count(resolved.model, Bshd{*resolved.global_batch_size,
                                                                              *resolved.seq_length},
                                                          Mode::kMegatron));
  return report.total;
}

TEST(LaunchScriptsTest, EveryScriptCountsAsMegatronLm) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/megatron_launch.jsonl");
  std::size_t scripts = 0, from_tokenizers = 0;
  for (std::string line; std::getline(in, line);) {
    const json record = json::parse(line);
    SCOPED_TRACE(record.at("script").get<std::string>());
    ++scripts;
    std::vector<std::string> flags = record.at("flags"), without_vocabulary = flags;
    bool vocabulary_added = false;
    for (const json& extra : record.at("extra_flags")) {
      const std::vector<std::string> words = extra.at("flags");
      flags.insert(flags.end(), words.begin(), words.end());
      if (words.front() == "--vocab-size") {
        vocabulary_added = true;
      } else {
        without_vocabulary.insert(without_vocabulary.end(), words.begin(), words.end());
      }
    }
    const Result<Flops> total = megatron_count(flags);
    ASSERT_TRUE(total.ok()) << total.error().message();
    const double expected = record.at("megatron_flops").get<double>();
    EXPECT_LE(std::abs(total.value().value - expected), 1e-12 * expected) << total.value().value << " vs " << expected;
    if (!vocabulary_added) continue;
    ++from_tokenizers;
    const Result<Flops> unknown_vocabulary = megatron_count(without_vocabulary);
    ASSERT_FALSE(unknown_vocabulary.ok());
    EXPECT_EQ(unknown_vocabulary.error().message().rfind(
                  "--vocab-size is missing: Megatron-LM takes the vocabulary from the tokenizer", 0),
              0u)
        << unknown_vocabulary.error().message();
  }
  EXPECT_EQ(scripts, 43u);
  EXPECT_GE(from_tokenizers, 20u);
}

}  // namespace
}  // namespace trainflops
