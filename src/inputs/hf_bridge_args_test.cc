// Megatron mode from a Hugging Face config counts the Megatron-LM arguments
// Megatron-Bridge's provider sets for its model_type
// (tests/data/megatron_bridge_args.json: the arguments read off the provider,
// what Megatron-LM's own function returns on them, or raises, at its main and
// dev branches, and what Megatron-Bridge's own function returns).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/model_input.h"

namespace trainflops {
namespace {

using nlohmann::json;

json bridge_records() {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/megatron_bridge_args.json");
  return json::parse(in);
}

TEST(HfBridgeArgsTest, TheImportHoldsTheArgumentsBridgeSets) {
  const json data = bridge_records();
  for (const json& record : data.at("cases")) {
    SCOPED_TRACE(record.at("name").get<std::string>());
    const Result<HfImport> imported = import_hf_config(record.at("hf_config").dump());
    ASSERT_TRUE(imported.ok()) << imported.error().message();
    ASSERT_TRUE(imported.value().bridge_args.has_value());
    const Result<ParsedMegatronArgs> expected = parse_megatron_args_json(record.at("args").dump());
    ASSERT_TRUE(expected.ok()) << expected.error().message();
    EXPECT_TRUE(*imported.value().bridge_args == expected.value().args);
  }
}

// Where Megatron-LM's function raises on Bridge's arguments (a layer_types
// list with MTP depths), megatron mode counts what Bridge's own function,
// run by Bridge's training loop, returns on them, and says so.
TEST(HfBridgeArgsTest, MegatronModeCountsWhatMegatronLmCountsOnThemElseWhatBridgeCounts) {
  const json data = bridge_records();
  std::size_t by_megatron_lm = 0, by_bridge = 0;
  for (const json& record : data.at("cases")) {
    for (const std::string branch : {"main", "dev"}) {
      SCOPED_TRACE(record.at("name").get<std::string>() + " at " + branch + ", " + record.at("workload").dump());
      ModelInput input;
      input.hf_config_json = record.at("hf_config").dump();
      input.megatron_branch = branch;
      const Result<ResolvedModel> resolved = resolve_model(input);
      ASSERT_TRUE(resolved.ok()) << resolved.error().message();
      const Result<ResolvedModel> megatron = counted_in(resolved.value(), Mode::kMegatron);
      ASSERT_TRUE(megatron.ok()) << megatron.error().message();
      const json& megatron_lm = record.at(branch);
      const bool refused = megatron_lm.contains("raises");
      const json& expected = refused ? record.at("bridge_function") : megatron_lm;
      ++(refused ? by_bridge : by_megatron_lm);
      const std::vector<std::string>& assumed = megatron.value().assumed;
      const bool says_bridge =
          std::any_of(assumed.begin(), assumed.end(), [](const std::string& sentence) {
            return sentence.starts_with("Megatron-Bridge's function for megatron mode");
          });
      EXPECT_EQ(says_bridge, refused);
      const json& workload = record.at("workload");
      const Result<Report> report =
          count(megatron.value().model, Bshd{workload.at("batch_size"), workload.at("seq_length")}, Mode::kMegatron);
      ASSERT_TRUE(report.ok()) << report.error().message();
      EXPECT_EQ(report.value().total.value, std::stod(expected.at("flops").get<std::string>()));
    }
  }
  EXPECT_EQ(by_megatron_lm, 8u);
  EXPECT_EQ(by_bridge, 16u);
}

TEST(HfBridgeArgsTest, SaysWhyBridgesFunctionCounts) {
  const json record = bridge_records().at("cases").at(6);
  ASSERT_EQ(record.at("name"), "qwen3.5-27b");
  ModelInput input;
  input.hf_config_json = record.at("hf_config").dump();
  const std::vector<std::string> assumed = resolve_model(input).value().assumed;
  EXPECT_NE(std::find(assumed.begin(), assumed.end(),
                      "Megatron-Bridge's function for megatron mode, as Bridge's training loop counts: Megatron-LM's "
                      "refuses the arguments Bridge sets for this config (linear_attention_freq: the list has 64 "
                      "entries; it must have num_layers + mtp_num_layers = 65); Bridge's charges each MTP depth as the "
                      "last decoder layer"),
            assumed.end());
}

// The other modes count the checkpoint's architecture: Qwen3-Next's MTP layer
// is gated attention there, a gated delta net in Megatron-LM's count.
TEST(HfBridgeArgsTest, TheExactModesCountTheArchitecture) {
  const json record = bridge_records().at("cases").at(0);
  ASSERT_EQ(record.at("name"), "qwen3-next-80b-a3b, 1 MTP depth");
  ModelInput input;
  input.hf_config_json = record.at("hf_config").dump();
  const ResolvedModel resolved = resolve_model(input).value();
  const Model imported = import_hf_config(record.at("hf_config").dump()).value().model;
  for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
    EXPECT_TRUE(counted_in(resolved, mode).value().model.mtp_depths == imported.mtp_depths);
  }
  EXPECT_EQ(layer_kind(imported.mtp_depths.at(0).front()), "gqa+moe");
  EXPECT_EQ(layer_kind(counted_in(resolved, Mode::kMegatron).value().model.mtp_depths.at(0).front()), "gdn+moe");
}

// Without a provider mapped, megatron mode counts the imported model.
TEST(HfBridgeArgsTest, OtherTypesCountTheImportedModel) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/hf/llama-3.1-8b.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Result<HfImport> imported = import_hf_config(text);
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  EXPECT_FALSE(imported.value().bridge_args.has_value());
  ModelInput input;
  input.hf_config_json = text;
  const ResolvedModel resolved = resolve_model(input).value();
  EXPECT_FALSE(resolved.megatron_model.has_value());
  EXPECT_TRUE(counted_in(resolved, Mode::kMegatron).value().model.layers == imported.value().model.layers);
}

}  // namespace
}  // namespace trainflops
