#include "trainflops/layer_flops.h"

#include <optional>

namespace trainflops {
namespace {

// A GEMM (or convolution) of `fmas` multiply-adds per unit that trains normally.
Term trained_gemm(Component component, Statistic per, Int128 fmas) {
  return Term{component, per, kFlopsPerFma * fmas, 1, kTrainingExpansion};
}

// Work Megatron-LM counts in FLOPs rather than FMAs (the Mamba scan), trained
// with the same expansion.
Term trained_flops(Component component, Statistic per, Int128 flops) {
  return Term{component, per, flops, 1, kTrainingExpansion};
}

// A gated MLP's input projection is twice as wide as an ungated one's.
template <typename ChannelMixer>
Int128 mlp_width_factor(const ChannelMixer& mlp, Convention convention) {
  const bool charged_gated = mlp.gated && (is_exact(convention) || !mlp.megatron_charges_ungated);
  return charged_gated ? 3 : 2;
}

// Megatron-LM charges windowed and chunked attention as full causal attention.
Statistic attended_pairs(const GqaAttention& a, Convention convention) {
  if (!is_exact(convention)) return kCausalPairs;
  if (a.window) return window_pairs(*a.window);
  if (a.chunk) return chunked_pairs(*a.chunk);
  return kCausalPairs;
}

// Absorbed MLA: queries meet the cached latent (kv_lora_rank) and the rotary
// key part, and the values stay in the latent space; the absorption matrices
// cost per token what the key/value up-projection would.
Int128 absorbed_mla_pair_fmas(const MlaAttention& a) {
  const Int128 n = a.num_heads, latent = a.kv_lora_rank;
  return n * (latent + a.qk_pos_emb_head_dim) + n * latent;
}

// The KL loss's target is the main attention's distribution over the keys the
// indexer is trained on, so its logits are computed (forward only, in the
// absorbed form) over every causal pair for a dense loss, or over the top-k
// pairs for a sparse one. An untrained indexer has no loss and no teacher.
std::optional<Term> indexer_teacher_term(const DsaAttention& a) {
  const DsaIndexer& indexer = a.indexer;
  const Int128 logits = Int128{a.mla.num_heads} * (a.mla.kv_lora_rank + a.mla.qk_pos_emb_head_dim);
  const Term dense{Component::kIndexerTeacher, kCausalPairs, kFlopsPerFma * logits, 1, kForwardOnly};
  switch (indexer.grad_mode) {
    case DsaIndexer::GradMode::kOff: return std::nullopt;
    case DsaIndexer::GradMode::kDetached:
    case DsaIndexer::GradMode::kFull: return dense;
    case DsaIndexer::GradMode::kSparse: {
      Term sparse = dense;
      sparse.per = topk_pairs(indexer.topk);
      return sparse;
    }
  }
  return std::nullopt;
}

void add_gqa_attention_terms(const GqaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, n = a.num_heads, g = a.num_query_groups;
  const bool counts_gate = a.output_gate && !is_megatron_hybrid(convention);
  if (!a.head_dim) {
    // Query width h, key/value width h*g/n: fractional in Megatron's count,
    // rounded down in the exact ones.
    const Int128 q = h;
    const Int128 gate = counts_gate ? q : 0;
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
  const Int128 gate = counts_gate ? q : 0;
  terms.insert(terms.end(),
               {
                   trained_gemm(Component::kAttentionProjections, kTokens, h * (q + 2 * kv + gate) + q * h),
                   // QK^T and the product with V, q multiply-adds each per (query, key) pair.
                   trained_gemm(Component::kCoreAttention, attended_pairs(a, convention), 2 * q),
               });
}

void add_mla_attention_terms(const MlaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, n = a.num_heads;
  const Int128 qk = a.qk_head_dim, rope = a.qk_pos_emb_head_dim, v = a.v_head_dim;
  const Int128 kv_lora = a.kv_lora_rank;
  // The q and kv LoRA norms, as Megatron-LM counts them; they are not products.
  const Int128 norm = is_executed(convention) ? 0 : 1;
  const Int128 query = a.q_lora_rank ? *a.q_lora_rank * (h + n * (qk + rope) + norm) : h * n * (qk + rope);
  const Int128 key_value = kv_lora * (h + n * (qk + v) + norm) + h * rope;
  const Int128 output = n * v * h;
  terms.insert(terms.end(), {
                                trained_gemm(Component::kAttentionProjections, kTokens, query + key_value + output),
                                trained_gemm(Component::kCoreAttention, kCausalPairs, n * (qk + rope) + n * v),
                            });
}

void add_dsa_indexer_terms(const DsaIndexer& indexer, std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                           Convention convention, Terms& terms) {
  const Int128 h = hidden_size, nh = indexer.num_heads, hd = indexer.head_dim;
  const Int128 query_input = q_lora_rank ? *q_lora_rank : h;
  const Int128 projections = query_input * nh * hd + h * hd + h * nh;
  // Per scored pair: the heads' dot products, and when executed, their weighted sum.
  const Int128 per_pair = nh * hd + (is_executed(convention) ? nh : 0);
  const auto term = [](Component component, Statistic per, Int128 fmas, int executions) {
    return Term{component, per, kFlopsPerFma * fmas, 1, executions};
  };
  if (indexer.pool_size > 1) {  // validated: grad mode off, so everything runs forward only
    const std::int64_t p = indexer.pool_size;
    terms.insert(terms.end(), {
                                  term(Component::kIndexerProjections, kTokens, projections, kForwardOnly),
                                  term(Component::kKpoolGate, kTokens, h * hd, kForwardOnly),
                                  term(Component::kIndexerScoring, complete_pool_pairs(p), per_pair, kForwardOnly),
                                  term(Component::kKpoolPooling, pooled_keys(p), hd, kForwardOnly),
                              });
    return;
  }
  const Term scoring = term(Component::kIndexerScoring, kCausalPairs, per_pair, kForwardOnly);
  Term backward = scoring;
  backward.executions = kBackward;
  backward.forward = false;
  switch (indexer.grad_mode) {
    case DsaIndexer::GradMode::kOff:
      terms.insert(terms.end(), {term(Component::kIndexerProjections, kTokens, projections, kForwardOnly), scoring});
      return;
    case DsaIndexer::GradMode::kDetached:
      terms.insert(terms.end(), {term(Component::kIndexerProjections, kTokens, projections, kForwardAndWeightGradient),
                                 scoring, backward});
      return;
    case DsaIndexer::GradMode::kSparse:
      backward.per = topk_pairs(indexer.topk);
      terms.insert(terms.end(), {term(Component::kIndexerProjections, kTokens, projections, kForwardAndWeightGradient),
                                 scoring, backward});
      return;
    case DsaIndexer::GradMode::kFull:
      terms.insert(terms.end(),
                   {term(Component::kIndexerProjections, kTokens, projections, kTrainingExpansion), scoring, backward});
      return;
  }
}

void add_dsa_attention_terms(const DsaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  add_mla_attention_terms(a.mla, hidden_size, convention, terms);
  Term& core = terms.back();
  core.component = Component::kDsaCoreAttention;
  // Model FLOPs keep the expanded (up-projected) form that dense MLA is
  // counted in; Megatron-LM since its DSA fix and the kernels use the absorbed one.
  if (convention.mode != Mode::kModel) core.forward_flops = kFlopsPerFma * absorbed_mla_pair_fmas(a.mla);
  const DsaIndexer& indexer = a.indexer;
  core.per = indexer.pool_size > 1 ? pooled_attended_pairs(indexer.topk, indexer.pool_size, indexer.pool_tail)
                                   : topk_pairs(indexer.topk);
  if (a.runs_indexer) {
    add_dsa_indexer_terms(indexer, hidden_size, a.mla.q_lora_rank, convention, terms);
    if (is_executed(convention)) {
      if (auto teacher = indexer_teacher_term(a)) terms.push_back(*teacher);
    }
  }
}

void add_compressed_sparse_attention_terms(const CompressedSparseAttention& a, std::int64_t hidden_size,
                                           Convention convention, Terms& terms) {
  using Kind = CompressedSparseAttention::Kind;
  const Int128 h = hidden_size, n = a.num_heads, dv = a.head_dim, q_lora = a.q_lora_rank;
  const Int128 norm = is_executed(convention) ? 0 : 1;  // the q and kv norms are not products
  const Int128 projections = q_lora * (h + n * dv + norm) + (h * dv + norm * dv) +
                             (n * dv * a.o_lora_rank + Int128{a.o_groups} * a.o_lora_rank * h);
  const Int128 per_key = 2 * n * dv;  // scores and values through single-latent heads of width dv
  terms.insert(terms.end(), {
                                trained_gemm(Component::kAttentionProjections, kTokens, projections),
                                trained_gemm(Component::kCoreAttention, window_pairs(a.window), per_key),
                            });
  const std::int64_t ratio = compression_ratio(a.kind);
  if (a.kind == Kind::kCsa) {
    const Int128 nh = a.indexer_num_heads, hd = a.indexer_head_dim;
    terms.push_back(trained_gemm(Component::kDsaCoreAttention, selected_compressed(a.topk, ratio), per_key));
    terms.push_back(trained_gemm(Component::kKvCompressor, kTokens, 4 * h * dv));
    terms.push_back(trained_gemm(Component::kIndexerProjections, kTokens, 4 * h * hd + q_lora * nh * hd + h * nh));
    terms.push_back(trained_gemm(Component::kIndexerScoring, compressed_entries(ratio), 2 * nh * hd));
  } else if (a.kind == Kind::kHca) {
    terms.push_back(trained_gemm(Component::kCoreAttention, compressed_entries(ratio), per_key));
    terms.push_back(trained_gemm(Component::kKvCompressor, kTokens, 2 * h * dv));
  }
}

void add_gated_delta_net_terms(const GatedDeltaNet& g, std::int64_t hidden_size, Terms& terms) {
  const Int128 h = hidden_size;
  const Int128 qk_dim = Int128{g.key_head_dim} * g.num_key_heads;
  const Int128 v_dim = Int128{g.value_head_dim} * g.num_value_heads;
  const Int128 nv = g.num_value_heads;
  const Int128 in_projection =
      g.variant == GatedDeltaNet::Variant::kGdn2 ? 4 * qk_dim + 3 * v_dim : 2 * qk_dim + 2 * v_dim + 2 * nv;
  const Int128 conv = Int128{g.conv_kernel_dim} * (2 * qk_dim + v_dim);
  terms.push_back(trained_gemm(Component::kGatedDeltaNet, kTokens,
                               h * in_projection + conv + gated_delta_rule_fmas(g) + h * v_dim));
}

void add_mamba2_terms(const Mamba2& m, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, d = is_exact(convention) ? Int128{m.inner_dim} : 2 * h;
  const Int128 in_projection = h * (2 * d + 2 * Int128{m.num_groups} * m.state_dim + m.num_heads);
  terms.insert(terms.end(), {
                                trained_gemm(Component::kMamba, kTokens, in_projection + d * h),
                                trained_flops(Component::kMamba, kTokens, 7 * d * m.state_dim),  // the scan
                            });
}

void add_gated_delta_product_terms(const GatedDeltaProduct& g, std::int64_t hidden_size, Terms& terms) {
  const Int128 h = hidden_size, d = g.inner_dim, hh = g.num_householder;
  const Int128 group_state = Int128{g.num_groups} * g.state_dim;
  const Int128 in_projection = d * (1 + hh) + group_state * (1 + hh) + Int128{g.num_heads} * (1 + hh);
  const Int128 conv_channels = d * hh + group_state * (1 + hh);
  terms.insert(terms.end(),
               {
                   trained_gemm(Component::kGatedDeltaProduct, kTokens, h * in_projection + 4 * conv_channels + d * h),
                   trained_flops(Component::kGatedDeltaProduct, kTokens, (4 * hh + 3) * d * g.state_dim),
               });
}

void add_dense_mlp_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention, Terms& terms) {
  terms.push_back(
      trained_gemm(Component::kMlp, kTokens, mlp_width_factor(mlp, convention) * hidden_size * mlp.ffn_hidden_size));
}

void add_moe_terms(const Moe& moe, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, width = mlp_width_factor(moe, convention);
  const Int128 experts = width * moe.expert_ffn_hidden_size * moe.topk;
  const Int128 routed = moe.latent_size ? experts * *moe.latent_size + 2 * h * *moe.latent_size : experts * h;
  terms.push_back(trained_gemm(Component::kMoeRouted, kTokens, routed));
  if (moe.shared_expert_ffn_hidden_size) {
    terms.push_back(trained_gemm(Component::kMoeShared, kTokens, width * h * *moe.shared_expert_ffn_hidden_size));
  }
  if (is_executed(convention) && moe.num_experts) {
    terms.push_back(trained_gemm(Component::kMoeRouter, kTokens, h * *moe.num_experts));
  }
}

void add_mixer_terms(const Mixer& mixer, std::int64_t hidden_size, Convention convention, Terms& terms) {
  struct Visitor {
    std::int64_t h;
    Convention convention;
    Terms& terms;
    void operator()(const GqaAttention& a) const { add_gqa_attention_terms(a, h, convention, terms); }
    void operator()(const MlaAttention& a) const { add_mla_attention_terms(a, h, convention, terms); }
    void operator()(const DsaAttention& a) const { add_dsa_attention_terms(a, h, convention, terms); }
    void operator()(const CompressedSparseAttention& a) const {
      add_compressed_sparse_attention_terms(a, h, convention, terms);
    }
    void operator()(const GatedDeltaNet& g) const { add_gated_delta_net_terms(g, h, terms); }
    void operator()(const Mamba2& m) const { add_mamba2_terms(m, h, convention, terms); }
    void operator()(const GatedDeltaProduct& g) const { add_gated_delta_product_terms(g, h, terms); }
  };
  std::visit(Visitor{hidden_size, convention, terms}, mixer);
}

void add_channel_mixer_terms(const ChannelMixer& channel_mixer, std::int64_t hidden_size, Convention convention,
                             Terms& terms) {
  if (const auto* moe = std::get_if<Moe>(&channel_mixer)) return add_moe_terms(*moe, hidden_size, convention, terms);
  add_dense_mlp_terms(std::get<DenseMlp>(channel_mixer), hidden_size, convention, terms);
}

// The terms `add` appends to an empty list.
template <typename Add, typename... Args>
Terms terms_of(Add add, const Args&... args) {
  Terms terms;
  add(args..., terms);
  return terms;
}

}  // namespace

Terms gqa_attention_terms(const GqaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_gqa_attention_terms, a, hidden_size, convention);
}
Terms mla_attention_terms(const MlaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_mla_attention_terms, a, hidden_size, convention);
}
Terms dsa_attention_terms(const DsaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_dsa_attention_terms, a, hidden_size, convention);
}
Terms dsa_indexer_terms(const DsaIndexer& indexer, std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                        Convention convention) {
  return terms_of(add_dsa_indexer_terms, indexer, hidden_size, q_lora_rank, convention);
}
Terms compressed_sparse_attention_terms(const CompressedSparseAttention& a, std::int64_t hidden_size,
                                        Convention convention) {
  return terms_of(add_compressed_sparse_attention_terms, a, hidden_size, convention);
}
Terms gated_delta_net_terms(const GatedDeltaNet& g, std::int64_t hidden_size) {
  return terms_of(add_gated_delta_net_terms, g, hidden_size);
}
Int128 gated_delta_rule_fmas(const GatedDeltaNet& g) {
  // KK^T, VK^T, S(a(I - bKK^T)) and SQ.
  return 4 * Int128{g.num_value_heads} * g.value_head_dim * g.value_head_dim;
}
Terms mamba2_terms(const Mamba2& m, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_mamba2_terms, m, hidden_size, convention);
}
Terms gated_delta_product_terms(const GatedDeltaProduct& g, std::int64_t hidden_size) {
  return terms_of(add_gated_delta_product_terms, g, hidden_size);
}
Terms dense_mlp_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_dense_mlp_terms, mlp, hidden_size, convention);
}
Terms moe_terms(const Moe& moe, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_moe_terms, moe, hidden_size, convention);
}

Term mtp_projection_term(std::int64_t hidden_size, Convention convention) {
  const Int128 h = hidden_size;
  const Int128 norms = is_executed(convention) ? 0 : 3 * h;  // not products
  return trained_gemm(Component::kMtp, kTokens, norms + 2 * h * h);
}

Term logits_term(std::int64_t hidden_size, std::int64_t vocab_size) {
  return trained_gemm(Component::kLogits, kTokens, Int128{hidden_size} * vocab_size);
}

Terms mixer_terms(const Mixer& mixer, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_mixer_terms, mixer, hidden_size, convention);
}
Terms channel_mixer_terms(const ChannelMixer& channel_mixer, std::int64_t hidden_size, Convention convention) {
  return terms_of(add_channel_mixer_terms, channel_mixer, hidden_size, convention);
}

void append_layer_terms(const Layer& layer, std::int64_t hidden_size, Convention convention, Terms& terms) {
  if (layer.mixer) add_mixer_terms(*layer.mixer, hidden_size, convention, terms);
  if (layer.channel_mixer) add_channel_mixer_terms(*layer.channel_mixer, hidden_size, convention, terms);
}

}  // namespace trainflops
