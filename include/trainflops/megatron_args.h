// Megatron-LM's arguments, as its `num_floating_point_operations` reads them
// (the `args` namespace after argument validation), and their translation into
// a model description.
//
// Thread safety: MegatronArgs, ParsedMegatronArgs and LayerFrequency are plain
// values: several threads may read one at once, and a thread that changes one
// must be the only one using it. The functions here keep no state of their own:
// several threads may call them at once, given different objects to change.
#ifndef TRAINFLOPS_MEGATRON_ARGS_H_
#define TRAINFLOPS_MEGATRON_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// An int `f` (every f-th layer) or an explicit 0/1 list, one entry per layer.
using LayerFrequency = std::variant<std::int64_t, std::vector<std::int64_t>>;

// X(type, name): every argument trainflops reads, by Megatron-LM's name (the
// kimi_* fields by Megatron-Bridge's: Megatron-LM has no Kimi Delta Attention).
#define TRAINFLOPS_MEGATRON_ARGS(X)                    \
  X(std::int64_t, num_layers)                          \
  X(std::int64_t, hidden_size)                         \
  X(std::int64_t, ffn_hidden_size)                     \
  X(std::int64_t, num_attention_heads)                 \
  X(bool, group_query_attention)                       \
  X(std::int64_t, num_query_groups)                    \
  X(std::int64_t, kv_channels)                         \
  X(bool, attention_output_gate)                       \
  X(std::vector<std::int64_t>, window_size)            \
  X(LayerFrequency, window_attn_skip_freq)             \
  X(bool, swiglu)                                      \
  X(bool, quick_geglu)                                 \
  X(std::int64_t, padded_vocab_size)                   \
  X(std::int64_t, seq_length)                          \
  X(std::int64_t, num_experts)                         \
  X(LayerFrequency, moe_layer_freq)                    \
  X(std::int64_t, moe_router_topk)                     \
  X(std::int64_t, moe_ffn_hidden_size)                 \
  X(std::int64_t, moe_shared_expert_intermediate_size) \
  X(std::int64_t, moe_latent_size)                     \
  X(std::int64_t, mtp_num_layers)                      \
  X(bool, multi_latent_attention)                      \
  X(std::int64_t, q_lora_rank)                         \
  X(std::int64_t, kv_lora_rank)                        \
  X(std::int64_t, qk_head_dim)                         \
  X(std::int64_t, qk_pos_emb_head_dim)                 \
  X(std::int64_t, v_head_dim)                          \
  X(std::string, experimental_attention_variant)       \
  X(LayerFrequency, linear_attention_freq)             \
  X(std::int64_t, linear_key_head_dim)                 \
  X(std::int64_t, linear_value_head_dim)               \
  X(std::int64_t, linear_num_key_heads)                \
  X(std::int64_t, linear_num_value_heads)              \
  X(std::int64_t, linear_conv_kernel_dim)              \
  X(std::vector<std::int64_t>, kimi_kda_layers)        \
  X(std::int64_t, kimi_linear_num_heads)               \
  X(std::int64_t, kimi_linear_head_dim)                \
  X(std::int64_t, kimi_linear_conv_kernel_size)        \
  X(std::string, hybrid_layer_pattern)                 \
  X(std::int64_t, mamba_state_dim)                     \
  X(std::int64_t, mamba_head_dim)                      \
  X(std::int64_t, mamba_num_groups)                    \
  X(std::int64_t, mamba_num_heads)                     \
  X(std::int64_t, gdp_num_householder)                 \
  X(std::vector<std::string>, spec)                    \
  X(std::int64_t, dsa_indexer_n_heads)                 \
  X(std::int64_t, dsa_indexer_head_dim)                \
  X(std::int64_t, dsa_indexer_topk)                    \
  X(std::int64_t, dsa_indexer_topk_freq)               \
  X(std::int64_t, dsa_indexer_skip_topk_offset)        \
  X(double, dsa_indexer_loss_coeff)                    \
  X(bool, dsa_indexer_use_sparse_loss)                 \
  X(std::string, dsa_indexer_grad_mode)                \
  X(std::int64_t, dsa_kpool_size)                      \
  X(bool, dsa_kpool_tail)                              \
  X(std::vector<std::int64_t>, csa_compress_ratios)    \
  X(std::int64_t, o_groups)                            \
  X(std::int64_t, o_lora_rank)                         \
  X(std::int64_t, csa_window_size)                     \
  X(std::string, normalization)                        \
  X(bool, add_bias_linear)                             \
  X(bool, add_qkv_bias)                                \
  X(bool, qk_layernorm)                                \
  X(bool, untie_embeddings_and_output_weights)         \
  X(std::string, softmax_type)                         \
  X(bool, moe_router_enable_expert_bias)               \
  X(bool, moe_shared_expert_gate)                      \
  X(bool, enable_hyper_connections)                    \
  X(std::int64_t, num_residual_streams)

// Unset members are Megatron's None. Booleans that are unset read as false,
// except dsa_kpool_tail, whose Megatron-LM default is true. The members that
// describe parameters only (normalization, add_bias_linear, add_qkv_bias,
// qk_layernorm, untie_embeddings_and_output_weights, softmax_type,
// moe_router_enable_expert_bias, moe_shared_expert_gate), when unset, read as
// RMSNorm, no biases, no query/key norms, an untied embedding, no sinks, no
// expert bias and no shared-expert gate; flags and a Megatron-LM namespace
// always set them (Megatron-LM's parser defaults: LayerNorm, biases on, a tied
// embedding).
struct MegatronArgs {
#define TRAINFLOPS_DECLARE_ARG(type, name) std::optional<type> name;
  TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_DECLARE_ARG)
#undef TRAINFLOPS_DECLARE_ARG

  // Every argument equal. The scalars are compared first: argument sets of
  // one model family usually share their per-layer lists, which are long.
  bool operator==(const MegatronArgs& other) const;
};

// Calls visit(name, member) for every argument, in declaration order.
template <typename Args, typename Visitor>
void for_each_megatron_arg(Args& args, Visitor&& visit) {
#define TRAINFLOPS_VISIT_ARG(type, name) visit(std::string_view(#name), args.name);
  TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_VISIT_ARG)
#undef TRAINFLOPS_VISIT_ARG
}

// Parses a JSON object of Megatron-LM arguments, e.g. the `args` of a
// reference vector. `null` or an absent key is unset. Keys trainflops does not
// read are accepted and returned in `ignored` (they do not change FLOPs).
struct ParsedMegatronArgs {
  MegatronArgs args;
  std::vector<std::string> ignored;
};
Result<ParsedMegatronArgs> parse_megatron_args_json(std::string_view json_text);

// Which Megatron-LM branch's num_floating_point_operations the model follows
// (docs/accounting.md, 6): its main branch with the DSA FLOPs fix, or its dev
// branch with the same fix. They differ on the hybrid path only: at dev,
// multi_latent_attention makes every attention symbol MLA, `+` is no symbol,
// `D` refuses the DSA variant, and each MTP depth's projection is charged.
enum class MegatronBranch { kMain, kDev };

// "main" or "dev".
std::string_view megatron_branch_name(MegatronBranch branch);

// "main" or "dev"; anything else: 'megatron_branch = "mian": must be main or
// dev; did you mean main?'.
Result<MegatronBranch> parse_megatron_branch(std::string_view text);

// Whether experimental_attention_variant names linear attention, which
// Megatron-LM's standard path places by linear_attention_freq: gdn, gdn2,
// gated_delta_net (gdn's old name) or kda.
bool has_linear_attention_variant(const MegatronArgs& args);

// Builds the model Megatron-LM's accounting sees on `branch`: the standard
// transformer path, or the hybrid path when hybrid_layer_pattern is set (its
// layer count is the pattern's: Megatron-LM's argument validation replaces
// num_layers by it, and its function never reads num_layers there). Fails
// with the field, value and rule for anything Megatron would reject or that
// would make the count meaningless (missing sizes, list lengths, unknown
// variants).
Result<Model> model_from_megatron_args(const MegatronArgs& args, MegatronBranch branch = MegatronBranch::kMain);

}  // namespace trainflops

#endif  // TRAINFLOPS_MEGATRON_ARGS_H_
