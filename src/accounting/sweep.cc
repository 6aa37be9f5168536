#include "trainflops/sweep.h"

#include "accounting/counter_internals.h"
#include "base/overloaded.h"

namespace trainflops {
namespace {

// DSA as its MLA or grouped-query attention, block-sparse attention as its
// grouped-query attention; sliding windows and chunks as full causal attention.
void make_attention_dense(Layer& layer) {
  if (!layer.mixer) return;
  std::visit(Overloaded{
                 [&](const DsaAttention& dsa) {
                   const MlaAttention mla = dsa.mla;  // copied before the assignment ends `dsa`
                   layer.mixer = mla;
                 },
                 [&](const OneOf<BlockSparseAttention, CompressedBlockSparseAttention, DsaGqaAttention> auto& sparse) {
                   const GqaAttention gqa = sparse.attention;  // copied before the assignment ends `sparse`
                   layer.mixer = gqa;
                 },
                 [](GqaAttention& gqa) { gqa.window = gqa.chunk = std::nullopt; },
                 // Already dense, or (DeepSeek-V4 and V4.1's attention) with no dense form that sweeps
                 // compare against.
                 [](OneOf<MlaAttention, CompressedSparseAttention, SharedCompressedAttention, GatedDeltaNet, Mamba2,
                          GatedDeltaProduct, KimiDeltaAttention> auto&) {},
             },
             *layer.mixer);
}

}  // namespace

Model with_dense_attention(const Model& model) {
  Model dense = model;
  dense.layers.edit_each(make_attention_dense);
  for (LayerStack& depth : dense.mtp_depths) depth.edit_each(make_attention_dense);
  return dense;
}

Result<Sweeper> Sweeper::create(const Model& model, Mode mode) {
  const Model dense = with_dense_attention(model);
  TRAINFLOPS_ASSIGN_OR_RETURN(FlopsCounter counter, FlopsCounter::create(model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(FlopsCounter dense_counter, FlopsCounter::create(dense, mode));
  const bool attention_changes = !(dense.layers == model.layers && dense.mtp_depths == model.mtp_depths);
  return Sweeper(std::move(counter), std::move(dense_counter), attention_changes);
}

Result<SweepPoint> Sweeper::point(std::int64_t seq_length) const {
  const Workload one_sequence = Bshd{1, seq_length};
  SweepPoint point;
  TRAINFLOPS_ASSIGN_OR_RETURN(const Flops total, CounterInternals::total_and_components(counter_, one_sequence, point.components));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Flops dense_total, dense_.total(one_sequence));
  const auto tokens = static_cast<double>(seq_length);
  point.seq_length = seq_length;
  point.per_token = total.value / tokens;
  point.dense_per_token = dense_total.value / tokens;
  for (double& part : point.components) part /= tokens;
  return point;
}

Result<bool> Sweeper::dense_differs(std::span<const std::int64_t> seq_lengths) const {
  if (!attention_changes_) return false;
  for (std::int64_t length : seq_lengths) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const SweepPoint p, point(length));
    if (p.dense_per_token != p.per_token) return true;
  }
  return false;
}

Result<std::vector<SweepPoint>> sweep(const Model& model, const std::vector<std::int64_t>& seq_lengths, Mode mode) {
  if (seq_lengths.empty()) return Error("seq_lengths: give at least one context length");
  TRAINFLOPS_ASSIGN_OR_RETURN(const Sweeper sweeper, Sweeper::create(model, mode));
  std::vector<SweepPoint> points;
  points.reserve(seq_lengths.size());
  for (std::int64_t length : seq_lengths) {
    TRAINFLOPS_ASSIGN_OR_RETURN(SweepPoint point, sweeper.point(length));
    points.push_back(point);
  }
  return points;
}

}  // namespace trainflops
