// DeepSeek Sparse Attention: MLA or grouped-query attention attending the
// top-k keys its lightning indexer selects, and the indexer itself (with KPool).
#include <optional>

#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

// Absorbed MLA: queries meet the cached latent (kv_lora_rank) and the rotary
// key part, and the values stay in the latent space; the absorption matrices
// cost per token what the key/value up-projection would.
Int128 absorbed_mla_pair_fmas(const MlaAttention& a) {
  const Int128 n = a.num_heads, latent = a.kv_lora_rank;
  return n * (latent + a.qk_pos_emb_head_dim) + n * latent;
}

// The pairs the indexer's top-k selects; without a top-k (a layer only
// megatron mode counts, validated), every causal pair, as Megatron-LM's
// function charges it.
Statistic selected_pairs(const DsaIndexer& indexer) {
  return indexer.topk ? topk_pairs(*indexer.topk) : kCausalPairs;
}

// The KL loss's target is the main attention's distribution over the keys the
// indexer is trained on, so its logits (`logit_fmas` per pair) are computed,
// forward only, over every causal pair for a dense loss, or over the top-k
// pairs for a sparse one. An untrained indexer has no loss and no teacher.
std::optional<Term> indexer_teacher_term(const DsaIndexer& indexer, Int128 logit_fmas) {
  const Term dense{Component::kIndexerTeacher, kCausalPairs, kFlopsPerFma * logit_fmas, 1, kForwardOnly};
  switch (indexer.grad_mode) {
    case DsaIndexer::GradMode::kOff: return std::nullopt;
    case DsaIndexer::GradMode::kDetached:
    case DsaIndexer::GradMode::kFull: return dense;
    case DsaIndexer::GradMode::kSparse: {
      Term sparse = dense;
      sparse.per = selected_pairs(indexer);
      return sparse;
    }
  }
  return std::nullopt;
}

void append_indexer_terms(const DsaIndexer& indexer, std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
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
      if (is_exact(convention) || !indexer.megatron_charges_dense_loss) backward.per = selected_pairs(indexer);
      terms.insert(terms.end(), {term(Component::kIndexerProjections, kTokens, projections, kForwardAndWeightGradient),
                                 scoring, backward});
      return;
    case DsaIndexer::GradMode::kFull:
      terms.insert(terms.end(),
                   {term(Component::kIndexerProjections, kTokens, projections, kTrainingExpansion), scoring, backward});
      return;
  }
}

}  // namespace

void append_terms(const DsaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  append_terms(a.mla, hidden_size, convention, terms);
  Term& core = terms.back();
  core.component = Component::kDsaCoreAttention;
  // Model FLOPs keep the expanded (up-projected) form that dense MLA is
  // counted in; Megatron-LM since its DSA fix and the kernels use the absorbed one.
  if (convention.mode != Mode::kModel) core.forward_flops = kFlopsPerFma * absorbed_mla_pair_fmas(a.mla);
  const DsaIndexer& indexer = a.indexer;
  core.per = indexer.pool_size > 1 ? pooled_attended_pairs(*indexer.topk, indexer.pool_size, indexer.pool_tail)
                                   : selected_pairs(indexer);
  if (a.runs_indexer) {
    append_indexer_terms(indexer, hidden_size, a.mla.q_lora_rank, convention, terms);
    if (is_executed(convention)) {
      // In the absorbed form, against the cached latent and its rotary key.
      const Int128 logits = Int128{a.mla.num_heads} * (a.mla.kv_lora_rank + a.mla.qk_pos_emb_head_dim);
      if (auto teacher = indexer_teacher_term(indexer, logits)) terms.push_back(*teacher);
    }
  }
}

void append_terms(const DsaGqaAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  // Megatron-LM's hybrid function counts no `D` layer of this kind (it reads
  // only the Mamba, GDN, `*`, MLP and MoE counts of a pattern); its transformer
  // function counts every layer as dense grouped-query attention.
  if (is_megatron_hybrid(convention)) return;
  append_terms(a.attention, hidden_size, convention, terms);
  if (!is_exact(convention)) return;
  Term& core = terms.back();
  core.component = Component::kDsaCoreAttention;
  core.per = selected_pairs(a.indexer);
  if (!a.runs_indexer) return;
  // The indexer's queries come from the hidden state: no query LoRA.
  append_indexer_terms(a.indexer, hidden_size, std::nullopt, convention, terms);
  if (is_executed(convention)) {
    // QK^T of every query head against its group's keys (validated: head_dim set).
    const Int128 logits = Int128{a.attention.num_heads} * a.attention.head_dim.value_or(0);
    if (auto teacher = indexer_teacher_term(a.indexer, logits)) terms.push_back(*teacher);
  }
}

Terms dsa_attention_terms(const DsaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(a, hidden_size, convention);
}

Terms dsa_gqa_attention_terms(const DsaGqaAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(a, hidden_size, convention);
}

Terms dsa_indexer_terms(const DsaIndexer& indexer, std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                        Convention convention) {
  Terms terms;
  append_indexer_terms(indexer, hidden_size, q_lora_rank, convention, terms);
  return terms;
}

}  // namespace trainflops
