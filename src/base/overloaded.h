// Overloaded: the lambdas of a std::visit, one per alternative of the variant.
// The layer types (Mixer, ChannelMixer in model.h) are visited this way, with
// no catch-all `auto` lambda, so that a type added to a variant is a compile
// error at every visit that does not say what to do with it:
//   std::visit(Overloaded{[](const DenseMlp& mlp) { ... }, [](const Moe& moe) { ... }}, channel_mixer);
// OneOf lets one lambda take several alternatives, named in a list:
//   [](const OneOf<Mamba2, GatedDeltaProduct> auto&) { return false; }
#ifndef TRAINFLOPS_SRC_BASE_OVERLOADED_H_
#define TRAINFLOPS_SRC_BASE_OVERLOADED_H_

#include <concepts>

namespace trainflops {

template <typename... Lambdas>
struct Overloaded : Lambdas... {
  using Lambdas::operator()...;
};
template <typename... Lambdas>
Overloaded(Lambdas...) -> Overloaded<Lambdas...>;

// T is one of the types listed after it.
template <typename T, typename... Listed>
concept OneOf = (std::same_as<T, Listed> || ...);

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_BASE_OVERLOADED_H_
