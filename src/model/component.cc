#include "trainflops/component.h"

namespace trainflops {

std::string_view component_name(Component component) {
  switch (component) {
    case Component::kAttentionProjections: return "attention_projections";
    case Component::kCoreAttention: return "core_attention";
    case Component::kDsaCoreAttention: return "dsa_core_attention";
    case Component::kIndexerProjections: return "indexer_projections";
    case Component::kIndexerScoring: return "indexer_scoring";
    case Component::kIndexerTeacher: return "indexer_teacher";
    case Component::kKpoolGate: return "kpool_gate";
    case Component::kKpoolPooling: return "kpool_pooling";
    case Component::kKvCompressor: return "kv_compressor";
    case Component::kMlp: return "mlp";
    case Component::kMoeRouted: return "moe_routed";
    case Component::kMoeShared: return "moe_shared";
    case Component::kMoeRouter: return "moe_router";
    case Component::kMamba: return "mamba";
    case Component::kGatedDeltaNet: return "gated_delta_net";
    case Component::kGatedDeltaProduct: return "gated_delta_product";
    case Component::kKimiDeltaAttention: return "kimi_delta_attention";
    case Component::kHyperConnections: return "hyper_connections";
    case Component::kNgramMemory: return "ngram_memory";
    case Component::kPerLayerEmbedding: return "per_layer_embedding";
    case Component::kAttentionResiduals: return "attention_residuals";
    case Component::kMtp: return "mtp";
    case Component::kLogits: return "logits";
  }
  return "unknown";
}

}  // namespace trainflops
