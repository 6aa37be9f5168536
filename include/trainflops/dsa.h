// Building blocks for reasoning about one DeepSeek Sparse Attention layer from
// plain numbers, without a whole model: its forward FLOPs, and those of one
// lightning-indexer execution, over a batch of causal documents, exactly.
//
// Both count FORWARD FLOPs (2 per multiply-add), as model mode defines them
// (not executed mode: no absorbed MLA, no head weighting), of one layer for the whole
// batch; a training iteration multiplies them by the executions of
// layer_flops.h (3 for the attention, by grad mode for the indexer).
//
// Thread safety: The functions here keep no state of their own: several threads
// may call them at once, given different objects to change.
#ifndef TRAINFLOPS_DSA_H_
#define TRAINFLOPS_DSA_H_

#include <cstdint>
#include <optional>
#include <span>

#include "trainflops/int128.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// MLA projections for every token plus core attention over the selected
// pairs: sum_i min(i, k) per document of length L (KPool: the pooled attended
// pairs of statistic.h), n (qk + rope) + n v multiply-adds each. Excludes the
// indexer. Errors: invalid sizes (as validate() words them), negative lengths,
// overflow.
Result<Int128> dsa_attention_forward_flops(std::int64_t hidden_size, const MlaAttention& mla, const DsaIndexer& indexer,
                                           std::span<const std::int64_t> lengths);

// One indexer execution: its projections for every token, scoring of every
// causal (query, key) pair at nh * hd multiply-adds (KPool: the complete
// pools, plus the gate projection and the pooling). `q_lora_rank` unset: the
// queries are projected from the hidden state.
Result<Int128> indexer_forward_flops(std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                                     const DsaIndexer& indexer, std::span<const std::int64_t> lengths);

}  // namespace trainflops

#endif  // TRAINFLOPS_DSA_H_
