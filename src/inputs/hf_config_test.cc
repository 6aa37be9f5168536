#include "trainflops/hf_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "trainflops/count.h"
#include "trainflops/int128.h"
#include "trainflops/megatron_args.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

// --- Release configs ---------------------------------------------------------
// The config.json files of public checkpoints, with their published values
// (sources: each model's Hugging Face repository; the same values appear in
// Transformers' and Megatron-Bridge's tests).

// "a", 3 -> "a, a, a": the long per-layer lists of some configs.
std::string repeated(const std::string& entry, int times) {
  std::string list;
  for (int i = 0; i < times; ++i) list += (i ? ", " : "") + entry;
  return list;
}

// meta-llama/Llama-3.1-8B
const std::string kLlama31_8B = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": false,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0", "use_cache": true, "vocab_size": 128256})";

// mistralai/Mistral-7B-v0.1
const std::string kMistral7B = R"({
  "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 32768,
  "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.34.0.dev0", "use_cache": true, "vocab_size": 32000})";

// mistralai/Mixtral-8x7B-v0.1
const std::string kMixtral8x7B = R"({
  "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32, "num_experts_per_tok": 2,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": false,
  "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.36.0.dev0",
  "use_cache": true, "vocab_size": 32000})";

// Qwen/Qwen2-7B
const std::string kQwen2_7B = R"({
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
  "intermediate_size": 18944, "max_position_embeddings": 131072, "max_window_layers": 28, "model_type": "qwen2",
  "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.37.2", "use_cache": true, "use_sliding_window": false, "vocab_size": 152064})";

// Qwen/Qwen3-8B, saved with its hub name.
const std::string kQwen3_8B = R"({
  "_name_or_path": "Qwen/Qwen3-8B",
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 12288, "max_position_embeddings": 40960,
  "max_window_layers": 36, "model_type": "qwen3", "num_attention_heads": 32, "num_hidden_layers": 36,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
  "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// Qwen/Qwen3-235B-A22B
const std::string kQwen3_235B = R"({
  "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 128,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12288,
  "max_position_embeddings": 40960, "max_window_layers": 94, "mlp_only_layers": [], "model_type": "qwen3_moe",
  "moe_intermediate_size": 1536, "norm_topk_prob": true, "num_attention_heads": 64, "num_experts": 128,
  "num_experts_per_tok": 8, "num_hidden_layers": 94, "num_key_value_heads": 4, "output_router_logits": false,
  "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
  "sliding_window": null, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// Qwen/Qwen3-Next-80B-A3B-Instruct
const std::string kQwen3Next80B = R"({
  "architectures": ["Qwen3NextForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "decoder_sparse_step": 1, "eos_token_id": 151645, "full_attention_interval": 4, "head_dim": 256,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5120,
  "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
  "linear_num_value_heads": 32, "linear_value_head_dim": 128, "max_position_embeddings": 262144,
  "mlp_only_layers": [], "model_type": "qwen3_next", "moe_intermediate_size": 512, "mtp_num_hidden_layers": 1,
  "norm_topk_prob": true,
  "num_attention_heads": 16, "num_experts": 512, "num_experts_per_tok": 10, "num_hidden_layers": 48,
  "num_key_value_heads": 2, "output_router_logits": false, "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06,
  "rope_scaling": null, "rope_theta": 10000000, "router_aux_loss_coef": 0.001,
  "shared_expert_intermediate_size": 512, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.57.0.dev0", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

// deepseek-ai/DeepSeek-V3 and DeepSeek-V3.2-Exp share every value but the
// model type and the indexer's.
const std::string kDeepSeekV3Sizes = R"(
  "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1,
  "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168, "initializer_range": 0.02,
  "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
  "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256,
  "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 128, "num_experts_per_tok": 8,
  "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
  "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                          "weight_block_size": [128, 128]},
  "rms_norm_eps": 1e-06,
  "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                   "original_max_position_embeddings": 4096, "type": "yarn"},
  "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": false,
  "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "transformers_version": "4.44.2",
  "use_cache": true, "v_head_dim": 128, "vocab_size": 129280)";

// deepseek-ai/DeepSeek-V3
const std::string kDeepSeekV3 =
    R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",)" + kDeepSeekV3Sizes + "}";

// deepseek-ai/DeepSeek-V3.2-Exp
const std::string kDeepSeekV32 = R"({"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
  "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048,)" +
                                 kDeepSeekV3Sizes + "}";

// A glm_moe_dsa config with GLM-5's sizes (zai-org/GLM-5, as Transformers'
// GlmMoeDsaConfig documents them) and GLM-5.2's index sharing: the indexer
// runs on layers 1-3, then every 4th (7, 11, ..., 75).
const std::string kGlm5 = R"({
  "architectures": ["GlmMoeDsaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "dtype": "bfloat16", "eos_token_id": [154820, 154827, 154829], "first_k_dense_replace": 3, "head_dim": 192,
  "hidden_act": "silu", "hidden_size": 6144, "index_head_dim": 128, "index_n_heads": 32,
  "index_share_for_mtp_iteration": true, "index_skip_topk_offset": 3, "index_topk": 2048,
  "index_topk_freq": 4, "index_topk_pattern": null, "indexer_rope_interleave": true,
  "intermediate_size": 12288, "kv_lora_rank": 512, "max_position_embeddings": 202752,
  "mlp_layer_types": ["dense", "dense", "dense", )" +
                          repeated(R"("sparse")", 75) + R"(],
  "model_type": "glm_moe_dsa", "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 1,
  "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 64,
  "num_experts_per_tok": 8, "num_hidden_layers": 78, "num_key_value_heads": 64,
  "num_nextn_predict_layers": 1, "pad_token_id": 154820, "q_lora_rank": 2048, "qk_nope_head_dim": 192,
  "qk_rope_head_dim": 64, "rms_norm_eps": 1e-05, "rope_interleave": true,
  "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}, "routed_scaling_factor": 2.5,
  "scoring_func": "sigmoid", "tie_word_embeddings": false, "topk_group": 1, "topk_method": "noaux_tc",
  "transformers_version": "5.0.2.dev0", "use_cache": true, "v_head_dim": 256, "vocab_size": 154880})";

// nvidia/Nemotron-H-8B-Base-8K
const std::string kNemotronH8B = R"({
  "architectures": ["NemotronHForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "attention_head_dim": 128,
  "auto_map": {"AutoConfig": "configuration_nemotron_h.NemotronHConfig",
               "AutoModelForCausalLM": "modeling_nemotron_h.NemotronHForCausalLM"},
  "bos_token_id": 1, "chunk_size": 128, "conv_kernel": 4, "eos_token_id": 2, "expand": 2, "hidden_act": "relu2",
  "hidden_dropout": 0.0, "hidden_size": 4096,
  "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
  "initializer_range": 0.02, "intermediate_size": 21504, "layer_norm_epsilon": 1e-05, "mamba_head_dim": 64,
  "mamba_hidden_act": "silu", "mamba_num_heads": 128, "mamba_proj_bias": false, "max_position_embeddings": 8192,
  "mlp_bias": false, "mlp_hidden_act": "relu2", "model_type": "nemotron_h", "n_groups": 8,
  "num_attention_heads": 32, "num_hidden_layers": 52, "num_key_value_heads": 8, "num_logits_to_keep": 1,
  "pad_token_id": 0, "rescale_prenorm_residual": true, "residual_in_fp32": false, "rms_norm_eps": 1e-05,
  "ssm_state_size": 128, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.48.0.dev0", "use_bias": false, "use_cache": true, "use_conv_bias": true,
  "use_mamba_kernels": true, "vocab_size": 131072})";

// openai/gpt-oss-120b
const std::string kGptOss120B = R"({
  "architectures": ["GptOssForCausalLM"], "attention_bias": true, "attention_dropout": 0.0,
  "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880,
  "initial_context_length": 4096, "initializer_range": 0.02, "intermediate_size": 2880,
  "layer_types": [)" + repeated(R"("sliding_attention", "full_attention")", 18) +
                                R"(],
  "max_position_embeddings": 131072, "model_type": "gpt_oss", "num_attention_heads": 64,
  "num_experts_per_tok": 4, "num_hidden_layers": 36, "num_key_value_heads": 8, "num_local_experts": 128,
  "output_router_logits": false, "pad_token_id": 199999,
  "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                     "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                   "rope_type": "yarn", "truncate": false},
  "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
  "tie_word_embeddings": false, "transformers_version": "4.55.0.dev0", "use_cache": true, "vocab_size": 201088})";

// google/gemma-3-27b-it: the text model's vocab_size and sliding-window
// pattern are not in the file (Transformers supplies 262208 and 6).
const std::string kGemma3_27B = R"({
  "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999, "eoi_token_index": 256000,
  "eos_token_id": [1, 106], "image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256,
  "model_type": "gemma3",
  "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
                  "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
                  "query_pre_attn_scalar": 168, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                  "sliding_window": 1024},
  "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
  "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                    "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                    "patch_size": 14, "vision_use_head": false}})";

// deepseek-ai/DeepSeek-V4-Flash: compress_ratios has one entry per decoder
// layer and one for the MTP layer.
const std::string kDeepSeekV4Flash = R"({
  "architectures": ["DeepseekV4ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 0, "eos_token_id": 1, "hidden_act": "silu", "hidden_size": 4096, "model_type": "deepseek_v4",
  "num_hidden_layers": 43, "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512,
  "qk_rope_head_dim": 64, "q_lora_rank": 1024, "o_lora_rank": 1024, "o_groups": 8, "n_routed_experts": 256,
  "n_shared_experts": 1, "num_experts_per_tok": 6, "moe_intermediate_size": 2048,
  "max_position_embeddings": 1048576, "rms_norm_eps": 1e-06, "rope_theta": 10000,
  "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 16, "original_max_position_embeddings": 65536,
                   "type": "yarn"},
  "compress_rope_theta": 160000,
  "compress_ratios": [0, 0, )" + repeated("4, 128", 20) +
                                     R"(, 4, 0],
  "sliding_window": 128, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512, "num_hash_layers": 3,
  "hc_mult": 4, "hc_eps": 1e-06, "hc_sinkhorn_iters": 20, "swiglu_limit": 10.0, "routed_scaling_factor": 1.5,
  "scoring_func": "sqrtsoftplus", "topk_method": "noaux_tc", "norm_topk_prob": true,
  "num_nextn_predict_layers": 1, "expert_dtype": "fp4",
  "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                          "scale_fmt": "ue8m0", "weight_block_size": [128, 128]},
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.57.1", "use_cache": true,
  "vocab_size": 129280})";

Model imported(const std::string& config) {
  Result<Model> model = parse_hf_config(config);
  EXPECT_TRUE(model.ok()) << model.error().message();
  return model.ok() ? model.value() : Model{};
}

// Model-mode FLOPs of one training iteration over one document of `length`
// tokens, exactly.
std::string model_flops(const Model& model, std::int64_t length) {
  const Result<Report> report = count(model, PackedDocuments{{length}}, Mode::kModel);
  return report.ok() ? to_decimal(*report.value().total.exact) : report.error().message();
}

template <typename T>
const T& mixer(const Layer& layer) {
  return std::get<T>(*layer.mixer);
}
template <typename T>
const T& channel_mixer(const Layer& layer) {
  return std::get<T>(*layer.channel_mixer);
}

// Each release config: the layers it becomes and one model-mode count over one
// document of `length` tokens, derived by hand from docs/accounting.md, sections 5-9 (per token,
// forward multiply-adds; training x3, FMA x2: FLOPs = 6 x FMAs; T = length,
// P = L(L+1)/2 causal pairs, window pairs sum min(i, w)). Shorthands:
//   gqa(h,n,g,d) = h(nd + 2gd) + nd h  projections; 2nd per attended pair
//   mlp(h,f) = 3hf gated, 2hf not;  moe(h,f,k,s) = 3hfk + 3hs
//   logits = hV per head; MTP projection 3h + 2h^2 per depth.
struct ReleaseCase {
  std::string release;
  std::string config;
  std::string summary;
  MegatronPath path;
  std::int64_t length;
  std::string flops;
  std::function<void(const Model&)> check;  // sizes of a few layers
};

TEST(HfConfigTest, ReleaseConfigsBecomeTheirLayers) {
  const std::vector<ReleaseCase> cases = {
      // 6 [4 (32 (gqa(4096,32,8,128) + mlp(4096,14336)) + 4096 x 128256) + 10 x 32 x 2 x 4096]
      {"Llama-3.1-8B", kLlama31_8B, "llama: 32 layers (32 gqa+mlp), hidden 4096, vocab 128256", MegatronPath::kStandard,
       4, "180127531008",
       [](const Model& m) {
         const auto& a = mixer<GqaAttention>(m.layers[0]);
         EXPECT_EQ(a.num_heads, 32);
         EXPECT_EQ(a.num_query_groups, 8);
         EXPECT_EQ(a.head_dim, 128);  // hidden_size / num_attention_heads
         EXPECT_EQ(channel_mixer<DenseMlp>(m.layers[31]).ffn_hidden_size, 14336);
         EXPECT_TRUE(channel_mixer<DenseMlp>(m.layers[31]).gated);
       }},
      // 6 [4100 (32 (gqa + mlp) + 4096 x 32000) + 32 x 2 x 4096 x (4096 x 4097 / 2 + 4 x 4096)]: the
      // window of 4096 keys binds for the last 4 queries.
      {"Mistral-7B-v0.1", kMistral7B, "mistral: 32 layers (32 swa+mlp), hidden 4096, vocab 32000",
       MegatronPath::kStandard, 4100, "188138819420160",
       [](const Model& m) { EXPECT_EQ(mixer<GqaAttention>(m.layers[17]).window, 4096); }},
      // 6 [4 (32 (gqa(4096,32,8,128) + moe(4096,14336,2,0)) + 4096 x 32000) + 10 x 32 x 2 x 4096]
      {"Mixtral-8x7B", kMixtral8x7B, "mixtral: 32 layers (32 gqa+moe), hidden 4096, vocab 32000",
       MegatronPath::kStandard, 4, "305956651008",
       [](const Model& m) {
         const auto& e = channel_mixer<Moe>(m.layers[0]);
         EXPECT_EQ(e.num_experts, 8);
         EXPECT_EQ(e.topk, 2);
         EXPECT_EQ(e.expert_ffn_hidden_size, 14336);
         EXPECT_FALSE(e.shared_expert_ffn_hidden_size);
         EXPECT_FALSE(mixer<GqaAttention>(m.layers[0]).window);  // sliding_window: null
       }},
      // 6 [4 (28 (gqa(3584,28,4,128) + mlp(3584,18944)) + 3584 x 152064) + 10 x 28 x 2 x 3584];
      // use_sliding_window is false, so sliding_window = 131072 changes nothing.
      {"Qwen2-7B", kQwen2_7B, "qwen2: 28 layers (28 gqa+mlp), hidden 3584, vocab 152064", MegatronPath::kStandard, 4,
       "169698902016", [](const Model& m) { EXPECT_EQ(mixer<GqaAttention>(m.layers[27]).head_dim, 128); }},
      // 6 [4 (36 (gqa(4096,32,8,128) + mlp(4096,12288)) + 4096 x 151936) + 10 x 36 x 2 x 4096]
      {"Qwen3-8B", kQwen3_8B, "Qwen/Qwen3-8B: 36 layers (36 gqa+mlp), hidden 4096, vocab 151936",
       MegatronPath::kStandard, 4, "181652029440", [](const Model& m) { EXPECT_EQ(m.name, "Qwen/Qwen3-8B"); }},
      // 6 [4 (94 (gqa(4096,64,4,128) + moe(4096,1536,8,0)) + 4096 x 151936) + 10 x 94 x 2 x 8192]
      {"Qwen3-235B-A22B", kQwen3_235B, "qwen3_moe: 94 layers (94 gqa+moe), hidden 4096, vocab 151936",
       MegatronPath::kStandard, 4, "516532862976",
       [](const Model& m) {
         const auto& e = channel_mixer<Moe>(m.layers[93]);
         EXPECT_EQ(e.num_experts, 128);
         EXPECT_EQ(e.topk, 8);
         EXPECT_EQ(e.expert_ffn_hidden_size, 1536);
         EXPECT_EQ(mixer<GqaAttention>(m.layers[0]).num_heads * *mixer<GqaAttention>(m.layers[0]).head_dim, 8192);
       }},
      // Layers 4, 8, ..., 48 full attention with an output gate, the rest gated delta nets:
      // gdn = 2048 (2 x 2048 + 2 x 4096 + 2 x 32) + 4 (2 x 2048 + 4096) + 4 x 32 x 128^2 + 2048 x 4096,
      // gated gqa = 2048 (4096 + 2 x 512 + 4096) + 4096 x 2048, moe(2048,512,10,512) on every layer:
      // one MTP depth of gated gqa + moe:
      // 6 [4 (36 gdn + 13 gqa + 49 moe + (3 x 2048 + 2 x 2048^2) + 2 x 2048 x 151936) + 10 x 13 x 2 x 4096]
      {"Qwen3-Next-80B-A3B", kQwen3Next80B,
       "qwen3_next: 48 layers (36 gdn+moe, 12 gqa+moe) + 1 MTP depth, hidden 2048, vocab 151936",
       MegatronPath::kStandard, 4, "95287492608",
       [](const Model& m) {
         const auto& a = mixer<GqaAttention>(m.layers[3]);
         EXPECT_TRUE(a.output_gate);
         EXPECT_EQ(a.head_dim, 256);
         const auto& g = mixer<GatedDeltaNet>(m.layers[0]);
         EXPECT_EQ(g.variant, GatedDeltaNet::Variant::kGdn);
         EXPECT_EQ(g.num_value_heads, 32);
         EXPECT_EQ(g.conv_kernel_dim, 4);
         EXPECT_EQ(channel_mixer<Moe>(m.layers[0]).shared_expert_ffn_hidden_size, 512);
         EXPECT_TRUE(mixer<GqaAttention>(m.mtp_depths.at(0)[0]).output_gate);
       }},
      // mla = 1536 (7168 + 128 (128 + 64) + 1) + 512 (7168 + 128 (128 + 128) + 1) + 7168 x 64 + 128 x 128 x 7168,
      // core = 128 (128 + 64) + 128 x 128 per pair, moe(7168,2048,8,2048):
      // 6 [4 (61 mla + 3 mlp(7168,18432) + 58 moe + (3 x 7168 + 2 x 7168^2) + mla + moe + 2 x 7168 x 129280)
      //    + 10 x 62 core]
      {"DeepSeek-V3", kDeepSeekV3,
       "deepseek_v3: 61 layers (3 mla+mlp, 58 mla+moe) + 1 MTP depth, hidden 7168, vocab 129280",
       MegatronPath::kStandard, 4, "915301687296",
       [](const Model& m) {
         const auto& a = mixer<MlaAttention>(m.layers[0]);
         EXPECT_EQ(a.q_lora_rank, 1536);
         EXPECT_EQ(a.qk_head_dim, 128);
         EXPECT_EQ(a.qk_pos_emb_head_dim, 64);
         EXPECT_EQ(channel_mixer<Moe>(m.mtp_depths[0][0]).shared_expert_ffn_hidden_size, 2048);
       }},
      // DeepSeek-V3 plus the indexer on all 62 layers, forward only (grad mode off; top-2048 attends every
      // pair of 4 tokens): + 2 x 62 [4 (1536 x 64 x 128 + 7168 x 128 + 7168 x 64) + 10 x 64 x 128]
      {"DeepSeek-V3.2-Exp", kDeepSeekV32,
       "deepseek_v32: 61 layers (3 dsa+mlp, 58 dsa+moe) + 1 MTP depth, hidden 7168, vocab 129280",
       MegatronPath::kStandard, 4, "922235592704",
       [](const Model& m) {
         const auto& d = mixer<DsaAttention>(m.layers[60]);
         EXPECT_EQ(d.indexer.num_heads, 64);
         EXPECT_EQ(d.indexer.topk, 2048);
         EXPECT_EQ(d.indexer.grad_mode, DsaIndexer::GradMode::kOff);
         EXPECT_TRUE(d.runs_indexer);
       }},
      // As DeepSeek-V3 with GLM-5's sizes (mla(6144,64,2048,512,192,64,256), core 64 (192 + 64) + 64 x 256,
      // 3 mlp(6144,12288), 75 moe(6144,2048,8,2048), vocab 154880) and the indexer on 21 + 1 layers:
      // + 2 x 22 [4 (2048 x 32 x 128 + 6144 x 128 + 6144 x 32) + 10 x 32 x 128]
      {"GLM-5", kGlm5,
       "glm_moe_dsa: 78 layers (3 dsa+mlp, 57 dsa-shared+moe, 18 dsa+moe) + 1 MTP depth, hidden 6144, vocab "
       "154880",
       MegatronPath::kStandard, 4, "998167695360",
       [](const Model& m) {
         EXPECT_TRUE(mixer<DsaAttention>(m.layers[6]).runs_indexer);  // layer 7
         EXPECT_FALSE(mixer<DsaAttention>(m.layers[7]).runs_indexer);
         EXPECT_TRUE(mixer<DsaAttention>(m.mtp_depths[0][0]).runs_indexer);
         EXPECT_EQ(mixer<DsaAttention>(m.layers[0]).mla.v_head_dim, 256);
       }},
      // Mamba: d = 128 x 64, 4096 (2d + 2 x 8 x 128 + 128) + d x 4096 multiply-adds and a 7 d x 128 FLOPs
      // scan; attention gqa(4096,32,8,128); MLP 2 x 4096 x 21504 (squared ReLU, not gated):
      // 6 [4 (24 mamba + 4 gqa + 24 mlp + 4096 x 131072) + 10 x 4 x 2 x 4096] + 3 x 4 x 24 x 7 d x 128
      {"Nemotron-H-8B", kNemotronH8B, "nemotron_h: 52 layers (24 mamba2, 24 mlp, 4 gqa), hidden 4096, vocab 131072",
       MegatronPath::kHybrid, 4, "183611817984",
       [](const Model& m) {
         const auto& s = mixer<Mamba2>(m.layers[0]);
         EXPECT_EQ(s.inner_dim, 8192);
         EXPECT_EQ(s.num_heads, 128);
         EXPECT_EQ(s.num_groups, 8);
         EXPECT_EQ(s.state_dim, 128);
         EXPECT_EQ(mixer<GqaAttention>(m.layers[7]).head_dim, 128);  // attention_head_dim
         EXPECT_FALSE(channel_mixer<DenseMlp>(m.layers[1]).gated);
       }},
      // 130 tokens, so the 128-key window binds on the 18 sliding layers:
      // 6 [130 (36 (gqa(2880,64,8,64) + moe(2880,2880,4,0)) + 2880 x 201088)
      //    + (18 (128 x 129 / 2 + 2 x 128) + 18 x 130 x 131 / 2) x 2 x 4096]
      {"gpt-oss-120b", kGptOss120B, "gpt_oss: 36 layers (18 swa+moe, 18 gqa+moe), hidden 2880, vocab 201088",
       MegatronPath::kStandard, 130, "4006971113472",
       [](const Model& m) {
         EXPECT_EQ(mixer<GqaAttention>(m.layers[0]).window, 128);
         EXPECT_FALSE(mixer<GqaAttention>(m.layers[1]).window);
         const auto& e = channel_mixer<Moe>(m.layers[0]);
         EXPECT_EQ(e.num_experts, 128);
         EXPECT_EQ(e.topk, 4);
         EXPECT_TRUE(e.gated);
       }},
      // Every 6th layer global, the others a 1024-key window; 1030 tokens so that it binds:
      // 6 [1030 (62 (gqa(5376,32,16,128) + mlp(5376,21504)) + 5376 x 262208)
      //    + (52 (1024 x 1025 / 2 + 6 x 1024) + 10 x 1030 x 1031 / 2) x 2 x 4096]
      {"Gemma-3-27B", kGemma3_27B, "gemma3: 62 layers (52 swa+mlp, 10 gqa+mlp), hidden 5376, vocab 262208",
       MegatronPath::kStandard, 1030, "168527411183616",
       [](const Model& m) {
         EXPECT_EQ(mixer<GqaAttention>(m.layers[4]).window, 1024);
         EXPECT_FALSE(mixer<GqaAttention>(m.layers[5]).window);
         EXPECT_EQ(mixer<GqaAttention>(m.layers[61]).window, 1024);
       }},
      // Per layer, projections 1024 (4096 + 64 x 512 + 1) + (4096 x 512 + 512) + (64 x 512 x 1024 +
      // 8 x 1024 x 4096), moe(4096,2048,6,2048), 2 x 64 x 512 per attended key: the window's
      // (sum min(i, 128)); CSA adds the compressor 4 x 4096 x 512, the indexer projections
      // 4 x 4096 x 128 + 1024 x 64 x 128 + 4096 x 64, its selected entries sum min(512, floor(i/4)) and
      // 2 x 64 x 128 per compressed entry sum floor(i/4); HCA the compressor 2 x 4096 x 512 and
      // sum floor(i/128) entries. 300 tokens; kinds [0, 0, (4, 128) x 20, 4] and the MTP layer's 0;
      // + MTP projection + 2 logits heads. mHC over hc_mult = 4 streams (nh = 16384): per sublayer
      // 16384 x 24 + 2 x 16384 + 4 x 16384 = 491520, 2 per layer on 44 layers; per head 16384 x 4 + 16384.
      {"DeepSeek-V4-Flash", kDeepSeekV4Flash,
       "deepseek_v4: 43 layers (2 window+moe, 21 csa+moe, 20 hca+moe) + 1 MTP depth, hidden 4096, vocab 129280",
       MegatronPath::kStandard, 300, "25982921883648",
       [](const Model& m) {
         const auto& c = mixer<CompressedSparseAttention>(m.layers[2]);
         EXPECT_EQ(c.kind, CompressedSparseAttention::Kind::kCsa);
         EXPECT_EQ(c.head_dim, 512);
         EXPECT_EQ(c.window, 128);
         EXPECT_EQ(c.o_groups, 8);
         EXPECT_EQ(c.indexer_num_heads, 64);
         EXPECT_EQ(c.topk, 512);
         EXPECT_EQ(mixer<CompressedSparseAttention>(m.mtp_depths[0][0]).kind, CompressedSparseAttention::Kind::kWindow);
         EXPECT_EQ(channel_mixer<Moe>(m.layers[0]).shared_expert_ffn_hidden_size, 2048);
       }},
  };
  for (const ReleaseCase& c : cases) {
    SCOPED_TRACE(c.release);
    const Model model = imported(c.config);
    if (model.layers.empty()) continue;
    EXPECT_EQ(summarize(model), c.summary);
    EXPECT_EQ(model.megatron_path, c.path);
    EXPECT_FALSE(model.megatron_seq_length);
    EXPECT_EQ(model_flops(model, c.length), c.flops);
    c.check(model);
  }
}

// The same model given as Megatron-LM arguments (as Megatron-Bridge maps the
// checkpoint; vocabulary padded equally) counts the same in both modes.
TEST(HfConfigTest, MatchesTheEquivalentMegatronArgs) {
  struct Case {
    std::string release, config, args;
  };
  const std::string glm_moe_layer_freq = "[0, 0, 0, " + repeated("1", 75) + "]";
  const std::vector<Case> cases = {
      {"Llama-3.1-8B", kLlama31_8B, R"({
         "num_layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "num_attention_heads": 32,
         "group_query_attention": true, "num_query_groups": 8, "kv_channels": 128, "swiglu": true,
         "padded_vocab_size": 128256})"},
      {"DeepSeek-V3", kDeepSeekV3,
       R"({
         "num_layers": 61, "hidden_size": 7168, "ffn_hidden_size": 18432, "num_attention_heads": 128,
         "multi_latent_attention": true, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128,
         "qk_pos_emb_head_dim": 64, "v_head_dim": 128, "num_experts": 256,
         "moe_layer_freq": [0, 0, 0, )" +
           repeated("1", 58) + R"(], "moe_router_topk": 8,
         "moe_ffn_hidden_size": 2048, "moe_shared_expert_intermediate_size": 2048, "mtp_num_layers": 1,
         "swiglu": true, "padded_vocab_size": 129280})"},
      {"DeepSeek-V3.2-Exp", kDeepSeekV32,
       R"({
         "num_layers": 61, "hidden_size": 7168, "ffn_hidden_size": 18432, "num_attention_heads": 128,
         "multi_latent_attention": true, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128,
         "qk_pos_emb_head_dim": 64, "v_head_dim": 128, "num_experts": 256,
         "moe_layer_freq": [0, 0, 0, )" +
           repeated("1", 58) + R"(], "moe_router_topk": 8,
         "moe_ffn_hidden_size": 2048, "moe_shared_expert_intermediate_size": 2048, "mtp_num_layers": 1,
         "swiglu": true, "padded_vocab_size": 129280, "experimental_attention_variant": "dsa",
         "dsa_indexer_n_heads": 64, "dsa_indexer_head_dim": 128, "dsa_indexer_topk": 2048})"},
      {"GLM-5", kGlm5,
       R"({
         "num_layers": 78, "hidden_size": 6144, "ffn_hidden_size": 12288, "num_attention_heads": 64,
         "multi_latent_attention": true, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_head_dim": 192,
         "qk_pos_emb_head_dim": 64, "v_head_dim": 256, "swiglu": true, "padded_vocab_size": 154880,
         "num_experts": 256, "moe_layer_freq": )" +
           glm_moe_layer_freq + R"(, "moe_router_topk": 8,
         "moe_ffn_hidden_size": 2048, "moe_shared_expert_intermediate_size": 2048, "mtp_num_layers": 1,
         "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 32, "dsa_indexer_head_dim": 128,
         "dsa_indexer_topk": 2048, "dsa_indexer_topk_freq": 4, "dsa_indexer_skip_topk_offset": 3})"},
      {"Qwen3-Next-80B-A3B", kQwen3Next80B,
       R"({
         "num_layers": 48, "hidden_size": 2048, "ffn_hidden_size": 5120, "num_attention_heads": 16,
         "group_query_attention": true, "num_query_groups": 2, "kv_channels": 256, "attention_output_gate": true,
         "swiglu": true, "padded_vocab_size": 151936, "num_experts": 512, "moe_layer_freq": 1,
         "moe_router_topk": 10, "moe_ffn_hidden_size": 512, "moe_shared_expert_intermediate_size": 512,
         "experimental_attention_variant": "gated_delta_net", "mtp_num_layers": 1,
         "linear_attention_freq": [)" +
           repeated("1, 1, 1, 0", 12) +
           R"(, 0], "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16,
         "linear_num_value_heads": 32, "linear_conv_kernel_dim": 4})"},
      {"Nemotron-H-8B", kNemotronH8B, R"({
         "num_layers": 52, "hidden_size": 4096, "ffn_hidden_size": 21504, "num_attention_heads": 32,
         "group_query_attention": true, "num_query_groups": 8, "kv_channels": 128, "padded_vocab_size": 131072,
         "hybrid_layer_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
         "mamba_state_dim": 128, "mamba_head_dim": 64, "mamba_num_groups": 8, "mamba_num_heads": 128})"},
      {"DeepSeek-V4-Flash", kDeepSeekV4Flash,
       R"({
         "num_layers": 43, "hidden_size": 4096, "num_attention_heads": 64, "multi_latent_attention": true,
         "q_lora_rank": 1024, "kv_lora_rank": 512, "qk_head_dim": 448, "qk_pos_emb_head_dim": 64,
         "v_head_dim": 512, "experimental_attention_variant": "dsv4_hybrid",
         "csa_compress_ratios": [0, 0, )" +
           repeated("4, 128", 20) + R"(, 4, 0], "o_groups": 8, "o_lora_rank": 1024,
         "csa_window_size": 128, "dsa_indexer_n_heads": 64, "dsa_indexer_head_dim": 128, "dsa_indexer_topk": 512,
         "num_experts": 256, "moe_layer_freq": 1, "moe_router_topk": 6, "moe_ffn_hidden_size": 2048,
         "moe_shared_expert_intermediate_size": 2048, "mtp_num_layers": 1, "swiglu": true,
         "padded_vocab_size": 129280, "enable_hyper_connections": true, "num_residual_streams": 4})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.release);
    const Model from_hf = imported(c.config);
    const Result<ParsedMegatronArgs> args = parse_megatron_args_json(c.args);
    ASSERT_TRUE(args.ok()) << args.error().message();
    const Result<Model> from_args = model_from_megatron_args(args.value().args);
    ASSERT_TRUE(from_args.ok()) << from_args.error().message();
    for (const auto& [mode, workload] : {std::pair<Mode, Workload>{Mode::kMegatron, Bshd{8, 4096}},
                                         std::pair<Mode, Workload>{Mode::kModel, PackedDocuments{{3000, 129, 1}}}}) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      const Result<Report> hf = count(from_hf, workload, mode);
      const Result<Report> megatron = count(from_args.value(), workload, mode);
      ASSERT_TRUE(hf.ok()) << hf.error().message();
      ASSERT_TRUE(megatron.ok()) << megatron.error().message();
      EXPECT_EQ(hf.value().total.value, megatron.value().total.value);
      EXPECT_EQ(hf.value().total.exact, megatron.value().total.exact);
    }
  }
}

// openai/gpt-oss-120b's checkpoint holds 116,829,156,672 parameters (the
// Hub's safetensors.total; the model card's 116.83B): the biases of every
// projection, the router's and the experts', and a sink per head included.
TEST(HfConfigTest, GptOssCountsItsCheckpoint) {
  const Result<HfImport> oss = import_hf_config(kGptOss120B);
  ASSERT_TRUE(oss.ok()) << oss.error().message();
  EXPECT_EQ(to_decimal(count_parameters(oss.value().model).value().total().total), "116829156672");
}

// No config says in what chunks training runs the gated delta net's delta
// rule: the import takes chunk_gated_delta_rule's default and says so.
TEST(HfConfigTest, GatedDeltaNetImportAssumesTheKernelsChunkSize) {
  const Result<HfImport> next = import_hf_config(kQwen3Next80B);
  ASSERT_TRUE(next.ok()) << next.error().message();
  EXPECT_EQ(next.value().assumed,
            (std::vector<std::string>{
                "chunk_size = 64: the config does not say in what chunks training runs the delta rule; executed "
                "mode counts flash-linear-attention's chunk_gated_delta_rule at its default (give another with the "
                "native config's chunk_size)"}));
  EXPECT_EQ(mixer<GatedDeltaNet>(next.value().model.layers[0]).chunk_size, 64);
}

// What a gemma3 config leaves out is assumed and said; what does not change
// FLOPs is listed by path, nested objects first.
TEST(HfConfigTest, ReportsAssumedAndIgnoredFields) {
  const Result<HfImport> gemma = import_hf_config(kGemma3_27B);
  ASSERT_TRUE(gemma.ok()) << gemma.error().message();
  EXPECT_EQ(gemma.value().assumed,
            (std::vector<std::string>{
                "text_config.vocab_size = 262208 (absent; Transformers' Gemma3TextConfig default)",
                "text_config.sliding_window_pattern = 6 (absent; Transformers' Gemma3TextConfig default: every 6th "
                "layer attends globally, the others a sliding window)"}));
  EXPECT_EQ(gemma.value().ignored,
            (std::vector<std::string>{"text_config.query_pre_attn_scalar", "text_config.rope_scaling", "architectures",
                                      "boi_token_index", "eoi_token_index", "eos_token_id", "image_token_index",
                                      "initializer_range", "mm_tokens_per_image", "torch_dtype", "transformers_version",
                                      "vision_config"}));
  const Result<HfImport> qwen = import_hf_config(kQwen2_7B);
  ASSERT_TRUE(qwen.ok()) << qwen.error().message();
  EXPECT_TRUE(qwen.value().assumed.empty());
  EXPECT_EQ(qwen.value().ignored,
            (std::vector<std::string>{"architectures", "attention_dropout", "bos_token_id", "eos_token_id",
                                      "hidden_act", "initializer_range", "max_position_embeddings", "max_window_layers",
                                      "rms_norm_eps", "rope_theta", "sliding_window",
                                      "torch_dtype", "transformers_version", "use_cache"}));
}

// Which layers run their own indexer (F) and which reuse the previous top-k
// (S), on an 8-layer glm_moe_dsa model with one MTP depth (always F: it is
// layer 1 of its depth).
TEST(HfConfigTest, IndexSharing) {
  const std::string base = R"("model_type": "glm_moe_dsa", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 8, "num_attention_heads": 2, "q_lora_rank": 16, "kv_lora_rank": 8,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8, "intermediate_size": 128,
    "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
    "first_k_dense_replace": 1, "num_nextn_predict_layers": 1, "index_n_heads": 2, "index_head_dim": 8,
    "index_topk": 16)";
  struct Case {
    std::string fields, runs;
  };
  const std::vector<Case> cases = {
      {"", "FFFFFFFF"},
      {R"("index_topk_freq": 1, "index_skip_topk_offset": 2)", "FFFFFFFF"},
      // max(j - 3, 0) mod 4 == 0: layers 1-3, 7
      {R"("index_topk_freq": 4, "index_skip_topk_offset": 3)", "FFFSSSFS"},
      // max(j - max(offset, 1), 0) mod 2: an offset of 0 counts as 1, so layer 1 runs
      {R"("index_topk_freq": 2, "index_skip_topk_offset": 0)", "FSFSFSFS"},
      {R"("index_topk_freq": 2, "index_skip_topk_offset": 1)", "FSFSFSFS"},
      {R"("index_topk_pattern": "FFSSFSSS")", "FFSSFSSS"},
      {R"("index_topk_pattern": ["full", "shared", "shared", "full", "full", "full", "shared", "full"])", "FSSFFFSF"},
      // indexer_types comes first, as in Transformers
      {R"("indexer_types": ["full", "full", "full", "full", "shared", "shared", "shared", "shared"],
          "index_topk_pattern": "FSSSSSSS", "index_topk_freq": 2, "index_skip_topk_offset": 1)",
       "FFFFSSSS"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fields);
    const Model model = imported("{" + base + (c.fields.empty() ? "" : ", " + c.fields) + "}");
    if (model.layers.empty()) continue;
    std::string runs;
    for (const Layer& layer : model.layers) runs += mixer<DsaAttention>(layer).runs_indexer ? 'F' : 'S';
    EXPECT_EQ(runs, c.runs);
    EXPECT_TRUE(mixer<DsaAttention>(model.mtp_depths[0][0]).runs_indexer);
  }
}

// The layers that attend a window, for each way a config says it.
TEST(HfConfigTest, SlidingWindowLayers) {
  const std::string sizes = R"("hidden_size": 64, "vocab_size": 100, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128)";
  struct Case {
    std::string config;
    std::string windows;  // per layer: the window or "-"
  };
  const std::vector<Case> cases = {
      {R"("model_type": "qwen2", "use_sliding_window": false, "sliding_window": 16, "max_window_layers": 2)",
       "- - - -"},
      {R"("model_type": "qwen2", "use_sliding_window": true, "sliding_window": 16, "max_window_layers": 2)",
       "- - 16 16"},
      {R"("model_type": "qwen3", "use_sliding_window": true, "sliding_window": 16, "max_window_layers": 0)",
       "16 16 16 16"},
      {R"("model_type": "qwen3", "use_sliding_window": true, "sliding_window": 16, "max_window_layers": 3,
          "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"])",
       "16 - 16 -"},
      {R"("model_type": "mistral", "sliding_window": 32)", "32 32 32 32"},
      {R"("model_type": "mistral", "sliding_window": null)", "- - - -"},
      {R"("model_type": "gemma3_text", "head_dim": 16, "sliding_window": 8, "sliding_window_pattern": 2)", "8 - 8 -"},
      {R"("model_type": "gemma3_text", "head_dim": 16, "sliding_window": 8, "sliding_window_pattern": 2,
          "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"])",
       "- 8 8 -"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    const Model model = imported("{" + sizes + ", " + c.config + "}");
    if (model.layers.empty()) continue;
    std::string windows;
    for (const Layer& layer : model.layers) {
      const auto& window = mixer<GqaAttention>(layer).window;
      windows += (windows.empty() ? "" : " ") + (window ? std::to_string(*window) : "-");
    }
    EXPECT_EQ(windows, c.windows);
  }
}

// Qwen's MoE layer pattern and DeepSeek's dense-first layers.
TEST(HfConfigTest, DenseAndMoeLayers) {
  const std::string qwen = R"("model_type": "qwen3_moe", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 8, "num_experts_per_tok": 2)";
  const std::string deepseek = R"("model_type": "deepseek_v3", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 6, "num_attention_heads": 2, "q_lora_rank": null, "kv_lora_rank": 8,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8, "intermediate_size": 128,
    "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 0)";
  struct Case {
    std::string config, kinds;  // per layer: M (MoE) or D (dense)
  };
  const std::vector<Case> cases = {
      {qwen + R"(, "decoder_sparse_step": 1)", "MMMMMM"},
      {qwen + R"(, "decoder_sparse_step": 2)", "DMDMDM"},
      {qwen + R"(, "decoder_sparse_step": 1, "mlp_only_layers": [0, 5])", "DMMMMD"},
      {deepseek + R"(, "first_k_dense_replace": 2)", "DDMMMM"},
      {deepseek + R"(, "first_k_dense_replace": 1, "moe_layer_freq": 2)", "DDMDMD"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    const Model model = imported("{" + c.config + "}");
    if (model.layers.empty()) continue;
    std::string kinds;
    for (const Layer& layer : model.layers) kinds += std::holds_alternative<Moe>(*layer.channel_mixer) ? 'M' : 'D';
    EXPECT_EQ(kinds, c.kinds);
  }
  // q_lora_rank null: queries from the hidden state; n_shared_experts 0: no shared expert.
  const Model model = imported("{" + deepseek + R"(, "first_k_dense_replace": 0})");
  if (model.layers.empty()) return;
  EXPECT_FALSE(mixer<MlaAttention>(model.layers[0]).q_lora_rank);
  EXPECT_FALSE(channel_mixer<Moe>(model.layers[0]).shared_expert_ffn_hidden_size);
}

// DeepSeek-V4's attention kinds from its two config formats.
TEST(HfConfigTest, DeepSeekV4AttentionKinds) {
  const std::string base = R"("model_type": "deepseek_v4", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 3, "num_attention_heads": 2, "head_dim": 16, "q_lora_rank": 8, "o_groups": 2,
    "o_lora_rank": 8, "sliding_window": 4, "index_n_heads": 2, "index_head_dim": 8, "index_topk": 4,
    "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1)";
  struct Case {
    std::string fields, kinds;  // decoder layers, then "/" and each MTP depth
  };
  const std::vector<Case> cases = {
      {R"("compress_ratios": [0, 4, 128])", "window csa hca"},
      {R"("compress_ratios": [128, 4, 0], "num_nextn_predict_layers": 1)", "hca csa window / window"},
      {R"("compress_ratios": [128, 4, 0, 4], "num_nextn_predict_layers": 1)", "hca csa window / csa"},
      {R"("layer_types": ["sliding_attention", "heavily_compressed_attention", "compressed_sparse_attention"],
          "compress_rates": {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128},
          "mlp_layer_types": ["hash_moe", "moe", "moe"])",
       "window hca csa"},
      {R"("compress_ratios": [0, 128, 4],
          "layer_types": ["sliding_attention", "heavily_compressed_attention", "compressed_sparse_attention"])",
       "window hca csa"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fields);
    const Model model = imported("{" + base + ", " + c.fields + "}");
    if (model.layers.empty()) continue;
    std::string kinds;
    for (const Layer& layer : model.layers) kinds += (kinds.empty() ? "" : " ") + mixer_kind(*layer.mixer);
    for (const auto& depth : model.mtp_depths) kinds += " / " + mixer_kind(*depth[0].mixer);
    EXPECT_EQ(kinds, c.kinds);
  }
}

// A release config with `key` set to `value` (a JSON text), or removed
// when `value` is empty.
std::string with(const std::string& config, const std::string& key, const std::string& value) {
  nlohmann::json object = nlohmann::json::parse(config);
  if (value.empty()) {
    object.erase(key);
  } else {
    object[key] = nlohmann::json::parse(value);
  }
  return object.dump();
}

// Every message an importer gives, exactly.
TEST(HfConfigTest, Errors) {
  const std::string supported =
      "deepseek_v2, deepseek_v3, deepseek_v32, deepseek_v4, deepseek_v41_text, gemma3, gemma3_text, gemma4_text, "
      "glm4_moe, glm4_moe_lite, "
      "glm_moe_dsa, gpt_oss, kimi_k2, kimi_linear, llama, llama4_text, longcat_flash, minimax_m2, minimax_m3, mistral, "
      "mistral4, mixtral, nemotron_h, qwen2, qwen3, qwen3_5_moe_text, qwen3_5_text, qwen3_moe, qwen3_next, qwen4_exp_text, "
      "step3p5";
  const std::string tiny_glm = R"({"model_type": "glm_moe_dsa", "hidden_size": 64, "vocab_size": 100,
    "num_hidden_layers": 4, "num_attention_heads": 2, "q_lora_rank": 16, "kv_lora_rank": 8,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 8, "intermediate_size": 128,
    "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
    "first_k_dense_replace": 1, "index_n_heads": 2, "index_head_dim": 8, "index_topk": 16})";
  struct Case {
    std::string config, message;
  };
  const std::vector<Case> cases = {
      {"{",
       "not valid JSON (line 1, column 2: syntax error while parsing object key - unexpected end of input; "
       "expected string literal)"},
      {"{\"a\": \"[[[\", \"b\":\n" + std::string(100, '[') + std::string(100, ']') + "}",
       "not valid JSON: nested deeper than 100 levels (line 2, column 100)"},
      {"[1, 2]", "the config = [1,2]: must be a JSON object"},
      {"{}", "model_type is missing: config.json names its architecture there (supported: " + supported + ")"},
      {R"({"model_type": "phi3"})", "model_type = \"phi3\": not supported (supported: " + supported + ")"},
      {R"({"model_type": 3})", "model_type = 3: must be a string"},
      {with(kLlama31_8B, "num_hidden_layers", ""), "num_hidden_layers is missing: required for model_type \"llama\""},
      {with(kLlama31_8B, "hidden_size", R"("4096")"), "hidden_size = \"4096\": must be a positive integer"},
      {with(kLlama31_8B, "vocab_size", "0"), "vocab_size = 0: must be a positive integer"},
      {with(kLlama31_8B, "num_key_value_heads", "5"), "num_key_value_heads = 5: must divide num_attention_heads = 32"},
      {with(with(kLlama31_8B, "hidden_size", "4000"), "num_attention_heads", "3"),
       "head_dim is missing: required when hidden_size = 4000 is not a multiple of num_attention_heads = 3"},
      {with(kLlama31_8B, "attention_chunk_size", "8192"),
       "attention_chunk_size = 8192: not a field trainflops knows for model_type \"llama\", so it cannot tell "
       "whether it changes FLOPs (docs/hf-import.md lists the known fields)"},
      // Values are shown up to 60 characters, longer ones cut to 57 and "...".
      {with(kLlama31_8B, "pretraining_config", "\"" + std::string(58, 'x') + "\""),
       "pretraining_config = \"" + std::string(58, 'x') +
           "\": not a field trainflops knows for "
           "model_type \"llama\", so it cannot tell whether it changes FLOPs (docs/hf-import.md lists the known "
           "fields)"},
      {with(kLlama31_8B, "pretraining_config",
            R"({"layers": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]})"),
       "pretraining_config = {\"layers\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,1...: not a field trainflops "
       "knows "
       "for model_type \"llama\", so it cannot tell whether it changes FLOPs (docs/hf-import.md lists the known "
       "fields)"},
      {with(kMistral7B, "sliding_window", "0"), "sliding_window = 0: must be a positive integer"},
      {with(kMistral7B, "num_hidden_layers", "100001"),
       "num_hidden_layers = 100001: must be at most 100000 (trainflops describes every layer; published models have a "
       "few hundred)"},
      {with(kQwen3Next80B, "mtp_num_hidden_layers", "100001"),
       "mtp_num_hidden_layers = 100001: must be at most 100000 (trainflops describes every layer; published models "
       "have a few hundred)"},
      {with(kMixtral8x7B, "num_experts_per_tok", "9"),
       "num_experts_per_tok = 9: must not exceed num_local_experts = 8"},
      {with(with(kQwen2_7B, "use_sliding_window", "true"), "max_window_layers", ""),
       "max_window_layers is missing: required when use_sliding_window is true"},
      {with(kQwen3_8B, "layer_types", R"([)" + repeated(R"("sliding_attention")", 36) + "]"),
       "layer_types[0] = \"sliding_attention\": needs a sliding window, but use_sliding_window is false"},
      {with(kQwen3_8B, "layer_types", R"(["full_attention"])"),
       "layer_types: the list has 1 entries; it must have num_hidden_layers = 36"},
      {with(kQwen3_235B, "decoder_sparse_step", ""),
       "decoder_sparse_step is missing: required for model_type \"qwen3_moe\""},
      {with(kQwen3_235B, "mlp_only_layers", "[3, 94]"),
       "mlp_only_layers[1] = 94: must be a layer index from 0 to num_hidden_layers - 1 = 93"},
      {with(kQwen3Next80B, "full_attention_interval", ""),
       "full_attention_interval is missing: required when layer_types is absent"},
      {with(kQwen3Next80B, "linear_num_value_heads", "null"),
       "linear_num_value_heads is missing: required for model_type \"qwen3_next\""},
      {with(kGptOss120B, "layer_types",
            R"(["sliding_attention", "full_attention", "sliding_attention", "chunked_attention"])"),
       "layer_types[3] = \"chunked_attention\": must be one of full_attention, sliding_attention"},
      {with(kGptOss120B, "layer_types", ""), "layer_types is missing: required for model_type \"gpt_oss\""},
      {with(kGptOss120B, "experts_per_token", "5"), "experts_per_token = 5: must equal num_experts_per_tok = 4"},
      {with(kGemma3_27B, "text_config", ""), "text_config is missing: required for model_type \"gemma3\""},
      {R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 64,
          "num_hidden_layers": 2, "vocab_size": 100, "num_attention_heads": 2, "num_key_value_heads": 1,
          "head_dim": 32, "intermediate_size": 128, "sliding_window": 8, "use_bidirectional_attention": true}})",
       "text_config.use_bidirectional_attention = true: bidirectional attention is not counted (trainflops counts "
       "causal decoders)"},
      {R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 64,
          "num_hidden_layers": 2, "vocab_size": 100, "num_attention_heads": 2, "num_key_value_heads": 1,
          "head_dim": 32, "intermediate_size": 128, "sliding_window": 8, "altup_num_inputs": 4}})",
       "text_config.altup_num_inputs = 4: not a field trainflops knows for model_type \"gemma3\", so it cannot tell "
       "whether it changes FLOPs (docs/hf-import.md lists the known fields)"},
      {with(kDeepSeekV3, "q_lora_rank", ""),
       "q_lora_rank is missing: required for model_type \"deepseek_v3\" (null when queries are projected without a "
       "LoRA)"},
      {with(kDeepSeekV3, "first_k_dense_replace", ""),
       "first_k_dense_replace is missing: required for model_type \"deepseek_v3\""},
      {with(kDeepSeekV32, "index_topk", ""), "index_topk is missing: required for model_type \"deepseek_v32\""},
      {with(tiny_glm, "index_topk_freq", "4"), "index_skip_topk_offset is missing: required when index_topk_freq > 1"},
      {with(tiny_glm, "index_topk_pattern", R"("FSXS")"),
       "index_topk_pattern = \"FSXS\": 'X' at position 2 is neither F (full: runs the indexer) nor S (shared)"},
      {with(tiny_glm, "index_topk_pattern", R"("FSS")"),
       "index_topk_pattern: the list has 3 entries; it must have num_hidden_layers = 4"},
      {with(tiny_glm, "indexer_types", R"(["shared", "full", "full", "full"])"),
       "indexer_types = [\"shared\",\"full\",\"full\",\"full\"]: the first layer must run its indexer: it has no "
       "earlier top-k to reuse"},
      {with(tiny_glm, "indexer_types", R"(["full", "full", "sparse", "full"])"),
       "indexer_types[2] = \"sparse\": must be one of full, shared"},
      {with(tiny_glm, "mlp_layer_types", R"(["dense", "moe", "sparse", "sparse"])"),
       "mlp_layer_types[1] = \"moe\": must be one of dense, sparse"},
      {with(kDeepSeekV4Flash, "compress_ratios", "[0, 0, 4, 128, 2]"),
       "compress_ratios: the list has 5 entries; it must have num_hidden_layers = 43 or num_hidden_layers + "
       "num_nextn_predict_layers = 44"},
      {with(kDeepSeekV4Flash, "compress_ratios", "[0, 0, 4, 128, 4, 2, " + repeated("0", 38) + "]"),
       "compress_ratios[5] = 2: must be 0 (sliding window only), 4 (CSA) or 128 (HCA)"},
      {with(kDeepSeekV4Flash, "compress_ratios", ""),
       "compress_ratios is missing: required for model_type \"deepseek_v4\", unless layer_types gives the attention "
       "kinds"},
      {with(kDeepSeekV4Flash, "num_key_value_heads", "8"),
       "num_key_value_heads = 8: must be 1: DeepSeek-V4 attends one shared latent key/value"},
      {with(kDeepSeekV4Flash, "first_k_dense_replace", "3"),
       "first_k_dense_replace = 3: must be 0: DeepSeek-V4 has no dense layers"},
      {with(kDeepSeekV4Flash, "layer_types", "[" + repeated(R"("sliding_attention")", 43) + "]"),
       "layer_types[2] = \"sliding_attention\": disagrees with compress_ratios[2] = 4"},
      {with(with(kDeepSeekV4Flash, "compress_ratios", ""), "layer_types",
            "[" + repeated(R"("compressed_sparse_attention")", 43) + "]")
           .insert(1, R"("compress_rates": {"compressed_sparse_attention": 8}, )"),
       "compress_rates.compressed_sparse_attention = 8: trainflops counts compressed_sparse_attention at 4 and "
       "heavily_compressed_attention at 128"},
      {with(kNemotronH8B, "hybrid_override_pattern", R"("M-X")"),
       "hybrid_override_pattern = \"M-X\": 'X' at position 2 is not a layer symbol (M Mamba-2, * attention, - MLP, "
       "E MoE)"},
      {with(kNemotronH8B, "num_hidden_layers", "51"), "num_hidden_layers = 51: the layer pattern has 52 layers"},
      {with(kNemotronH8B, "hybrid_override_pattern", ""),
       "hybrid_override_pattern is missing: required for model_type \"nemotron_h\", unless layers_block_type lists "
       "the layers"},
      {with(kNemotronH8B, "layers_block_type", R"(["mamba", "mlp"])"),
       "layers_block_type = [\"mamba\",\"mlp\"]: disagrees with hybrid_override_pattern = "
       "\"M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-\" (reads as \"M-\")"},
      {with(kNemotronH8B, "attention_head_dim", ""),
       "head_dim is missing: required for attention layers, unless attention_head_dim gives it"},
      {with(kNemotronH8B, "sliding_window", "4096"),
       "sliding_window = 4096: sliding-window attention is not imported for model_type \"nemotron_h\""},
      {with(kNemotronH8B, "num_nextn_predict_layers", "1"),
       "mtp_hybrid_override_pattern is missing: required when num_nextn_predict_layers > 0, unless "
       "mtp_layers_block_type lists the layers"},
      {with(with(kNemotronH8B, "hybrid_override_pattern", R"("M-E")"), "num_hidden_layers", "")
           .insert(1, R"("num_experts_per_tok": 2, )"),
       "n_routed_experts is missing: required for model_type \"nemotron_h\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config.substr(0, 200));
    const Result<Model> model = parse_hf_config(c.config);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().message(), c.message);
  }
}

// Release configs as published (tests/data/hf/, copied verbatim): each
// imports with no field unknown, strict.
TEST(HfConfigTest, ReleaseConfigsImportUnedited) {
  std::size_t configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TRAINFLOPS_TEST_DATA) + "/hf")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const Result<HfImport> imported = read_hf_import(entry.path(), UnknownFields::kRejected);
    ASSERT_TRUE(imported.ok()) << imported.error().message();
    EXPECT_TRUE(imported.value().unknown.empty());
    ++configs;
  }
  EXPECT_GE(configs, 6u);
}

// Python's json module writes floats that are not finite as NaN, Infinity
// and -Infinity (Nemotron-H's time_step_limit): they are numbers, shown as
// written, and never a size.
TEST(HfConfigTest, PythonNonFiniteConstantsAreNumbers) {
  const std::string llama = kLlama31_8B;
  const std::string hidden = "\"hidden_size\": 4096";
  const std::pair<std::string, std::string> cases[] = {
      {"\"hidden_size\": Infinity", "hidden_size = Infinity: must be a positive integer"},
      {"\"hidden_size\": -Infinity", "hidden_size = -Infinity: must be a positive integer"},
      {"\"hidden_size\": NaN", "hidden_size = NaN: must be a positive integer"},
  };
  ASSERT_NE(llama.find(hidden), std::string::npos);
  for (const auto& [field, message] : cases) {
    SCOPED_TRACE(field);
    std::string config = llama;
    config.replace(config.find(hidden), hidden.size(), field);
    const Result<HfImport> imported = import_hf_config(config);
    ASSERT_FALSE(imported.ok());
    EXPECT_EQ(imported.error().message(), message);
  }
  std::string limits = llama;
  limits.insert(1, R"("new_limits": [0.0, Infinity, {"low": -Infinity, "mid": NaN}], )");
  const Result<HfImport> warned = import_hf_config(limits);
  ASSERT_TRUE(warned.ok()) << warned.error().message();
  EXPECT_EQ(warned.value().unknown,
            std::vector<std::string>{"new_limits = [0.0,Infinity,{\"low\":-Infinity,\"mid\":NaN}]: not a field "
                                     "trainflops knows for model_type \"llama\", so it cannot tell whether it "
                                     "changes FLOPs (docs/hf-import.md lists the known fields)"});
}

// A field trainflops does not know: a warning by default (the import goes on,
// naming it), an error when strict; a missing field suggests a misspelt one;
// a stated qk_head_dim must be the sum of its parts.
TEST(HfConfigTest, UnknownFieldsMisspellingsAndConsistency) {
  const std::string unknown = with(kLlama31_8B, "new_field", "3");
  const Result<HfImport> warned = import_hf_config(unknown);
  ASSERT_TRUE(warned.ok()) << warned.error().message();
  const std::string message =
      "new_field = 3: not a field trainflops knows for model_type \"llama\", so it cannot tell whether it changes "
      "FLOPs (docs/hf-import.md lists the known fields)";
  EXPECT_EQ(warned.value().unknown, std::vector<std::string>{message});
  EXPECT_EQ(import_hf_config(unknown, UnknownFields::kRejected).error().message(), message);
  std::string misspelt = with(kLlama31_8B, "num_hidden_layers", "");
  misspelt.insert(1, R"("num_hiden_layers": 32, )");
  EXPECT_EQ(import_hf_config(misspelt).error().message(),
            "num_hidden_layers is missing: required for model_type \"llama\" (the config has num_hiden_layers: a "
            "misspelling?)");
  EXPECT_EQ(import_hf_config(with(kDeepSeekV3, "qk_head_dim", "200")).error().message(),
            "qk_head_dim = 200: must be qk_nope_head_dim + qk_rope_head_dim = 192");
  EXPECT_TRUE(import_hf_config(with(kDeepSeekV3, "qk_head_dim", "192")).ok());
}

// A Nemotron-H pattern with MoE layers, a latent space and MTP depths, from
// layers_block_type (Transformers' current and older words).
TEST(HfConfigTest, NemotronHMoeAndMtp) {
  const Model model = imported(R"({"model_type": "nemotron_h", "hidden_size": 64, "vocab_size": 100,
    "layers_block_type": ["mamba", "moe", "full_attention", "moe", "linear_attention", "mlp"],
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96,
    "mamba_num_heads": 8, "mamba_head_dim": 16, "ssm_state_size": 16, "n_groups": 2, "n_routed_experts": 8,
    "num_experts_per_tok": 2, "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 48,
    "moe_latent_size": 24, "num_nextn_predict_layers": 2, "mtp_hybrid_override_pattern": "*E"})");
  if (model.layers.empty()) return;
  EXPECT_EQ(summarize(model),
            "nemotron_h: 6 layers (2 mamba2, 2 moe, 1 gqa, 1 mlp) + 2 MTP depths, hidden 64, vocab 100");
  EXPECT_EQ(model.megatron_path, MegatronPath::kHybrid);
  const auto& experts = channel_mixer<Moe>(model.layers[1]);
  EXPECT_EQ(experts.latent_size, 24);
  EXPECT_EQ(experts.shared_expert_ffn_hidden_size, 48);
  EXPECT_FALSE(experts.gated);
  EXPECT_EQ(mixer<Mamba2>(model.layers[0]).inner_dim, 128);
  EXPECT_EQ(layer_kind(model.mtp_depths[1][0]) + " " + layer_kind(model.mtp_depths[1][1]), "gqa moe");
}

TEST(HfConfigTest, ReadsFilesAndPrefixesErrorsWithThePath) {
  const std::string dir = testing::TempDir() + "trainflops_hf_" + std::to_string(getpid());
  const std::string good = dir + "_config.json", bad = dir + "_bad.json";
  std::ofstream(good) << kMixtral8x7B;
  std::ofstream(bad) << R"({"model_type": "llama"})";
  const Result<Model> model = read_hf_config(good);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model.value().layers.size(), 32u);
  const Result<Model> missing = read_hf_config(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), bad + ": hidden_size is missing: required for model_type \"llama\"");
  const Result<HfImport> absent = read_hf_import(dir + "_absent.json");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().message(), dir + "_absent.json: cannot open (No such file or directory)");
  EXPECT_EQ(supported_hf_model_types().size(), 31u);
}

}  // namespace
}  // namespace trainflops
