#include "trainflops/statistic.h"

#include <algorithm>
#include <cmath>

namespace trainflops {
namespace {

// sum_{i=1..L} floor(i/p) = p q(q-1)/2 + q(r+1), with L = qp + r.
Int128 complete_pools_seen(Int128 length, Int128 pool) {
  const Int128 q = length / pool, r = length % pool;
  return pool * (q * (q - 1) / 2) + q * (r + 1);
}

// sum_{i=1..L} min(kp, floor(i/p)): positions before kp*p see fewer than kp
// complete pools, every later one sees kp selected pools.
Int128 selected_pools(Int128 length, Int128 selected, Int128 pool) {
  if (length / pool <= selected) return complete_pools_seen(length, pool);
  const Int128 saturated_from = selected * pool;
  return complete_pools_seen(saturated_from - 1, pool) + selected * (length - saturated_from + 1);
}

// sum_{E=1..n} c(E), c(E) = E up to KB entries, then (K-1)B plus the
// ((E-1) mod B) + 1 entries of the own block.
Int128 candidate_entries_up_to(Int128 n, Int128 blocks, Int128 block) {
  const Int128 all = blocks * block;
  if (n <= all) return n * (n + 1) / 2;
  const Int128 m = n - all, rem = m % block;
  return all * (all + 1) / 2 + (blocks - 1) * block * m + m / block * (block * (block + 1) / 2) + rem * (rem + 1) / 2;
}

Int128 candidate_entries_of(Int128 entries, Int128 blocks, Int128 block) {
  if (entries <= blocks * block) return entries;
  return (blocks - 1) * block + (entries - 1) % block + 1;
}

// sum_{j=1..q} min(k, j), for any k (at or below 0: q k).
Int128 capped_prefix(Int128 q, Int128 k) {
  if (k <= 0) return q * k;
  return q <= k ? q * (q + 1) / 2 : k * (k + 1) / 2 + (q - k) * k;
}

// sum_{E=1..n} min(k, c(E)): up to KB entries min(k, E); past them the
// candidates are (K-1)B plus the own block's 1..B, in turn, so min(k, c(E))
// = (K-1)B + min(k - (K-1)B, j) with j = 1..B repeating.
Int128 selected_candidates_up_to(Int128 n, Int128 topk, Int128 blocks, Int128 block) {
  const Int128 all = blocks * block;
  const Int128 within = capped_prefix(std::min(n, all), topk);
  if (n <= all) return within;
  const Int128 past = n - all, earlier = (blocks - 1) * block, own_topk = topk - earlier;
  return within + past * earlier + past / block * capped_prefix(block, own_topk) +
         capped_prefix(past % block, own_topk);
}

// sum_{j<c} j^2 = (c-1) c (2c-1) / 6; nullopt past 128 bits.
std::optional<Int128> substitution_products(Int128 c) {
  if (c <= 1) return Int128{0};
  // One of c-1 and c is even and one of the three factors a multiple of 3.
  Int128 a = c - 1, b = c, e = 2 * c - 1;
  (a % 2 == 0 ? a : b) /= 2;
  (a % 3 == 0 ? a : b % 3 == 0 ? b : e) /= 3;
  const auto ab = checked_mul(a, b);
  return ab ? checked_mul(*ab, e) : std::nullopt;
}

}  // namespace

Statistic topk_pairs(std::int64_t topk) { return Statistic{StatisticKind::kTopkPairs, topk, 0, false}; }

Statistic pooled_attended_pairs(std::int64_t topk, std::int64_t pool, bool tail) {
  return Statistic{StatisticKind::kPooledAttendedPairs, topk, pool, tail};
}

Statistic complete_pool_pairs(std::int64_t pool) {
  return Statistic{StatisticKind::kCompletePoolPairs, 0, pool, false};
}

Statistic pooled_keys(std::int64_t pool) { return Statistic{StatisticKind::kPooledKeys, 0, pool, false}; }

Statistic window_pairs(std::int64_t window) { return Statistic{StatisticKind::kWindowPairs, 0, window, false}; }

Statistic chunked_pairs(std::int64_t chunk) { return Statistic{StatisticKind::kChunkedPairs, 0, chunk, false}; }

Statistic compressed_entries(std::int64_t ratio) {
  return Statistic{StatisticKind::kCompressedEntries, 0, ratio, false};
}

Statistic selected_compressed(std::int64_t topk, std::int64_t ratio) {
  return Statistic{StatisticKind::kSelectedCompressed, topk, ratio, false};
}

Statistic block_topk_pairs(std::int64_t blocks, std::int64_t block_size) {
  return Statistic{StatisticKind::kBlockTopkPairs, blocks, block_size, false};
}

Statistic compressed_positions(std::int64_t ratio) {
  return Statistic{StatisticKind::kCompressedPositions, 0, ratio, false};
}

Statistic candidate_entries(std::int64_t ratio, std::int64_t blocks, std::int64_t block_size) {
  return Statistic{StatisticKind::kCandidateEntries, blocks, ratio, false, block_size};
}

Statistic selected_candidates(std::int64_t topk, std::int64_t ratio, std::int64_t blocks, std::int64_t block_size) {
  return Statistic{StatisticKind::kSelectedCandidates, topk, ratio, false, block_size, blocks};
}

Statistic chunk_squares(std::int64_t chunk) { return Statistic{StatisticKind::kChunkSquares, 0, chunk, false}; }

Statistic chunk_substitutions(std::int64_t chunk) {
  return Statistic{StatisticKind::kChunkSubstitutions, 0, chunk, false};
}

Statistic interleaved_chunk_squares(std::int64_t chunk, std::int64_t interleave) {
  Statistic s = chunk_squares(chunk);
  s.interleave = interleave;
  return s;
}

Statistic interleaved_chunk_substitutions(std::int64_t chunk, std::int64_t interleave) {
  Statistic s = chunk_substitutions(chunk);
  s.interleave = interleave;
  return s;
}

// Every intermediate is below 2^127 for lengths below 2^63, except the
// quadratic ones, which are computed in unsigned 128-bit and checked.
std::optional<Int128> document_count(const Statistic& s, std::int64_t length) {
  const Int128 l = length, k = s.topk, p = s.pool;
  switch (s.kind) {
    case StatisticKind::kTokens: return l;
    case StatisticKind::kCausalPairs: return l * (l + 1) / 2;
    case StatisticKind::kTopkPairs: return l <= k ? l * (l + 1) / 2 : k * (k + 1) / 2 + (l - k) * k;
    case StatisticKind::kPooledAttendedPairs: {
      const Int128 pools = selected_pools(l, k / p, p);
      auto attended = checked_mul(pools, p);
      if (!attended) return std::nullopt;
      if (!s.tail) return attended;
      // sum_i (i mod p) = sum_i i - p * sum_i floor(i/p).
      const Int128 tail = l * (l + 1) / 2 - p * complete_pools_seen(l, p);
      return checked_add(*attended, tail);
    }
    case StatisticKind::kCompletePoolPairs: return complete_pools_seen(l, p);
    case StatisticKind::kPooledKeys: return l / p * p;
    case StatisticKind::kWindowPairs: return l <= p ? l * (l + 1) / 2 : p * (p + 1) / 2 + (l - p) * p;
    case StatisticKind::kChunkedPairs: {
      // Complete chunks of p, then a last one of r tokens.
      const Int128 r = l % p;
      return (l - r) / p * (p * (p + 1) / 2) + r * (r + 1) / 2;
    }
    case StatisticKind::kCompressedEntries: return complete_pools_seen(l, p);
    case StatisticKind::kSelectedCompressed: return selected_pools(l, k, p);
    case StatisticKind::kBlockTopkPairs: {
      // Query i attends i keys less b for each of its earlier blocks past the
      // k - 1 it keeps: b max(0, floor((i-1)/b) - k + 1). Those are the
      // m = L - kb last queries; the j-th of them (from 0) drops floor(j/b) + 1.
      const Int128 causal = l * (l + 1) / 2, m = l - k * p;
      if (m <= 0) return causal;
      return causal - p * (complete_pools_seen(m - 1, p) + m);
    }
    case StatisticKind::kCompressedPositions: return l / p;
    case StatisticKind::kCandidateEntries: {
      // Queries r E .. r E + r - 1 see E entries: every E below the last,
      // M = floor(L/r), r times, and M by the L - r M + 1 last queries.
      const Int128 last = l / p;
      if (last == 0) return 0;
      const Int128 b = s.block;
      const auto earlier = checked_mul(p, candidate_entries_up_to(last - 1, k, b));
      const auto final_queries = checked_mul(l - p * last + 1, candidate_entries_of(last, k, b));
      return earlier && final_queries ? checked_add(*earlier, *final_queries) : std::nullopt;
    }
    case StatisticKind::kSelectedCandidates: {
      // As the candidate entries, each query's count capped at k.
      const Int128 last = l / p;
      if (last == 0) return 0;
      const Int128 b = s.block, blocks = s.blocks;
      const auto earlier = checked_mul(p, selected_candidates_up_to(last - 1, k, blocks, b));
      const auto final_queries =
          checked_mul(l - p * last + 1, std::min(k, candidate_entries_of(last, blocks, b)));
      return earlier && final_queries ? checked_add(*earlier, *final_queries) : std::nullopt;
    }
    case StatisticKind::kChunkSquares: {
      // n L positions (below 2^126), r of them in the last chunk.
      const Int128 positions = l * s.interleave, r = positions % p;
      const auto whole = checked_mul(positions - r, p);
      return whole ? checked_add(*whole, r * r) : std::nullopt;
    }
    case StatisticKind::kChunkSubstitutions: {
      const Int128 positions = l * s.interleave;
      const auto whole = substitution_products(p), last = substitution_products(positions % p);
      if (!whole || !last) return std::nullopt;
      const auto chunks = checked_mul(positions / p, *whole);
      return chunks ? checked_add(*chunks, *last) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> megatron_estimate(const Statistic& s, const MegatronAggregates& aggregates) {
  const double total_tokens = aggregates.total_tokens, squared_sum = aggregates.squared_sum;
  const double mean = squared_sum / total_tokens;
  switch (s.kind) {
    case StatisticKind::kTokens: return total_tokens;
    case StatisticKind::kCausalPairs: return squared_sum / 2;
    case StatisticKind::kTopkPairs: {
      // Without tokens or squares Megatron-LM scales nothing (its scale is 1).
      if (!(total_tokens > 0 && squared_sum > 0)) return squared_sum / 2;
      // Megatron-LM's sparse scale has no shortcut for a mean at or below
      // k: a fractional mean m then charges 1 - frac(m)^2 / m^2 of the pairs.
      const double attended = std::min(static_cast<double>(s.topk), std::floor(mean));
      const double scale = attended * (1 - attended / (2 * mean)) / (mean / 2);
      return squared_sum / 2 * scale;
    }
    case StatisticKind::kWindowPairs: return total_tokens * static_cast<double>(s.pool);
    case StatisticKind::kCompressedEntries: return squared_sum / (2 * static_cast<double>(s.pool));
    case StatisticKind::kSelectedCompressed: {
      if (!aggregates.seq_length) return std::nullopt;
      const double length = static_cast<double>(*aggregates.seq_length), r = static_cast<double>(s.pool);
      const double selected = static_cast<double>(std::min(s.topk, *aggregates.seq_length / s.pool));
      return total_tokens * selected * (1 - r * selected / (2 * length));
    }
    case StatisticKind::kPooledAttendedPairs:
    case StatisticKind::kCompletePoolPairs:
    case StatisticKind::kPooledKeys:
    case StatisticKind::kChunkedPairs:
    case StatisticKind::kBlockTopkPairs:
    case StatisticKind::kCompressedPositions:
    case StatisticKind::kCandidateEntries:
    case StatisticKind::kSelectedCandidates:
    case StatisticKind::kChunkSquares:
    case StatisticKind::kChunkSubstitutions: break;
  }
  if (!(total_tokens > 0 && squared_sum > 0)) return 0.0;  // no documents: no pairs
  const double floor_mean = std::floor(mean);
  const double weight = mean - floor_mean;
  // document_count() takes int64 lengths; past INT64_MAX (a mean near 2^63 or
  // above) a count changes by less than a double resolves.
  const auto at = [&](double length) {
    return to_double(*document_count(s, length < 0x1p63 ? static_cast<std::int64_t>(length) : INT64_MAX));
  };
  return total_tokens / mean * ((1 - weight) * at(floor_mean) + weight * at(floor_mean + 1));
}

namespace {

std::string interleaving(const Statistic& s) {
  return s.interleave == 1 ? "" : ",n=" + std::to_string(s.interleave);
}

}  // namespace

std::string statistic_name(const Statistic& s) {
  switch (s.kind) {
    case StatisticKind::kTokens: return "tokens";
    case StatisticKind::kCausalPairs: return "causal_pairs";
    case StatisticKind::kTopkPairs: return "topk_pairs(k=" + std::to_string(s.topk) + ")";
    case StatisticKind::kPooledAttendedPairs:
      return "pooled_attended_pairs(k=" + std::to_string(s.topk) + ",p=" + std::to_string(s.pool) +
             (s.tail ? ",tail)" : ")");
    case StatisticKind::kCompletePoolPairs: return "complete_pool_pairs(p=" + std::to_string(s.pool) + ")";
    case StatisticKind::kPooledKeys: return "pooled_keys(p=" + std::to_string(s.pool) + ")";
    case StatisticKind::kWindowPairs: return "window_pairs(w=" + std::to_string(s.pool) + ")";
    case StatisticKind::kChunkedPairs: return "chunked_pairs(c=" + std::to_string(s.pool) + ")";
    case StatisticKind::kCompressedEntries: return "compressed_entries(r=" + std::to_string(s.pool) + ")";
    case StatisticKind::kSelectedCompressed:
      return "selected_compressed(k=" + std::to_string(s.topk) + ",r=" + std::to_string(s.pool) + ")";
    case StatisticKind::kBlockTopkPairs:
      return "block_topk_pairs(k=" + std::to_string(s.topk) + ",b=" + std::to_string(s.pool) + ")";
    case StatisticKind::kCompressedPositions: return "compressed_positions(r=" + std::to_string(s.pool) + ")";
    case StatisticKind::kCandidateEntries:
      return "candidate_entries(r=" + std::to_string(s.pool) + ",k=" + std::to_string(s.topk) +
             ",b=" + std::to_string(s.block) + ")";
    case StatisticKind::kSelectedCandidates:
      return "selected_candidates(k=" + std::to_string(s.topk) + ",r=" + std::to_string(s.pool) +
             ",blocks=" + std::to_string(s.blocks) + ",b=" + std::to_string(s.block) + ")";
    case StatisticKind::kChunkSquares: return "chunk_squares(c=" + std::to_string(s.pool) + interleaving(s) + ")";
    case StatisticKind::kChunkSubstitutions:
      return "chunk_substitutions(c=" + std::to_string(s.pool) + interleaving(s) + ")";
  }
  return "unknown";
}

}  // namespace trainflops
