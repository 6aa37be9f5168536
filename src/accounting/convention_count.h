// Counting a model as another framework's FLOPs function would: one choice
// per convention (compare.h's ConventionKind), applied to the layer terms of
// the modes (layer_flops.h). Internal to compare.cc.
#ifndef TRAINFLOPS_ACCOUNTING_CONVENTION_COUNT_H_
#define TRAINFLOPS_ACCOUNTING_CONVENTION_COUNT_H_

#include <cstdint>
#include <string>

#include "trainflops/compare.h"
#include "trainflops/int128.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// How a framework charges the pairs of one sequence of L tokens.
enum class PairRule {
  kExact,       // L(L+1)/2: each query sees itself and every earlier key
  kHalfSquare,  // L^2/2
  kAll,         // L^2: the causal mask ignored
};

enum class WindowRule {
  kExact,             // sum_i min(i, w)
  kAsCausal,          // the window ignored: charged as causal attention
  kExactBelowLength,  // exact when w < L, else L^2/2 (the average context's two branches)
  kArea,              // L w' - w'^2/2 with w' = min(w, L)
  kUncappedBand,      // w(w+1)/2 + (L - w) w: exact when w <= L, less (even negative) below
};

enum class MtpRule {
  kFull,          // the depth's layers, its 2h -> h projection with norms, its logits
  kLayersOnly,    // the layers alone: the output layer shared, no projection
  kNoProjection,  // the layers and the logits, without the 2h -> h projection and its norms
  kOff,           // not counted
};

enum class MtpLayerRule {
  kAsDescribed,            // each MTP layer's own mixer
  kLastDecoderLayer,       // a copy of the last decoder layer's mixer kind
  kLastDecoderLayerWhole,  // the last decoder layer itself, mixer and channel mixer
};

enum class DsaCoreRule {
  kExpandedExact,  // expanded MLA (n (qk + rope) + n v per pair) over the exact top-k pairs
  kAbsorbedExact,  // absorbed MLA (n (kv_lora + rope) + n kv_lora) over the exact top-k pairs
  kAbsorbedArea,   // absorbed over L e - e^2/2 pairs, e = min(k, L)
  kExpandedArea,   // expanded over L e - e^2/2 pairs
  kDenseMla,       // sparsity ignored: dense MLA over the causal pairs
  kExpandedUncapped,  // expanded over L k pairs: k keys per query, however few precede it
};

enum class IndexerRule {
  kModel,         // by grad mode, scoring nh hd per pair, exact pairs
  kExecuted,      // also the head weighting (nh per pair) and the KL loss's teacher logits, exact pairs
  kMegatron,      // by grad mode, a sparse loss's backward as the dense loss's, nh hd per pair over L^2/2
  kTrainedFully,  // on every layer (no index sharing), every GEMM trained (x3), head weighting,
                  // L^2/2 pairs; none when L <= k
  kEveryLayerAllPairs,  // on every layer (no index sharing), every GEMM trained (x3), all L^2 pairs
  kNone,                // not counted
};

// How DeepSeek-V4 attention (CompressedSparseAttention) charges its window,
// its compressed entries (HCA) and its selected entries (CSA), in one
// sequence of L tokens.
enum class CompressedPairsRule {
  kExact,     // sum_i min(i, w); sum_i floor(i/r); sum_i min(k, floor(i/r))
  kMegatron,  // L w; L^2/2r; L e - r e^2/2 with e = min(k, floor(L/r))
  kMaxText,   // L w - w^2/2; L^2/2r; L^2/r (e/T - e^2/2T^2) with T = floor(L/r), e = min(k, T)
};

// How DeepSeek-V4's CSA indexer charges its scoring.
enum class CompressedIndexerRule {
  kExact,     // 2 nh hd per entry over sum_i floor(i/r)
  kMegatron,  // 2 nh hd per entry over L^2/2r
  kMaxText,   // nh hd per entry over L^2/2r, and the head weighting (nh per entry)
};

// What hyper-connections are charged.
enum class HyperConnectionRule {
  kCounted,           // as model mode counts them
  kNotCounted,        // left out
  kMaxText,           // the write one FLOP per product, not a multiply-add; no read before the head
  kProjections,       // the coefficient or gate projections alone, the heads' included
  kLayerProjections,  // the sublayers' projections alone: none before the heads
};

// What hashed n-gram memory is charged.
enum class NgramMemoryRule {
  kModel,    // keys, value, gates, gated value, convolution
  kNoGates,  // keys, value and convolution
  kNone,     // not counted
};

// What per-layer embeddings are charged.
enum class PerLayerEmbeddingRule {
  kModel,        // the projections and the gate's product with the embedding
  kProjections,  // the projections alone
  kNone,         // not counted
};

// What DSA over grouped-query attention is charged.
enum class DsaGqaRule {
  kModel,       // its projections, its core over the top-k pairs, its indexer by grad mode
  kDenseGqa,    // dense grouped-query attention over the causal pairs, no indexer
  kNotCounted,  // nothing: a function that reads no such layer
};

// One choice per convention: what a framework's FLOPs function does.
struct Conventions {
  PairRule causal = PairRule::kExact;
  WindowRule windows = WindowRule::kExact;
  bool router = false;
  MtpRule mtp = MtpRule::kFull;
  MtpLayerRule mtp_layer = MtpLayerRule::kAsDescribed;
  DsaCoreRule dsa_core = DsaCoreRule::kExpandedExact;
  IndexerRule indexer = IndexerRule::kModel;
  CompressedPairsRule compressed_pairs = CompressedPairsRule::kExact;
  CompressedIndexerRule compressed_indexer = CompressedIndexerRule::kExact;
  bool linear_core = true;
  // A Mamba-2 layer's inner width taken as 2h whatever its heads, as
  // Megatron-LM's and Megatron-Bridge's hybrid functions take it.
  bool mamba_width_doubled_hidden = false;
  bool output_gate = true;
  bool head_gate = true;  // GqaAttention::head_gate's h x n projection
  // Grouped-query attention's query width taken as h and its key/value width
  // as g h/n whatever its head width (NeMo Automodel's Nemotron-H formula).
  bool attention_width_from_hidden = false;
  bool norms = true;
  bool dense_layers_as_moe = false;
  // A gated MLP whose activation is quick-GeGLU charged as ungated, as
  // Megatron-LM's function does (DenseMlp::megatron_charges_ungated).
  bool quick_geglu_as_ungated = false;
  // An ungated dense MLP charged as gated, 3 h ffn (NeMo Automodel's
  // Nemotron-H formula assumes a gated linear unit).
  bool ungated_mlp_as_gated = false;
  // 6 FLOPs per token for each active norm weight, bias, attention sink and
  // gate (parameters.h's kinds kNorm, kBias, kPerHeadScalar, kGate) besides
  // the MLA LoRA norms the `norms` choice charges: torchtitan's 6 N counts
  // every parameter but the embedding.
  bool small_parameters = false;
  // Kimi K3's MLA output gate: no framework's function counts it.
  bool mla_output_gate = false;
  // Block-sparse attention (MiniMax-M3's) charged as the dense grouped-query
  // attention it selects from, without its indexer, as Megatron-Bridge's
  // function charges the full causal attention its MiniMax-M3 model runs.
  bool block_sparse_as_dense = false;
  DsaGqaRule dsa_gqa = DsaGqaRule::kModel;
  // Kimi Delta Attention's gates charged as Kimi K3's (a full-rank output
  // gate, a forget gate of rank head_dim), as Megatron-Bridge's function does.
  bool kda_gates_as_k3 = false;
  // The delta rule of the gated delta net, the gated delta product and Kimi
  // Delta Attention in the chunked form training runs (false: the recurrent
  // form, the model's).
  bool chunked_delta_rule = false;
  // The residual-stream machinery: counted as model mode does, left out, or
  // counted as a framework's function does.
  HyperConnectionRule hyper_connections = HyperConnectionRule::kCounted;
  NgramMemoryRule ngram_memory = NgramMemoryRule::kModel;
  PerLayerEmbeddingRule per_layer_embedding = PerLayerEmbeddingRule::kModel;
  // DeepSeek-V4.1's candidate consumers score the candidate blocks' entries
  // alone and select among them (false: score every entry they see, as the
  // kernels do, and select among every entry).
  bool candidate_blocks = true;
  // The shared expert's gate (ParameterLayout::shared_expert_gate), h x 1 per
  // token: no mode counts it.
  bool shared_expert_gate = false;
  // A top-k pick of a zero-computation (identity) expert costs nothing (false:
  // every pick is charged as a real expert, as frameworks that know no zero
  // experts charge it).
  bool zero_experts_free = false;
  // Kimi K3's attention residuals: no framework's function counts them.
  bool attention_residuals = false;
};

// trainflops' model mode: every reconciliation starts from it.
constexpr Conventions kModelConventions{
    .mla_output_gate = true, .zero_experts_free = true, .attention_residuals = true};

// Sets `kind` in `to` to `from`'s choice.
void take_choice(ConventionKind kind, const Conventions& from, Conventions& to);

// `c`'s choice for `kind`, as reports name it: "all L^2 pairs", "layers only", ...
std::string choice_text(ConventionKind kind, const Conventions& c);

// Twice the FLOPs of one training iteration over one sequence of `seq_length`
// tokens under `c` (twice, so that L^2/2 pairs stay integers). Preconditions:
// a valid model, seq_length >= 1. Errors: a count that does not fit in 128 bits.
Result<Int128> doubled_flops(const Model& model, const Conventions& c, std::int64_t seq_length);

}  // namespace trainflops

#endif  // TRAINFLOPS_ACCOUNTING_CONVENTION_COUNT_H_
