// Linear attention with a delta-rule state: the gated delta net, the gated
// delta product and Kimi Delta Attention. Executed mode counts their delta
// rules in the chunked forms training runs, the other modes in the recurrent
// form; megatron mode charges Kimi Delta Attention's gates as Megatron-Bridge
// does.
#include "accounting/layer_terms.h"

namespace trainflops {

void append_terms(const GatedDeltaNet& g, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size;
  const Int128 qk_dim = Int128{g.key_head_dim} * g.num_key_heads;
  const Int128 v_dim = Int128{g.value_head_dim} * g.num_value_heads;
  const Int128 nv = g.num_value_heads;
  const Int128 in_projection =
      g.variant == GatedDeltaNet::Variant::kGdn2 ? 4 * qk_dim + 3 * v_dim : 2 * qk_dim + 2 * v_dim + 2 * nv;
  const Int128 conv = Int128{g.conv_kernel_dim} * (2 * qk_dim + v_dim);
  const Int128 recurrent_delta_rule = is_executed(convention) ? 0 : gated_delta_rule_fmas(g);
  terms.push_back(
      trained_gemm(Component::kGatedDeltaNet, kTokens, h * in_projection + conv + recurrent_delta_rule + h * v_dim));
  if (!is_executed(convention)) return;
  const Terms chunked = gated_chunked_delta_rule_terms(g);
  terms.insert(terms.end(), chunked.begin(), chunked.end());
}

void append_terms(const GatedDeltaProduct& g, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, d = g.inner_dim, hh = g.num_householder;
  const Int128 group_state = Int128{g.num_groups} * g.state_dim;
  const Int128 in_projection = d * (1 + hh) + group_state * (1 + hh) + Int128{g.num_heads} * (1 + hh);
  const Int128 conv_channels = d * hh + group_state * (1 + hh);
  terms.push_back(trained_gemm(Component::kGatedDeltaProduct, kTokens, h * in_projection + 4 * conv_channels + d * h));
  if (!is_executed(convention)) {
    terms.push_back(trained_flops(Component::kGatedDeltaProduct, kTokens, (4 * hh + 3) * d * g.state_dim));
    return;
  }
  const Terms chunked = gated_chunked_delta_product_terms(g);
  terms.insert(terms.end(), chunked.begin(), chunked.end());
}

void append_terms(const KimiDeltaAttention& k, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, nh = k.num_heads, p = Int128{k.num_heads} * k.head_dim;
  // Megatron-Bridge's function (Kimi K3's layer) charges a full-rank output
  // gate and a forget gate of rank head_dim whatever the layer has.
  const bool as_bridge = !is_exact(convention);
  const Int128 output_gate = k.output_gate_rank && !as_bridge ? *k.output_gate_rank * (h + p) : h * p;
  const Int128 forget_gate_rank = as_bridge ? k.head_dim : k.forget_gate_rank;
  const Int128 projections = 4 * h * p + h * nh + forget_gate_rank * (h + p) + output_gate;
  const Int128 conv = Int128{k.conv_kernel_dim} * 3 * p;
  const Int128 recurrent_delta_rule = is_executed(convention) ? 0 : kimi_delta_rule_fmas(k);
  terms.push_back(trained_gemm(Component::kKimiDeltaAttention, kTokens, projections + conv + recurrent_delta_rule));
  if (!is_executed(convention)) return;
  const Terms chunked = kimi_chunked_delta_rule_terms(k);
  terms.insert(terms.end(), chunked.begin(), chunked.end());
}

Terms gated_delta_net_terms(const GatedDeltaNet& g, std::int64_t hidden_size, Convention convention) {
  return terms_of(g, hidden_size, convention);
}

Int128 gated_delta_rule_fmas(const GatedDeltaNet& g) {
  // KK^T, VK^T, S(a(I - bKK^T)) and SQ.
  return 4 * Int128{g.num_value_heads} * g.value_head_dim * g.value_head_dim;
}

Int128 kimi_delta_rule_fmas(const KimiDeltaAttention& k) {
  // As the gated delta rule's, on num_heads states of head_dim x head_dim.
  return 4 * Int128{k.num_heads} * k.head_dim * k.head_dim;
}

namespace {

// The chunked form the kernels run (flash-linear-attention's
// chunk_gated_delta_rule and chunk_kda), per chunk of c tokens and head of
// dk x dv state: the key-key and query-key scores and the transformed keys
// (three c x c x dk products), the transformed values and the scores' read
// of the new values (two c x c x dv), the inverse of the unit triangular
// key-key matrix by forward substitution, and three c x dk x dv products with
// the state (its read by the transformed keys and by the queries, and its
// update). Every operand takes a gradient, so each product trains (x3).
Terms chunked_delta_rule_terms(Component component, std::int64_t heads, std::int64_t key_dim,
                               std::int64_t value_dim, std::int64_t chunk_size) {
  const Int128 n = heads, dk = key_dim, dv = value_dim;
  return {
      trained_gemm(component, kTokens, 3 * n * dk * dv),
      trained_gemm(component, chunk_squares(chunk_size), n * (3 * dk + 2 * dv)),
      trained_gemm(component, chunk_substitutions(chunk_size), n),
  };
}

}  // namespace

// The gated delta net's heads are its value heads, each with the keys and
// queries of its group's key head (flash-linear-attention's grouped value
// attention computes the key-key scores per value head, through its decay).
Terms gated_chunked_delta_rule_terms(const GatedDeltaNet& g) {
  return chunked_delta_rule_terms(Component::kGatedDeltaNet, g.num_value_heads, g.key_head_dim, g.value_head_dim,
                                  g.chunk_size);
}

Terms kimi_chunked_delta_rule_terms(const KimiDeltaAttention& k) {
  return chunked_delta_rule_terms(Component::kKimiDeltaAttention, k.num_heads, k.head_dim, k.head_dim,
                                  k.chunk_size);
}

// flash-linear-attention's chunk_gated_delta_product, per head (num_heads
// states of state_dim x head_dim, d = num_heads head_dim): the keys, values
// and betas of a token's n Householder steps laid out one after the other,
// n L positions per document chunked by c positions. Its forward runs the
// key-key scores, the transformed keys and values (2 dk + dv per square of
// those chunks) and their triangular inverse, the transformed keys' read of
// the state and the update (2 dk dv per position), then per chunk of c
// tokens the queries' read of the state (dk dv per token) and, for each
// step, the query-key scores and their read of the new values (n (dk + dv)
// per square of the token chunks). Its backward is chunk_gated_delta_rule's
// over the n L positions, each token's query at its last step (zeros at the
// others): twice that form's forward, 3 dk dv per position, 3 dk + 2 dv per
// square and 1 per substitution of the position chunks.
Terms gated_chunked_delta_product_terms(const GatedDeltaProduct& g) {
  const Int128 heads = g.num_heads, dk = g.state_dim, d = g.inner_dim, n = g.num_householder;
  const std::int64_t c = kGatedDeltaProductChunkSize;
  const auto forward = [&](Statistic per, Int128 fmas) {
    return Term{Component::kGatedDeltaProduct, per, kFlopsPerFma * fmas, 1, kForwardOnly};
  };
  const auto backward = [&](Statistic per, Int128 fmas) {
    return Term{Component::kGatedDeltaProduct, per, kFlopsPerFma * fmas, 1, kBackward, false};
  };
  return {
      forward(kTokens, (2 * n + 1) * dk * d),
      forward(interleaved_chunk_squares(c, g.num_householder), 2 * heads * dk + d),
      forward(interleaved_chunk_substitutions(c, g.num_householder), heads),
      forward(chunk_squares(c), n * (heads * dk + d)),
      backward(kTokens, 3 * n * dk * d),
      backward(interleaved_chunk_squares(c, g.num_householder), 3 * heads * dk + 2 * d),
      backward(interleaved_chunk_substitutions(c, g.num_householder), heads),
  };
}

Terms kimi_delta_attention_terms(const KimiDeltaAttention& k, std::int64_t hidden_size, Convention convention) {
  return terms_of(k, hidden_size, convention);
}

Terms gated_delta_product_terms(const GatedDeltaProduct& g, std::int64_t hidden_size, Convention convention) {
  return terms_of(g, hidden_size, convention);
}

}  // namespace trainflops
