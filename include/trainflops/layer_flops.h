// One pure function per layer type: the FLOPs of one layer as a list of terms,
// each a forward cost per unit of a statistic (per token, per causal pair) and
// the number of times it executes in a training iteration. Summing
// forward_flops / divisor * executions * statistic over the terms of a model
// gives the FLOPs of one iteration.
#ifndef TRAINFLOPS_LAYER_FLOPS_H_
#define TRAINFLOPS_LAYER_FLOPS_H_

#include <cstdint>
#include <vector>

#include "trainflops/component.h"
#include "trainflops/int128.h"
#include "trainflops/model.h"
#include "trainflops/statistic.h"

namespace trainflops {

// Floating-point operations in one fused multiply-add.
inline constexpr int kFlopsPerFma = 2;
// Executions per iteration of a GEMM that trains normally: forward, data
// gradient and weight gradient, each as costly as the forward.
inline constexpr int kTrainingExpansion = 3;

// Where Megatron-LM's accounting departs from the exact definitions, terms
// follow one of these conventions.
enum class Convention {
  kMegatronStandard,  // Megatron-LM's transformer path
  kMegatronHybrid,    // its hybrid path: no attention output gate, no MTP projection,
                      // a key/value width of h*g/n without kv_channels
  kModel,             // the exact definitions; widths are integers
};

struct Term {
  Component component = Component::kAttentionProjections;
  Statistic per;
  Int128 forward_flops = 0;  // one forward execution, per unit of `per`
  Int128 divisor = 1;        // > 1 only for Megatron's fractional key/value widths
  int executions = 0;        // per training iteration
};

using Terms = std::vector<Term>;

// Mixers. `hidden_size` is the model's h.
Terms gqa_attention_terms(const GqaAttention& attention, std::int64_t hidden_size, Convention convention);
Terms mla_attention_terms(const MlaAttention& attention, std::int64_t hidden_size);
Terms gated_delta_net_terms(const GatedDeltaNet& gdn, std::int64_t hidden_size);
Terms mamba2_terms(const Mamba2& mamba, std::int64_t hidden_size);
Terms gated_delta_product_terms(const GatedDeltaProduct& gdp, std::int64_t hidden_size);

// Channel mixers.
Terms dense_mlp_terms(const DenseMlp& mlp, std::int64_t hidden_size);
Terms moe_terms(const Moe& moe, std::int64_t hidden_size);

// Model-level terms: one MTP depth's 2h -> h projection and norms (3h + 2h^2
// FMAs per token, as Megatron-LM counts them); the logits of one output head.
Terms mtp_projection_terms(std::int64_t hidden_size);
Terms logits_terms(std::int64_t hidden_size, std::int64_t vocab_size);

// Dispatches on the variant.
Terms mixer_terms(const Mixer& mixer, std::int64_t hidden_size, Convention convention);
Terms channel_mixer_terms(const ChannelMixer& channel_mixer, std::int64_t hidden_size);

}  // namespace trainflops

#endif  // TRAINFLOPS_LAYER_FLOPS_H_
