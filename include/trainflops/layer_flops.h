// One pure function per layer type: the FLOPs of one layer as a list of terms,
// each a forward cost per unit of a statistic (per token, per causal pair) and
// the number of times it executes in a training iteration. Summing
// forward_flops / divisor * executions * statistic over the terms of a model
// gives the FLOPs of one iteration.
//
// Thread safety: Convention, Term and Terms are plain values: several threads
// may read one at once, and a thread that changes one must be the only one
// using it. The functions here keep no state of their own: several threads may
// call them at once, given different objects to change.
#ifndef TRAINFLOPS_LAYER_FLOPS_H_
#define TRAINFLOPS_LAYER_FLOPS_H_

#include <cstdint>
#include <vector>

#include "trainflops/component.h"
#include "trainflops/int128.h"
#include "trainflops/mode.h"
#include "trainflops/model.h"
#include "trainflops/statistic.h"

namespace trainflops {

// Floating-point operations in one fused multiply-add.
inline constexpr int kFlopsPerFma = 2;
// Executions per iteration, in units of the forward cost:
// a product that does not train runs forward only;
inline constexpr int kForwardOnly = 1;
// its backward computes two gradients (of the data and of the weight, or of
// both inputs), each as costly as the forward;
inline constexpr int kBackward = 2;
// so a GEMM that trains normally costs three forwards (the training expansion);
inline constexpr int kTrainingExpansion = kForwardOnly + kBackward;
// and one whose input is detached skips the data gradient.
inline constexpr int kForwardAndWeightGradient = 2;

// How a layer's terms are counted: the mode, and in megatron mode which of
// Megatron-LM's two functions (the model's MegatronPath).
//  - megatron, standard: Megatron-LM's transformer path; DSA's core attention
//    in absorbed-MLA form, as its DSA fix counts it;
//  - megatron, hybrid: its hybrid path: no attention output gate, no MTP
//    projection (charged on its dev branch), a key/value width of h*g/n
//    without kv_channels;
//  - model: the exact definitions; widths are integers; DSA's core attention
//    in the expanded form dense MLA is counted in;
//  - executed: what the kernels execute: model without the norm terms that are
//    not products, with the MoE router GEMM, DSA's core attention in
//    absorbed-MLA form, the indexer's head weighting and its KL loss's teacher
//    logits (docs/accounting.md, 8).
struct Convention {
  Mode mode = Mode::kModel;
  MegatronPath path = MegatronPath::kStandard;  // read in megatron mode only
};

// Counted in integers, per document.
inline bool is_exact(Convention convention) { return convention.mode != Mode::kMegatron; }
inline bool is_executed(Convention convention) { return convention.mode == Mode::kExecuted; }
inline bool is_megatron_hybrid(Convention convention) {
  return convention.mode == Mode::kMegatron && convention.path != MegatronPath::kStandard;
}
// Megatron-LM's main-branch hybrid function leaves the MTP projection out.
inline bool omits_mtp_projection(Convention convention) {
  return convention.mode == Mode::kMegatron && convention.path == MegatronPath::kHybrid;
}

struct Term {
  Component component = Component::kAttentionProjections;
  Statistic per;
  Int128 forward_flops = 0;  // one forward execution, per unit of `per`
  Int128 divisor = 1;        // > 1 only for Megatron's fractional key/value widths
  int executions = 0;        // per training iteration
  bool forward = true;       // one of the executions is the forward (false: backward only)
};

using Terms = std::vector<Term>;

// One function per layer type, grouped by family as the files that hold them
// (src/accounting/<family>_flops.cc). `hidden_size` is the model's h.

// Softmax attention (attention_flops.cc). Grouped-query attention's
// projections per token: h (q + 2 kv + gate) + q h with q = n head_dim and
// kv = g head_dim; the exact modes count one kv projection when the keys are
// the values and none when the layer reuses an earlier layer's keys and values.
// The gate is q wide with output_gate; a per-head gate (head_gate) adds h n in
// the exact modes and nothing in megatron mode, whose function has no term
// for it. Everything trains (x3).
Terms gqa_attention_terms(const GqaAttention& attention, std::int64_t hidden_size, Convention convention);
// MLA with an output gate adds h * n * v_head_dim to its projections in
// model and executed modes; megatron mode leaves the gate out, as Megatron-LM
// and Megatron-Bridge do.
Terms mla_attention_terms(const MlaAttention& attention, std::int64_t hidden_size, Convention convention);

// DeepSeek Sparse Attention (dsa_flops.cc).
// MLA projections, core attention over the selected pairs (KPool: the pooled
// attended pairs) and, when the layer runs it, one indexer execution
// (dsa_indexer_terms). Core attention per attended pair: n (qk + rope) + n v
// multiply-adds in model mode (expanded MLA), n (kv_lora_rank + rope) +
// n kv_lora_rank in the others (absorbed MLA). In executed mode a layer whose
// indexer trains also computes its KL loss's teacher: the main attention's
// logits, n (kv_lora_rank + rope) per pair, forward only, over every causal
// pair (detached, full) or the top-k pairs (sparse).
Terms dsa_attention_terms(const DsaAttention& attention, std::int64_t hidden_size, Convention convention);
// One execution of the lightning indexer. Its projections per
// token: q_lora_rank (or h without q LoRA) * nh * hd for the queries, h * hd for
// the key, h * nh for the head weights, and with KPool h * hd for the gate.
// Scoring costs nh * hd per scored (query, key) pair, or (query, complete pool)
// pair with KPool, whose pooling costs hd per key of a complete pool.
// Executions by grad mode (projections, scoring): off (1, 1), detached (2, 3),
// sparse (2, 1 forward over every causal pair + 2 backward over the top-k
// pairs), full (3, 3). KPool runs forward only. In executed mode each scored
// pair also costs the nh multiply-adds of weighting the heads' scores.
Terms dsa_indexer_terms(const DsaIndexer& indexer, std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                        Convention convention);
// DSA over grouped-query attention. model and executed: grouped-query
// attention's projections per token (gqa_attention_terms), its core over the
// top-k pairs only, 2 n head_dim multiply-adds per pair (the product with the
// key and with the value), trained; and, when the layer runs it, one indexer
// execution as dsa_indexer_terms without query LoRA (its queries are h * nh * hd).
// In executed mode a layer whose indexer trains also computes its KL loss's
// teacher: n * head_dim per pair (the main attention's logits), forward only,
// over every causal pair (detached, full) or the top-k pairs (sparse).
// megatron: nothing on the hybrid path (Megatron-LM's hybrid function counts no
// such layer); dense grouped-query attention without the indexer on the
// standard path.
Terms dsa_gqa_attention_terms(const DsaGqaAttention& attention, std::int64_t hidden_size, Convention convention);
// DeepSeek-V4 attention (compressed_attention_flops.cc). Per token: the query LoRA and output
// projections (q_lora (h + n dv + 1) + h dv + dv + n dv o_lora + o_groups o_lora h,
// without the norm terms when executed), the compressor (4 h dv for CSA,
// 2 h dv for HCA) and CSA's indexer projections (4 h hd + q_lora nh hd + h nh).
// Per attended key or entry, 2 n dv: the window's keys, CSA's selected entries,
// HCA's compressed entries. CSA's indexer: 2 nh hd per compressed entry a
// query sees (Megatron-LM's nh hd / 4 per S2). Everything trains (x3).
Terms compressed_sparse_attention_terms(const CompressedSparseAttention& attention, std::int64_t hidden_size,
                                        Convention convention);

// Qwen3.8's sparse attention, QSA (compressed_block_sparse_flops.cc). The
// exact modes: grouped-query attention's projections (gqa_attention_terms,
// the output gate included), its core over the keys of budget / r complete
// blocks of r and of the query's own incomplete block
// (pooled_attended_pairs(budget, r, tail): 2 n head_dim each, trained), and
// the indexer, forward only: h (nh + kh) hd per token for its projections, nh
// hd per (query, complete block) for its scores (complete_pool_pairs(r)).
// Megatron-LM has no formula for it; megatron mode counts it as the
// grouped-query attention it is built on.
Terms compressed_block_sparse_attention_terms(const CompressedBlockSparseAttention& attention,
                                              std::int64_t hidden_size, Convention convention);

// DeepSeek-V4.1 attention, CSA2 (shared_compressed_attention_flops.cc). Per
// token: the projections as DeepSeek-V4's (q_lora (h + n dv + 1) + h dv + dv +
// n dv o_lora + o_groups o_lora h, without the norm terms when executed) and,
// on the cache's KV source, the compressor (h dv at ratio 1, 2 h dv above).
// Per key, 2 n dv: the window's keys (window_pairs) and, at a ratio r > 0,
// the k selected entries (selected_compressed(k, r); a candidate consumer's
// among its candidates, selected_candidates(k, r, K, B)). All of these train (x3).
// An index source's indexer runs forward only (x1): q_lora nh hd + h nh per
// token, hd dv per entry the KV source writes (compressed_positions(r)), and
// nh hd per entry it scores (in executed mode nh more for the heads'
// weighting): every entry a query sees (compressed_entries(r)), or for a
// candidate consumer in model and megatron modes the entries of its candidate
// blocks (candidate_entries(r, K, B)); the kernels score every entry and mask.
// Megatron-LM has no formula for it: megatron mode counts it as model mode.
Terms shared_compressed_attention_terms(const SharedCompressedAttention& attention, std::int64_t hidden_size,
                                        Convention convention);

// Block-sparse grouped-query attention (block_sparse_flops.cc). The exact
// modes: grouped-query attention's projections (gqa_attention_terms), its
// core over the attended pairs (block_topk_pairs(topk_blocks, block_size):
// 2 n head_dim multiply-adds each, trained), and the indexer, forward only:
// h (indexer_num_heads + 1) indexer_head_dim per token for its projections,
// indexer_num_heads indexer_head_dim per causal (query, key) pair for its
// scores. Megatron-LM has no formula for it; megatron mode counts it as the
// grouped-query attention it is built on (every causal pair, no indexer).
Terms block_sparse_attention_terms(const BlockSparseAttention& attention, std::int64_t hidden_size,
                                   Convention convention);

// Linear attention (linear_attention_flops.cc). The gated delta net, one trained term per token:
// h times its input projection (2 qk + 2 v + 2 nv; gdn2: 4 qk + 3 v, qk =
// nk dk, v = nv dv), conv_kernel_dim (2 qk + v) for the short convolutions,
// h v for the output, and the delta rule's gated_delta_rule_fmas (Megatron-LM's
// count: model and megatron modes). Executed mode counts the delta rule in
// the chunked form training runs instead (gated_chunked_delta_rule_terms), per
// value head (chunks of chunk_size, each document's last one partial):
// 3 dk dv per token (the state's reads and update), 3 dk + 2 dv per
// chunk_squares (the c x c products) and 1 per chunk_substitutions (the
// triangular inverse); every term trains.
Terms gated_delta_net_terms(const GatedDeltaNet& gdn, std::int64_t hidden_size, Convention convention);
// The recurrent delta rule's share of that, per token: 4 nv dv^2
// multiply-adds (KK^T, VK^T, S(a(I - bKK^T)) and SQ, Megatron-LM's count,
// which takes each value head's state as dv x dv).
Int128 gated_delta_rule_fmas(const GatedDeltaNet& gdn);
// The chunked delta rule executed mode counts in its place, as its terms.
Terms gated_chunked_delta_rule_terms(const GatedDeltaNet& gdn);
// The gated delta product (d = inner_dim, n = num_householder, g =
// num_groups state_dim), one trained term per token: h (d (1 + n) + g (1 + n)
// + num_heads (1 + n)) for its input projection, 4 (d n + g (1 + n)) for the
// short convolutions and h d for the output; model and megatron modes then
// count Megatron-LM's recurrent (4 n + 3) d state_dim FLOPs per token,
// trained. Executed mode counts instead the chunked form training runs
// (gated_chunked_delta_product_terms).
Terms gated_delta_product_terms(const GatedDeltaProduct& gdp, std::int64_t hidden_size, Convention convention);
// flash-linear-attention's chunk_gated_delta_product, which interleaves the
// n keys of each token into n L positions per document, chunked by
// kGatedDeltaProductChunkSize (c) positions, each document's last chunk
// partial; its backward is the chunked gated delta rule's over those
// positions. With dk = state_dim, every head's key and query its group's,
// forward only: (2 n + 1) dk d per token, 2 num_heads dk + d per
// interleaved_chunk_squares(c, n), num_heads per
// interleaved_chunk_substitutions(c, n), n (num_heads dk + d) per
// chunk_squares(c) (the queries' chunks of c tokens); backward only (twice
// the gated delta rule's forward over the positions): 3 n dk d per token,
// 3 num_heads dk + 2 d per interleaved_chunk_squares(c, n), num_heads per
// interleaved_chunk_substitutions(c, n).
Terms gated_chunked_delta_product_terms(const GatedDeltaProduct& gdp);
// Kimi Delta Attention, one trained term per token (P = num_heads head_dim):
// 4 h P (q, k, v, output) + h num_heads (beta) + forget_gate_rank (h + P)
// + the output gate's h P (output_gate_rank (h + P) when low rank)
// + 3 conv_kernel_dim P (the short convolutions) + the delta rule's
// kimi_delta_rule_fmas. Megatron mode counts as Megatron-Bridge's function
// does, which charges every layer Kimi K3's gates: a full-rank output gate and
// a forget gate of rank head_dim. Executed mode counts the delta rule in the
// chunked form training runs instead (kimi_chunked_delta_rule_terms), per
// head (d = head_dim, chunks of chunk_size, each document's last one
// partial): 3 d^2 per token (the state's reads and update), 5 d per
// chunk_squares (the c x c x d products) and 1 per chunk_substitutions (the
// triangular inverse); every term trains.
Terms kimi_delta_attention_terms(const KimiDeltaAttention& kda, std::int64_t hidden_size, Convention convention);
// 4 num_heads head_dim^2 multiply-adds per token, as the gated delta rule's.
Int128 kimi_delta_rule_fmas(const KimiDeltaAttention& kda);
// The chunked delta rule executed mode counts in its place, as its terms.
Terms kimi_chunked_delta_rule_terms(const KimiDeltaAttention& kda);

// State-space mixers (mamba_flops.cc).
// Mamba-2 of width d (2 * hidden_size in the megatron conventions):
// h (2d + 2 groups state + heads) + d h FMAs and a 7 d state FLOP scan per token.
Terms mamba2_terms(const Mamba2& mamba, std::int64_t hidden_size, Convention convention);

// Channel mixers (mlp_flops.cc).
// 2 h ffn FMAs per token, 3 h ffn when gated (the megatron conventions charge
// a gated MLP that megatron_charges_ungated as ungated).
Terms dense_mlp_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention);
// Executed mode adds the router GEMM (h x num_experts per token; num_experts
// must then be set).
Terms moe_terms(const Moe& moe, std::int64_t hidden_size, Convention convention);

// Machinery on the residual stream (hyper_connection_flops.cc); megatron mode
// counts none of it, as Megatron-LM's function does not.
// Hyper-connections around `sublayers` sublayers (a layer's mixer and channel
// mixer), per token and sublayer, with n streams:
//  - mHC: n h (n^2 + 2n) for the coefficient projection, n h to read the
//    streams into the input, n h to write the output to each stream, n^2 h to
//    mix the streams;
//  - gated residual: 2 n h rank for the low-rank gate, n h to average the
//    gated streams, n^2 h for the write gates, n h to write.
// All of it trains (x3): the reads, writes and mixing multiply two operands
// that each take a gradient. The norm over the n h streams, the Sinkhorn
// iterations and the sigmoids are not products.
Terms hyper_connection_terms(const HyperConnections& hc, std::int64_t sublayers, std::int64_t hidden_size,
                             Convention convention);
// The final read before one output head (the decoder's, each MTP depth's):
// the n h x n projection (mHC) or the low-rank gate (gated residual), and the
// n h read; trained. Counted in the exact modes only.
Term hyper_connection_head_term(const HyperConnections& hc, std::int64_t hidden_size);
// Hashed n-gram memory on one layer, per token, with e the looked-up width, s
// the streams and k the convolution's taps: e s h for the keys, e h for the
// value, s h for the gates (each stream's key against the stream), s h for the
// gated values added to the streams, k s h for the depthwise convolution;
// trained. The table lookups are not products.
Terms ngram_memory_terms(const NgramMemory& memory, std::int64_t hidden_size, Convention convention);
// A per-layer embedding on one layer, per token, with p its width: h p for
// the layer's slice of the model-level projection of the token's embedding
// (h x layers * p), h p for the gate, p for the gate times the embedding,
// p h for the projection back to h; trained (x3). The table lookup, the norms,
// the GELU and the scalings are not products.
Terms per_layer_embedding_terms(const PerLayerEmbedding& embedding, std::int64_t hidden_size, Convention convention);
// Attention residuals over a decoder of `layers` layers (model.h says which
// sources each read takes), per token, two terms: the layers' reads, which a
// full recomputation runs again, and the output layer's read. For each source
// of each read, h for its
// norm's weight, h for its score (the h x 1 projection), h for its weighted
// share of the sum; trained (x3), as the scores and sums multiply two operands
// that each take a gradient. Executed mode leaves out the norms' h (not
// products); megatron mode counts none of it, as Megatron-LM's function has no
// attention residuals. The RMS statistics and the softmax are not products.
// Precondition: layers >= 0 and block_size >= 1 (a valid model's).
Terms attention_residual_terms(const AttentionResiduals& residuals, std::int64_t layers, std::int64_t hidden_size,
                               Convention convention);
// The sources the reads of a decoder of `layers` layers take, counted once per
// read: the sum over the layers of both sublayers' reads (0 without layers),
// and the output layer's read (ceil(layers / block_size) + 1).
Int128 attention_residual_layer_sources(const AttentionResiduals& residuals, std::int64_t layers);
Int128 attention_residual_output_sources(const AttentionResiduals& residuals, std::int64_t layers);

// Model-level terms (layer_flops.cc), one each: one MTP depth's 2h -> h projection and norms
// (3h + 2h^2 FMAs per token, as Megatron-LM counts them; executed mode counts
// only the 2h^2 of the product); the logits of one output head.
Term mtp_projection_term(std::int64_t hidden_size, Convention convention);
Term logits_term(std::int64_t hidden_size, std::int64_t vocab_size);

// Dispatches on the variant.
Terms mixer_terms(const Mixer& mixer, std::int64_t hidden_size, Convention convention);
Terms channel_mixer_terms(const ChannelMixer& channel_mixer, std::int64_t hidden_size, Convention convention);
// The terms of a layer, its n-gram memory's, its mixer's then its channel mixer's, appended to
// `terms`: a counter collects every layer's terms in one list this way
// instead of allocating a list per layer and per part of it.
void append_layer_terms(const Layer& layer, std::int64_t hidden_size, Convention convention, Terms& terms);

}  // namespace trainflops

#endif  // TRAINFLOPS_LAYER_FLOPS_H_
