// Megatron-LM's hybrid layer pattern (docs/accounting.md, 6): one symbol per layer,
//   M  Mamba-2 (or gated delta product, by layer spec)   G  gated delta net
//   K  Kimi Delta Attention (Megatron-LM's Kimi Delta Attention pull request)
//   *  attention (MHA/GQA)    +  MLA attention    D  DSA attention (MLA + indexer)
//   W C H  DeepSeek-V4 attention: window only, CSA (4x), HCA (128x)
//   -  dense MLP    E  MoE
// `|` separates pipeline stages and `[` `]` group layers; both are ignored for
// counting (the main pattern's `|` are kept as stage sizes for the pipeline
// report). `MAIN/P/P` adds one multi-token-prediction depth per `/P`.
//
// Thread safety: LayerSymbol and HybridPattern are plain values: several
// threads may read one at once, and a thread that changes one must be the only
// one using it. The functions here keep no state of their own: several threads
// may call them at once, given different objects to change.
#ifndef TRAINFLOPS_HYBRID_PATTERN_H_
#define TRAINFLOPS_HYBRID_PATTERN_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "trainflops/result.h"

namespace trainflops {

enum class LayerSymbol : char {
  kMamba = 'M',
  kGatedDeltaNet = 'G',
  kKimiDeltaAttention = 'K',
  kAttention = '*',
  kMla = '+',
  kDsa = 'D',
  kWindow = 'W',
  kCsa = 'C',
  kHca = 'H',
  kMlp = '-',
  kMoe = 'E',
};

struct HybridPattern {
  std::vector<LayerSymbol> main;                     // `|`, `[`, `]` removed
  std::vector<std::vector<LayerSymbol>> mtp_depths;  // all equal
  // The layers of `main` in each pipeline stage, split at the main pattern's
  // `|`: {2, 2, 2} for "MM|**|--", {4} without `|`. A stage may be empty
  // ("|MM" gives {0, 2}). `|` inside MTP depths is ignored.
  std::vector<std::size_t> main_stage_layers;
};

// Errors (the message quotes the pattern): a symbol outside the alphabet and
// its position, unbalanced brackets, an empty main pattern or MTP depth, MTP
// depths that differ, `*` together with `+` or `D`.
Result<HybridPattern> parse_hybrid_pattern(std::string_view pattern);

}  // namespace trainflops

#endif  // TRAINFLOPS_HYBRID_PATTERN_H_
