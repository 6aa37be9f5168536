// The step3p5 import (Step-3.5-Flash), and Mistral Small 4's mistral4 text
// model through the mistral3 wrapper, on the small configs of
// tests/data/compare/automodel (the ones NeMo Automodel's functions were run
// on); the expected layers and parameters are worked out by hand from their
// sizes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/input_file.h"
#include "trainflops/hf_config.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

nlohmann::json small_config(const std::string& name) {
  return nlohmann::json::parse(
      read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/compare/automodel/" + name, kMaxConfigFileBytes).value());
}

ParameterCount of_kind(const ModelParameters& parameters, ParameterKind kind) {
  for (const KindParameters& k : parameters.kinds) {
    if (k.kind == kind) return k.count;
  }
  return {};
}

// step3.5-small.json: h 64; full layers 4 heads, sliding layers 6 (window
// 128), 2 key/value heads of 16, a per-head gate on each; layers 0 and 1
// dense (96), 2-5 MoE (8 experts of 32, top 2, a shared expert of 24); two
// MTP layers, sliding and dense (indices 6 and 7 are not in moe_layers_enum).
TEST(HfStepModelsTest, Step35ReadsItsSlidingHeadsGatesAndMtpLayers) {
  const Result<HfImport> import = import_hf_config(small_config("step3.5-small.json").dump(), UnknownFields::kRejected);
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  const GqaAttention full{.num_heads = 4, .num_query_groups = 2, .head_dim = 16, .head_gate = true};
  GqaAttention sliding = full;
  sliding.num_heads = 6;
  sliding.window = 128;
  const ChannelMixer dense = DenseMlp{96, true};
  const ChannelMixer experts = Moe{8, 2, 32, 24, std::nullopt, true};
  const Layer expected[] = {{full, dense},      {sliding, dense},   {sliding, experts},
                            {sliding, experts}, {sliding, experts}, {full, experts}};
  ASSERT_EQ(model.layers.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(model.layers[i], expected[i]) << i;
  ASSERT_EQ(model.mtp_depths.size(), 2u);
  for (const LayerStack& depth : model.mtp_depths) EXPECT_EQ(depth, LayerStack({Layer{sliding, dense}}));
  EXPECT_EQ(summarize(model),
            "step3p5: 6 layers (1 gqa+mlp, 1 swa+mlp, 3 swa+moe, 1 gqa+moe) + 2 MTP depths, "
            "hidden 64, vocab 100");

  // Weights: full attention 64 (64 + 2 x 32 + 4) + 64 x 64 = 12,544, sliding
  // 64 (96 + 64 + 6) + 96 x 64 = 16,768; dense 3 x 64 x 96 = 18,432; MoE
  // 8 x 3 x 64 x 32 + 3 x 64 x 24 = 53,760 (active 2 x 6,144 + 4,608 =
  // 16,896). Decoder 2 x 12,544 + 4 x 16,768 + 2 x 18,432 + 4 x 53,760 =
  // 344,064; each MTP depth 2 x 64 x 64 + 16,768 + 18,432 = 43,392; the
  // output layer 64 x 100. Total 437,248, active 437,248 - 4 x (53,760 -
  // 16,896) = 289,792. The router: 4 x 64 x 8; its expert bias 4 x 8.
  const ModelParameters parameters = count_parameters(model).value();
  const ParameterCount weights = of_kind(parameters, ParameterKind::kWeight);
  EXPECT_EQ(to_decimal(weights.total), "437248");
  EXPECT_EQ(to_decimal(weights.active), "289792");
  EXPECT_EQ(to_decimal(of_kind(parameters, ParameterKind::kRouter).total), "2048");
  EXPECT_EQ(to_decimal(of_kind(parameters, ParameterKind::kExpertBias).total), "32");
}

// step3.5-small-plain.json: moe_layers_enum as a list, the sliding layers'
// key/value heads and head width absent (the full layers'), no MTP.
TEST(HfStepModelsTest, Step35SlidingSettingDefaultsToTheFullLayers) {
  const Result<HfImport> import =
      import_hf_config(small_config("step3.5-small-plain.json").dump(), UnknownFields::kRejected);
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  EXPECT_EQ(
      *model.layers[0].mixer,
      Mixer(GqaAttention{.num_heads = 4, .num_query_groups = 4, .head_dim = 8, .head_gate = true, .window = 1000}));
  EXPECT_EQ(*model.layers[1].mixer,
            Mixer(GqaAttention{.num_heads = 8, .num_query_groups = 4, .head_dim = 8, .head_gate = true}));
  EXPECT_EQ(*model.layers[1].channel_mixer, ChannelMixer(Moe{4, 1, 20, 40, std::nullopt, true}));
  EXPECT_EQ(*model.layers[2].channel_mixer, ChannelMixer(DenseMlp{80, true}));
  EXPECT_TRUE(model.mtp_depths.empty());
}

TEST(HfStepModelsTest, Step35Errors) {
  const auto with = [](const std::string& key, const nlohmann::json& value) {
    nlohmann::json config = small_config("step3.5-small.json");
    if (value.is_null()) {
      config.erase(key);
    } else {
      config[key] = value;
    }
    return config.dump();
  };
  const struct {
    std::string config, message;
  } cases[] = {
      {with("layer_types", nlohmann::json::array({"full_attention", "sliding_attention", "sliding_attention",
                                                  "sliding_attention", "sliding_attention", "full_attention"})),
       "layer_types: the list has 6 entries; it must have num_hidden_layers + num_nextn_predict_layers = 8 (the MTP "
       "layers' attention follows the decoder's)"},
      {with("moe_layers_enum", "2,x"),
       "moe_layers_enum = \"2,x\": \"x\" is not a layer index: every entry must be a layer index from 0 to 7 "
       "(num_hidden_layers + num_nextn_predict_layers - 1)"},
      {with("moe_layers_enum", "2,8"),
       "moe_layers_enum = \"2,8\": \"8\" is not a layer index: every entry must be a layer index from 0 to 7 "
       "(num_hidden_layers + num_nextn_predict_layers - 1)"},
      {with("att_impl_type", "MFA"), "att_impl_type = \"MFA\": only Step-3.5's grouped-query attention (\"GQA\")"},
      {with("attention_other_setting", nullptr),
       "attention_other_setting is missing: required for model_type \"step3p5\" with sliding_attention layers"},
      {with("moe_layers_enum", nullptr),
       "moe_layers_enum is missing: required for model_type \"step3p5\" (the indices of the MoE layers)"},
      {with("share_expert_dim", nullptr),
       "share_expert_dim is missing: required for model_type \"step3p5\" with MoE layers"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    const Result<HfImport> import = import_hf_config(c.config, UnknownFields::kRejected);
    ASSERT_FALSE(import.ok());
    EXPECT_EQ(import.error().message(), c.message);
  }
}

// mistral-small-4-small.json: Mistral Small 4's wrapper (mistral3) around its
// language model (mistral4): DeepSeek-V3's MLA (4 heads, q LoRA 24, kv LoRA
// 16, 8 + 4 query/key, 8 value) and MoE (8 experts of 16, top 2, one shared),
// the first layer dense (96).
TEST(HfStepModelsTest, MistralSmall4IsMlaWithMoeInItsTextConfig) {
  const Result<HfImport> import =
      import_hf_config(small_config("mistral-small-4-small.json").dump(), UnknownFields::kRejected);
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  const MlaAttention mla{4, 24, 16, 8, 4, 8, false};
  ASSERT_EQ(model.layers.size(), 3u);
  EXPECT_EQ(model.layers[0], (Layer{mla, DenseMlp{96, true}}));
  EXPECT_EQ(model.layers[1], (Layer{mla, Moe{8, 2, 16, 16, std::nullopt, true}}));
  EXPECT_EQ(model.layers[2], model.layers[1]);
  EXPECT_TRUE(model.mtp_depths.empty());
  EXPECT_EQ(import.value().assumed.back(),
            "the language model is text_config (model_type \"mistral4\"), counted alone: the other modalities of "
            "model_type \"mistral3\" are not counted");
  // Without a query LoRA, with two shared experts and no dense layer.
  const Result<HfImport> plain =
      import_hf_config(small_config("mistral-small-4-small-no-q-lora.json").dump(), UnknownFields::kRejected);
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain.value().model.layers[0],
            (Layer{MlaAttention{4, std::nullopt, 16, 8, 4, 8, false}, Moe{8, 2, 16, 32, std::nullopt, true}}));
}

}  // namespace
}  // namespace trainflops
