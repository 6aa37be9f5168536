// How the per-token cost of training changes with context length, beside what
// dense-attention accounting (every DSA layer charged as dense MLA attention,
// no indexer, Megatron-LM's count before DSA support; every sliding window or
// chunk as full causal attention) reports for the same model.
#ifndef TRAINFLOPS_SWEEP_H_
#define TRAINFLOPS_SWEEP_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/result.h"

namespace trainflops {

// FLOPs per token of one training iteration (forward + backward) over BSHD
// sequences of `seq_length` tokens.
struct SweepPoint {
  std::int64_t seq_length = 0;
  double per_token = 0;        // the model as described
  double dense_per_token = 0;  // with_dense_attention(model)
  // per_token by component (index: the Component's value), per token; 0 for
  // the components the model does not have. Fixed size: a sweep of many
  // lengths holds no allocation per point.
  std::array<double, kAllComponents.size()> components{};
};

// `model` with every DSA layer replaced by its MLA attention (dense core
// attention over all causal pairs, no indexer), and every windowed or chunked
// attention by full causal attention.
Model with_dense_attention(const Model& model);

Result<std::vector<SweepPoint>> sweep(const Model& model, const std::vector<std::int64_t>& seq_lengths, Mode mode);

}  // namespace trainflops

#endif  // TRAINFLOPS_SWEEP_H_
