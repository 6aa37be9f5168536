// Other frameworks' FLOPs numbers for one model and one sequence length, each
// reconciled with trainflops' model count convention by convention.
//
// A framework's FLOPs function is described here as data: one choice per
// convention (how it counts causal pairs, sliding windows, the MoE router,
// MTP, DSA, the attention output gate, norms, ...), not as a copy of its code.
// Every framework's number is counted from the same layer terms as the modes
// (layer_flops.h) with its choices applied, exactly in integers; the
// difference from model mode is split by switching the choices from model
// mode's to the framework's one convention at a time, in a fixed order, so the
// differences sum exactly to the total difference. docs/compare.md gives, for
// each choice, the framework's file and version it was read from.
//
// Thread safety: Framework, ConventionKind, ConventionDifference,
// FrameworkCount and Comparison are plain values: several threads may read one
// at once, and a thread that changes one must be the only one using it. The
// functions here keep no state of their own: several threads may call them at
// once, given different objects to change.
#ifndef TRAINFLOPS_COMPARE_H_
#define TRAINFLOPS_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/int128.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

enum class Framework {
  kTrainflopsModel,     // trainflops' model mode: MFU's numerator
  kTrainflopsExecuted,  // trainflops' executed mode: HFU's numerator
  kMegatronMain,        // Megatron-LM's num_floating_point_operations, main branch (DSA as dense MLA)
  kMegatronDsaFix,      // the same with its DSA fix (trainflops' megatron mode)
  kMegatronBridge,      // Megatron-Bridge's flop_utils.num_floating_point_operations
  kMaxText,             // MaxText's calculate_tflops_training_per_device
  kTorchtitan,          // torchtitan's get_nparams_and_flops
  kNemoRl,              // NeMo-RL's flops_formulas, as its flops_tracker picks them
  kNemoAutomodel,       // NeMo Automodel's flops_utils, the formula its config class maps to
};

// "trainflops-model", "trainflops-executed", "megatron-lm", "megatron-lm-dsa-fix",
// "megatron-bridge", "maxtext", "torchtitan", "nemo-rl", "nemo-automodel" (JSON and CSV keys);
// framework_title(): "Megatron-LM main", ... for tables.
std::string_view framework_name(Framework framework);
std::string_view framework_title(Framework framework);

// The conventions a framework chooses among, in the order the reconciliation
// switches them.
enum class ConventionKind {
  kCausalPairs,          // how many (query, key) pairs causal attention charges
  kSlidingWindows,       // how windowed (and chunked) attention is charged
  kMoeRouter,            // the router GEMM (h x experts per token)
  kMtp,                  // what an MTP depth costs
  kMtpLayerKind,         // which mixer an MTP layer is charged as
  kDsaCore,              // DSA's core attention: form and pairs
  kDsaIndexer,           // DSA's lightning indexer
  kCompressedPairs,      // DeepSeek-V4 attention: the window, compressed and selected entries charged
  kCompressedIndexer,    // DeepSeek-V4's CSA indexer: its scoring entries and head weighting
  kBlockSparse,          // block-sparse attention and QSA: their selected blocks and indexer, or dense GQA without it
  kDsaGqa,               // DSA over grouped-query attention: its top-k pairs and indexer, dense GQA, or nothing
  kLinearAttentionCore,  // a gated delta net's delta rule (its projections stay)
  kMambaWidth,           // a Mamba-2 layer's inner width: its heads times head width, or 2h
  kOutputGate,           // the attention output gate's projection
  kHeadGate,             // the per-head attention gate's projection (Step-3.5)
  kAttentionWidth,       // grouped-query attention's widths: from its heads, or from h (query h, keys g h/n)
  kMlaOutputGate,        // the MLA output gate's projection (Kimi K3)
  kKdaGates,             // Kimi Delta Attention's output and forget gates: as described or as Kimi K3's
  kDeltaRule,            // the delta rule of the gated delta net and product and of KDA: recurrent (the model's)
                         // or chunked (as trained)
  kNorms,                // MLA's LoRA norms, MTP's and attention residuals' norms, charged as products
  kDenseLayersAsMoe,     // the dense-MLP layers of an MoE model charged as MoE layers
  kQuickGeglu,           // a gated MLP with Megatron-LM's quick-GeGLU activation: 2 or 3 h ffn
  kUngatedMlp,           // an ungated dense MLP: 2 h ffn, or charged as gated (3 h ffn)
  kSmallParameters,      // 6 per token per norm weight, bias, sink and gate (a 6 N over every parameter)
  kHyperConnections,     // hyper-connections around every sublayer and before each head
  kNgramMemory,          // hashed n-gram memory's projections, gates and convolution
  kCandidateBlocks,      // DeepSeek-V4.1's consumers: score and select among the candidates' entries, or all
  kSharedExpertGate,     // the shared expert's sigmoid gate (h x 1 per token)
  kPerLayerEmbedding,    // per-layer embeddings' projections and the gate's product with the embedding
  kAttentionResiduals,   // attention residuals' norms, scores and weighted sums (Kimi K3)
  kZeroExperts,          // a pick of a zero-computation (identity) expert: free, or charged as a real expert
};

inline constexpr ConventionKind kAllConventionKinds[] = {
    ConventionKind::kCausalPairs,
    ConventionKind::kSlidingWindows,
    ConventionKind::kMoeRouter,
    ConventionKind::kMtp,
    ConventionKind::kMtpLayerKind,
    ConventionKind::kDsaCore,
    ConventionKind::kDsaIndexer,
    ConventionKind::kCompressedPairs,
    ConventionKind::kCompressedIndexer,
    ConventionKind::kBlockSparse,
    ConventionKind::kDsaGqa,
    ConventionKind::kLinearAttentionCore,
    ConventionKind::kMambaWidth,
    ConventionKind::kOutputGate,
    ConventionKind::kHeadGate,
    ConventionKind::kAttentionWidth,
    ConventionKind::kNorms,
    ConventionKind::kDenseLayersAsMoe,
    ConventionKind::kQuickGeglu,
    ConventionKind::kUngatedMlp,
    ConventionKind::kSmallParameters,
    ConventionKind::kMlaOutputGate,
    ConventionKind::kKdaGates,
    ConventionKind::kDeltaRule,
    ConventionKind::kHyperConnections,
    ConventionKind::kNgramMemory,
    ConventionKind::kCandidateBlocks,
    ConventionKind::kSharedExpertGate,
    ConventionKind::kPerLayerEmbedding,
    ConventionKind::kAttentionResiduals,
    ConventionKind::kZeroExperts,
};

// "causal_pairs", "sliding_windows", ... (JSON and CSV keys); the titles read
// "causal attention", "sliding windows", ...
std::string_view convention_name(ConventionKind kind);
std::string_view convention_title(ConventionKind kind);

// One framework's share of the difference from model mode.
struct ConventionDifference {
  ConventionKind kind;
  std::string choice;  // the framework's choice, e.g. "all L^2 pairs"
  Int128 flops = 0;    // framework minus model, this convention alone (non-zero)
};

struct FrameworkCount {
  Framework framework;
  // Unset when the framework cannot express the model or workload; `reason` says why.
  std::optional<Int128> flops;
  std::string reason;
  // Non-zero only, in kAllConventionKinds order; they sum exactly to
  // flops - Comparison::model_flops.
  std::vector<ConventionDifference> differences;
  // Where the framework's released recipe for such a model trains another
  // model than this one (no MTP depths, ...): each difference in words, and
  // that `flops` is its function's number for this model, the recipe aligned.
  std::vector<std::string> recipe_differences;
};

struct Comparison {
  std::string model;  // summarize(model)
  std::int64_t seq_length = 0;
  std::int64_t sequences = 0;              // per iteration
  Int128 model_flops = 0;                  // trainflops model mode, the reconciliations' base
  std::vector<FrameworkCount> frameworks;  // one per Framework, in declaration order
};

// Every framework's FLOPs for one training iteration of `sequences` sequences
// of `seq_length` tokens (no packing: the frameworks' functions take one
// length). Each framework cannot express the models its function has no
// formula for (its reason says so); trainflops' two modes always can. Errors: an invalid model, seq_length or
// sequences < 1, a count that does not fit in 128 bits.
Result<Comparison> compare_frameworks(const Model& model, std::int64_t seq_length, std::int64_t sequences);

}  // namespace trainflops

#endif  // TRAINFLOPS_COMPARE_H_
