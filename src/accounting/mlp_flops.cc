// The channel mixers: dense MLPs and mixtures of experts.
#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

// A gated MLP's input projection is twice as wide as an ungated one's.
template <typename ChannelMixer>
Int128 mlp_width_factor(const ChannelMixer& mlp, Convention convention) {
  const bool charged_gated = mlp.gated && (is_exact(convention) || !mlp.megatron_charges_ungated);
  return charged_gated ? 3 : 2;
}

}  // namespace

void append_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention, Terms& terms) {
  terms.push_back(
      trained_gemm(Component::kMlp, kTokens, mlp_width_factor(mlp, convention) * hidden_size * mlp.ffn_hidden_size));
}

void append_terms(const Moe& moe, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, width = mlp_width_factor(moe, convention);
  // A pick of a zero expert costs nothing; Megatron-LM knows no zero experts
  // and charges every pick as a real expert.
  const std::int64_t real = is_exact(convention) ? moe.real_experts_per_token.value_or(moe.topk) : moe.topk;
  const Int128 experts = width * moe.expert_ffn_hidden_size * real;
  const Int128 routed = moe.latent_size ? experts * *moe.latent_size + 2 * h * *moe.latent_size : experts * h;
  terms.push_back(trained_gemm(Component::kMoeRouted, kTokens, routed));
  if (moe.shared_expert_ffn_hidden_size) {
    terms.push_back(trained_gemm(Component::kMoeShared, kTokens, width * h * *moe.shared_expert_ffn_hidden_size));
  }
  if (is_executed(convention) && moe.num_experts) {
    // The router scores the zero experts too.
    terms.push_back(trained_gemm(Component::kMoeRouter, kTokens, h * (*moe.num_experts + moe.zero_experts.value_or(0))));
  }
}

Terms dense_mlp_terms(const DenseMlp& mlp, std::int64_t hidden_size, Convention convention) {
  return terms_of(mlp, hidden_size, convention);
}
Terms moe_terms(const Moe& moe, std::int64_t hidden_size, Convention convention) {
  return terms_of(moe, hidden_size, convention);
}

}  // namespace trainflops
