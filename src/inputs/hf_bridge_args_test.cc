// Megatron mode from a Hugging Face config counts the Megatron-LM arguments
// Megatron-Bridge's provider sets for its model_type
// (tests/data/megatron_bridge_args.json: the arguments read off the provider,
// and what Megatron-LM's own function returns on them, or raises, at its
// main and dev branches).
#include <gtest/gtest.h>

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

TEST(HfBridgeArgsTest, MegatronModeCountsWhatMegatronLmCountsOnThem) {
  const json data = bridge_records();
  std::size_t counted = 0, refused = 0;
  for (const json& record : data.at("cases")) {
    for (const std::string branch : {"main", "dev"}) {
      SCOPED_TRACE(record.at("name").get<std::string>() + " at " + branch + ", " + record.at("workload").dump());
      ModelInput input;
      input.hf_config_json = record.at("hf_config").dump();
      input.megatron_branch = branch;
      const Result<ResolvedModel> resolved = resolve_model(input);
      ASSERT_TRUE(resolved.ok()) << resolved.error().message();
      const Result<ResolvedModel> megatron = counted_in(resolved.value(), Mode::kMegatron);
      const json& expected = record.at(branch);
      if (expected.contains("raises")) {
        ++refused;
        ASSERT_FALSE(megatron.ok());
        EXPECT_EQ(megatron.error().message(),
                  "megatron mode counts the Megatron-LM arguments Megatron-Bridge sets for this config, which "
                  "Megatron-LM's function refuses (model mode counts the config as it is): "
                  "linear_attention_freq: the list has 48 entries; it must have num_layers + mtp_num_layers = 49");
        continue;
      }
      ++counted;
      ASSERT_TRUE(megatron.ok()) << megatron.error().message();
      const json& workload = record.at("workload");
      const Result<Report> report =
          count(megatron.value().model, Bshd{workload.at("batch_size"), workload.at("seq_length")}, Mode::kMegatron);
      ASSERT_TRUE(report.ok()) << report.error().message();
      EXPECT_EQ(report.value().total.value, std::stod(expected.at("flops").get<std::string>()));
    }
  }
  EXPECT_EQ(counted, 8u);
  EXPECT_EQ(refused, 4u);
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
