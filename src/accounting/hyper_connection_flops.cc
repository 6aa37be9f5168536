// Machinery on the residual stream: hyper-connections around every sublayer
// and each output head, attention residuals over the decoder, hashed n-gram
// memory and per-layer embeddings on the layers that have them.
#include "accounting/layer_terms.h"

namespace trainflops {

Int128 hyper_connection_weights(const HyperConnections& hc, Int128 h, bool head) {
  const Int128 n = hc.streams, nh = n * h;
  switch (hc.variant) {
    case HyperConnections::Variant::kManifold: return head ? nh * n : nh * (n * n + 2 * n);
    case HyperConnections::Variant::kGatedResidual: return 2 * nh * hc.rank + (head ? 0 : nh * n);
  }
  return 0;
}

// Megatron-LM's function counts neither: its megatron mode leaves both out.
void append_terms(const HyperConnections& hc, std::int64_t sublayers, std::int64_t hidden_size, Convention convention,
                  Terms& terms) {
  if (convention.mode == Mode::kMegatron || sublayers == 0) return;
  const Int128 n = hc.streams, nh = n * hidden_size;
  // Besides the projection: the manifold variant's read, write and stream
  // mixing; the gated residual's average of the gated streams and write.
  const Int128 streams_work = hc.variant == HyperConnections::Variant::kManifold ? nh + nh + n * nh : nh + nh;
  // The reads, writes and mixing multiply two operands that both take a
  // gradient, so they train as a GEMM does.
  terms.push_back(trained_gemm(Component::kHyperConnections, kTokens,
                               sublayers * (hyper_connection_weights(hc, hidden_size, false) + streams_work)));
}

Term hyper_connection_head_term(const HyperConnections& hc, std::int64_t hidden_size) {
  const Int128 nh = Int128{hc.streams} * hidden_size;
  return trained_gemm(Component::kHyperConnections, kTokens, hyper_connection_weights(hc, hidden_size, true) + nh);
}

namespace {

// The sum of floor(l / block) over l = 0 .. count - 1: each full block of
// `block` values of l adds its quotient block times, the rest adds its own.
Int128 floor_quotient_sum(Int128 count, Int128 block) {
  const Int128 full = count / block, rest = count % block;
  return block * full * (full - 1) / 2 + rest * full;
}

}  // namespace

Int128 attention_residual_layer_sources(const AttentionResiduals& residuals, std::int64_t layers) {
  if (layers == 0) return 0;
  const Int128 b = residuals.block_size, l = layers;
  // The mixers of layers 1 .. l-1 read ceil(i / b) + 1 = floor((i-1) / b) + 2
  // sources (layer 0's reads the embedding alone); the channel mixers of
  // layers 0 .. l-1 read floor(i / b) + 2.
  const Int128 mixers = floor_quotient_sum(l - 1, b) + 2 * (l - 1);
  const Int128 channel_mixers = floor_quotient_sum(l, b) + 2 * l;
  return mixers + channel_mixers;
}

Int128 attention_residual_output_sources(const AttentionResiduals& residuals, std::int64_t layers) {
  const Int128 b = residuals.block_size;
  return (layers + b - 1) / b + 1;
}

void append_terms(const AttentionResiduals& residuals, std::int64_t layers, std::int64_t hidden_size,
                  Convention convention, Terms& terms) {
  if (convention.mode == Mode::kMegatron) return;
  const Int128 per_source = (is_executed(convention) ? 2 : 3) * Int128{hidden_size};
  terms.push_back(trained_gemm(Component::kAttentionResiduals, kTokens,
                               per_source * attention_residual_layer_sources(residuals, layers)));
  terms.push_back(trained_gemm(Component::kAttentionResiduals, kTokens,
                               per_source * attention_residual_output_sources(residuals, layers)));
}

Terms attention_residual_terms(const AttentionResiduals& residuals, std::int64_t layers, std::int64_t hidden_size,
                               Convention convention) {
  Terms terms;
  append_terms(residuals, layers, hidden_size, convention, terms);
  return terms;
}

Int128 ngram_memory_gate_fmas(const NgramMemory& memory, std::int64_t hidden_size) {
  return 2 * Int128{memory.streams} * hidden_size;
}

void append_terms(const NgramMemory& memory, std::int64_t hidden_size, Convention convention, Terms& terms) {
  if (convention.mode == Mode::kMegatron) return;
  const Int128 h = hidden_size, streams = memory.streams, e = memory.embed_dim;
  // Keys for every stream and one value; each stream's gate (a dot product
  // with the stream) and its gated value; the depthwise convolution.
  const Int128 fmas =
      e * streams * h + e * h + ngram_memory_gate_fmas(memory, hidden_size) + memory.conv_kernel * streams * h;
  terms.push_back(trained_gemm(Component::kNgramMemory, kTokens, fmas));
}

Int128 per_layer_embedding_product_fmas(const PerLayerEmbedding& embedding) { return embedding.dim; }

void append_terms(const PerLayerEmbedding& embedding, std::int64_t hidden_size, Convention convention, Terms& terms) {
  if (convention.mode == Mode::kMegatron) return;
  const Int128 h = hidden_size, p = embedding.dim;
  // The layer's slice of the model-level projection, the gate, the gate times
  // the embedding (both take a gradient, as in a GEMM), the projection back.
  const Int128 fmas = h * p + h * p + per_layer_embedding_product_fmas(embedding) + p * h;
  terms.push_back(trained_gemm(Component::kPerLayerEmbedding, kTokens, fmas));
}

Terms hyper_connection_terms(const HyperConnections& hc, std::int64_t sublayers, std::int64_t hidden_size,
                             Convention convention) {
  Terms terms;
  append_terms(hc, sublayers, hidden_size, convention, terms);
  return terms;
}

Terms ngram_memory_terms(const NgramMemory& memory, std::int64_t hidden_size, Convention convention) {
  return terms_of(memory, hidden_size, convention);
}

Terms per_layer_embedding_terms(const PerLayerEmbedding& embedding, std::int64_t hidden_size, Convention convention) {
  return terms_of(embedding, hidden_size, convention);
}

}  // namespace trainflops
