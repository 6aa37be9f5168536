// The one door: each source in memory resolves to the model its file or name
// resolves to, and a source given twice or not at all is refused.
#include "trainflops/model_input.h"

#include <gtest/gtest.h>

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
