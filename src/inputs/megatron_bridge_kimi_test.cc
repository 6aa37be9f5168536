// Megatron-Bridge's Kimi K3 fields given as Megatron-LM arguments
// (kimi_kda_layers, kimi_linear_num_heads, kimi_linear_head_dim,
// kimi_linear_conv_kernel_size): megatron mode counts what Bridge's own
// function returns on them (tests/data/megatron_bridge_kimi.json, run from its
// source), and refuses what it refuses; the flags and the args JSON read them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trainflops/count.h"
#include "trainflops/model_input.h"

namespace trainflops {
namespace {

using nlohmann::json;

json bridge_kimi_records() {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/megatron_bridge_kimi.json");
  return json::parse(in);
}

Result<ResolvedModel> resolved_args(const json& args) {
  ModelInput input;
  input.args_json = args.dump();
  return resolve_model(input);
}

TEST(MegatronBridgeKimiTest, MegatronModeCountsWhatBridgesFunctionReturns) {
  const json data = bridge_kimi_records();
  std::size_t counted = 0;
  for (const json& record : data.at("records")) {
    SCOPED_TRACE(record.at("name").get<std::string>() + " at " + record.at("seq_length").dump());
    const Result<ResolvedModel> resolved = resolved_args(record.at("args"));
    ASSERT_TRUE(resolved.ok()) << resolved.error().message();
    const Result<Report> report =
        count(resolved.value().model, Bshd{data.at("batch_size"), record.at("seq_length")}, Mode::kMegatron);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(report.value().total.value, record.at("flops").get<double>());
    ++counted;
  }
  EXPECT_EQ(counted, 9u);
}

TEST(MegatronBridgeKimiTest, TheLayersTheyNameAreKimiDeltaAttention) {
  const json args = bridge_kimi_records().at("records").at(5).at("args");
  ASSERT_EQ(args.at("kimi_kda_layers"), json::parse("[1, 1, 2, 4, 5, 6, 8]"));
  const Model model = resolved_args(args).value().model;
  const Mixer kda = KimiDeltaAttention{4, 32, 4, 32, std::nullopt};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(*model.layers[i].mixer == kda, i != 2 && i != 6) << i;
  }
  // Both MTP depths copy the last decoder layer's Kimi Delta Attention.
  ASSERT_EQ(model.mtp_depths.size(), 2u);
  for (const LayerStack& depth : model.mtp_depths) EXPECT_EQ(*depth[0].mixer, kda);
}

TEST(MegatronBridgeKimiTest, RefusesWhatBridgeRefuses) {
  const json raises = bridge_kimi_records().at("raises");
  // Bridge's ValueError: "kimi_kda_layers contains layer numbers outside [1, 8]: [0, 9]. ..."
  ASSERT_EQ(raises.at("message"),
            "kimi_kda_layers contains layer numbers outside [1, 8]: [0, 9]. The list must hold 1-indexed global "
            "layer numbers.");
  const Result<ResolvedModel> resolved = resolved_args(raises.at("args"));
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().message(),
            "kimi_kda_layers: layer numbers outside [1, 8]: [0, 9]; Megatron-Bridge numbers the decoder layers "
            "from 1");
}

TEST(MegatronBridgeKimiTest, FieldsItNeedsAndCombinationsItDoesNotModel) {
  const json base = bridge_kimi_records().at("records").at(3).at("args");
  const struct {
    json changes;
    ErrorCode code;
    std::string message;
  } cases[] = {
      {{{"kimi_linear_head_dim", nullptr}},
       ErrorCode::kInvalidInput,
       "kimi_linear_head_dim is missing: required with kimi_kda_layers (Megatron-Bridge's Kimi Delta Attention "
       "layers)"},
      {{{"experimental_attention_variant", "gdn"}, {"linear_attention_freq", 4}},
       ErrorCode::kUnsupported,
       "kimi_kda_layers with experimental_attention_variant = \"gdn\": Megatron-Bridge's function replaces plain "
       "attention layers by Kimi Delta Attention; trainflops does not model the two together"},
      {{{"hybrid_layer_pattern", "*-*-*-*-*-*-*-*-/*-"}},
       ErrorCode::kUnsupported,
       "kimi_kda_layers with hybrid_layer_pattern: Megatron-Bridge's function reads kimi_kda_layers on its "
       "transformer path only, not on the hybrid-model path; describe the model without a pattern"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.changes.dump());
    json args = base;
    args.update(c.changes);
    const Result<ResolvedModel> resolved = resolved_args(args);
    ASSERT_FALSE(resolved.ok());
    EXPECT_EQ(resolved.error().code(), c.code);
    EXPECT_EQ(resolved.error().message(), c.message);
  }
}

// The same fields as flags, as a launch script would give them.
TEST(MegatronBridgeKimiTest, FlagsReadTheSameFields) {
  const json record = bridge_kimi_records().at("records").at(4);
  ModelInput input;
  input.megatron_flags = std::vector<std::string>{
      "--num-layers", "8", "--hidden-size", "256", "--ffn-hidden-size", "512", "--num-attention-heads", "4",
      "--multi-latent-attention", "--q-lora-rank", "64", "--kv-lora-rank", "32", "--qk-head-dim", "32",
      "--qk-pos-emb-head-dim", "16", "--v-head-dim", "32", "--swiglu", "--padded-vocab-size", "1000",
      "--num-experts", "8", "--moe-layer-freq", "[0]+[1]*7", "--moe-router-topk", "2", "--moe-ffn-hidden-size",
      "64", "--moe-shared-expert-intermediate-size", "128", "--moe-latent-size", "96", "--mtp-num-layers", "1",
      "--kimi-kda-layers", "1", "2", "3", "5", "6", "7", "--kimi-linear-num-heads", "4", "--kimi-linear-head-dim",
      "32", "--kimi-linear-conv-kernel-size", "4", "--seq-length", "4096"};
  ASSERT_EQ(record.at("args").at("kimi_kda_layers"), json::parse("[1, 2, 3, 5, 6, 7]"));
  const Result<ResolvedModel> resolved = resolve_model(input);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message();
  EXPECT_EQ(count(resolved.value().model, Bshd{1, 4096}, Mode::kMegatron).value().total.value,
            record.at("flops").get<double>());
}

}  // namespace
}  // namespace trainflops
