#include "trainflops/sweep.h"

namespace trainflops {
namespace {

// DSA as its MLA attention; sliding windows and chunks as full causal attention.
void make_attention_dense(Layer& layer) {
  if (!layer.mixer) return;
  if (const auto* dsa = std::get_if<DsaAttention>(&*layer.mixer)) layer.mixer = dsa->mla;
  if (auto* gqa = std::get_if<GqaAttention>(&*layer.mixer)) gqa->window = gqa->chunk = std::nullopt;
}

}  // namespace

Model with_dense_attention(const Model& model) {
  Model dense = model;
  dense.layers.edit_each(make_attention_dense);
  for (LayerStack& depth : dense.mtp_depths) depth.edit_each(make_attention_dense);
  return dense;
}

Result<std::vector<SweepPoint>> sweep(const Model& model, const std::vector<std::int64_t>& seq_lengths, Mode mode) {
  if (seq_lengths.empty()) return Error("seq_lengths: give at least one context length");
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter dense, FlopsCounter::create(with_dense_attention(model), mode));
  std::vector<SweepPoint> points;
  points.reserve(seq_lengths.size());
  for (std::int64_t length : seq_lengths) {
    const Workload one_sequence = Bshd{1, length};
    SweepPoint& point = points.emplace_back();
    TRAINFLOPS_ASSIGN_OR_RETURN(const Flops total, counter.total_and_components(one_sequence, point.components));
    TRAINFLOPS_ASSIGN_OR_RETURN(const Flops dense_total, dense.total(one_sequence));
    const auto tokens = static_cast<double>(length);
    point.seq_length = length;
    point.per_token = total.value / tokens;
    point.dense_per_token = dense_total.value / tokens;
    for (double& part : point.components) part /= tokens;
  }
  return points;
}

}  // namespace trainflops
