#include "trainflops/dsa.h"

#include "trainflops/layer_flops.h"

namespace trainflops {
namespace {

// A one-layer model around `mixer`, validated as any model is.
Status check_layer(std::int64_t hidden_size, const Mixer& mixer) {
  Model model;
  model.hidden_size = hidden_size;
  model.vocab_size = 1;
  model.layers = {Layer{mixer, std::nullopt}};
  return validate(model);
}

// Sum over `terms` of forward FLOPs times the exact statistic of the batch.
Result<Int128> forward_flops(const Terms& terms, std::span<const std::int64_t> lengths) {
  Int128 total = 0;
  for (const Term& term : terms) {
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      if (lengths[d] < 0) {
        return Error("lengths[" + std::to_string(d) + "] = " + std::to_string(lengths[d]) + ": must be >= 0");
      }
      auto count = document_count(term.per, lengths[d]);
      auto flops = count ? checked_mul(*count, term.forward_flops) : std::nullopt;
      auto sum = flops ? checked_add(total, *flops) : std::nullopt;
      if (!sum) return Error("the forward FLOPs do not fit in 128 bits");
      total = *sum;
    }
  }
  return total;
}

}  // namespace

Result<Int128> dsa_attention_forward_flops(std::int64_t hidden_size, const MlaAttention& mla, const DsaIndexer& indexer,
                                           std::span<const std::int64_t> lengths) {
  const DsaAttention attention{mla, indexer, /*runs_indexer=*/false};
  TRAINFLOPS_RETURN_IF_ERROR(check_layer(hidden_size, attention));
  return forward_flops(dsa_attention_terms(attention, hidden_size, Convention{Mode::kModel}), lengths);
}

Result<Int128> indexer_forward_flops(std::int64_t hidden_size, std::optional<std::int64_t> q_lora_rank,
                                     const DsaIndexer& indexer, std::span<const std::int64_t> lengths) {
  // Any valid MLA carries the indexer through validation; only q_lora_rank matters.
  const MlaAttention mla{1, q_lora_rank, 1, 1, 0, 1};
  TRAINFLOPS_RETURN_IF_ERROR(check_layer(hidden_size, DsaAttention{mla, indexer, true}));
  // The forward pass is the same in every grad mode; without training, the
  // terms hold it alone.
  DsaIndexer forward_only = indexer;
  forward_only.grad_mode = DsaIndexer::GradMode::kOff;
  return forward_flops(dsa_indexer_terms(forward_only, hidden_size, q_lora_rank, Convention{Mode::kModel}), lengths);
}

}  // namespace trainflops
