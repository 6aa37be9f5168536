// What the files that count the layer types share, one file per family:
// attention_flops.cc (GQA, MLA), dsa_flops.cc (DSA over MLA or GQA, and its indexer),
// block_sparse_flops.cc (block-sparse GQA), compressed_block_sparse_flops.cc (Qwen3.8's QSA),
// compressed_attention_flops.cc (DeepSeek-V4), shared_compressed_attention_flops.cc
// (DeepSeek-V4.1), linear_attention_flops.cc
// (gated delta net and product, Kimi Delta Attention), mamba_flops.cc, mlp_flops.cc (dense MLP,
// MoE). Each layer type has one append_terms() overload, which appends its
// terms to a list (layer_flops.h's functions return the same terms as a new
// list); layer_flops.cc visits Mixer and ChannelMixer onto these overloads,
// so a type added to a variant without one does not compile.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_LAYER_TERMS_H_
#define TRAINFLOPS_SRC_ACCOUNTING_LAYER_TERMS_H_

#include <cstdint>

#include "trainflops/layer_flops.h"

namespace trainflops {

// A GEMM (or convolution) of `fmas` multiply-adds per unit that trains normally.
inline Term trained_gemm(Component component, Statistic per, Int128 fmas) {
  return Term{component, per, kFlopsPerFma * fmas, 1, kTrainingExpansion};
}

// Work Megatron-LM counts in FLOPs rather than FMAs (the Mamba scan), trained
// with the same expansion.
inline Term trained_flops(Component component, Statistic per, Int128 flops) {
  return Term{component, per, flops, 1, kTrainingExpansion};
}

// Appends the terms of one mixer or channel mixer of a model of `hidden_size`
// to `terms`, as layer_flops.h describes them.
void append_terms(const GqaAttention& attention, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const MlaAttention& attention, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const DsaAttention& attention, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const DsaGqaAttention& attention, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const CompressedSparseAttention& attention, std::int64_t hidden_size, Convention convention,
                  Terms& terms);
void append_terms(const CompressedBlockSparseAttention& attention, std::int64_t hidden_size, Convention convention,
                  Terms& terms);
void append_terms(const SharedCompressedAttention& attention, std::int64_t hidden_size, Convention convention,
                  Terms& terms);
void append_terms(const BlockSparseAttention& attention, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const GatedDeltaNet& gdn, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const GatedDeltaProduct& gdp, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const KimiDeltaAttention& kda, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const Mamba2& mamba, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const Moe& moe, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const NgramMemory& memory, std::int64_t hidden_size, Convention convention, Terms& terms);
void append_terms(const PerLayerEmbedding& embedding, std::int64_t hidden_size, Convention convention, Terms& terms);
// A layer's hyper-connections, around each of its `sublayers` (0 to 2).
void append_terms(const HyperConnections& hc, std::int64_t sublayers, std::int64_t hidden_size, Convention convention,
                  Terms& terms);

// The attention residuals of a decoder of `layers` layers.
void append_terms(const AttentionResiduals& residuals, std::int64_t layers, std::int64_t hidden_size,
                  Convention convention, Terms& terms);

// The weights of one sublayer's hyper-connections (their coefficient or gate
// projections), or of a head's final read: multiply-adds per token.
Int128 hyper_connection_weights(const HyperConnections& hc, Int128 h, bool head);
// N-gram memory's gates (each stream's dot product with its key) and gated
// value: multiply-adds per token, part of its terms.
Int128 ngram_memory_gate_fmas(const NgramMemory& memory, std::int64_t hidden_size);
// A per-layer embedding's product of the gate and the embedding, per token:
// the part MaxText's function leaves out.
Int128 per_layer_embedding_product_fmas(const PerLayerEmbedding& embedding);

// The terms append_terms() gives `part`, as a new list.
template <typename LayerPart>
Terms terms_of(const LayerPart& part, std::int64_t hidden_size, Convention convention) {
  Terms terms;
  append_terms(part, hidden_size, convention, terms);
  return terms;
}

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_LAYER_TERMS_H_
