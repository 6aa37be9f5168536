// Qwen3.8's sparse attention (QSA): grouped-query attention over the keys of
// the complete blocks a forward-only indexer selects and of the query's own
// incomplete block.
#include "accounting/layer_terms.h"

namespace trainflops {

void append_terms(const CompressedBlockSparseAttention& a, std::int64_t hidden_size, Convention convention,
                  Terms& terms) {
  append_terms(a.attention, hidden_size, convention, terms);
  if (!is_exact(convention)) return;  // Megatron-LM's nearest type: dense grouped-query attention
  terms.back().per = pooled_attended_pairs(a.budget, a.block_size, /*tail=*/true);
  const Int128 h = hidden_size, nh = a.indexer_num_heads, hd = a.indexer_head_dim;
  // The selection has no gradient: the indexer's projections and its scores
  // of the complete blocks run forward only. Pooling a block's keys is a
  // mean: additions, no products.
  terms.insert(terms.end(), {
                                Term{Component::kIndexerProjections, kTokens,
                                     kFlopsPerFma * h * (nh + a.indexer_key_heads) * hd, 1, kForwardOnly},
                                Term{Component::kIndexerScoring, complete_pool_pairs(a.block_size),
                                     kFlopsPerFma * nh * hd, 1, kForwardOnly},
                            });
}

Terms compressed_block_sparse_attention_terms(const CompressedBlockSparseAttention& a, std::int64_t hidden_size,
                                              Convention convention) {
  return terms_of(a, hidden_size, convention);
}

}  // namespace trainflops
