// DeepSeek-V4 attention: a sliding window, and CSA's selected or HCA's every
// entry of a compressed key/value cache.
#include "accounting/layer_terms.h"

namespace trainflops {

void append_terms(const CompressedSparseAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
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

Terms compressed_sparse_attention_terms(const CompressedSparseAttention& a, std::int64_t hidden_size,
                                        Convention convention) {
  return terms_of(a, hidden_size, convention);
}

}  // namespace trainflops
