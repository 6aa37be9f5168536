// DeepSeek-V4.1 attention (CSA2): a sliding window and the top-k entries of a
// compressed key/value cache that several layers share, chosen by a
// forward-only indexer, two-level from the candidate source on.
#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

Term forward_only(Component component, Statistic per, Int128 fmas) {
  return Term{component, per, kFlopsPerFma * fmas, 1, kForwardOnly};
}

}  // namespace

void append_terms(const SharedCompressedAttention& a, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, n = a.num_heads, dv = a.head_dim, q_lora = a.q_lora_rank;
  const Int128 norm = is_executed(convention) ? 0 : 1;  // the q and kv norms are not products
  const Int128 projections = q_lora * (h + n * dv + norm) + (h * dv + norm * dv) +
                             (n * dv * a.o_lora_rank + Int128{a.o_groups} * a.o_lora_rank * h);
  const Int128 per_key = 2 * n * dv;  // scores and values through single-latent heads of width dv
  terms.push_back(trained_gemm(Component::kAttentionProjections, kTokens, projections));
  terms.push_back(trained_gemm(Component::kCoreAttention, window_pairs(a.window), per_key));
  const std::int64_t r = a.compress_ratio;
  if (r == 0) return;
  // A candidate consumer selects among its candidate blocks' entries only.
  const Statistic selected =
      a.candidate_role == SharedCompressedAttention::CandidateRole::kConsumer
          ? selected_candidates(a.topk, r, a.candidate_blocks, a.candidate_block_size)
          : selected_compressed(a.topk, r);
  terms.push_back(trained_gemm(Component::kDsaCoreAttention, selected, per_key));
  // The compressor: its projection, and above ratio 1 the softmax gate that pools r tokens.
  if (a.writes_cache) terms.push_back(trained_gemm(Component::kKvCompressor, kTokens, (r > 1 ? 2 : 1) * h * dv));
  if (!a.runs_indexer) return;
  const Int128 nh = a.indexer_num_heads, hd = a.indexer_head_dim;
  terms.push_back(forward_only(Component::kIndexerProjections, kTokens, q_lora * nh * hd + h * nh));
  if (a.writes_cache) terms.push_back(forward_only(Component::kIndexerProjections, compressed_positions(r), dv * hd));
  // A candidate consumer needs the scores of the candidate blocks' entries
  // only; the kernels score every entry and mask the others out.
  const bool candidates_only =
      a.candidate_role == SharedCompressedAttention::CandidateRole::kConsumer && !is_executed(convention);
  const Statistic scored =
      candidates_only ? candidate_entries(r, a.candidate_blocks, a.candidate_block_size) : compressed_entries(r);
  // Per scored entry: the heads' dot products, and when executed, their weighted sum.
  terms.push_back(forward_only(Component::kIndexerScoring, scored, nh * hd + (is_executed(convention) ? nh : 0)));
}

Terms shared_compressed_attention_terms(const SharedCompressedAttention& a, std::int64_t hidden_size,
                                        Convention convention) {
  return terms_of(a, hidden_size, convention);
}

}  // namespace trainflops
