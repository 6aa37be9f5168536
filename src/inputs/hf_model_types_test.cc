// Model types of current releases (glm4_moe, kimi_k2, deepseek_v2,
// minimax_m2, llama4 through its text_config), each checked against what the
// model's authors publish: the total and active parameter counts of its model
// card, within the rounding of the published figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "base/input_file.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/int128.h"
#include "trainflops/layer_flops.h"
#include "trainflops/native_config.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

// "a", 3 -> "a, a, a".
std::string repeated(const std::string& entry, int times) {
  std::string list;
  for (int i = 0; i < times; ++i) list += (i ? ", " : "") + entry;
  return list;
}

// The sizes of zai-org/GLM-4.5-Air's config.json, as Transformers 4.54 prints
// its Glm4MoeConfig.
const std::string kGlm45Air = R"({
  "architectures": ["Glm4MoeForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
  "eos_token_id": [151329, 151336, 151338], "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 10944, "max_position_embeddings": 131072,
  "model_type": "glm4_moe", "moe_intermediate_size": 1408, "n_group": 1, "n_routed_experts": 128,
  "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 96, "num_experts_per_tok": 8,
  "num_hidden_layers": 46, "num_key_value_heads": 8, "num_nextn_predict_layers": 1, "pad_token_id": 151329,
  "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 1000000,
  "routed_scaling_factor": 1.0, "tie_word_embeddings": false, "topk_group": 1, "torch_dtype": "bfloat16",
  "transformers_version": "4.54.1", "use_cache": true, "use_qk_norm": false, "vocab_size": 151552})";

// The sizes of moonshotai/Kimi-K2-Instruct's config.json (DeepSeek-V3's architecture).
const std::string kKimiK2 = R"({
  "architectures": ["DeepseekV3ForCausalLM"], "aux_loss_alpha": 0.001, "bos_token_id": 163584,
  "eos_token_id": 163585, "first_k_dense_replace": 1, "hidden_act": "silu", "hidden_size": 7168,
  "initializer_range": 0.02, "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 131072,
  "model_type": "kimi_k2", "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 1,
  "n_routed_experts": 384, "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 64,
  "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 64, "num_nextn_predict_layers": 0,
  "pretraining_tp": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
  "rope_theta": 50000.0, "routed_scaling_factor": 2.827, "scoring_func": "sigmoid", "seq_aux": true,
  "tie_word_embeddings": false, "topk_group": 1, "topk_method": "noaux_tc", "torch_dtype": "bfloat16",
  "use_cache": true, "v_head_dim": 128, "vocab_size": 163840})";

// The sizes of deepseek-ai/DeepSeek-V2-Lite's config.json: no query LoRA.
const std::string kDeepSeekV2Lite = R"({
  "architectures": ["DeepseekV2ForCausalLM"], "aux_loss_alpha": 0.001, "first_k_dense_replace": 1,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10944, "kv_lora_rank": 512,
  "max_position_embeddings": 163840, "model_type": "deepseek_v2", "moe_intermediate_size": 1408,
  "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "norm_topk_prob": false,
  "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
  "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-06,
  "routed_scaling_factor": 1.0, "scoring_func": "softmax", "seq_aux": true, "topk_group": 1,
  "topk_method": "greedy", "v_head_dim": 128, "vocab_size": 102400})";

// The sizes of MiniMaxAI/MiniMax-M2's config.json.
const std::string kMiniMaxM2 = R"({
  "architectures": ["MiniMaxM2ForCausalLM"], "attn_type_list": [)" +
                               repeated("1", 62) + R"(],
  "head_dim": 128, "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 1536,
  "max_position_embeddings": 196608, "model_type": "minimax_m2", "mtp_transformer_layers": 1,
  "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 62, "num_key_value_heads": 8,
  "num_local_experts": 256, "num_mtp_modules": 3, "qk_norm_type": "per_layer", "rms_norm_eps": 1e-06,
  "rope_theta": 5000000, "rotary_dim": 64, "scoring_func": "sigmoid", "shared_intermediate_size": 0,
  "tie_word_embeddings": false, "use_mtp": true, "use_qk_norm": true, "use_routing_bias": true,
  "vocab_size": 200064})";

// The sizes of meta-llama/Llama-4-Scout-17B-16E's config.json: a multimodal
// wrapper whose language model is text_config (the vision tower left out).
const std::string kLlama4Scout = R"({
  "architectures": ["Llama4ForConditionalGeneration"], "boi_token_index": 200080, "eoi_token_index": 200081,
  "image_token_index": 200092, "model_type": "llama4", "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34, "model_type": "llama4_vision_model"},
  "text_config": {
    "attention_bias": false, "attention_chunk_size": 8192, "attention_dropout": 0.0, "attn_scale": 0.1,
    "attn_temperature_tuning": true, "floor_scale": 8192, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 5120, "interleave_moe_layer_step": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "max_position_embeddings": 10485760, "model_type": "llama4_text", "no_rope_layers": [)" +
                                 repeated("1, 1, 1, 0", 12) + R"(],
    "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8,
    "num_local_experts": 16, "output_router_logits": false, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
    "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0, "use_qk_norm": true, "vocab_size": 202048}})";

// A release config of tests/data/hf, as published.
std::string release_config(const std::string& name) {
  return read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/" + name, kMaxConfigFileBytes).value();
}

// MiniMaxAI/MiniMax-M3's config.json: a multimodal wrapper (minimax_m3_vl)
// whose language model is text_config, which names no model_type (the
// wrapper's configuration class builds it as minimax_m3); block-sparse
// attention on the layers sparse_attention_freq names; 7 MTP modules.
const std::string kMiniMaxM3 = release_config("minimax-m3.json");

HfImport imported(const std::string& config) {
  Result<HfImport> import = import_hf_config(config, UnknownFields::kRejected);
  EXPECT_TRUE(import.ok()) << import.error().message();
  return import.ok() ? import.value() : HfImport{};
}

using Parts = std::vector<ParameterPart>;
const Parts kDecoder = {ParameterPart::kDecoder};
const Parts kWithOutputLayer = {ParameterPart::kOutputLayer, ParameterPart::kDecoder};
const Parts kWithEmbedding = {ParameterPart::kEmbedding, ParameterPart::kOutputLayer, ParameterPart::kDecoder};

struct PublishedCase {
  const char* name;
  const std::string* config;
  std::string summary;
  // The model card's figures, each with the rounding unit it is published to:
  // the main model's total (MTP excluded) and its active parameters, counting
  // the parts `active_counts` names (a named embedding table counts whole).
  double total, total_unit;
  std::optional<double> active;
  double active_unit;
  Parts active_counts;
};

TEST(HfModelTypesTest, CountTheParametersTheirAuthorsPublish) {
  const PublishedCase cases[] = {
      // 106B total, 12B active (the decoder's, as Qwen3-Next's "A3B").
      {"GLM-4.5-Air", &kGlm45Air,
       "glm4_moe: 46 layers (1 gqa+mlp, 45 gqa+moe) + 1 MTP depth, hidden 4096, vocab 151552", 106e9, 1e9, 12e9, 1e9,
       kDecoder},
      // 1T total, 32B activated.
      {"Kimi-K2", &kKimiK2, "kimi_k2: 61 layers (1 mla+mlp, 60 mla+moe), hidden 7168, vocab 163840", 1e12, 1e11, 32e9,
       1e9, kWithOutputLayer},
      // 15.7B total (DeepSeek-V2, arXiv:2405.04434, appendix B); its 2.4B
      // activated lies between the decoder's 2.24B and, with the output
      // layer, 2.45B, so it is not checked.
      {"DeepSeek-V2-Lite",
       &kDeepSeekV2Lite,
       "deepseek_v2: 27 layers (1 mla+mlp, 26 mla+moe), hidden 2048, vocab 102400",
       15.7e9,
       1e8,
       std::nullopt,
       0,
       {}},
      // 230B total, 10B active.
      {"MiniMax-M2", &kMiniMaxM2, "minimax_m2: 62 layers (62 gqa+moe) + 3 MTP depths, hidden 3072, vocab 200064", 230e9,
       1e9, 10e9, 1e9, kWithOutputLayer},
      // ~428B total (its model card), the vision tower included; its ~23B
      // active is checked by the minimax-m3 preset, read as a round figure.
      {"MiniMax-M3",
       &kMiniMaxM3,
       "minimax_m3_vl: 60 layers (3 gqa+mlp, 57 block-sparse+moe) + 7 MTP depths, hidden 6144, vocab 200064",
       428e9,
       1e9,
       std::nullopt,
       0,
       {}},
      // 17B active, the embedding table included as in Llama 3's figures; its
      // 109B total also counts the vision tower, which is not imported.
      {"Llama-4-Scout", &kLlama4Scout, "llama4: 48 layers (36 chunked+moe, 12 gqa+moe), hidden 5120, vocab 202048",
       108e9, 2e9, 17e9, 1e9, kWithEmbedding},
  };
  for (const PublishedCase& c : cases) {
    SCOPED_TRACE(c.name);
    const HfImport import = imported(*c.config);
    if (import.model.layers.empty()) continue;
    EXPECT_TRUE(import.unknown.empty());
    EXPECT_EQ(summarize(import.model), c.summary);
    const ModelParameters parameters = count_parameters(import.model).value();
    const double total = to_double(parameters.main_model().total);
    EXPECT_LE(std::abs(total - c.total), std::max(0.01 * c.total, 0.5 * c.total_unit)) << "total " << total;
    if (!c.active) continue;
    const bool embedding_counted =
        std::find(c.active_counts.begin(), c.active_counts.end(), ParameterPart::kEmbedding) != c.active_counts.end();
    const double active = to_double(parameters.sum(c.active_counts, embedding_counted).active);
    EXPECT_LE(std::abs(active - *c.active), std::max(0.01 * *c.active, 0.5 * c.active_unit)) << "active " << active;
  }
}

// Every parameter, to the unit, against the released checkpoints' element
// counts (the Hugging Face Hub's safetensors.total of each repository):
// the layout each model type implies (router biases, full-width query and
// key norms) included.
TEST(HfModelTypesTest, CountTheCheckpointsParametersToTheUnit) {
  const struct {
    const char* name;
    const std::string* config;
    std::int64_t main_model;
  } cases[] = {
      // moonshotai/Kimi-K2-Instruct: 1,026,408,235,864 on the Hub, of which
      // 3,416 (56 in each of the 61 layers) are elements of tensors that are
      // no parameter of the model: an audit of every shard header of the
      // checkpoint counts 1,026,408,232,448 parameters (docs/parameters.md).
      {"Kimi-K2", &kKimiK2, 1'026'408'232'448},
      // MiniMaxAI/MiniMax-M2: its checkpoint stores no MTP module.
      {"MiniMax-M2", &kMiniMaxM2, 228'689'764'864},
      // deepseek-ai/DeepSeek-V2-Lite: no router bias (topk_method greedy).
      {"DeepSeek-V2-Lite", &kDeepSeekV2Lite, 15'706'484'224},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const ModelParameters p = count_parameters(imported(*c.config).model).value();
    EXPECT_EQ(to_decimal(p.main_model().total), std::to_string(c.main_model));
  }
}

// kimi_k2 and deepseek_v2 are DeepSeek-V3's importer under other names: the
// same fields give the same model.
TEST(HfModelTypesTest, KimiK2IsDeepSeekV3sArchitecture) {
  std::string as_deepseek = kKimiK2;
  as_deepseek.replace(as_deepseek.find("kimi_k2"), 7, "deepseek_v3");
  const Model kimi = imported(kKimiK2).model, deepseek = imported(as_deepseek).model;
  const Workload batch = Bshd{2, 4096};
  for (const Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
    EXPECT_EQ(count(kimi, batch, mode).value().total.value, count(deepseek, batch, mode).value().total.value);
  }
  EXPECT_FALSE(std::get<MlaAttention>(*imported(kDeepSeekV2Lite).model.layers[0].mixer).q_lora_rank);
}

// Llama 4: chunked attention on the RoPE layers (1 in no_rope_layers), global
// attention on every fourth; routed and shared experts; the import says that
// only the language model is counted.
TEST(HfModelTypesTest, Llama4CountsItsLanguageModel) {
  const HfImport import = imported(kLlama4Scout);
  if (import.model.layers.empty()) return;
  const auto& chunked = std::get<GqaAttention>(*import.model.layers[0].mixer);
  const auto& global = std::get<GqaAttention>(*import.model.layers[3].mixer);
  EXPECT_EQ(chunked.chunk, 8192);
  EXPECT_FALSE(global.chunk);
  const auto& experts = std::get<Moe>(*import.model.layers[0].channel_mixer);
  EXPECT_EQ(experts.topk, 1);
  EXPECT_EQ(experts.shared_expert_ffn_hidden_size, 8192);
  EXPECT_EQ(import.assumed, (std::vector<std::string>{
                                "the language model is text_config (model_type \"llama4_text\"), counted alone: the "
                                "other modalities of model_type \"llama4\" are not counted"}));
  EXPECT_EQ(import.ignored.back(), "vision_config");
}

// Qwen3.5 wraps its language model in text_config (qwen3_5_text: a dense MLP
// on every layer; qwen3_5_moe_text: MoE on every layer) and GLM-4.7-Flash is
// DeepSeek-V3's architecture: the presets hold their release configs.
TEST(HfModelTypesTest, Qwen35AndGlm47FlashImportFromTheirReleases) {
  const struct {
    const char* preset;
    std::string summary;
  } cases[] = {
      {"qwen3.5-27b", "qwen3_5: 64 layers (48 gdn+mlp, 16 gqa+mlp) + 1 MTP depth, hidden 5120, vocab 248320"},
      {"qwen3.5-35b-a3b", "qwen3_5_moe: 40 layers (30 gdn+moe, 10 gqa+moe) + 1 MTP depth, hidden 2048, vocab 248320"},
      {"glm-4.7-flash", "glm4_moe_lite: 47 layers (1 mla+mlp, 46 mla+moe) + 1 MTP depth, hidden 2048, vocab 154880"},
      {"gemma-4-31b", "gemma4: 60 layers (50 swa+mlp, 10 gqa+mlp), hidden 5376, vocab 262144"},
      {"gemma-4-26b-a4b", "gemma4: 30 layers (25 swa+moe, 5 gqa+moe), hidden 2816, vocab 262144"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.preset);
    const HfImport import = imported(*find_preset(c.preset).value().hf_config);
    EXPECT_TRUE(import.unknown.empty());
    EXPECT_EQ(summarize(import.model), c.summary);
  }
  const HfImport dense = imported(*find_preset("qwen3.5-27b").value().hf_config);
  EXPECT_TRUE(std::get<GqaAttention>(*dense.model.layers[3].mixer).output_gate);
  EXPECT_EQ(std::get<DenseMlp>(*dense.model.layers[0].channel_mixer).ffn_hidden_size, 17408);
  EXPECT_EQ(dense.assumed,
            (std::vector<std::string>{
                "chunk_size = 64: the config does not say in what chunks training runs the delta rule; executed mode "
                "counts flash-linear-attention's chunk_gated_delta_rule at its default (give another with the native "
                "config's chunk_size)",
                "the language model is text_config (model_type \"qwen3_5_text\"), counted alone: the other "
                "modalities of model_type \"qwen3_5\" are not counted"}));
}

// MiniMax-M3: block-sparse attention with the release's indexer and blocks
// on 57 layers, dense grouped-query attention on the first three.
TEST(HfModelTypesTest, MiniMaxM3AttendsBlocksOnItsSparseLayers) {
  const HfImport import = imported(kMiniMaxM3);
  if (import.model.layers.empty()) return;
  EXPECT_TRUE(std::holds_alternative<GqaAttention>(*import.model.layers[2].mixer));
  const auto& sparse = std::get<BlockSparseAttention>(*import.model.layers[3].mixer);
  EXPECT_EQ(sparse.indexer_num_heads, 4);
  EXPECT_EQ(sparse.indexer_head_dim, 128);
  EXPECT_EQ(sparse.block_size, 128);
  EXPECT_EQ(sparse.topk_blocks, 16);
  EXPECT_EQ(sparse.attention, std::get<GqaAttention>(*import.model.layers[0].mixer));
  EXPECT_EQ(std::get<Moe>(*import.model.layers[3].channel_mixer).shared_expert_ffn_hidden_size, 3072);
  EXPECT_EQ(std::get<DenseMlp>(*import.model.layers[0].channel_mixer).ffn_hidden_size, 12288);

  std::string own_block_left_out = kMiniMaxM3;
  own_block_left_out.replace(own_block_left_out.find("\"sparse_local_block\": 1"), 23, "\"sparse_local_block\": 0");
  const Result<HfImport> refused = import_hf_config(own_block_left_out);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "text_config.sparse_attention_config.sparse_local_block = 0: must be positive: the query's own block must "
            "be attended");
}

// Gemma 4: global layers of their own width and groups whose keys are the
// values; the KV-shared layers of E2B and E4B project no keys or values, and
// every layer of theirs has a per-layer embedding.
TEST(HfModelTypesTest, Gemma4GlobalLayersAndKvSharing) {
  const HfImport import = imported(*find_preset("gemma-4-31b").value().hf_config);
  if (import.model.layers.empty()) return;
  const auto& local = std::get<GqaAttention>(*import.model.layers[0].mixer);
  const auto& global = std::get<GqaAttention>(*import.model.layers[5].mixer);
  EXPECT_EQ(local.window, 1024);
  EXPECT_EQ(local.head_dim, 256);
  EXPECT_EQ(local.num_query_groups, 16);
  EXPECT_FALSE(local.key_is_value);
  EXPECT_FALSE(global.window);
  EXPECT_EQ(global.head_dim, 512);
  EXPECT_EQ(global.num_query_groups, 4);
  EXPECT_TRUE(global.key_is_value);

  const std::string small = R"({"model_type": "gemma4_text", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16,
    "global_head_dim": 32, "sliding_window": 8, "intermediate_size": 128, "num_kv_shared_layers": 2,
    "use_double_wide_mlp": true, "layer_types": ["sliding_attention", "sliding_attention", "full_attention",
    "sliding_attention", "sliding_attention", "full_attention"], )";
  const HfImport shared = imported(small + R"("hidden_size_per_layer_input": 0})");
  if (shared.model.layers.empty()) return;
  EXPECT_FALSE(std::get<GqaAttention>(*shared.model.layers[3].mixer).reuses_key_value);
  EXPECT_TRUE(std::get<GqaAttention>(*shared.model.layers[4].mixer).reuses_key_value);
  EXPECT_TRUE(std::get<GqaAttention>(*shared.model.layers[5].mixer).reuses_key_value);
  EXPECT_EQ(std::get<DenseMlp>(*shared.model.layers[5].channel_mixer).ffn_hidden_size, 256);
  EXPECT_EQ(std::get<DenseMlp>(*shared.model.layers[3].channel_mixer).ffn_hidden_size, 128);
  // Per token, the projections of a KV-sharing global layer: 64 x 128 for
  // the queries and 128 x 64 for the output, no keys or values.
  const Terms terms = gqa_attention_terms(std::get<GqaAttention>(*shared.model.layers[5].mixer), 64, Convention{});
  EXPECT_EQ(to_decimal(terms.front().forward_flops), std::to_string(2 * (64 * 128 + 128 * 64)));

  EXPECT_FALSE(shared.model.layers[0].per_layer_embedding);

  // Per-layer embeddings: every layer's own, from a table of
  // vocab_size_per_layer_input rows; that table's size is required.
  const HfImport embedded = imported(small + R"("hidden_size_per_layer_input": 8, "vocab_size_per_layer_input": 50})");
  if (embedded.model.layers.empty()) return;
  for (const Layer& layer : embedded.model.layers) {
    ASSERT_TRUE(layer.per_layer_embedding);
    EXPECT_EQ(*layer.per_layer_embedding, (PerLayerEmbedding{.dim = 8, .vocabulary = 50}));
  }
  const Result<HfImport> missing = import_hf_config(small + R"("hidden_size_per_layer_input": 8})");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "vocab_size_per_layer_input is missing: required by per-layer embeddings (hidden_size_per_layer_input > "
            "0)");
}

// E2B and E4B's fields, with the sizes MaxText's gemma4-e2b.yml and
// gemma4-e4b.yml give them, import to the models compare checks against
// MaxText's function (tests/data/compare/gemma-4-e*-maxtext.json): the
// KV-shared layers from the 16th (E2B) and the 25th (E4B), E2B's double-wide
// MLP on them, a per-layer embedding on every layer.
TEST(HfModelTypesTest, Gemma4SmallImportsAsMaxTextDefinesIt) {
  struct Case {
    std::string native;
    int layers, period, kv_heads, shared, hidden, ffn;
    bool double_wide;
  };
  for (const Case& c : {Case{"gemma-4-e2b-maxtext.json", 35, 5, 1, 20, 1536, 6144, true},
                        Case{"gemma-4-e4b-maxtext.json", 42, 6, 2, 18, 2560, 10240, false}}) {
    SCOPED_TRACE(c.native);
    std::string types;
    for (int i = 0; i < c.layers; ++i) {
      types += std::string(i == 0 ? "" : ", ") +
               (i % c.period == c.period - 1 ? R"("full_attention")" : R"("sliding_attention")");
    }
    const std::string config =
        R"({"model_type": "gemma4_text", "hidden_size": )" + std::to_string(c.hidden) +
        R"(, "vocab_size": 262144, "num_hidden_layers": )" + std::to_string(c.layers) +
        R"(, "num_attention_heads": 8, "num_key_value_heads": )" + std::to_string(c.kv_heads) +
        R"(, "head_dim": 256, "global_head_dim": 512, "num_global_key_value_heads": null, "sliding_window": 512,
        "intermediate_size": )" +
        std::to_string(c.ffn) + R"(, "num_kv_shared_layers": )" + std::to_string(c.shared) +
        R"(, "use_double_wide_mlp": )" + (c.double_wide ? "true" : "false") +
        R"(, "attention_k_eq_v": false, "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
        "layer_types": [)" +
        types + "]}";
    const HfImport hf = imported(config);
    const Result<Model> native = parse_native_config(
        read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/compare/" + c.native, kMaxConfigFileBytes).value());
    ASSERT_TRUE(native.ok()) << native.error().message();
    EXPECT_EQ(hf.model.hidden_size, native.value().hidden_size);
    EXPECT_EQ(hf.model.vocab_size, native.value().vocab_size);
    EXPECT_TRUE(hf.model.layers == native.value().layers);
  }
}

// What the Qwen3.5 import refuses rather than miscounts.
TEST(HfModelTypesTest, Qwen35RefusesWhatItDoesNotCount) {
  const std::string head = R"({"model_type": "qwen3_5_text", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
    "linear_conv_kernel_dim": 4, "full_attention_interval": 4, "intermediate_size": 128, )";
  const struct {
    std::string config, message;
  } cases[] = {
      {head + R"("attn_output_gate": false})",
       "attn_output_gate = false: only the gated attention of the releases is counted"},
      {head + R"("mlp_only_layers": [1]})",
       "mlp_only_layers = [1]: must be empty: every layer has the same channel mixer"},
      {head + R"("num_experts": 8})",
       "num_experts = 8: not a field trainflops knows for model_type \"qwen3_5_text\", so it cannot tell whether it "
       "changes FLOPs (docs/hf-import.md lists the known fields)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.message);
    const Result<HfImport> import = import_hf_config(c.config, UnknownFields::kRejected);
    ASSERT_FALSE(import.ok());
    EXPECT_EQ(import.error().message(), c.message);
  }
}

// Kimi Linear 48B-A3B: Kimi Delta Attention on the 20 layers linear_attn_config
// lists (1-based), MLA on the other 7; the first layer dense. Its parameters,
// summed by hand from the release's sizes (h 2304, P = 32 x 128 = 4096):
// MLA h 32 (128 + 64) + h (512 + 64) + 512 x 32 x 256 + 32 x 128 h = 29,114,368;
// KDA 4 h P + 32 h + 2 x 128 (h + P) + 3 x 4 P = 39,554,304 (both gates of rank
// head_dim); MoE 257 x 3 h 1024 + 256 h = 1,819,607,040 (active 9 x 3 h 1024 +
// 256 h = 64,290,816); the dense layer 3 h 9216 = 63,700,992. The decoder:
// 7 MLA + 20 KDA + 26 MoE + 1 dense = 48,367,484,928 weights (active
// 2,729,263,104), the model card's 48B and 3B; with the norms and scalars,
// 213,120 more: two RMSNorms of h per layer (124,416), the MLA layers' KV LoRA
// norm (7 x 512), and per KDA layer A per head and the forget gate's bias per
// channel (32 + 4096) and the gated output norm (128).
TEST(HfModelTypesTest, KimiLinearCountsItsDeltaAttentionLayers) {
  const Result<HfImport> import =
      import_hf_config(read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/kimi-linear-48b-a3b.json",
                                       kMaxConfigFileBytes)
                           .value());
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  EXPECT_TRUE(import.value().unknown.empty());
  EXPECT_EQ(summarize(model),
            "kimi_linear: 27 layers (1 kda+mlp, 19 kda+moe, 7 mla+moe), hidden 2304, vocab 163840");
  // Layers 4, 8, ..., 24 and 27 (1-based) are MLA.
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const bool mla = (i + 1) % 4 == 0 || i + 1 == 27;
    EXPECT_EQ(std::holds_alternative<MlaAttention>(*model.layers[i].mixer), mla) << i;
  }
  EXPECT_EQ(*model.layers[0].mixer, Mixer(KimiDeltaAttention{32, 128, 4, 128, 128}));
  EXPECT_EQ(*model.layers[3].mixer, Mixer(MlaAttention{32, std::nullopt, 512, 128, 64, 128, false}));
  const ModelParameters parameters = count_parameters(model).value();
  // The products, norms and scalars, and each of the 26 MoE layers' router
  // bias of 256 (e_score_correction_bias), which every token uses.
  EXPECT_EQ(to_decimal(parameters.decoder.total), std::to_string(48367698048 + 26 * 256));
  EXPECT_EQ(to_decimal(parameters.decoder.active), std::to_string(2729476224 + 26 * 256));
}

// Kimi K3 wraps the same text model (model_type kimi_linear) in text_config,
// with a full-rank KDA output gate, an MLA output gate and latent experts.
TEST(HfModelTypesTest, KimiK3sTextModelHasItsGates) {
  const Result<HfImport> import = import_hf_config(R"({"model_type": "kimi_k3", "vision_config": {},
    "text_config": {"model_type": "kimi_linear", "hidden_size": 64, "num_hidden_layers": 3, "vocab_size": 100,
      "num_attention_heads": 2, "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2,
      "v_head_dim": 4, "mla_use_nope": true, "mla_use_output_gate": true, "intermediate_size": 96,
      "first_k_dense_replace": 1, "moe_layer_freq": 1, "num_experts": 8, "num_experts_per_token": 2,
      "num_shared_experts": 2, "moe_intermediate_size": 12, "routed_expert_hidden_size": 32,
      "latent_moe_use_norm": true, "attn_res_block_size": 2, "num_nextn_predict_layers": 0,
      "linear_attn_config": {"kda_layers": [1, 2], "full_attn_layers": [3], "num_heads": 2, "head_dim": 8,
        "short_conv_kernel_size": 4, "gate_lower_bound": -5.0, "use_full_rank_gate": true}}})");
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  EXPECT_EQ(*model.layers[0].mixer, Mixer(KimiDeltaAttention{2, 8, 4, 8, std::nullopt}));
  EXPECT_EQ(*model.layers[2].mixer, Mixer(MlaAttention{2, 16, 8, 4, 2, 4, true}));
  EXPECT_EQ(std::get<Moe>(*model.layers[1].channel_mixer), (Moe{8, 2, 12, 24, 32, true}));
  EXPECT_EQ(model.attention_residuals, AttentionResiduals{2});
  // The latent experts' norm (latent_moe_use_norm): 32 on each of the 2 MoE layers.
  ASSERT_TRUE(model.parameter_layout.latent_expert_norm);
  Model without_norm = model;
  without_norm.parameter_layout.latent_expert_norm = false;
  EXPECT_EQ(to_decimal(count_parameters(model).value().decoder.total -
                       count_parameters(without_norm).value().decoder.total),
            "64");
  ASSERT_GE(import.value().assumed.size(), 1u);
  EXPECT_EQ(import.value().assumed[0],
            "chunk_size = 64: the config does not say in what chunks training runs the delta rule; executed mode "
            "counts flash-linear-attention's chunk_kda at its default (give another with the native config's "
            "chunk_size)");
  for (const std::string& note : import.value().assumed) EXPECT_EQ(note.find("attn_res"), std::string::npos) << note;
}

// moonshotai/Kimi-K3's config.json as released: kimi_k3 around a kimi_linear
// text model with DeepSeek-style grouped routing (topk_method noaux_tc).
TEST(HfModelTypesTest, KimiK3ImportsFromItsRelease) {
  const HfImport import = imported(release_config("kimi-k3.json"));
  if (import.model.layers.empty()) return;
  EXPECT_TRUE(import.unknown.empty());
  EXPECT_EQ(summarize(import.model),
            "kimi_k3: 93 layers (1 kda+mlp, 68 kda+moe, 24 mla+moe), hidden 7168, vocab 163840");
  EXPECT_EQ(*import.model.layers[3].mixer, Mixer(MlaAttention{96, 1536, 512, 128, 64, 128, true}));
  EXPECT_EQ(std::get<Moe>(*import.model.layers[1].channel_mixer), (Moe{896, 16, 3072, 2 * 3072, 3584, true}));
}

TEST(HfModelTypesTest, KimiLinearLayerListsMustCoverTheLayers) {
  const std::string head = R"({"model_type": "kimi_linear", "hidden_size": 64, "num_hidden_layers": 3,
    "vocab_size": 100, "num_attention_heads": 2, "q_lora_rank": null, "kv_lora_rank": 8, "qk_nope_head_dim": 4,
    "qk_rope_head_dim": 2, "v_head_dim": 4, "first_k_dense_replace": 0, "num_experts": 8,
    "num_experts_per_token": 2, "num_shared_experts": 1, "moe_intermediate_size": 12,
    "linear_attn_config": {"num_heads": 2, "head_dim": 8, "short_conv_kernel_size": 4, )";
  const struct {
    std::string lists, message;
  } cases[] = {
      {R"("kda_layers": [1, 2], "full_attn_layers": [2, 3]})",
       "linear_attn_config.full_attn_layers = [2,3]: with kda_layers must name every layer once; layer 2 is in both"},
      {R"("kda_layers": [0, 1]})",
       "linear_attn_config.kda_layers = [0,1]: must hold layer numbers from 1 to num_hidden_layers = 3 (they count "
       "from 1)"},
      {R"("full_attn_layers": [3]})",
       "linear_attn_config.kda_layers is missing: required for model_type \"kimi_linear\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.lists);
    const Result<HfImport> import = import_hf_config(head + c.lists + "}");
    ASSERT_FALSE(import.ok());
    EXPECT_EQ(import.error().message(), c.message);
  }
}

// DeepSeek-V4.1-Flash: the layer roles of its CSA2 attention, and the
// parameters its model card publishes: 552B in the backbone and 196B in the
// two Engram tables, 16B activated per token. Expected, from the shapes:
// per layer attention 5120 x 1280 + 1280 x 64 x 512 + 5120 x 512 + 64 x 512 x
// 1024 + 8 x 1024 x 5120, norms 1280 + 512 and 64 sinks; MoE 385 experts of
// 3 x 5120 x 2304 and a 384-wide router; mHC 2 x 4 x 5120 x 24; two input
// norms. Compressors: 3 x (2 x 5120 x 512 + 512) + (5120 x 512 + 512).
// Indexers: 8 x (1280 x 32 x 128 + 5120 x 32) + 4 x (512 x 128 + 128).
// Engram: 2 x 6144 x 5 x 5120 weights, (384006168 + 384016682) x 256 table rows.
TEST(HfModelTypesTest, DeepSeekV41SharesItsCachesAndSelections) {
  const Result<HfImport> import = import_hf_config(
      read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/deepseek-v4.1-flash.json", kMaxConfigFileBytes).value());
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  EXPECT_TRUE(import.value().unknown.empty());
  EXPECT_EQ(summarize(model), "deepseek_v41: 40 layers (2 csa2-window+moe, 38 csa2+moe), hidden 5120, vocab 129280");
  using Role = SharedCompressedAttention::CandidateRole;
  const auto attention = [&](std::size_t i) { return std::get<SharedCompressedAttention>(*model.layers[i].mixer); };
  for (std::size_t i = 0; i < 40; ++i) {
    SCOPED_TRACE(i);
    const SharedCompressedAttention a = attention(i);
    EXPECT_EQ(a.compress_ratio, i < 2 ? 0 : i < 20 ? 2 : 1);
    EXPECT_EQ(a.writes_cache, i == 2 || i == 8 || i == 14 || i == 20);
    const bool indexes = i == 2 || i == 8 || i == 14 || (i >= 20 && i % 4 == 0);
    EXPECT_EQ(a.runs_indexer, indexes);
    EXPECT_EQ(a.candidate_role, i == 20 ? Role::kSource : indexes && i > 20 ? Role::kConsumer : Role::kNone);
    EXPECT_EQ(model.layers[i].ngram_memory.has_value(), i == 1 || i == 14);
  }
  EXPECT_EQ(attention(24), (SharedCompressedAttention{64, 512, 1280, 8, 1024, 128, 1, false, true, 32, 128, 512,
                                                      Role::kConsumer, 2048, 8}));
  // 3 orders x 8 heads x 256 looked up; 384016682 rows of 256 in layer 14's table.
  EXPECT_EQ(*model.layers[14].ngram_memory, (NgramMemory{6144, 4, 0, 98308270592}));
  EXPECT_EQ(model.hyper_connections, (HyperConnections{HyperConnections::Variant::kManifold, 4, 0}));
  EXPECT_NE(std::find(import.value().assumed.begin(), import.value().assumed.end(),
                      "num_nextn_predict_layers and dspark_*: DeepSeek-V4.1's DSpark draft blocks are a separately "
                      "trained speculative decoder with their own experts, not counted"),
            import.value().assumed.end());
  const ModelParameters parameters = count_parameters(model).value();
  // 550.6B + 196.6B of tables, and mHC's static parameters: 24 biases and 3
  // scales in each of the 40 layers' 2 sublayers.
  EXPECT_EQ(to_decimal(parameters.decoder.total), std::to_string(747170737664 + 80 * (24 + 3)));
  EXPECT_EQ(to_decimal(parameters.decoder.active), std::to_string(15468555264 + 80 * (24 + 3)));
}

// Each layer that reads a cache needs a source of its ratio at or before it.
TEST(HfModelTypesTest, DeepSeekV41SourcesMustServeTheirLayers) {
  const std::string head = R"({"model_type": "deepseek_v41_text", "hidden_size": 16, "vocab_size": 40,
    "num_hidden_layers": 4, "num_attention_heads": 2, "head_dim": 8, "q_lora_rank": 6, "o_groups": 2,
    "o_lora_rank": 4, "sliding_window": 4, "index_n_heads": 2, "index_head_dim": 4, "index_topk": 3,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8, "n_shared_experts": 1, )";
  const struct {
    std::string fields, message;
  } cases[] = {
      {R"("compress_ratios": [0, 2, 2, 1], "kv_source_layer_ids": [1], "index_source_layer_ids": [1, 3]})",
       "text_config.kv_source_layer_ids = 3: must list a layer at or before layer 3 with compress ratio 1 (the last "
       "listed, layer 1, has 2)"},
      {R"("compress_ratios": [0, 2, 2, 2], "kv_source_layer_ids": [0, 1], "index_source_layer_ids": [1]})",
       "text_config.kv_source_layer_ids = 0: lists layer 0, whose compress_ratios entry is 0 (no cache)"},
      {R"("compress_ratios": [0, 2, 2, 2], "kv_source_layer_ids": [2], "index_source_layer_ids": [1]})",
       "text_config.kv_source_layer_ids = 1: must list a layer at or before layer 1 with compress ratio 2"},
      {R"("compress_ratios": [0, 2], "kv_source_layer_ids": [1], "index_source_layer_ids": [1]})",
       "text_config.compress_ratios: the list has 2 entries; it must have at least num_hidden_layers = 4"},
      {R"("compress_ratios": [0, 2, 2, 2], "kv_source_layer_ids": [1], "index_source_layer_ids": [1],
          "candidate_source_layer_id": 2, "candidate_topk_blocks": 4, "candidate_block_size": 2})",
       "text_config.candidate_source_layer_id = 2: must be an index source (index_source_layer_ids), or -1 for none"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fields);
    const Result<HfImport> import =
        import_hf_config(R"({"model_type": "deepseek_v41", "text_config": )" + head + c.fields + "}");
    ASSERT_FALSE(import.ok());
    EXPECT_EQ(import.error().message(), c.message);
  }
}

// Qwen3.8-Flash-Next: QSA on every fourth layer, gated delta nets on the
// others, PLE on layer 2, and the parameters its model card publishes: 125B
// besides the 51.2B n-gram tables, 6B activated. Expected, from the shapes:
// QSA 2560 x (2 x 6144 + 2 x 512) + 6144 x 2560 and its indexer 2560 x 5 x 128
// with two norms of 128; the gated delta net 2560 x 16480 + 4 x 10240 + 6144 x
// 2560, 96 per-head scalars and a norm of 128; per layer 512 + 1 experts of 3 x
// 2560 x 640, a 512-wide router and the shared gate, two hyper-connections of 2
// x 10240 x 320 + 10240 x 4 and two norms; PLE 2560 x 12800 + 4 x 10240 and a
// table of 20000000 x 2560.
TEST(HfModelTypesTest, Qwen38AttendsIndexedBlocks) {
  const Result<HfImport> import = import_hf_config(
      read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/qwen3.8-flash-next.json", kMaxConfigFileBytes).value());
  ASSERT_TRUE(import.ok()) << import.error().message();
  const Model& model = import.value().model;
  EXPECT_TRUE(import.value().unknown.empty());
  EXPECT_EQ(summarize(model),
            "qwen4_exp: 48 layers (36 gdn+moe, 12 qsa+moe) + 1 MTP depth, hidden 2560, vocab 248320");
  const auto& sparse = std::get<CompressedBlockSparseAttention>(*model.layers[3].mixer);
  EXPECT_EQ(sparse, (CompressedBlockSparseAttention{GqaAttention{24, 2, 256, true}, 4, 1, 128, 4, 2048}));
  EXPECT_TRUE(model.layers[1].ngram_memory.has_value());
  EXPECT_EQ(*model.layers[1].ngram_memory, (NgramMemory{2560, 4, 4, 51200000000}));
  EXPECT_EQ(model.hyper_connections, (HyperConnections{HyperConnections::Variant::kGatedResidual, 4, 320}));
  const ModelParameters parameters = count_parameters(model).value();
  EXPECT_EQ(to_decimal(parameters.decoder.total), "175664917376");  // 124.5B + 51.2B of tables
  EXPECT_EQ(to_decimal(parameters.decoder.active), "6028258176");
}

TEST(HfModelTypesTest, SaysWhatItCannotCount) {
  const struct {
    std::string config, message;
  } cases[] = {
      {R"({"model_type": "llava", "text_config": {"model_type": "vicuna"}})",
       "model_type = \"llava\": not supported, nor is its text_config's \"vicuna\" (supported: "
       "deepseek_v2, deepseek_v3, deepseek_v32, deepseek_v4, deepseek_v41_text, gemma3, gemma3_text, gemma4_text, "
       "glm4_moe, glm4_moe_lite, glm_moe_dsa, gpt_oss, kimi_k2, kimi_linear, llama, llama4_text, longcat_flash, minimax_m2, "
       "minimax_m3, mistral, mistral4, mixtral, nemotron_h, qwen2, qwen3, qwen3_5_moe_text, qwen3_5_text, "
       "qwen3_moe, qwen3_next, qwen4_exp_text, step3p5)"},
      {R"({"model_type": "llava", "text_config": {"hidden_size": 8}})",
       "model_type = \"llava\": not supported, and its text_config names no model_type (supported: deepseek_v2, "
       "deepseek_v3, deepseek_v32, deepseek_v4, deepseek_v41_text, gemma3, gemma3_text, gemma4_text, glm4_moe, "
       "glm4_moe_lite, glm_moe_dsa, gpt_oss, kimi_k2, kimi_linear, llama, llama4_text, longcat_flash, minimax_m2, minimax_m3, "
       "mistral, mistral4, mixtral, nemotron_h, qwen2, qwen3, qwen3_5_moe_text, qwen3_5_text, qwen3_moe, "
       "qwen3_next, qwen4_exp_text, step3p5)"},
      {[] {
         std::string lightning = kMiniMaxM2;
         lightning.replace(lightning.find("[1, 1"), 2, "[0");
         return lightning;
       }(),
       "attn_type_list[0] = 0: only softmax attention (1) is counted; lightning attention (0) is not"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.config.substr(0, 80));
    const Result<HfImport> import = import_hf_config(c.config);
    ASSERT_FALSE(import.ok());
    EXPECT_EQ(import.error().message(), c.message);
  }
}

// Presets read from a release count as its config does, in every mode
// (GLM-5.1's release is the GLM-5 architecture).
TEST(HfModelTypesTest, PresetsEqualTheirReleaseConfigs) {
  const struct {
    const char* preset;
    Model release;
  } cases[] = {
      {"glm-5", read_hf_config(std::string(TRAINFLOPS_TEST_DATA) + "/hf/glm-5.1.json").value()},
      {"nemotron-3-nano-30b-a3b",
       read_hf_config(std::string(TRAINFLOPS_TEST_DATA) + "/hf/nemotron-3-nano-30b-a3b.json").value()},
      {"kimi-k2", imported(kKimiK2).model},
      {"kimi-linear-48b-a3b", read_hf_config(std::string(TRAINFLOPS_TEST_DATA) + "/hf/kimi-linear-48b-a3b.json").value()},
      {"minimax-m2", imported(kMiniMaxM2).model},
  };
  for (const auto& c : cases) {
    const Model preset = preset_model(find_preset(c.preset).value()).value();
    for (const Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
      SCOPED_TRACE(std::string(c.preset) + ", " + std::string(mode_name(mode)));
      const Flops from_release = count(c.release, PackedDocuments{{4096, 100000, 7}}, mode).value().total;
      const Flops from_preset = count(preset, PackedDocuments{{4096, 100000, 7}}, mode).value().total;
      EXPECT_EQ(from_release.value, from_preset.value);
      if (from_release.exact) {
        EXPECT_EQ(to_decimal(*from_release.exact), to_decimal(*from_preset.exact));
      }
    }
  }
}

}  // namespace
}  // namespace trainflops
