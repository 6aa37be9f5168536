// What a cost term is counted per: tokens, causal (query, key) pairs, top-k
// pairs, ... Each statistic is a sum over the documents of a batch of a
// per-document count, so that partial sums from different ranks add up to the
// global one. Positions i run 1..L within a document of L tokens.
//
// Thread safety: StatisticKind, Statistic and MegatronAggregates are plain
// values: several threads may read one at once, and a thread that changes one
// must be the only one using it. The functions here keep no state of their own:
// several threads may call them at once, given different objects to change.
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
  kWindowPairs,          // sum_i min(i, w): a sliding window of w keys (the query's own included)
  kChunkedPairs,         // sum_i ((i - 1) mod c + 1): attention within chunks of c tokens
  kCompressedEntries,    // sum_i floor(i/r): the entries of an r-times compressed KV a query sees
  kSelectedCompressed,   // sum_i min(k, floor(i/r)): the k it selects of them
  kBlockTopkPairs,       // sum_i ((i-1) mod b + 1 + b min(k - 1, floor((i-1)/b))): k blocks of b keys,
                         // the query's own block (up to itself) among them
  kCompressedPositions,  // floor(L/r): the entries an r-times compressed KV holds for the document
  kCandidateEntries,     // sum_i c(floor(i/r)), c(E) = E for E <= KB, else (K-1)B + ((E-1) mod B) + 1:
                         // the entries of K candidate blocks of B, the query's own (last) block among them
  kSelectedCandidates,   // sum_i min(k, c(floor(i/r))): the k entries a query selects among its candidates
  kChunkSquares,         // sum over the chunks of c^2, chunks of c tokens (the last of L mod c): every
                         // (token, token) pair of a chunk, the square products of a chunked delta rule
  kChunkSubstitutions,   // sum over the chunks of sum_{j<c} j^2 = (c-1) c (2c-1) / 6: inverting a chunk's
                         // unit triangular matrix by forward substitution, row j a j x j product
  // Both chunk kinds with an interleave n > 1 chunk a sequence of n L
  // positions, n per token, in chunks of c positions (the last of n L mod c):
  // the gated delta product's n keys per token.
};

struct Statistic {
  StatisticKind kind = StatisticKind::kTokens;
  std::int64_t topk = 0;   // k: top-k, pooled attended pairs, selected compressed entries, blocks
  std::int64_t pool = 0;   // p: the KPool kinds; w, c, r or b: window, chunk, compression ratio, block
  bool tail = false;       // pooled attended pairs: the incomplete pool is attended too
  std::int64_t block = 0;  // B: candidate entries' block size (k is then the blocks K)
  std::int64_t blocks = 0;  // K: selected candidates' candidate blocks (k is their top-k)
  std::int64_t interleave = 1;  // n: the chunk kinds' positions per token
  auto operator<=>(const Statistic&) const = default;
};

inline constexpr Statistic kTokens{StatisticKind::kTokens};
inline constexpr Statistic kCausalPairs{StatisticKind::kCausalPairs};
// Each statistic of its kind; document_count() needs its sizes >= 1, and the
// pooled attended pairs' topk a multiple of pool, and the chunk kinds' interleave >= 1.
Statistic topk_pairs(std::int64_t topk);
Statistic pooled_attended_pairs(std::int64_t topk, std::int64_t pool, bool tail);
Statistic complete_pool_pairs(std::int64_t pool);
Statistic pooled_keys(std::int64_t pool);
Statistic window_pairs(std::int64_t window);
Statistic chunked_pairs(std::int64_t chunk);
Statistic compressed_entries(std::int64_t ratio);
Statistic selected_compressed(std::int64_t topk, std::int64_t ratio);
Statistic block_topk_pairs(std::int64_t blocks, std::int64_t block_size);
Statistic compressed_positions(std::int64_t ratio);
Statistic candidate_entries(std::int64_t ratio, std::int64_t blocks, std::int64_t block_size);
Statistic selected_candidates(std::int64_t topk, std::int64_t ratio, std::int64_t blocks, std::int64_t block_size);
Statistic chunk_squares(std::int64_t chunk);
Statistic chunk_substitutions(std::int64_t chunk);
// The same over n positions per token (interleave >= 1).
Statistic interleaved_chunk_squares(std::int64_t chunk, std::int64_t interleave);
Statistic interleaved_chunk_substitutions(std::int64_t chunk, std::int64_t interleave);

// The exact count for one causal document of `length` >= 0 tokens, in closed
// form; nullopt when it does not fit in 128 bits. Preconditions: topk >= 1,
// pool >= 1 and block >= 1 where the kind uses them, topk a multiple of pool.
std::optional<Int128> document_count(const Statistic& statistic, std::int64_t length);

// What Megatron-LM's estimates read: the aggregates it all-reduces, and its
// configured sequence length (DeepSeek-V4's sparse attention estimate uses it).
struct MegatronAggregates {
  double total_tokens = 0;  // T = sum L: any value Megatron-LM's function accepts (0, non-integral)
  double squared_sum = 0;   // S2 = sum L^2
  std::optional<std::int64_t> seq_length;
};

// Megatron-LM's estimate of the batch total (docs/accounting.md, 4, 7.4, 7.5, 9), with
// m = S2 / T the length-weighted mean length:
//  - tokens: T; causal pairs: S2 / 2;
//  - top-k pairs: S2 / 2 * s, s = e (1 - e / (2m)) / (m / 2) with
//    e = min(k, floor(m)); for m <= k that is 1 - frac(m)^2 / m^2, not 1;
//  - window pairs: T * w (every query charged a full window);
//  - compressed entries: S2 / (2r);
//  - selected compressed entries: T * e (1 - r e / (2s)), e = min(k, floor(s/r)),
//    s = seq_length (nullopt when it is unknown);
//  - any other count F (KPool, chunks, blocks): (T / m) ((1 - w) F(n0) + w F(n0 + 1)),
//    n0 = floor(m), w = m - n0 (exact for BSHD, where every length is m).
// Where T or S2 is not positive, top-k pairs are S2 / 2 (Megatron-LM's scale
// is then 1) and the other counts of the last kind 0.
std::optional<double> megatron_estimate(const Statistic& statistic, const MegatronAggregates& aggregates);

// "tokens", "causal_pairs", "topk_pairs(k=2048)", ...
std::string statistic_name(const Statistic& statistic);

}  // namespace trainflops

#endif  // TRAINFLOPS_STATISTIC_H_
