// What a cost term is counted per: tokens, causal (query, key) pairs, ... Each
// statistic is a sum over the documents of a batch of a per-document count, so
// that partial sums from different ranks add up to the global one.
#ifndef TRAINFLOPS_STATISTIC_H_
#define TRAINFLOPS_STATISTIC_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

#include "trainflops/int128.h"

namespace trainflops {

enum class StatisticKind {
  kTokens,       // L per document
  kCausalPairs,  // L(L+1)/2 per document: each query sees itself and every earlier key
};

struct Statistic {
  StatisticKind kind = StatisticKind::kTokens;
  auto operator<=>(const Statistic&) const = default;
};

inline constexpr Statistic kTokens{StatisticKind::kTokens};
inline constexpr Statistic kCausalPairs{StatisticKind::kCausalPairs};

// The exact count for one causal document of `length` >= 0 tokens; nullopt
// when it does not fit in 128 bits.
std::optional<Int128> document_count(const Statistic& statistic, std::int64_t length);

// Megatron-LM's estimate of the batch total from the aggregates it all-reduces,
// T = sum L and S2 = sum L^2 (SPEC §4): tokens T, causal pairs S2 / 2.
double megatron_estimate(const Statistic& statistic, double total_tokens, double squared_sum);

// "tokens", "causal_pairs".
std::string statistic_name(const Statistic& statistic);

}  // namespace trainflops

#endif  // TRAINFLOPS_STATISTIC_H_
