// Softmax attention over every earlier key (or a window or chunk of them):
// grouped-query and multi-latent attention.
#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

// Megatron-LM charges windowed and chunked attention as full causal attention.
Statistic attended_pairs(const GqaAttention& a, Convention convention) {
  if (!is_exact(convention)) return kCausalPairs;
  if (a.window) return window_pairs(*a.window);
  if (a.chunk) return chunked_pairs(*a.chunk);
  return kCausalPairs;
}

// How many h x (g head_dim) projections yield the keys and values: 2, 1
// when the keys serve as the values, 0 when the layer reuses an earlier
// layer's. Megatron-LM has neither, so megatron mode counts both.
Int128 key_value_projections(const GqaAttention& a, Convention convention) {
  if (!is_exact(convention)) return 2;
  return a.reuses_key_value ? 0 : a.key_is_value ? 1 : 2;
}

}  // namespace

void append_terms(const GqaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, n = a.num_heads, g = a.num_query_groups;
  const bool counts_gate = a.output_gate && !is_megatron_hybrid(convention);
  // Megatron-LM's function has no term for a per-head gate (its dev branch's
  // head_wise_attn_gate has no argument and no FLOPs).
  const Int128 head_gate = a.head_gate && is_exact(convention) ? n : 0;
  if (!a.head_dim) {
    // Query width h, key/value width h*g/n: fractional in Megatron's count,
    // rounded down in the exact ones.
    const Int128 q = h;
    const Int128 gate = (counts_gate ? q : 0) + head_gate;
    Term projections = trained_gemm(Component::kAttentionProjections, kTokens, h * (q + gate) + q * h);
    if (is_exact(convention)) {
      projections.forward_flops += kFlopsPerFma * h * 2 * (h * g / n);
    } else {
      projections.forward_flops = projections.forward_flops * n + kFlopsPerFma * h * 2 * h * g;
      projections.divisor = n;
    }
    terms.insert(terms.end(),
                 {projections, trained_gemm(Component::kCoreAttention, attended_pairs(a, convention), 2 * q)});
    return;
  }
  const Int128 q = *a.head_dim * n, kv = *a.head_dim * g;
  const Int128 gate = (counts_gate ? q : 0) + head_gate;
  terms.insert(terms.end(), {
                                trained_gemm(Component::kAttentionProjections, kTokens,
                                             h * (q + key_value_projections(a, convention) * kv + gate) + q * h),
                                // QK^T and the product with V, q multiply-adds each per (query, key) pair.
                                trained_gemm(Component::kCoreAttention, attended_pairs(a, convention), 2 * q),
                            });
}

void append_terms(const MlaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, n = a.num_heads;
  const Int128 qk = a.qk_head_dim, rope = a.qk_pos_emb_head_dim, v = a.v_head_dim;
  const Int128 kv_lora = a.kv_lora_rank;
  // The q and kv LoRA norms, as Megatron-LM counts them; they are not products.
  const Int128 norm = is_executed(convention) ? 0 : 1;
  const Int128 query = a.q_lora_rank ? *a.q_lora_rank * (h + n * (qk + rope) + norm) : h * n * (qk + rope);
  const Int128 key_value = kv_lora * (h + n * (qk + v) + norm) + h * rope;
  // Megatron-LM has no MLA output gate, and no framework's estimate counts one.
  const Int128 gate = a.output_gate && is_exact(convention) ? h * n * v : 0;
  const Int128 output = n * v * h + gate;
  terms.insert(terms.end(), {
                                trained_gemm(Component::kAttentionProjections, kTokens, query + key_value + output),
                                trained_gemm(Component::kCoreAttention, kCausalPairs, n * (qk + rope) + n * v),
                            });
}

Terms gqa_attention_terms(const GqaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(a, hidden_size, convention);
}
Terms mla_attention_terms(const MlaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(a, hidden_size, convention);
}

}  // namespace trainflops
