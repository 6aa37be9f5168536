// The dispatch from a layer to its type's terms (the families' files hold
// them, layer_terms.h lists them), and the model-level terms.
#include "trainflops/layer_flops.h"

#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

// append_terms() has one overload per layer type: a type added to Mixer or
// ChannelMixer without one does not compile here.
template <typename Variant>
void append_variant_terms(const Variant& part, std::int64_t hidden_size, Convention convention, Terms& terms) {
  std::visit([&](const auto& alternative) { append_terms(alternative, hidden_size, convention, terms); }, part);
}

}  // namespace

Term mtp_projection_term(std::int64_t hidden_size, Convention convention) {
  const Int128 h = hidden_size;
  const Int128 norms = is_executed(convention) ? 0 : 3 * h;  // not products
  return trained_gemm(Component::kMtp, kTokens, norms + 2 * h * h);
}

Term logits_term(std::int64_t hidden_size, std::int64_t vocab_size) {
  return trained_gemm(Component::kLogits, kTokens, Int128{hidden_size} * vocab_size);
}

Terms mixer_terms(const Mixer& mixer, std::int64_t hidden_size, Convention convention) {
  Terms terms;
  append_variant_terms(mixer, hidden_size, convention, terms);
  return terms;
}
Terms channel_mixer_terms(const ChannelMixer& channel_mixer, std::int64_t hidden_size, Convention convention) {
  Terms terms;
  append_variant_terms(channel_mixer, hidden_size, convention, terms);
  return terms;
}

void append_layer_terms(const Layer& layer, std::int64_t hidden_size, Convention convention, Terms& terms) {
  if (layer.ngram_memory) append_terms(*layer.ngram_memory, hidden_size, convention, terms);
  if (layer.mixer) append_variant_terms(*layer.mixer, hidden_size, convention, terms);
  if (layer.channel_mixer) append_variant_terms(*layer.channel_mixer, hidden_size, convention, terms);
  if (layer.per_layer_embedding) append_terms(*layer.per_layer_embedding, hidden_size, convention, terms);
}

}  // namespace trainflops
