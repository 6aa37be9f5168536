// The model description: one explicit, validated account of the network that
// every input format (Megatron-LM arguments or flags, the native config) is
// turned into before anything is counted. The formulas read only this.
//
// All sizes are element counts (not bytes). Every layer is a mixer (token
// mixing: attention, a state-space or linear-attention block), a channel mixer
// (MLP or MoE), or both, as in a standard transformer block.
//
// Thread safety: GqaAttention, MlaAttention, DsaIndexer, DsaAttention, DsaGqaAttention,
// CompressedSparseAttention, SharedCompressedAttention, CompressedBlockSparseAttention, GatedDeltaNet,
// Mamba2, GatedDeltaProduct,
// DenseMlp, Moe, Layer, MegatronPath, Model, PipelineSplit, KindCount, Mixer
// and ChannelMixer are plain values: several threads may read one at once, and
// a thread that changes one must be the only one using it. LayerStack: as its
// comment below says. The functions here keep no state of their own: several
// threads may call them at once, given different objects to change.
#ifndef TRAINFLOPS_MODEL_H_
#define TRAINFLOPS_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trainflops/result.h"

namespace trainflops {

// Multi-head or grouped-query softmax attention (hybrid symbol `*`).
struct GqaAttention {
  std::int64_t num_heads = 0;         // n
  std::int64_t num_query_groups = 0;  // g; equal to num_heads for multi-head attention
  // kv_channels. Unset only for models imported from Megatron-LM's hybrid
  // path without kv_channels: the query width is then the hidden size and the
  // key/value width hidden_size * g / n (Megatron's convention), which the
  // exact modes round down when it is not an integer.
  std::optional<std::int64_t> head_dim;
  bool output_gate = false;  // a sigmoid gate of the query width on the output
  // Step-3.5: one sigmoid gate per head on the output, projected from the
  // hidden state (h x num_heads). Not with output_gate.
  bool head_gate = false;
  // Gemma 4: one projection yields the keys, which serve as the values too
  // (K = V: half the key/value projection), or none at all: the layer attends
  // the keys and values of an earlier layer (KV sharing). At most one.
  bool key_is_value = false;
  bool reuses_key_value = false;
  // At most one of these: a query attends the last `window` keys (itself
  // included), or only the keys of its own chunk of `chunk` tokens. Megatron-LM
  // charges both as full causal attention, so megatron mode does too.
  std::optional<std::int64_t> window;
  std::optional<std::int64_t> chunk;

  bool operator==(const GqaAttention&) const = default;
};

// Multi-latent attention (DeepSeek-V2/V3, hybrid symbol `+`).
struct MlaAttention {
  std::int64_t num_heads = 0;
  std::optional<std::int64_t> q_lora_rank;  // unset: queries projected from the hidden state
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_head_dim = 0;          // non-rotary part of a query/key head
  std::int64_t qk_pos_emb_head_dim = 0;  // rotary part
  std::int64_t v_head_dim = 0;
  // Kimi K3: a sigmoid gate on the output, projected from the hidden state to
  // num_heads * v_head_dim (h x n dv multiply-adds per token).
  bool output_gate = false;

  bool operator==(const MlaAttention&) const = default;
};

// DeepSeek Sparse Attention's lightning indexer: it scores every earlier key of
// a query and selects the top-k keys that the attention then attends.
struct DsaIndexer {
  // How the indexer trains, which sets how often its GEMMs execute:
  enum class GradMode {
    kOff,       // no indexer loss: forward only
    kDetached,  // dense KL loss on detached inputs: projections forward + weight
                // gradient, scoring forward + backward over every causal pair
    kSparse,    // sparse KL loss: scoring backward over the selected pairs only
    kFull,      // inputs not detached: every GEMM trains (forward, dgrad, wgrad)
  };
  std::int64_t num_heads = 0;  // nh
  std::int64_t head_dim = 0;   // hd
  // k keys (or k / pool_size pools) per query. Unset: the arguments give no
  // top-k. Megatron-LM's function then scales nothing and charges every causal
  // pair, so megatron mode does too; model and executed modes refuse such a
  // layer (what it attends is undefined), and so does KPool.
  std::optional<std::int64_t> topk;
  GradMode grad_mode = GradMode::kOff;
  // KPool: keys pooled in groups of pool_size; the indexer scores complete
  // pools and selects topk / pool_size of them. 1 means no pooling.
  std::int64_t pool_size = 1;
  bool pool_tail = true;  // also attend the query's incomplete pool
  // Megatron-LM's dev branch (its DSA fix) does not model the sparse loss:
  // its function charges the scoring backward over every causal pair, as for
  // the dense loss; megatron mode does too where this is set.
  bool megatron_charges_dense_loss = false;

  bool operator==(const DsaIndexer&) const = default;
};

// DSA attention (hybrid symbol `D`): MLA projections, core attention over the
// selected keys only, and the indexer on the layers that select their own.
struct DsaAttention {
  MlaAttention mla;
  DsaIndexer indexer;
  // false: the layer reuses the previous layer's top-k selection (index
  // sharing) and runs no indexer of its own.
  bool runs_indexer = true;

  bool operator==(const DsaAttention&) const = default;
};

// DeepSeek Sparse Attention over grouped-query attention (hybrid symbol `D`
// under Megatron-LM's DSA-over-GQA layer spec): grouped-query attention's
// projections and heads, each query attending only the top-k keys that a
// lightning indexer selects. The indexer projects its queries from the hidden
// state (no query LoRA); otherwise it is DSA's, without KPool.
struct DsaGqaAttention {
  GqaAttention attention;  // heads, groups, head width, output gate; no window or chunk
  DsaIndexer indexer;      // pool_size 1
  bool runs_indexer = true;  // as DsaAttention's

  bool operator==(const DsaGqaAttention&) const = default;
};

// DeepSeek-V4 attention (hybrid symbols `W`, `C`, `H`): every kind
// attends a sliding window of `window` keys through single-latent (MQA-style)
// heads of width head_dim; CSA (compression ratio 4) adds the top-k entries of
// a 4x-compressed KV chosen by an indexer, HCA (ratio 128) all entries of a
// 128x-compressed KV. Queries come through a LoRA of q_lora_rank; the output
// through o_groups grouped projections of rank o_lora_rank.
struct CompressedSparseAttention {
  enum class Kind {
    kWindow,  // compression ratio 0
    kCsa,     // 4
    kHca,     // 128
  };
  Kind kind = Kind::kWindow;
  std::int64_t num_heads = 0;  // n
  std::int64_t head_dim = 0;   // dv (v_head_dim)
  std::int64_t q_lora_rank = 0;
  std::int64_t o_groups = 0;
  std::int64_t o_lora_rank = 0;
  std::int64_t window = 0;  // w
  // CSA only: the indexer (nh, hd) and the entries it selects (k).
  std::int64_t indexer_num_heads = 0;
  std::int64_t indexer_head_dim = 0;
  std::int64_t topk = 0;

  bool operator==(const CompressedSparseAttention&) const = default;
};

// The compression ratio of a kind: 0, 4, 128.
std::int64_t compression_ratio(CompressedSparseAttention::Kind kind);
// The kind whose compression ratio is `ratio` (0, 4 or 128); nullopt for any other.
std::optional<CompressedSparseAttention::Kind> compression_kind_of(std::int64_t ratio);

// Training runs a delta rule (the gated delta net's, Kimi Delta
// Attention's) in chunks of chunk_size tokens, and executed mode counts that
// form; 64 is the default of flash-linear-attention's chunk_gated_delta_rule
// and chunk_kda.
inline constexpr std::int64_t kDeltaRuleDefaultChunkSize = 64;

// Gated delta net linear attention (hybrid symbol `G`): num_value_heads
// states of key_head_dim x value_head_dim, each value head reading the keys
// and queries of its group's key head.
struct GatedDeltaNet {
  enum class Variant { kGdn, kGdn2 };
  Variant variant = Variant::kGdn;
  std::int64_t key_head_dim = 0;
  std::int64_t value_head_dim = 0;
  std::int64_t num_key_heads = 0;
  std::int64_t num_value_heads = 0;
  std::int64_t conv_kernel_dim = 0;
  std::int64_t chunk_size = kDeltaRuleDefaultChunkSize;

  bool operator==(const GatedDeltaNet&) const = default;
};

// Mamba-2 state-space mixer (hybrid symbol `M`).
// Megatron-LM's estimate takes every Mamba-2 layer as 2 * hidden_size wide,
// so megatron mode does; the exact modes use inner_dim.
struct Mamba2 {
  std::int64_t inner_dim = 0;  // d: num_heads * head_dim, usually 2 * hidden_size
  std::int64_t num_heads = 0;
  std::int64_t num_groups = 0;
  std::int64_t state_dim = 0;

  bool operator==(const Mamba2&) const = default;
};

// flash-linear-attention's chunk_gated_delta_product, which Megatron-LM's
// gated delta product layers train with, chunks by a fixed 64 (it takes no
// chunk size; the layer's own chunk_size argument does not reach it).
inline constexpr std::int64_t kGatedDeltaProductChunkSize = 64;

// Gated delta product (symbol `M` under a gated-delta-product layer spec):
// num_heads states of state_dim x (inner_dim / num_heads), each head reading
// the keys and queries of its group; num_householder keys, values and betas
// per token, one query and one decay.
struct GatedDeltaProduct {
  std::int64_t inner_dim = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_groups = 0;
  std::int64_t state_dim = 0;
  std::int64_t num_householder = 0;  // H

  bool operator==(const GatedDeltaProduct&) const = default;
};

// Block-sparse grouped-query attention (MiniMax-M3's sparse attention; no
// hybrid symbol). A lightning indexer of `indexer_num_heads` query heads and
// one shared key, each `indexer_head_dim` wide, scores every earlier key of a
// query; the keys are pooled into blocks of `block_size`, and the query
// attends the keys of `topk_blocks` blocks: its own block (up to itself), the
// first `init_blocks` blocks, and the best-scoring others. The selection is
// not differentiable, so the indexer runs forward only.
struct BlockSparseAttention {
  GqaAttention attention;  // heads, groups, head width, output gate; no window or chunk
  std::int64_t indexer_num_heads = 0;
  std::int64_t indexer_head_dim = 0;
  std::int64_t block_size = 0;   // B
  std::int64_t topk_blocks = 0;  // K, the query's own block included
  std::int64_t init_blocks = 0;  // always attended, within the K

  bool operator==(const BlockSparseAttention&) const = default;
};

// Kimi Delta Attention (Kimi Linear, Kimi K3): a gated delta rule whose
// forget gate is per channel. Queries, keys and values are num_heads heads of
// head_dim (P = num_heads * head_dim wide), each through its own h x P
// projection and a depthwise short convolution; beta is one h x num_heads
// projection; the forget gate is low rank (h -> forget_gate_rank -> P), or
// one h x P projection when forget_gate_rank is unset (Megatron-LM's
// KimiDeltaAttention, which projects q, k, v and both gates directly); the
// output passes a gated norm (the gate h x P, or h -> output_gate_rank -> P
// when low rank) and a P x h projection. Training runs the delta rule in
// chunks of chunk_size tokens (kDeltaRuleDefaultChunkSize; chunk_kda's
// kernels take 32 or 64).
struct KimiDeltaAttention {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t conv_kernel_dim = 0;
  std::optional<std::int64_t> forget_gate_rank;  // unset: a full-rank h x P gate
  std::optional<std::int64_t> output_gate_rank;  // unset: a full-rank h x P gate
  std::int64_t chunk_size = kDeltaRuleDefaultChunkSize;

  bool operator==(const KimiDeltaAttention&) const = default;
};

// Qwen3.8's sparse attention (QSA; no hybrid symbol): grouped-query attention
// whose query attends the keys of the `budget / block_size` best-scoring
// complete blocks of `block_size` keys, and every key of its own incomplete
// block (up to itself). A forward-only indexer projects indexer_num_heads
// query heads and indexer_key_heads key heads of indexer_head_dim from the
// hidden state; each complete block's index keys are pooled (averaged) into
// one, which the query heads score.
struct CompressedBlockSparseAttention {
  GqaAttention attention;  // heads, groups, head width, output gate; no window or chunk
  std::int64_t indexer_num_heads = 0;
  std::int64_t indexer_key_heads = 0;
  std::int64_t indexer_head_dim = 0;
  std::int64_t block_size = 0;  // r: keys per pooled index key (indexer_compress_ratio)
  std::int64_t budget = 0;      // keys of complete blocks attended, a multiple of block_size

  bool operator==(const CompressedBlockSparseAttention&) const = default;
};

// DeepSeek-V4.1 attention (CSA2; no hybrid symbol): DeepSeek-V4's
// single-latent heads of width head_dim, query LoRA, grouped output LoRA and
// sliding window, with compressed key/value caches shared between layers. A
// layer reads the cache of its `compress_ratio` (0: the window alone) and
// attends, besides its window, the `topk` entries chosen by its own indexer
// or by the last index source before it. Only the layer that writes a cache
// (its KV source) runs the compressor: h x head_dim per token, and for a
// ratio above 1 a softmax gate of the same size that pools `compress_ratio`
// tokens into an entry. An index source projects indexer queries from the
// query LoRA and head weights from the hidden state, and scores the entries;
// the KV source projects each entry to an index key (head_dim x
// indexer_head_dim). Two-level top-k: the candidate source keeps the
// `candidate_blocks` best blocks of `candidate_block_size` entries (the
// query's own block always among them), and the indexers after it choose
// their top-k within those blocks only. The selection is not
// differentiable: the indexer runs forward only.
struct SharedCompressedAttention {
  enum class CandidateRole {
    kNone,      // scores every entry it sees
    kSource,    // scores every entry and keeps the candidate blocks
    kConsumer,  // scores the entries of the candidate blocks
  };
  std::int64_t num_heads = 0;  // n
  std::int64_t head_dim = 0;   // dv
  std::int64_t q_lora_rank = 0;
  std::int64_t o_groups = 0;
  std::int64_t o_lora_rank = 0;
  std::int64_t window = 0;          // w
  std::int64_t compress_ratio = 0;  // r: 0, or the tokens per entry of the cache read
  bool writes_cache = false;        // the cache's KV source: runs the compressor
  bool runs_indexer = false;        // an index source
  std::int64_t indexer_num_heads = 0;
  std::int64_t indexer_head_dim = 0;
  std::int64_t topk = 0;  // k entries attended per query (r > 0)
  CandidateRole candidate_role = CandidateRole::kNone;
  std::int64_t candidate_blocks = 0;      // K
  std::int64_t candidate_block_size = 0;  // B entries

  bool operator==(const SharedCompressedAttention&) const = default;
};

using Mixer = std::variant<GqaAttention, MlaAttention, DsaAttention, CompressedSparseAttention, GatedDeltaNet, Mamba2,
                           GatedDeltaProduct, BlockSparseAttention, KimiDeltaAttention, SharedCompressedAttention,
                           CompressedBlockSparseAttention, DsaGqaAttention>;

// Dense MLP (hybrid symbol `-`): h -> ffn -> h, with a gated (SwiGLU) input
// projection of twice the width when `gated`.
struct DenseMlp {
  std::int64_t ffn_hidden_size = 0;
  bool gated = false;
  // A gated MLP whose activation is not SwiGLU (Megatron-LM's --quick-geglu):
  // Megatron-LM's estimate charges it as ungated, so megatron mode does too.
  bool megatron_charges_ungated = false;

  bool operator==(const DenseMlp&) const = default;
};

// Mixture of experts (hybrid symbol `E`). Each token runs `topk` routed experts
// of `expert_ffn_hidden_size`, plus the shared expert when its size is set.
struct Moe {
  std::optional<std::int64_t> num_experts;  // does not change FLOPs; kept for reports
  std::int64_t topk = 0;
  std::int64_t expert_ffn_hidden_size = 0;
  std::optional<std::int64_t> shared_expert_ffn_hidden_size;
  // Routed experts run in a latent space of this size, entered and left through
  // h x latent projections.
  std::optional<std::int64_t> latent_size;
  bool gated = false;
  bool megatron_charges_ungated = false;  // as DenseMlp's
  // Zero-computation (identity) experts, LongCat-Flash's: the router picks
  // topk among the routed experts and these, and a token sent to one passes
  // through unchanged, at no cost. How many of its topk picks are real experts
  // depends on the data: real_experts_per_token (0 to topk), set whenever
  // zero_experts is, counts them per token in model and executed modes;
  // megatron mode charges every pick as a real expert, as Megatron-LM (which
  // has no zero experts) would.
  std::optional<std::int64_t> zero_experts;
  std::optional<std::int64_t> real_experts_per_token;
  // Routes by a fixed table of token ids (DeepSeek-V4's first num_hash_layers
  // layers): the router still scores the experts (the picks' weights) but
  // holds no expert bias. It changes parameters only, no FLOPs.
  bool hash_routed = false;

  bool operator==(const Moe&) const = default;
};

using ChannelMixer = std::variant<DenseMlp, Moe>;

// Hashed n-gram memory (Engram in DeepSeek-V4.1 and LongCat-2.0, per-layer
// embeddings in Qwen3.8): each token's preceding n-grams are hashed into
// embedding tables, and the rows looked up (e wide in all) are projected to a
// key per residual stream (streams x h) and one value (h). Each stream's gate is
// the dot product of its key with the stream; the gated value is added to every
// stream, and a depthwise causal convolution of `conv_kernel` taps runs over
// the streams x h channels. The lookups cost no FLOPs: the tables are
// parameters only.
struct NgramMemory {
  std::int64_t embed_dim = 0;  // e: the looked-up rows, concatenated
  std::int64_t streams = 1;    // the residual streams (Model::hyper_connections), 1 without
  std::int64_t conv_kernel = 0;
  std::int64_t table_parameters = 0;  // the tables' weights, for parameter counts

  bool operator==(const NgramMemory&) const = default;
};

// Per-layer embeddings (Gemma 4 E2B and E4B): each layer has its own token
// embedding of `dim` values (a table of `vocabulary` rows looked up by the
// token), added to a slice of `dim` of one model-level projection of the
// token's embedding (h x layers * dim, the slice is this layer's h x dim).
// After the channel mixer the layer projects its hidden state to a gate of
// `dim` (h x dim), multiplies the gate (after a GELU) by that embedding, and
// projects the product back to h (dim x h), added to the residual stream.
struct PerLayerEmbedding {
  std::int64_t dim = 0;         // hidden_size_per_layer_input
  std::int64_t vocabulary = 0;  // vocab_size_per_layer_input: the table's rows

  bool operator==(const PerLayerEmbedding&) const = default;
};

struct Layer {
  std::optional<Mixer> mixer;  // at least one of the two is set
  std::optional<ChannelMixer> channel_mixer;
  // Added to the residual streams before the mixer (initialized here so that
  // layers built from a mixer and a channel mixer alone need not name it).
  std::optional<NgramMemory> ngram_memory = std::nullopt;
  // Added to the residual stream after the channel mixer.
  std::optional<PerLayerEmbedding> per_layer_embedding = std::nullopt;

  bool operator==(const Layer&) const = default;
};

// The layers of a decoder or of one MTP depth, in order. Models repeat a few
// distinct layers many times (a `repeat` of a config, 75 identical MoE layers),
// so the stack holds each distinct layer once and the order as runs of them:
// building, validating and counting cost the number of distinct layers and
// runs, never the number of layers. Reading it position by position (size(),
// operator[], iteration) sees every layer, as a std::vector<Layer> would.
// Thread safety: a value; several threads may read one at once, and a thread
// that changes one must be the only one using it.
class LayerStack {
 public:
  struct Run {
    std::size_t layer = 0;   // index into distinct()
    std::int64_t start = 0;  // the position of its first layer
    std::int64_t count = 0;  // consecutive positions holding it, > 0
  };

  LayerStack() = default;
  LayerStack(std::initializer_list<Layer> layers);
  // The layers in order (equal ones are stored once).
  LayerStack(const std::vector<Layer>& layers);  // NOLINT(google-explicit-constructor): the same sequence

  // Appends `count` (> 0) copies of `layer`; returns its index in distinct().
  // A layer equal to one already held is not stored again.
  std::size_t append(const Layer& layer, std::int64_t count = 1);
  void push_back(const Layer& layer) { append(layer); }
  // Replaces the layer at `position` (< size()) alone.
  void set(std::size_t position, const Layer& layer);
  // Calls `edit(Layer&)` once per distinct layer: every position changes alike.
  template <typename Edit>
  void edit_each(Edit&& edit) {
    for (Layer& layer : distinct_) edit(layer);
  }

  std::size_t size() const { return static_cast<std::size_t>(size_); }
  bool empty() const { return size_ == 0; }
  // The layer at `position` (< size()), found by binary search over the runs.
  const Layer& operator[](std::size_t position) const;
  // The first and the last layer; the stack must not be empty.
  const Layer& front() const { return distinct_[runs_.front().layer]; }
  const Layer& back() const { return distinct_[runs_.back().layer]; }

  // The distinct layers, in the order of their first positions.
  const std::vector<Layer>& distinct() const { return distinct_; }
  const std::vector<Run>& runs() const { return runs_; }

  // Every position in order.
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Layer;
    using difference_type = std::ptrdiff_t;
    using pointer = const Layer*;
    using reference = const Layer&;
    Iterator() = default;
    Iterator(const LayerStack* stack, std::size_t run) : stack_(stack), run_(run) {}
    reference operator*() const { return stack_->distinct_[stack_->runs_[run_].layer]; }
    pointer operator->() const { return &**this; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const Iterator& other) const { return run_ == other.run_ && within_ == other.within_; }

   private:
    const LayerStack* stack_ = nullptr;
    std::size_t run_ = 0;
    std::int64_t within_ = 0;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, runs_.size()); }

  // The same layers in the same order, however they are stored.
  bool operator==(const LayerStack& other) const;

 private:
  friend class LayerStackBuilder;  // the library's builders (src/model/layer_stack_builder.h)

  void append_again(std::size_t distinct_index, std::int64_t count) {
    if (!runs_.empty() && runs_.back().layer == distinct_index) {
      runs_.back().count += count;
    } else {
      runs_.push_back({distinct_index, size_, count});
    }
    size_ += count;
  }

  std::vector<Layer> distinct_;
  std::vector<Run> runs_;
  std::int64_t size_ = 0;
};

// Hyper-connections: the residual stream widened to `streams` copies of the
// hidden state, read into each sublayer (mixer, channel mixer) of every layer
// and written back by learned per-token coefficients; a last read collapses the
// streams before each output head.
struct HyperConnections {
  enum class Variant {
    // Manifold-constrained (mHC, DeepSeek-V4; Megatron-LM's
    // --enable-hyper-connections): per sublayer one projection of the
    // flattened streams (streams x h) to streams^2 + 2 streams coefficients
    // (read, write, and a streams x streams mixing made doubly stochastic by
    // Sinkhorn iterations); the read weights the streams into one input, the
    // write adds the output to each stream, the mixing mixes the streams. The
    // head projects to `streams` read weights only.
    kManifold,
    // Gated residual (Qwen3.8's mhc_variant "gated_residual"): per sublayer a
    // low-rank gate (streams x h -> rank -> streams x h) whose gated streams
    // are averaged into the input, and a projection to `streams` write gates
    // that add the output to each stream; the head has the gate alone.
    kGatedResidual,
  };
  Variant variant = Variant::kManifold;
  std::int64_t streams = 0;  // n (hc_mult, hc_count, --mhc-num-residual-streams)
  std::int64_t rank = 0;     // gated residual only: the gate's rank (hc_lowrank)

  bool operator==(const HyperConnections&) const = default;
};

// "mhc" or "gated_residual".
std::string_view hyper_connection_variant_name(HyperConnections::Variant variant);

// Attention residuals (AttnRes, Kimi K3's attn_res_block_size): in place of
// the residual sum, the decoder keeps a list of sources for each token (the
// embedding, then the sum of the outputs of each block of `block_size`
// layers, sealed as the next block starts, then the running sum of the
// current block) and each sublayer reads its input as a softmax-weighted sum
// of them: the sources RMS-normalized, scored by a learned h x 1 projection
// (one per sublayer), the weights applied to the sources. Before layer l
// (0-based) the mixer reads ceil(l / block_size) + 1 sources (layer 0's reads
// the embedding alone, with no weighting) and the channel mixer
// floor(l / block_size) + 2; a last read of ceil(layers / block_size) + 1
// sources feeds the final norm and the output layer. MTP depths keep a plain
// residual.
struct AttentionResiduals {
  std::int64_t block_size = 0;  // decoder layers per block (attn_res_block_size)

  bool operator==(const AttentionResiduals&) const = default;
};

// Which of Megatron-LM's two accounting functions reproduces this model in
// `megatron` mode. The hybrid one ignores the attention output gate and, on
// Megatron-LM's main branch, omits the MTP projections; its dev branch's
// charges them (kHybridWithMtpProjection). The exact modes count both on
// every path.
enum class MegatronPath { kStandard, kHybrid, kHybridWithMtpProjection };

// The most decoder layers a model may have, and the most layers in all its
// MTP depths: published models have a few hundred, so a larger number is a
// mistake in the input, and reports list every layer.
inline constexpr std::int64_t kMaxLayers = 100000;

// "num_layers = 20000000: must be at most 100000 (kMaxLayers: ...)"; Ok when
// `count` is within the limit.
Status check_layer_count(std::string_view field, std::int64_t count);

// What a model holds besides the weights of its products, and whether its
// output layer is its embedding table. None of it changes FLOPs (the modes
// count products); parameters.h counts it.
struct ParameterLayout {
  enum class Normalization {
    kRmsNorm,    // a weight per element
    kLayerNorm,  // a weight and a bias per element
  };
  // Norms of the queries and keys (Megatron-LM's --qk-layernorm): one norm of
  // head_dim shared by the heads, or one over all heads together.
  enum class QkNorm { kNone, kPerHead, kAllHeads };
  Normalization normalization = Normalization::kRmsNorm;
  QkNorm qk_norm = QkNorm::kNone;
  // A bias on every projection, the router included (Megatron-LM's
  // add_bias_linear).
  bool linear_biases = false;
  bool qkv_biases = false;          // on the query, key and value projections alone (add_qkv_bias)
  bool attention_sinks = false;     // a learnable logit per head (softmax_type "learnable")
  bool expert_bias = false;         // the router's load-balancing bias, one per expert
  bool shared_expert_gate = false;  // a sigmoid gate (h x 1) on the shared expert's output
  bool tied_embedding = false;      // the output layer is the embedding table
  // Gemma's sandwich norms: each sublayer's output passes a norm of h before
  // it joins the residual (the post-attention and post-feedforward norms),
  // beside the sublayer's input norm. In a MoE beside a shared expert (Gemma
  // 4's MoE block) the routed experts also have their own input norm and each
  // branch its own output norm.
  bool sublayer_output_norms = false;
  // Gemma 4's router: a scale per input channel (h) on its normalized input
  // and a scale per expert on the selected experts' weights.
  bool router_scales = false;
  bool layer_scalars = false;  // a scalar multiplying each layer's output (Gemma 4's layer_scalar)
  // A norm of the latent width on a latent MoE's combined routed output,
  // before its projection back to h (Kimi K3's latent_moe_use_norm).
  bool latent_expert_norm = false;

  bool operator==(const ParameterLayout&) const = default;
};

struct Model {
  std::string name;  // optional, for reports
  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;  // the padded vocabulary the logits are computed over
  LayerStack layers;            // the decoder, in order
  // Multi-token prediction: one entry per depth, each with its own layers. Every
  // depth also has a 2h -> h projection with norms and its own logits.
  std::vector<LayerStack> mtp_depths;
  ParameterLayout parameter_layout;
  // Every decoder and MTP layer's sublayers read and write the residual
  // streams through these; unset: one plain residual stream.
  std::optional<HyperConnections> hyper_connections;
  // The decoder's sublayers and output layer read their inputs through
  // these; unset: a plain residual sum.
  std::optional<AttentionResiduals> attention_residuals;
  MegatronPath megatron_path = MegatronPath::kStandard;
  // The seq_length Megatron-LM's accounting reads for packed batches: only its
  // DeepSeek-V4 sparse attention estimate uses it.
  std::optional<std::int64_t> megatron_seq_length;
  // The model_type at the top of the Hugging Face config the model was
  // imported from ("qwen3_5_moe" for Qwen3.5-35B-A3B's multimodal release,
  // "qwen3_5_moe_text" for a text-only one); empty for every other source.
  // Counting ignores it: it names the config class by which NeMo Automodel
  // picks its formula (compare).
  std::string hf_model_type;
  // Pipeline parallelism, when the input splits the decoder into stages (`|`
  // in a hybrid layer pattern): the number of decoder layers in each stage,
  // in order; a stage may hold none. Empty: the input names no stages.
  // Counting ignores it; pipeline.h reports the FLOPs of each stage.
  std::vector<std::int64_t> pipeline_stage_layers;
};

// How to split the decoder, as Megatron-LM's arguments say it.
struct PipelineSplit {
  std::optional<std::int64_t> stages;  // pipeline_stages (--pipeline-model-parallel-size)
  // Megatron-LM's uneven split: the first and/or last stage hold this many
  // decoder layers, the others share the rest evenly.
  std::optional<std::int64_t> first_stage_layers;  // decoder_first_pipeline_num_layers
  std::optional<std::int64_t> last_stage_layers;   // decoder_last_pipeline_num_layers
  // Megatron-LM's virtual pipeline: model chunks per stage, interleaved
  // (num_virtual_stages_per_pipeline_rank).
  std::optional<std::int64_t> virtual_stages;
  // Megatron-LM's pipeline_model_parallel_layout: every chunk's layers, e.g.
  // "Et*3|(tt|)*29,m|L" (pipeline.h).
  std::optional<std::string> layout;

  bool given() const { return stages || first_stage_layers || last_stage_layers || virtual_stages || layout; }
};

// "off", "detached", "sparse", "full"; parse_grad_mode() fails with
// "grad_mode = \"<text>\": must be one of off, detached, sparse, full".
std::string_view grad_mode_name(DsaIndexer::GradMode mode);
Result<DsaIndexer::GradMode> parse_grad_mode(std::string_view text);

// Sets how every DSA indexer of `model` trains, whatever the model was read
// from: Hugging Face configs and presets describe the architecture, not the
// training. Fails, leaving `model` unchanged, when it has no DSA layer (KPool's
// rule that its indexer does not train is checked by validate()).
Status set_dsa_indexer_grad_mode(Model& model, DsaIndexer::GradMode mode);

// Sets how many of each token's top-k picks are real experts on every MoE
// layer with zero experts: a measured value (the average over the data, in
// whole experts) in place of the nominal one a release's import assumes.
// Fails, leaving `model` unchanged, when it has no zero experts
// ("real_experts_per_token = 8: the model has no zero experts, ...") or
// when `real` is outside 0..topk ("real_experts_per_token = 13: must be
// between 0 and topk = 12").
Status set_real_experts_per_token(Model& model, std::int64_t real);

// Checks every size of `model` (positive, groups dividing heads, ...). Errors
// name the field by its path, e.g.
//   "layers[3].mixer.num_heads = 0: must be a positive integer".
Status validate(const Model& model);

// Ok when every DSA layer of `model` has a top-k, else the first one without,
// e.g. "layers[0].mixer.indexer.topk is missing: model mode counts the keys a
// DSA layer selects (only megatron mode counts a layer without a top-k, as
// Megatron-LM's function does: every causal pair)". `mode` names the count.
Status check_dsa_topk_given(const Model& model, std::string_view mode);

// Short names used in reports: "gqa" ("swa" with a window, "chunked" with
// chunks), "mla", "dsa" ("dsa-shared" when the layer reuses another's top-k),
// "dsa-gqa" ("dsa-gqa-shared"),
// "window", "csa", "hca", "gdn", "gdn2", "mamba2", "gdp", "block-sparse", "kda",
// "csa2" ("csa2-window" without a cache), "qsa";
// "mlp", "moe".
std::string mixer_kind(const Mixer& mixer);
std::string channel_mixer_kind(const ChannelMixer& channel_mixer);
// "mla+moe", "dsa-shared+moe", "mamba2", "mlp", ...
std::string layer_kind(const Layer& layer);

// One line for reports: "78 layers (3 mla+mlp, 75 mla+moe) + 1 MTP depth,
// hidden 6144, vocab 154880".
std::string summarize(const Model& model);

// The same line from its parts: the decoder's layers as kinds with their
// counts, in order (a kind that comes again is counted with its first).
struct KindCount {
  std::string_view kind;
  std::int64_t count = 0;
};
std::string summarize(std::string_view name, std::span<const KindCount> layers, std::size_t mtp_depths,
                      std::int64_t hidden_size, std::int64_t vocab_size);

}  // namespace trainflops

#endif  // TRAINFLOPS_MODEL_H_
