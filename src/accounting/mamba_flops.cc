// The Mamba-2 state-space mixer.
#include "accounting/layer_terms.h"

namespace trainflops {

void append_terms(const Mamba2& m, std::int64_t hidden_size, Convention convention, Terms& terms) {
  const Int128 h = hidden_size, d = is_exact(convention) ? Int128{m.inner_dim} : 2 * h;
  const Int128 in_projection = h * (2 * d + 2 * Int128{m.num_groups} * m.state_dim + m.num_heads);
  terms.insert(terms.end(), {
                                trained_gemm(Component::kMamba, kTokens, in_projection + d * h),
                                trained_flops(Component::kMamba, kTokens, 7 * d * m.state_dim),  // the scan
                            });
}

Terms mamba2_terms(const Mamba2& m, std::int64_t hidden_size, Convention convention) {
  return terms_of(m, hidden_size, convention);
}

}  // namespace trainflops
