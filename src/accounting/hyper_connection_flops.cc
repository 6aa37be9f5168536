// Machinery on the residual stream: hyper-connections around every sublayer
// and each output head, and hashed n-gram memory on the layers that have it.
#include "accounting/layer_terms.h"

namespace trainflops {

// Megatron-LM's function counts neither: its megatron mode leaves both out.
void append_terms(const HyperConnections& hc, std::int64_t sublayers, std::int64_t hidden_size, Convention convention,
                  Terms& terms) {
  if (convention.mode == Mode::kMegatron || sublayers == 0) return;
  const Int128 n = hc.streams, nh = n * hidden_size;
  Int128 per_sublayer = 0;
  switch (hc.variant) {
    case HyperConnections::Variant::kManifold:
      // The coefficient projection, the read, the write and the stream mixing.
      per_sublayer = nh * (n * n + 2 * n) + nh + nh + n * nh;
      break;
    case HyperConnections::Variant::kGatedResidual:
      // The low-rank gate, the average of the gated streams, the write gates and the write.
      per_sublayer = 2 * nh * hc.rank + nh + n * nh + nh;
      break;
  }
  // The reads, writes and mixing multiply two operands that both take a
  // gradient, so they train as a GEMM does.
  terms.push_back(trained_gemm(Component::kHyperConnections, kTokens, sublayers * per_sublayer));
}

Term hyper_connection_head_term(const HyperConnections& hc, std::int64_t hidden_size) {
  const Int128 n = hc.streams, nh = n * hidden_size;
  const Int128 weights = hc.variant == HyperConnections::Variant::kManifold ? nh * n : 2 * nh * hc.rank;
  return trained_gemm(Component::kHyperConnections, kTokens, weights + nh);
}

void append_terms(const NgramMemory& memory, std::int64_t hidden_size, Convention convention, Terms& terms) {
  if (convention.mode == Mode::kMegatron) return;
  const Int128 h = hidden_size, streams = memory.streams, e = memory.embed_dim;
  // Keys for every stream and one value; each stream's gate (a dot product
  // with the stream) and its gated value; the depthwise convolution.
  const Int128 fmas = e * streams * h + e * h + streams * h + streams * h + memory.conv_kernel * streams * h;
  terms.push_back(trained_gemm(Component::kNgramMemory, kTokens, fmas));
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

}  // namespace trainflops
