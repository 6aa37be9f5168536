#include "trainflops/native_config.h"

#include <gtest/gtest.h>

#include "trainflops/count.h"
#include "trainflops/megatron_args.h"

namespace trainflops {
namespace {

// The same MoE model written as a trainflops config and as Megatron-LM args.
const char* const kConfig = R"({
  // comments are allowed
  "name": "tiny-moe",
  "hidden_size": 256, "vocab_size": 1024,
  "mixers": {"attn": {"type": "gqa", "num_heads": 8, "num_query_groups": 2, "head_dim": 32}},
  "channel_mixers": {
    "dense": {"type": "mlp", "ffn_hidden_size": 1024, "gated": true},
    "experts": {"type": "moe", "num_experts": 16, "topk": 2, "expert_ffn_hidden_size": 128,
                "shared_expert_ffn_hidden_size": 256, "gated": true}
  },
  "layers": [{"mixer": "attn", "channel_mixer": "dense"}, {"mixer": "attn", "channel_mixer": "experts", "repeat": 3}],
  "mtp": {"depths": 2, "layers": [{"mixer": "attn", "channel_mixer": "experts"}]}
})";

const char* const kArgs = R"({
  "num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024, "num_attention_heads": 8,
  "group_query_attention": true, "num_query_groups": 2, "kv_channels": 32, "swiglu": true,
  "padded_vocab_size": 1024, "num_experts": 16, "moe_layer_freq": [0, 1, 1, 1], "moe_router_topk": 2,
  "moe_ffn_hidden_size": 128, "moe_shared_expert_intermediate_size": 256, "mtp_num_layers": 2
})";

TEST(NativeConfigTest, MatchesTheSameModelFromMegatronArgs) {
  const Result<Model> config = parse_native_config(kConfig);
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value().name, "tiny-moe");
  const Result<Model> args = model_from_megatron_args(parse_megatron_args_json(kArgs).value().args);
  ASSERT_TRUE(args.ok()) << args.error().message();
  for (Mode mode : {Mode::kMegatron, Mode::kModel}) {
    const Workload workload = PackedDocuments{{100, 7, 300}};
    const auto a = count(config.value(), workload, mode);
    const auto b = count(args.value(), workload, mode);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.value().total.value, b.value().total.value);
    EXPECT_EQ(a.value().total.exact, b.value().total.exact);
  }
}

TEST(NativeConfigTest, Errors) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string head = R"("hidden_size": 64, "vocab_size": 100, "mixers": {"a": {"type": "gqa", "num_heads": 4, )"
                           R"("num_query_groups": 2, "head_dim": 16}}, "channel_mixers": {"m": {"type": "mlp", )"
                           R"("ffn_hidden_size": 128}})";
  const std::vector<Case> cases = {
      {"[1, 2]", "the config = [1,2]: must be an object"},
      {"{", "not valid JSON"},
      {"{" + head + R"(, "layers": [{"mixer": "b"}]})", "layers[0].mixer = \"b\": not one of the defined mixers (a)"},
      {"{" + head + R"(, "layers": [{"repeat": 2}]})",
       "layers[0].mixer is missing: a layer needs a mixer, a channel_mixer or both"},
      {"{" + head + R"(, "layers": [{"mixer": "a", "repeats": 2}]})",
       "layers[0].repeats: unknown key (this object takes channel_mixer, mixer, repeat)"},
      {"{" + head + R"(, "layers": [{"mixer": "a", "repeat": 0}]})",
       "layers[0].repeat = 0: must be between 1 and 1000000"},
      {"{" + head + R"(, "layers": []})", "layers: must hold at least one layer"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "extra": 1})",
       "extra: unknown key (this object takes channel_mixers, hidden_size, layers, megatron_path, mixers, mtp, name, "
       "vocab_size)"},
      {R"({"hidden_size": 64, "vocab_size": 100, "mixers": {"a": {"type": "mha"}}, "layers": []})",
       "mixers.a.type = \"mha\": must be one of gqa, mla, gdn, gdn2, mamba2, gdp"},
      {R"({"hidden_size": 64, "vocab_size": 100, "mixers": {"a": {"type": "gqa", "num_heads": 4}}, "layers": []})",
       "mixers.a.num_query_groups is missing"},
      {R"({"hidden_size": "64", "vocab_size": 100, "layers": []})", "hidden_size = \"64\": must be an integer"},
      {R"({"hidden_size": 64, "vocab_size": 100, "layers": [], "megatron_path": "mixed"})",
       "megatron_path = \"mixed\": must be standard or hybrid"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "mtp": {"depths": 1}})", "mtp.layers is missing"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "mtp": {"depths": -1, "layers": []}})",
       "mtp.depths = -1: must be between 0 and 1000"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Result<Model> model = parse_native_config(c.text);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
