// The one door: each source in memory resolves to the model its file or name
// resolves to, and a source given twice or not at all is refused.
#include "trainflops/model_input.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace trainflops {
namespace {

std::string test_file(const std::string& name) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Model resolved_model(const ModelInput& input) {
  const Result<ResolvedModel> resolved = resolve_model(input);
  EXPECT_TRUE(resolved.ok()) << resolved.error().message();
  return resolved.ok() ? resolved.value().model : Model{};
}

TEST(ModelInputTest, SourcesInMemoryResolveAsTheirFiles) {
  ModelInput args_file, args_json, args_in_memory;
  args_file.args_file = std::string(TRAINFLOPS_TEST_DATA) + "/front_ends/args.json";
  args_json.args_json = test_file("front_ends/args.json");
  const Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(*args_json.args_json);
  ASSERT_TRUE(parsed.ok());
  args_in_memory.megatron_args = parsed.value().args;
  const Model from_file = resolved_model(args_file);
  EXPECT_EQ(from_file.layers.size(), 2u);
  EXPECT_EQ(resolved_model(args_json).layers, from_file.layers);
  EXPECT_EQ(resolved_model(args_in_memory).layers, from_file.layers);
  EXPECT_EQ(resolve_model(args_in_memory).value().seq_length, 16);

  ModelInput hf_file, hf_json;
  hf_file.hf_config = std::string(TRAINFLOPS_TEST_DATA) + "/hf/llama-3.1-8b.json";
  hf_json.hf_config_json = test_file("hf/llama-3.1-8b.json");
  const Model llama = resolved_model(hf_file);
  EXPECT_EQ(llama.layers.size(), 32u);
  EXPECT_EQ(resolved_model(hf_json).layers, llama.layers);

  ModelInput config_json;
  config_json.config_json = R"({"hidden_size": 64, "vocab_size": 128,
      "mixers": {"attention": {"type": "gqa", "num_heads": 4, "num_query_groups": 4, "head_dim": 16}},
      "channel_mixers": {"mlp": {"type": "mlp", "ffn_hidden_size": 256}},
      "layers": [{"mixer": "attention", "channel_mixer": "mlp", "repeat": 3}]})";
  EXPECT_EQ(resolved_model(config_json).layers.size(), 3u);
}

TEST(ModelInputTest, ExactlyOneSource) {
  ModelInput none, two;
  two.preset = "glm-5";
  two.args_json = "{}";
  const std::string rule = ": give exactly one model source: preset";
  EXPECT_EQ(resolve_model(none).error().message().rfind("no model" + rule, 0), 0u) << resolve_model(none).error().message();
  EXPECT_EQ(resolve_model(two).error().message().rfind("several models" + rule, 0), 0u);
}

TEST(ModelInputTest, ErrorsOfTextSourcesNameTheField) {
  ModelInput args_json;
  args_json.args_json = R"({"num_layers": 2, "hidden_size": 0})";
  const Result<ResolvedModel> resolved = resolve_model(args_json);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.error().message().find("hidden_size"), std::string::npos) << resolved.error().message();
}

}  // namespace
}  // namespace trainflops

namespace trainflops {
namespace {

// Megatron-LM trains the DSA indexer only for a coefficient > 0: a NaN or
// negative one counts as no loss there, and is refused everywhere but in the
// drop-in, which must return what Megatron-LM returns.
TEST(ModelInputTest, IndexerLossCoefficientMustBeANumberAtLeastZero) {
  const Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(test_file("front_ends/args.json"));
  ASSERT_TRUE(parsed.ok());
  struct Case {
    double coeff;
    std::string message;  // empty: accepted
  };
  const std::vector<Case> cases = {
      {0.0, ""},
      {0.5, ""},
      {-1.0, "dsa_indexer_loss_coeff = -1: must be a number >= 0 (Megatron-LM would count it as no indexer loss)"},
      {std::nan(""), "dsa_indexer_loss_coeff = nan: must be a number >= 0 (Megatron-LM would count it as no indexer "
                     "loss)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.coeff);
    ModelInput strict, drop_in;
    strict.megatron_args = parsed.value().args;
    strict.megatron_args->dsa_indexer_loss_coeff = c.coeff;
    drop_in = strict;
    drop_in.megatron_parity = true;
    const Result<ResolvedModel> resolved = resolve_model(strict);
    EXPECT_EQ(resolved.ok() ? "" : resolved.error().message(), c.message);
    EXPECT_TRUE(resolve_model(drop_in).ok());
  }
}

}  // namespace
}  // namespace trainflops
