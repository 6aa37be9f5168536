// The importers of hf_config.cc, one per family of Hugging Face model types,
// and what they share. Each reads the fields of its model type from `config`
// (the top-level object; the dispatcher checks the leftover keys afterwards)
// and returns the layers and sizes of the model; docs/hf-import.md describes
// every mapping.
#ifndef TRAINFLOPS_SRC_INPUTS_HF_MODELS_H_
#define TRAINFLOPS_SRC_INPUTS_HF_MODELS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inputs/hf_config_reader.h"
#include "trainflops/megatron_args.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops::hf {

// What an import reports beside the model (see HfImport).
struct Notes {
  std::vector<std::string> ignored;  // of nested objects; the top level's are added last
  std::vector<std::string> assumed;
  std::vector<std::string> unknown;  // of nested objects, likewise
};

using Importer = Result<Model> (*)(Fields& config, Notes& notes);

// The Megatron-LM arguments Megatron-Bridge's provider sets for a config
// (the object the importer read, which accepted it); megatron mode counts
// them (hf_config.h).
using BridgeMapping = MegatronArgs (*)(const json& config);

// qwen3_next, qwen3_5_text, qwen3_5_moe_text: Bridge's Qwen3-Next and Qwen3.5
// providers (hf_bridge_args.cc).
MegatronArgs bridge_args_qwen_hybrid(const json& config);

// llama, mistral, mixtral, qwen2, qwen3, qwen3_moe (hf_transformer_models.cc).
Result<Model> import_transformer(Fields& config, Notes& notes);
// gemma3 (text_config) and gemma3_text (hf_transformer_models.cc).
Result<Model> import_gemma3(Fields& config, Notes& notes);
// gemma4_text (gemma4 through its text_config): sliding and full layers of
// their own widths, keys that are the values, KV sharing, MoE, per-layer
// embeddings (hf_transformer_models.cc).
Result<Model> import_gemma4(Fields& config, Notes& notes);
// gpt_oss (hf_transformer_models.cc).
Result<Model> import_gpt_oss(Fields& config, Notes& notes);
// llama4_text: chunked attention on most layers, interleaved MoE layers with a
// shared expert (hf_transformer_models.cc).
Result<Model> import_llama4_text(Fields& config, Notes& notes);
// minimax_m2: grouped-query attention, MoE on every layer, MTP modules
// (hf_transformer_models.cc).
Result<Model> import_minimax_m2(Fields& config, Notes& notes);
// minimax_m3 (minimax_m3_vl's text_config): grouped-query attention,
// block-sparse on the layers sparse_attention_config names, dense or MoE
// layers by moe_layer_freq, MTP modules (hf_transformer_models.cc).
Result<Model> import_minimax_m3(Fields& config, Notes& notes);
// qwen3_next (hf_transformer_models.cc).
Result<Model> import_qwen3_next(Fields& config, Notes& notes);
// qwen3_5_text and qwen3_5_moe_text, the language models of qwen3_5 and
// qwen3_5_moe: Qwen3-Next's hybrid decoder with a dense MLP or MoE on every
// layer (hf_transformer_models.cc).
Result<Model> import_qwen3_5(Fields& config, Notes& notes);
// qwen4_exp_text: Qwen3.8-Flash-Next's language model (gated delta nets, QSA
// sparse attention, gated residual hyper-connections, per-layer n-gram
// embeddings, MoE), which the release (qwen4_exp) wraps in text_config
// (hf_transformer_models.cc).
Result<Model> import_qwen3_8(Fields& config, Notes& notes);
// deepseek_v2, deepseek_v3, kimi_k2, glm4_moe_lite, mistral4 (DeepSeek-V3's
// architecture; Mistral Small 4's language model), and with DSA
// deepseek_v32, glm_moe_dsa (hf_deepseek_models.cc).
Result<Model> import_deepseek(Fields& config, Notes& notes);
// longcat_flash: LongCat-Flash's shortcut-connected MoE layers, each two MLA
// blocks with a dense FFN and one MoE with zero (identity) experts fed by
// the first attention, imported as two layers: MLA with the MoE whose shared
// expert is the first dense FFN, then MLA with the second
// (hf_deepseek_models.cc).
Result<Model> import_longcat_flash(Fields& config, Notes& notes);
// glm4_moe: grouped-query attention with DeepSeek-style MoE layers and MTP
// (hf_deepseek_models.cc).
Result<Model> import_glm4_moe(Fields& config, Notes& notes);
// deepseek_v4 (hf_deepseek_models.cc).
Result<Model> import_deepseek_v4(Fields& config, Notes& notes);
// deepseek_v41_text: DeepSeek-V4.1's language model (CSA2 attention, mHC,
// Engram, MoE), which the release wraps in text_config (hf_deepseek_models.cc).
Result<Model> import_deepseek_v41(Fields& config, Notes& notes);
// kimi_linear: Kimi Delta Attention on the layers linear_attn_config lists,
// MLA on the others (with an output gate in Kimi K3), DeepSeek-style MoE
// (hf_deepseek_models.cc). Kimi K3 wraps it in text_config.
Result<Model> import_kimi_linear(Fields& config, Notes& notes);
// step3p5: grouped-query attention with a per-head gate, sliding layers of
// their own head count, dense and MoE layers by moe_layers_enum, MTP layers
// (hf_step_models.cc).
Result<Model> import_step3p5(Fields& config, Notes& notes);
// nemotron_h (hf_nemotron_h.cc).
Result<Model> import_nemotron_h(Fields& config, Notes& notes);

// The parameter layout (norms, biases, sinks, router biases, the tied
// embedding) of the model `config` describes, from its fields and its model
// type's defaults, set on `model` (hf_parameter_layout.cc). Errors: a bias
// field the parameter count cannot hold ("attention_bias = true: ...").
Status read_parameter_layout(Fields& config, Model& model);

// --- shared by the importers (hf_config.cc) ---------------------------------

// Grouped-query attention: num_attention_heads; num_key_value_heads, absent
// or null meaning multi-head attention (Transformers' rule); head_dim, absent
// or null meaning hidden_size / num_attention_heads, which must divide. With
// `explicit_sizes`, both must be present (model types whose Transformers
// defaults are constants rather than these derivations).
Result<GqaAttention> grouped_query_attention(Fields& config, std::int64_t hidden_size, bool explicit_sizes);

// num_nextn_predict_layers: the checkpoint's multi-token-prediction depths,
// absent or null meaning none.
Result<std::int64_t> mtp_depth_count(Fields& config);

// The assumption an import of a delta-rule layer states: no config says in
// what chunks training runs the delta rule, so executed mode counts
// `kernel` (flash-linear-attention's) at its default chunk size.
std::string assumed_delta_rule_chunk_size(std::int64_t chunk_size, std::string_view kernel);

// num_experts_per_tok must not exceed the number of experts, `experts_key`.
Status check_topk(const Fields& config, const Moe& moe, std::string_view experts_key);

// "<key>: the list has <size> entries; it must have <rule>".
Error list_length_error(const Fields& config, std::string_view key, std::size_t size, const std::string& rule);

// Layer `index` (0-based) is MoE when it is not in `mlp_only_layers` and
// (index + 1) is a multiple of `sparse_step` (Qwen's decoder_sparse_step).
std::vector<bool> qwen_moe_layers(std::int64_t layers, std::int64_t sparse_step,
                                  const std::vector<std::int64_t>& mlp_only_layers);

}  // namespace trainflops::hf

#endif  // TRAINFLOPS_SRC_INPUTS_HF_MODELS_H_
