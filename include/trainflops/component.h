// The parts a FLOPs count is broken down into.
//
// Thread safety: Component is a plain value: several threads may read one at
// once, and a thread that changes one must be the only one using it. The
// functions here keep no state of their own: several threads may call them at
// once, given different objects to change.
#ifndef TRAINFLOPS_COMPONENT_H_
#define TRAINFLOPS_COMPONENT_H_

#include <array>
#include <cstddef>
#include <string_view>

namespace trainflops {

enum class Component {
  kAttentionProjections,  // q/k/v/gate/output projections, MLA down/up projections
  kCoreAttention,         // QK^T and softmax(QK^T)V over the causal pairs
  kDsaCoreAttention,      // DSA: the same over the selected (query, key) pairs only
  kIndexerProjections,    // DSA indexer: query, key and head-weight projections
  kIndexerScoring,        // DSA indexer: scoring keys (or complete KPool pools)
  kIndexerTeacher,        // executed mode only: the main attention's logits that the
                          // indexer's KL loss takes as its target
  kKpoolGate,             // KPool: the gate projection of the pooled keys
  kKpoolPooling,          // KPool: reducing each complete pool's keys into one
  kKvCompressor,          // DeepSeek-V4: compressing keys/values (CSA 4x, HCA 128x)
  kMlp,                   // dense MLP layers
  kMoeRouted,             // routed experts, with their latent projections
  kMoeShared,             // the shared expert
  kMoeRouter,             // executed mode only: the router GEMM, h x num_experts per token
  kMamba,                 // Mamba-2 projections, convolution and scan
  kGatedDeltaNet,         // gated delta net projections, convolution and delta rule
  kGatedDeltaProduct,     // gated delta product layers
  kKimiDeltaAttention,    // Kimi Delta Attention projections, convolutions, gates and delta rule
  kHyperConnections,      // hyper-connections: coefficient projections, reads, writes, stream mixing
  kNgramMemory,           // hashed n-gram memory: key/value projections, gates, convolution
  kPerLayerEmbedding,     // per-layer embeddings: the model projection's slice, gate, product, projection back
  kAttentionResiduals,    // attention residuals: the sources' norms, scores and weighted sums
  kMtp,                   // MTP: the 2h -> h projection and its norms, per depth
  kLogits,                // output layer, main and every MTP depth
};

inline constexpr std::array kAllComponents = {
    Component::kAttentionProjections,
    Component::kCoreAttention,
    Component::kDsaCoreAttention,
    Component::kIndexerProjections,
    Component::kIndexerScoring,
    Component::kIndexerTeacher,
    Component::kKpoolGate,
    Component::kKpoolPooling,
    Component::kKvCompressor,
    Component::kMlp,
    Component::kMoeRouted,
    Component::kMoeShared,
    Component::kMoeRouter,
    Component::kMamba,
    Component::kGatedDeltaNet,
    Component::kGatedDeltaProduct,
    Component::kKimiDeltaAttention,
    Component::kHyperConnections,
    Component::kNgramMemory,
    Component::kPerLayerEmbedding,
    Component::kAttentionResiduals,
    Component::kMtp,
    Component::kLogits,
};

// Every component once, in declaration order: reports index arrays by it.
static_assert([] {
  for (std::size_t i = 0; i < kAllComponents.size(); ++i) {
    if (static_cast<std::size_t>(kAllComponents[i]) != i) return false;
  }
  return static_cast<std::size_t>(Component::kLogits) + 1 == kAllComponents.size();
}());

// Stable snake_case names, used as keys in JSON and CSV output.
std::string_view component_name(Component component);

}  // namespace trainflops

#endif  // TRAINFLOPS_COMPONENT_H_
