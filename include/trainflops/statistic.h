// What a cost term is counted per: tokens, causal (query, key) pairs, top-k
// pairs, ... Each statistic is a sum over the documents of a batch of a
// per-document count, so that partial sums from different ranks add up to the
// global one. Positions i run 1..L within a document of L tokens.
#ifndef TRAINFLOPS_STATISTIC_H_
#define TRAINFLOPS_STATISTIC_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

#include "trainflops/int128.h"

namespace trainflops {

enum class StatisticKind {
  kTokens,               // L
  kCausalPairs,          // sum_i i = L(L+1)/2: each query sees itself and every earlier key
  kTopkPairs,            // sum_i min(i, k): the pairs a top-k sparse attention attends
  kPooledAttendedPairs,  // KPool: p * sum_i min(k/p, floor(i/p)) + (tail ? sum_i (i mod p) : 0)
  kCompletePoolPairs,    // KPool: sum_i floor(i/p), the (query, complete pool) pairs scored
  kPooledKeys,           // KPool: floor(L/p) * p, the keys reduced into complete pools
};

struct Statistic {
  StatisticKind kind = StatisticKind::kTokens;
  std::int64_t topk = 0;  // k, for top-k and pooled attended pairs
  std::int64_t pool = 0;  // p, for the KPool kinds
  bool tail = false;      // pooled attended pairs: the incomplete pool is attended too
  auto operator<=>(const Statistic&) const = default;
};

inline constexpr Statistic kTokens{StatisticKind::kTokens};
inline constexpr Statistic kCausalPairs{StatisticKind::kCausalPairs};
Statistic topk_pairs(std::int64_t topk);
Statistic pooled_attended_pairs(std::int64_t topk, std::int64_t pool, bool tail);
Statistic complete_pool_pairs(std::int64_t pool);
Statistic pooled_keys(std::int64_t pool);

// The exact count for one causal document of `length` >= 0 tokens, in closed
// form; nullopt when it does not fit in 128 bits. Preconditions: topk >= 1
// and pool >= 1 where the kind uses them, topk a multiple of pool.
std::optional<Int128> document_count(const Statistic& statistic, std::int64_t length);

// Megatron-LM's estimate of the batch total from the aggregates it all-reduces,
// T = sum L and S2 = sum L^2 (SPEC §4, §7.4, §8), with m = S2 / T the
// length-weighted mean length:
//  - tokens: T; causal pairs: S2 / 2;
//  - top-k pairs: S2 / 2 * s, s = 1 when m <= k, else k (1 - k / (2m)) / (m / 2);
//  - KPool counts F: (T / m) ((1 - w) F(n0) + w F(n0 + 1)), n0 = floor(m),
//    w = m - n0 (exact for BSHD, where every length is m).
// Preconditions: T >= 1, T <= S2.
double megatron_estimate(const Statistic& statistic, double total_tokens, double squared_sum);

// "tokens", "causal_pairs", "topk_pairs(k=2048)", ...
std::string statistic_name(const Statistic& statistic);

}  // namespace trainflops

#endif  // TRAINFLOPS_STATISTIC_H_
