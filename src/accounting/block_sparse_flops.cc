// Block-sparse grouped-query attention: grouped-query attention over the keys
// of the blocks a forward-only indexer selects.
#include "accounting/layer_terms.h"

namespace trainflops {

void append_terms(const BlockSparseAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  append_terms(a.attention, hidden_size, convention, terms);
  if (!is_exact(convention)) return;  // Megatron-LM's nearest type: dense grouped-query attention
  terms.back().per = block_topk_pairs(a.topk_blocks, a.block_size);
  const Int128 h = hidden_size, nh = a.indexer_num_heads, hd = a.indexer_head_dim;
  // The selection has no gradient: the indexer's projections and scores run
  // forward only, the scores over every causal pair (then pooled by block).
  terms.insert(terms.end(),
               {
                   Term{Component::kIndexerProjections, kTokens, kFlopsPerFma * h * (nh + 1) * hd, 1, kForwardOnly},
                   Term{Component::kIndexerScoring, kCausalPairs, kFlopsPerFma * nh * hd, 1, kForwardOnly},
               });
}

Terms block_sparse_attention_terms(const BlockSparseAttention& a, std::int64_t hidden_size, Convention convention) {
  return terms_of(a, hidden_size, convention);
}

}  // namespace trainflops
