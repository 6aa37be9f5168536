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

// GLM-5 written out layer by layer equals the preset built from Megatron-LM
// arguments with index sharing (topk_freq 4, offset 3: layers 1-3 and 7, 11, ...
// select their own top-k; the MTP layer, numbered 1, too).
TEST(NativeConfigTest, DsaLayersSpelledOutMatchIndexSharing) {
  const std::string mla = R"("num_heads": 64, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_head_dim": 192,
                             "qk_pos_emb_head_dim": 64, "v_head_dim": 256,
                             "indexer": {"num_heads": 32, "head_dim": 128, "topk": 2048, "grad_mode": "off"})";
  const std::string config = R"({"name": "GLM-5", "hidden_size": 6144, "vocab_size": 154880,
    "mixers": {"dsa": {"type": "dsa", )" +
                             mla + R"(},
               "shared": {"type": "dsa", "reuses_topk": true, )" +
                             mla + R"(}},
    "channel_mixers": {"mlp": {"type": "mlp", "ffn_hidden_size": 12288, "gated": true},
                       "moe": {"type": "moe", "num_experts": 256, "topk": 8, "expert_ffn_hidden_size": 2048,
                               "shared_expert_ffn_hidden_size": 2048, "gated": true}},
    "layers": [{"mixer": "dsa", "channel_mixer": "mlp", "repeat": 3}, )" +
                             [] {
                               std::string quad;
                               for (int i = 0; i < 18; ++i) {
                                 quad += R"({"mixer": "shared", "channel_mixer": "moe", "repeat": 3}, )"
                                         R"({"mixer": "dsa", "channel_mixer": "moe"}, )";
                               }
                               return quad;
                             }() +
                             R"({"mixer": "shared", "channel_mixer": "moe", "repeat": 3}],
    "mtp": {"depths": 1, "layers": [{"mixer": "dsa", "channel_mixer": "moe"}]}})";
  const Result<Model> spelled = parse_native_config(config);
  ASSERT_TRUE(spelled.ok()) << spelled.error().message();
  const Result<Model> preset = model_from_megatron_args(parse_megatron_args_json(R"({
    "num_layers": 78, "hidden_size": 6144, "ffn_hidden_size": 12288, "num_attention_heads": 64,
    "multi_latent_attention": true, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_head_dim": 192,
    "qk_pos_emb_head_dim": 64, "v_head_dim": 256, "swiglu": true, "padded_vocab_size": 154880,
    "num_experts": 256, "moe_layer_freq": [0,0,0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
      1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],
    "moe_router_topk": 8, "moe_ffn_hidden_size": 2048, "moe_shared_expert_intermediate_size": 2048,
    "mtp_num_layers": 1, "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 32,
    "dsa_indexer_head_dim": 128, "dsa_indexer_topk": 2048, "dsa_indexer_topk_freq": 4,
    "dsa_indexer_skip_topk_offset": 3})")
                                                            .value()
                                                            .args);
  ASSERT_TRUE(preset.ok()) << preset.error().message();
  const Workload workload = PackedDocuments{{100000, 3000, 1}};
  EXPECT_EQ(count(spelled.value(), workload, Mode::kModel).value().total.exact,
            count(preset.value(), workload, Mode::kModel).value().total.exact);
}

// Kimi K3's two mixers: Kimi Delta Attention and MLA with an output gate.
TEST(NativeConfigTest, ReadsKimiDeltaAttentionAndTheMlaOutputGate) {
  const Result<Model> model = parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
    "mixers": {"kda": {"type": "kda", "num_heads": 4, "head_dim": 8, "conv_kernel_dim": 4, "forget_gate_rank": 8,
                       "output_gate_rank": 16},
               "mla": {"type": "mla", "num_heads": 2, "kv_lora_rank": 8, "qk_head_dim": 4,
                       "qk_pos_emb_head_dim": 0, "v_head_dim": 4, "output_gate": true}},
    "layers": [{"mixer": "kda"}, {"mixer": "mla"}]})");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(*model.value().layers[0].mixer, Mixer(KimiDeltaAttention{4, 8, 4, 8, 16}));
  EXPECT_EQ(*model.value().layers[1].mixer, Mixer(MlaAttention{2, std::nullopt, 8, 4, 0, 4, true}));
  // Without ranks both gates are full rank (Megatron-LM's layer).
  const Result<Model> full_rank = parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
    "mixers": {"kda": {"type": "kda", "num_heads": 4, "head_dim": 8, "conv_kernel_dim": 4}},
    "layers": [{"mixer": "kda"}]})");
  ASSERT_TRUE(full_rank.ok()) << full_rank.error().message();
  EXPECT_EQ(*full_rank.value().layers[0].mixer, Mixer(KimiDeltaAttention{4, 8, 4, std::nullopt, std::nullopt}));
  const Result<Model> zero_rank = parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
    "mixers": {"kda": {"type": "kda", "num_heads": 4, "head_dim": 8, "conv_kernel_dim": 4, "forget_gate_rank": 0}},
    "layers": [{"mixer": "kda"}]})");
  ASSERT_FALSE(zero_rank.ok());
  EXPECT_EQ(zero_rank.error().message(), "layers[0].mixer.forget_gate_rank = 0: must be a positive integer");
  EXPECT_EQ(std::get<KimiDeltaAttention>(*model.value().layers[0].mixer).chunk_size, 64);
  const auto with_chunks = [](std::string_view chunk_size) {
    return parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
      "mixers": {"kda": {"type": "kda", "num_heads": 4, "head_dim": 8, "conv_kernel_dim": 4, "forget_gate_rank": 8,
                         "chunk_size": )" + std::string(chunk_size) + R"(}}, "layers": [{"mixer": "kda"}]})");
  };
  ASSERT_TRUE(with_chunks("32").ok());
  EXPECT_EQ(std::get<KimiDeltaAttention>(*with_chunks("32").value().layers[0].mixer).chunk_size, 32);
  ASSERT_FALSE(with_chunks("0").ok());
  EXPECT_EQ(with_chunks("0").error().message(), "layers[0].mixer.chunk_size = 0: must be a positive integer");
}

TEST(NativeConfigTest, ReadsTheGatedDeltaNetsChunkSize) {
  const auto with_chunks = [](std::string_view chunk_size) {
    return parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
      "mixers": {"g": {"type": "gdn", "key_head_dim": 8, "value_head_dim": 16, "num_key_heads": 2,
                       "num_value_heads": 4, "conv_kernel_dim": 4)" + std::string(chunk_size) + R"(}},
      "layers": [{"mixer": "g"}]})");
  };
  ASSERT_TRUE(with_chunks("").ok());
  EXPECT_EQ(std::get<GatedDeltaNet>(*with_chunks("").value().layers[0].mixer).chunk_size, 64);
  ASSERT_TRUE(with_chunks(R"(, "chunk_size": 16)").ok());
  EXPECT_EQ(std::get<GatedDeltaNet>(*with_chunks(R"(, "chunk_size": 16)").value().layers[0].mixer).chunk_size, 16);
  ASSERT_FALSE(with_chunks(R"(, "chunk_size": 0)").ok());
  EXPECT_EQ(with_chunks(R"(, "chunk_size": 0)").error().message(),
            "layers[0].mixer.chunk_size = 0: must be a positive integer");
}

// Step-3.5's attention: a per-head gate, sliding layers of their own heads.
TEST(NativeConfigTest, ReadsThePerHeadGate) {
  const Result<Model> model = parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
    "mixers": {"full": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 16, "head_gate": true},
               "swa": {"type": "gqa", "num_heads": 6, "num_query_groups": 2, "head_dim": 16, "head_gate": true,
                       "window": 8}},
    "layers": [{"mixer": "full"}, {"mixer": "swa"}]})");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(*model.value().layers[0].mixer,
            Mixer(GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16, .head_gate = true}));
  EXPECT_EQ(*model.value().layers[1].mixer,
            Mixer(GqaAttention{.num_heads = 6, .num_query_groups = 2, .head_dim = 16, .head_gate = true, .window = 8}));
  const Result<Model> both = parse_native_config(R"({"hidden_size": 64, "vocab_size": 100,
    "mixers": {"a": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 16, "head_gate": true,
                     "output_gate": true}},
    "layers": [{"mixer": "a"}]})");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().message(),
            "layers[0].mixer.head_gate = 1: a layer gates its output per element (output_gate) or per head, not both");
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
      {"{",
       "not valid JSON (line 1, column 2: syntax error while parsing object key - unexpected end of input; "
       "expected string literal)"},
      // Nesting is limited before parsing (the readers recurse); a comment's brackets do not count.
      {"// [[[[\n" + std::string(101, '[') + std::string(101, ']'),
       "not valid JSON: nested deeper than 100 levels (line 2, column 101)"},
      {"{" + head + R"(, "layers": [{"mixer": "b"}]})", "layers[0].mixer = \"b\": not one of the defined mixers (a)"},
      {"{" + head + R"(, "layers": [{"repeat": 2}]})",
       "layers[0].mixer is missing: a layer needs a mixer, a channel_mixer or both"},
      {"{" + head + R"(, "layers": [{"mixer": "a", "repeats": 2}]})",
       "layers[0].repeats: unknown key (this object takes channel_mixer, mixer, ngram_memory, per_layer_embedding, "
       "repeat)"},
      {"{" + head + R"(, "layers": [{"mixer": "a", "repeat": 0}]})", "layers[0].repeat = 0: must be >= 1"},
      {"{" + head + R"(, "layers": []})", "layers: must hold at least one layer"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "extra": 1})",
       "extra: unknown key (this object takes attention_residuals, channel_mixers, hidden_size, hyper_connections, "
       "layers, megatron_path, megatron_seq_length, mixers, mtp, name, vocab_size)"},
      {R"({"hidden_size": 64, "vocab_size": 100, "mixers": {"a": {"type": "mha"}}, "layers": []})",
       "mixers.a.type = \"mha\": must be one of gqa, mla, dsa, window, csa, hca, gdn, gdn2, mamba2, gdp, "
       "block_sparse, kda, csa2, qsa, dsa_gqa"},
      {R"({"hidden_size": 64, "vocab_size": 100, "mixers": {"a": {"type": "gqa", "num_heads": 4}}, "layers": []})",
       "mixers.a.num_query_groups is missing"},
      {R"({"hidden_size": "64", "vocab_size": 100, "layers": []})", "hidden_size = \"64\": must be an integer"},
      {R"({"hidden_size": 64, "vocab_size": 100, "layers": [], "megatron_path": "mixed"})",
       "megatron_path = \"mixed\": must be standard or hybrid"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "mtp": {"depths": 1}})", "mtp.layers is missing"},
      {"{" + head + R"(, "layers": [{"mixer": "a"}], "mtp": {"depths": -1, "layers": []}})",
       "mtp.depths = -1: must be >= 0"},
      {R"({"hidden_size": 64, "vocab_size": 100, "mixers": {"d": {"type": "dsa", "num_heads": 2, "kv_lora_rank": 8,
          "qk_head_dim": 8, "qk_pos_emb_head_dim": 0, "v_head_dim": 8,
          "indexer": {"num_heads": 2, "head_dim": 8, "topk": 8, "grad_mode": "dense"}}}, "layers": []})",
       "mixers.d.indexer.grad_mode = \"dense\": must be one of off, detached, sparse, full"},
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
