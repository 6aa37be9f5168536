// Parameter counting: the total and the active parameters of a model, with
// their breakdown by part, by component and by layer.
//
// What is counted: the weight matrices of every product the FLOPs count
// (README, "Modes"), and the embedding table.
//   - GQA attention (`*`): q (h x n hd), k and v (h x g hd each), the output
//     gate (h x n hd) or the per-head gate (h x n) when set, and the output
//     projection (n hd x h). Without a head_dim (Megatron-LM's hybrid path
//     without kv_channels) the query width is h and the key/value width
//     h g / n, rounded down. A sliding window or chunking changes no weight.
//   - MLA (`+`): with q LoRA h x q_lora + q_lora x n (qk + rope), without it
//     h x n (qk + rope); h x (kv_lora + rope) and kv_lora x n (qk + v) for keys
//     and values; n v x h for the output.
//   - DSA (`D`): MLA's, plus on a layer that runs its own indexer the
//     indexer's q_lora (or h) x nh hd queries, h x hd key and h x nh head
//     weights, and with KPool the h x hd gate. A layer that reuses another
//     layer's top-k has no indexer of its own.
//   - DeepSeek-V4 attention (`W`, `C`, `H`), from its per-token products
//     (docs/accounting.md, 9): h x q_lora + q_lora x n dv for queries, h x dv for the single
//     key/value latent, n dv x o_lora and o_groups o_lora x h for the grouped
//     output; the compressor (4 h dv for CSA, 2 h dv for HCA); CSA's indexer
//     (4 h hd for its compressor, q_lora x nh hd, h x nh). Its layout adds
//     the query LoRA's and the latent's norms (q_lora + dv), a sink per head,
//     and per compressor a position bias per pooled token and output (4 x 2
//     dv at CSA, 128 x dv at HCA; 4 x 2 hd for CSA's indexer, biases) and the
//     norm of its entries (dv; hd).
//   - DeepSeek-V4.1 attention (CSA2): DeepSeek-V4's query, latent and output
//     projections; on a cache's source layer the compressor (h x dv, and a
//     gate of h x dv above ratio 1); on an index source q_lora x nh hd and h
//     x nh, and on one that is also the cache's source the dv x hd index keys.
//   - Qwen3.8's sparse attention (QSA): grouped-query attention's, plus the
//     indexer's h x (nh + kh) hd query and key projections and its two norms
//     of hd.
//   - Gated delta net (`G`): the input projection h x in (in = 2 qkd + 2 vd +
//     2 nv, gdn2: 4 qkd + 3 vd), the depthwise convolution (2 qkd + vd) x
//     conv_kernel_dim, the output projection vd x h.
//   - Mamba-2 (`M`): the input projection h x (2 d + 2 groups state + heads),
//     the depthwise convolution (d + 2 groups state) x kMambaConvKernel, the
//     output projection d x h.
//   - Gated delta product: the input projection h x (1 + H)(d + groups state +
//     heads), the convolution 4 (d H + groups state (1 + H)), the output d x h.
//   - Kimi Delta Attention (P = heads x head_dim): q, k, v and output h x P
//     each, beta h x heads, the forget gate h x rank + rank x P, the output gate
//     h x P (low rank: h x rank + rank x P), the convolutions 3 P x kernel.
//   - Dense MLP (`-`): h x ffn and ffn x h, and the gate h x ffn when gated.
//   - MoE (`E`): every routed expert (num_experts of them, as a dense MLP of
//     expert_ffn_hidden_size, or in the latent space of latent_size with the
//     h x latent down and latent x h up projections), the shared expert, the
//     router (h x num_experts).
//   - MTP: each depth's 2h x h projection and its layers; the depths share
//     the embedding and the output layer with the main model (Megatron-LM).
//   - Hyper-connections: per sublayer n h (n^2 + 2n) (mHC) or 2 n h rank +
//     n h n (gated residual), per output head n h n or 2 n h rank, counted
//     with the output layer (the MTP depth's with its projection).
//   - Hashed n-gram memory: its key, value and convolution weights; its
//     tables count in the total, never as active (they are looked up).
//   - Per-layer embeddings, per layer: its h x p slice of the model-level
//     projection, the h x p gate and the p x h projection back, and its
//     norm (h); its vocabulary x p slice of the table, in the total, never
//     active. The model-level projection's norm (p, shared by the layers) is
//     not counted.
//   - Attention residuals: per decoder layer two h x 1 scoring projections,
//     and one before the final norm, counted with the output layer.
//   - The embedding table (V x h) and the output layer (h x V), counted apart
//     unless the embedding is tied (below).
// Besides the weights of products, every parameter of the model's layout
// (model.h, ParameterLayout), by kind:
//   - norms: one per mixer and one per channel mixer (a layer with both has
//     two; with sublayer_output_norms, Gemma's, twice that, and in a MoE
//     beside a shared expert three more), the attention residuals' (one per
//     projection), the final norm, each MTP depth's three (its embedding's, its
//     hidden state's, its output's); MLA's and DeepSeek-V4.1's q LoRA and
//     latent norms (and V4.1's compressed latent's and index keys'), the DSA
//     indexer's key LayerNorm (weight and bias of hd), the gated delta net's
//     output norm (vd / heads, shared by the heads), Mamba-2's gated norm (d);
//     the query and key norms when set (no key norm on a layer that reuses
//     another layer's keys); a LayerNorm has twice an RMSNorm's;
//   - biases, when set: every projection's (linear_biases: the router's too,
//     each expert's) or the query, key and value projections' (qkv_biases);
//     Mamba-2's convolution bias (d + 2 groups state);
//   - per-head scalars: attention sinks (n), Mamba-2's A, D and dt bias (3
//     heads), the gated delta net's A and dt bias (2 value heads), Kimi Delta
//     Attention's A (heads) and forget gate bias (P), and its output norm
//     (head_dim, shared by the heads);
//   - manifold hyper-connections' static parameters over n streams: per
//     sublayer (2 + n) n mixing biases and 3 scales, per head n biases and a
//     scale (biases and per-head scalars);
//   - the router's expert bias (one per expert, none on a hash-routed MoE)
//     and the shared expert's gate (h); with router_scales (Gemma 4) the
//     router's input scale (h, a norm) and its per-expert scales (per-head
//     scalars); with layer_scalars a per-head scalar per layer; with
//     latent_expert_norm (Kimi K3) a norm of the latent width per latent MoE;
//   - the router (h x experts), counted with the MoE components.
// With a tied embedding the output layer is the embedding table: counted
// once, as the embedding, and active (a token multiplies by all of it).
// Not counted: the gated delta product's scalars and the gated-residual
// hyper-connections' static parameters.
//
// Active parameters are those one token's products use: every weight above
// except the experts the router does not select (a token uses topk routed
// experts, the shared expert and the router), and except the embedding table,
// which a token reads one row of (a lookup, not a product). They are the N of
// "6 N FLOPs per token": in model mode a training iteration costs 6 FLOPs
// per token per active parameter, plus core attention and the few terms that
// are not products of a weight (docs/presets.md).
//
// Thread safety: ParameterCount, ComponentParameters, LayerParameters and
// ModelParameters are plain values: several threads may read one at once, and a
// thread that changes one must be the only one using it. The functions here
// keep no state of their own: several threads may call them at once, given
// different objects to change.
#ifndef TRAINFLOPS_PARAMETERS_H_
#define TRAINFLOPS_PARAMETERS_H_

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/component.h"
#include "trainflops/int128.h"
#include "trainflops/model.h"
#include "trainflops/parameter_part.h"
#include "trainflops/result.h"

namespace trainflops {

// Megatron-LM's Mamba mixer convolves with a kernel of 4 (its d_conv; no
// argument sets it).
inline constexpr int kMambaConvKernel = 4;

// What kind of parameter: only product weights cost FLOPs per token (6 per
// token per active one in model mode); the router is a product that model
// mode does not count, and the rest enter no product.
enum class ParameterKind {
  kWeight,          // the weight of a product model mode counts
  kEmbeddingTable,  // read one row per token (with a tied embedding, also the output layer's weight)
  kRouter,          // the MoE router's weight
  kNorm,
  kBias,
  kPerHeadScalar,  // attention sinks, Mamba-2's and the gated delta net's A, D, dt bias
  kExpertBias,     // the router's load-balancing bias
  kGate,           // the shared expert's gate
  kLookupTable,    // n-gram memory's and per-layer embeddings' tables: rows read per token, never active
};
inline constexpr ParameterKind kAllParameterKinds[] = {
    ParameterKind::kWeight, ParameterKind::kEmbeddingTable, ParameterKind::kRouter,     ParameterKind::kNorm,
    ParameterKind::kBias,   ParameterKind::kPerHeadScalar,  ParameterKind::kExpertBias, ParameterKind::kGate,
    ParameterKind::kLookupTable,
};
// "weight", "embedding_table", "router", "norm", "bias", "per_head_scalar",
// "expert_bias", "gate", "lookup_table" (JSON keys and report rows).
std::string_view parameter_kind_name(ParameterKind kind);
// Whether model mode charges FLOPs per token for it: kWeight alone.
bool costs_flops_per_token(ParameterKind kind);

// A count of parameters: all of them, and those one token uses.
struct ParameterCount {
  Int128 total = 0;
  Int128 active = 0;
};

// The parameters of one component (projections of attention, MoE experts,
// ...): the same Component names as the FLOPs breakdown; kLogits is the
// output layer, kMtp the MTP projections.
struct ComponentParameters {
  Component component;
  ParameterCount count;
};

// One row per layer, named as the FLOPs report names them: "embedding",
// "decoder.1" ..., "mtp1.projection", "mtp1.1" ..., and "output_layer".
struct LayerParameters {
  std::string name;
  std::string kind;  // layer_kind(), or "embedding", "projection", "output_layer"
  ParameterCount count;
};

struct KindParameters {
  ParameterKind kind;
  ParameterCount count;
};

struct ModelParameters {
  ParameterCount embedding;  // active is 0, unless the output layer is the table (tied)
  ParameterCount output_layer;
  ParameterCount decoder;
  ParameterCount mtp;
  // The weights of products and the router, by component (the embedding
  // table and the parameters that enter no product apart).
  std::vector<ComponentParameters> components;  // non-zero ones, in Component order
  // Every parameter by kind, non-zero ones in kAllParameterKinds order; they
  // sum to total().
  std::vector<KindParameters> kinds;
  std::vector<LayerParameters> layers;          // embedding, decoder, MTP, output layer

  // Every parameter: the embedding, the output layer, the decoder and the MTP
  // depths. The components and the layers each sum to it.
  ParameterCount total() const;
  // The parameters model mode charges FLOPs per token for (kWeight, and a
  // tied embedding table, which is the output layer's weight), and the rest;
  // the two sum to total().
  ParameterCount costing_flops() const;
  ParameterCount not_costing_flops() const;
  // The main model, without the MTP depths (what model cards usually count).
  ParameterCount main_model() const;
  // The sum over `parts`; with `embedding_table_active`, the embedding counts
  // among the active parameters with its whole table (as publications that
  // count it among active parameters do).
  ParameterCount sum(const std::vector<ParameterPart>& parts, bool embedding_table_active = false) const;
};

// The parameters of one layer of a model with `hidden_size` and `layout`, by
// kind (non-zero ones, in kAllParameterKinds order), without the model's
// hyper-connections (they belong to the model, not the layer). Errors: an MoE layer
// without num_experts ("layer.channel_mixer.num_experts is missing: ...").
Result<std::vector<KindParameters>> layer_parameters(const Layer& layer, std::int64_t hidden_size,
                                                     const ParameterLayout& layout);

// Counts the parameters of a validated model. Errors: an invalid model; an MoE
// layer without num_experts ("layers[3].channel_mixer.num_experts is missing:
// the total parameters count every expert").
Result<ModelParameters> count_parameters(const Model& model);
// The same without ModelParameters::layers (left empty): the totals a
// report's summary needs, at the cost of the distinct layers, not of a row
// per layer.
Result<ModelParameters> count_parameter_totals(const Model& model);

// "744B", "40.3B", "8.03B", "135M": three significant digits with a suffix
// (K, M, B, T).
std::string format_parameters(Int128 count);

}  // namespace trainflops

#endif  // TRAINFLOPS_PARAMETERS_H_
