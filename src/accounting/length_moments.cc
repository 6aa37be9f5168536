#include "accounting/length_moments.h"

#include <algorithm>
#include <atomic>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TRAINFLOPS_AVX2 1
#endif

namespace trainflops {
namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

bool is_power_of_two(std::uint64_t x) { return (x & (x - 1)) == 0; }

// The portable loops: one document at a time. Lengths of blocks that do not
// fit may wrap here; the caller ignores those moments.
namespace portable {

void clear(const MomentSpec& spec, BlockMoments& block, ExcessMoments* excess, RemainderMoments* remainders) {
  block = BlockMoments{};
  for (std::size_t t = 0; t < spec.thresholds.size(); ++t) excess[t] = ExcessMoments{};
  for (std::size_t p = 0; p < spec.pools.size(); ++p) remainders[p] = RemainderMoments{};
}

void add_document(std::uint64_t length, const MomentSpec& spec, BlockMoments& block, ExcessMoments* excess,
                  RemainderMoments* remainders) {
  block.squares += length * length;
  for (std::size_t t = 0; t < spec.thresholds.size(); ++t) {
    const std::uint64_t c = spec.thresholds[t];
    const std::uint64_t m = length > c ? length - c : 0;
    excess[t].sum += m;
    excess[t].squares += m * m;
  }
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    const PoolSpec& pool = spec.pools[p];
    if (length <= pool.threshold) continue;
    const std::uint64_t r = is_power_of_two(pool.pool) ? length & (pool.pool - 1) : length % pool.pool;
    remainders[p].sum += r;
    remainders[p].squares += r * r;
  }
}

BlockMoments lengths_moments(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                             RemainderMoments* remainders) {
  BlockMoments block;
  clear(spec, block, excess, remainders);
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto length = static_cast<std::uint64_t>(lengths[i]);
    bits |= length;
    block.tokens += length;
    add_document(length, spec, block, excess, remainders);
  }
  block.valid = (bits & kSignBit) == 0;
  // A length of 2^31 or more could have wrapped the token sum.
  block.fits = bits <= kMaxBlockTokens && block.tokens <= kMaxBlockTokens;
  return block;
}

template <typename Offset>
std::uint64_t offset_at(const Offset* cu_seqlens, std::size_t i) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(cu_seqlens[i]));
}

// Offsets that are all >= 0 differ without overflow, so a decreasing pair
// shows as a negative difference.
template <typename Offset>
BlockMoments offsets_moments(const Offset* cu_seqlens, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                             RemainderMoments* remainders) {
  BlockMoments block;
  clear(spec, block, excess, remainders);
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t end = offset_at(cu_seqlens, i + 1);
    const std::uint64_t length = end - offset_at(cu_seqlens, i);
    bits |= end | length;
    add_document(length, spec, block, excess, remainders);
  }
  block.tokens = offset_at(cu_seqlens, n) - offset_at(cu_seqlens, 0);
  block.valid = (bits & kSignBit) == 0;
  block.fits = block.valid && block.tokens <= kMaxBlockTokens;
  return block;
}

}  // namespace portable

#ifdef TRAINFLOPS_AVX2
// The vector loops: eight documents per 256-bit register, in 32-bit lanes.
// Where the block fits, every length, excess and remainder is below 2^31, so
// their sums over the block fit in a lane and _mm256_mul_epu32 (32 x 32 -> 64
// bits, even lanes) squares them exactly.
namespace avx2 {

#define TRAINFLOPS_TARGET __attribute__((target("avx2")))
// Every function here that passes 256-bit values is compiled for AVX2, so
// their calling convention agrees.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

TRAINFLOPS_TARGET inline __m256i load(const void* at) { return _mm256_loadu_si256(static_cast<const __m256i*>(at)); }

// The low halves of the eight 64-bit lanes of a and b, in some order (the
// moments are sums, so the order of documents does not matter).
TRAINFLOPS_TARGET inline __m256i low_halves(__m256i a, __m256i b) {
  return _mm256_castps_si256(
      _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
}

TRAINFLOPS_TARGET inline std::uint64_t sum_of_64(__m256i v) {
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

TRAINFLOPS_TARGET inline std::uint64_t sum_of_32(__m256i v) {
  alignas(32) std::uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  std::uint64_t sum = 0;
  for (std::uint32_t lane : lanes) sum += lane;
  return sum;
}

// A sum of eight values and of their squares (the squares in two 64-bit halves).
struct SquareSum {
  TRAINFLOPS_TARGET SquareSum() : sum(_mm256_setzero_si256()), even(sum), odd(sum) {}
  __m256i sum, even, odd;

  TRAINFLOPS_TARGET void add(__m256i v) {
    sum = _mm256_add_epi32(sum, v);
    add_squares(v);
  }
  TRAINFLOPS_TARGET void add_squares(__m256i v) {
    const __m256i high = _mm256_srli_epi64(v, 32);
    even = _mm256_add_epi64(even, _mm256_mul_epu32(v, v));
    odd = _mm256_add_epi64(odd, _mm256_mul_epu32(high, high));
  }
  TRAINFLOPS_TARGET std::uint64_t squares() const { return sum_of_64(_mm256_add_epi64(even, odd)); }
};

// Each loader reads eight lengths at a time and keeps what validity needs.
struct LengthsLoader {
  TRAINFLOPS_TARGET explicit LengthsLoader(const std::int64_t* in)
      : lengths(in), bits(_mm256_setzero_si256()), tokens(bits) {}
  const std::int64_t* lengths;
  __m256i bits, tokens;
  TRAINFLOPS_TARGET __m256i operator()(std::size_t i) {
    const __m256i a = load(lengths + i), b = load(lengths + i + 4);
    bits = _mm256_or_si256(bits, _mm256_or_si256(a, b));
    tokens = _mm256_add_epi64(tokens, _mm256_add_epi64(a, b));
    return low_halves(a, b);
  }
};

struct Offsets64Loader {
  TRAINFLOPS_TARGET explicit Offsets64Loader(const std::int64_t* offsets)
      : cu_seqlens(offsets), bits(_mm256_setzero_si256()) {}
  const std::int64_t* cu_seqlens;
  __m256i bits;
  TRAINFLOPS_TARGET __m256i operator()(std::size_t i) {
    const __m256i end_a = load(cu_seqlens + i + 1), end_b = load(cu_seqlens + i + 5);
    const __m256i a = _mm256_sub_epi64(end_a, load(cu_seqlens + i));
    const __m256i b = _mm256_sub_epi64(end_b, load(cu_seqlens + i + 4));
    bits = _mm256_or_si256(bits, _mm256_or_si256(_mm256_or_si256(end_a, end_b), _mm256_or_si256(a, b)));
    return low_halves(a, b);
  }
};

struct Offsets32Loader {
  TRAINFLOPS_TARGET explicit Offsets32Loader(const std::int32_t* offsets)
      : cu_seqlens(offsets), bits(_mm256_setzero_si256()) {}
  const std::int32_t* cu_seqlens;
  __m256i bits;
  TRAINFLOPS_TARGET __m256i operator()(std::size_t i) {
    const __m256i end = load(cu_seqlens + i + 1);
    const __m256i length = _mm256_sub_epi32(end, load(cu_seqlens + i));
    bits = _mm256_or_si256(bits, _mm256_or_si256(end, length));
    return length;
  }
};

// A pool size's remainders: over every document (`whole`, threshold 0) and
// over those longer than a threshold (`selected`); indices into spec.pools, or
// -1. Remainders below 2^11 square into 32 bits, and 256 of those squares (a
// lane's share of a block) sum below 2^30.
struct PoolGroup {
  int whole = -1;
  int selected = -1;
};
constexpr std::uint64_t kMaxVectorPool = std::uint64_t{1} << 11;

// One pass over `vectors` groups of eight documents, computing the squares,
// up to two thresholds' moments and one pool group's, which it adds to
// `excess` and `remainders`; returns the sum of the squares.
template <int kThresholds, bool kWhole, bool kSelected, typename Loader>
TRAINFLOPS_TARGET std::uint64_t pass(Loader& result, std::size_t vectors, const std::uint64_t* thresholds,
                                     ExcessMoments* excess, const PoolSpec& pool, RemainderMoments* whole,
                                     RemainderMoments* selected) {
  Loader loader = result;  // in registers, not in memory that the outputs may alias
  __m256i c[kThresholds + 1];
  for (int t = 0; t < kThresholds; ++t) c[t] = _mm256_set1_epi32(static_cast<int>(thresholds[t]));
  const __m256i mask = _mm256_set1_epi32(static_cast<int>(pool.pool - 1));
  const __m256i floor = _mm256_set1_epi32(static_cast<int>(pool.threshold));
  const __m256i zero = _mm256_setzero_si256();
  SquareSum lengths, excess_sums[kThresholds + 1];
  __m256i whole_sum = zero, whole_squares = zero, selected_sum = zero, selected_squares = zero;
  for (std::size_t v = 0; v < vectors; ++v) {
    const __m256i length = loader(8 * v);
    lengths.add_squares(length);
    for (int t = 0; t < kThresholds; ++t) excess_sums[t].add(_mm256_max_epi32(_mm256_sub_epi32(length, c[t]), zero));
    if constexpr (kWhole || kSelected) {
      const __m256i r = _mm256_and_si256(length, mask);
      const __m256i r_squared = _mm256_mullo_epi32(r, r);
      if constexpr (kWhole) {
        whole_sum = _mm256_add_epi32(whole_sum, r);
        whole_squares = _mm256_add_epi32(whole_squares, r_squared);
      }
      if constexpr (kSelected) {
        const __m256i longer = _mm256_cmpgt_epi32(length, floor);
        selected_sum = _mm256_add_epi32(selected_sum, _mm256_and_si256(r, longer));
        selected_squares = _mm256_add_epi32(selected_squares, _mm256_and_si256(r_squared, longer));
      }
    }
  }
  for (int t = 0; t < kThresholds; ++t) {
    excess[t].sum += sum_of_32(excess_sums[t].sum);
    excess[t].squares += excess_sums[t].squares();
  }
  if constexpr (kWhole) {
    whole->sum += sum_of_32(whole_sum);
    whole->squares += sum_of_32(whole_squares);
  }
  if constexpr (kSelected) {
    selected->sum += sum_of_32(selected_sum);
    selected->squares += sum_of_32(selected_squares);
  }
  result = loader;
  return lengths.squares();
}

template <typename Loader>
TRAINFLOPS_TARGET std::uint64_t pass(Loader& loader, std::size_t vectors, const MomentSpec& spec,
                                     std::size_t first_threshold, std::size_t thresholds, PoolGroup group,
                                     ExcessMoments* excess, RemainderMoments* remainders) {
  const std::uint64_t* c = spec.thresholds.data() + first_threshold;
  excess += first_threshold;
  PoolSpec pool;  // the group's size, and its selected pool's threshold
  if (group.whole >= 0) pool = spec.pools[static_cast<std::size_t>(group.whole)];
  if (group.selected >= 0) pool = spec.pools[static_cast<std::size_t>(group.selected)];
  RemainderMoments* w = group.whole >= 0 ? &remainders[group.whole] : nullptr;
  RemainderMoments* s = group.selected >= 0 ? &remainders[group.selected] : nullptr;
#define TRAINFLOPS_PASS(t, whole, selected) pass<t, whole, selected>(loader, vectors, c, excess, pool, w, s)
#define TRAINFLOPS_PASSES(t)                         \
  if (w && s) return TRAINFLOPS_PASS(t, true, true); \
  if (w) return TRAINFLOPS_PASS(t, true, false);     \
  if (s) return TRAINFLOPS_PASS(t, false, true);     \
  return TRAINFLOPS_PASS(t, false, false)
  switch (thresholds) {
    case 0: TRAINFLOPS_PASSES(0);
    case 1: TRAINFLOPS_PASSES(1);
    default: TRAINFLOPS_PASSES(2);
  }
#undef TRAINFLOPS_PASSES
#undef TRAINFLOPS_PASS
}

// The next pool group from spec.pools[first]: a whole pool with the selected
// one after it when they share their size (spec.pools is sorted), else one.
PoolGroup pool_group(std::span<const PoolSpec> pools, std::size_t first) {
  PoolGroup group;
  if (first >= pools.size()) return group;
  (pools[first].threshold == 0 ? group.whole : group.selected) = static_cast<int>(first);
  const std::size_t next = first + 1;
  if (group.whole >= 0 && next < pools.size() && pools[next].pool == pools[first].pool) {
    group.selected = static_cast<int>(next);
  }
  return group;
}

// Every group of eight documents through as many passes as the spec needs:
// one for up to two thresholds and one pool size. The first pass leaves in
// `loader` what validity needs; returns the sum of the squares.
template <typename Loader>
TRAINFLOPS_TARGET std::uint64_t passes(Loader& loader, std::size_t vectors, const MomentSpec& spec,
                                       ExcessMoments* excess, RemainderMoments* remainders) {
  const Loader fresh = loader;
  std::uint64_t squares = 0;
  std::size_t t = 0, p = 0;
  do {
    const std::size_t thresholds = std::min<std::size_t>(2, spec.thresholds.size() - t);
    const PoolGroup group = pool_group(spec.pools, p);
    Loader again = fresh;
    const bool first = t == 0 && p == 0;
    const std::uint64_t pass_squares =
        pass(first ? loader : again, vectors, spec, t, thresholds, group, excess, remainders);
    if (first) squares = pass_squares;
    t += thresholds;
    p += (group.whole >= 0) + (group.selected >= 0);
  } while (t < spec.thresholds.size() || p < spec.pools.size());
  return squares;
}

TRAINFLOPS_TARGET inline std::uint64_t or_of_64(__m256i v) {
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] | lanes[1] | lanes[2] | lanes[3];
}

// Each runs the last n % 8 documents through the portable loop first (which
// sets the outputs), then the groups of eight, which add to them.
TRAINFLOPS_TARGET BlockMoments lengths_moments(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec,
                                               ExcessMoments* excess, RemainderMoments* remainders) {
  const std::size_t head = n / 8 * 8;
  const BlockMoments tail = portable::lengths_moments(lengths + head, n - head, spec, excess, remainders);
  LengthsLoader loader(lengths);
  BlockMoments block;
  block.squares = tail.squares + passes(loader, head / 8, spec, excess, remainders);
  const std::uint64_t bits = or_of_64(loader.bits);
  block.tokens = sum_of_64(loader.tokens) + tail.tokens;
  block.valid = tail.valid && (bits & kSignBit) == 0;
  // Every head length below 2^31: their sum did not wrap.
  block.fits = tail.fits && bits <= kMaxBlockTokens && block.tokens <= kMaxBlockTokens;
  return block;
}

template <typename Offset, typename Loader>
TRAINFLOPS_TARGET BlockMoments offsets_moments(const Offset* cu_seqlens, std::size_t n, const MomentSpec& spec,
                                               ExcessMoments* excess, RemainderMoments* remainders) {
  const std::size_t head = n / 8 * 8;
  BlockMoments block = portable::offsets_moments(cu_seqlens + head, n - head, spec, excess, remainders);
  Loader loader(cu_seqlens);
  block.squares += passes(loader, head / 8, spec, excess, remainders);
  // A set sign bit in any lane (of 32 or 64 bits): a negative offset or difference.
  const std::uint64_t sign_lanes = sizeof(Offset) == 4 ? _mm256_movemask_ps(_mm256_castsi256_ps(loader.bits))
                                                       : _mm256_movemask_pd(_mm256_castsi256_pd(loader.bits));
  block.valid = block.valid && sign_lanes == 0;
  block.tokens = portable::offset_at(cu_seqlens, n) - portable::offset_at(cu_seqlens, 0);
  block.fits = block.valid && block.tokens <= kMaxBlockTokens;
  return block;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef TRAINFLOPS_TARGET

}  // namespace avx2

bool has_avx2() {
  __builtin_cpu_init();  // this may run before the runtime's own initializer
  return __builtin_cpu_supports("avx2");
}

std::atomic<bool> vector_loops{has_avx2()};

// The vector loops take remainders of small power-of-two pools only.
bool vectorizable(const MomentSpec& spec) {
  if (!vector_loops.load(std::memory_order_relaxed)) return false;
  for (const PoolSpec& pool : spec.pools) {
    if (!is_power_of_two(pool.pool) || pool.pool > avx2::kMaxVectorPool) return false;
  }
  return true;
}
#else
std::atomic<bool> vector_loops{false};
#endif

}  // namespace

#ifdef TRAINFLOPS_AVX2
#define TRAINFLOPS_DISPATCH(vector_call, portable_call) (vectorizable(spec) ? vector_call : portable_call)
#else
#define TRAINFLOPS_DISPATCH(vector_call, portable_call) portable_call
#endif

BlockMoments block_moments(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                           RemainderMoments* remainders) {
  return TRAINFLOPS_DISPATCH(avx2::lengths_moments(lengths, n, spec, excess, remainders),
                             portable::lengths_moments(lengths, n, spec, excess, remainders));
}

BlockMoments block_moments_of_offsets(const std::int64_t* cu_seqlens, std::size_t n, const MomentSpec& spec,
                                      ExcessMoments* excess, RemainderMoments* remainders) {
  return TRAINFLOPS_DISPATCH(
      (avx2::offsets_moments<std::int64_t, avx2::Offsets64Loader>(cu_seqlens, n, spec, excess, remainders)),
      portable::offsets_moments(cu_seqlens, n, spec, excess, remainders));
}

BlockMoments block_moments_of_offsets(const std::int32_t* cu_seqlens, std::size_t n, const MomentSpec& spec,
                                      ExcessMoments* excess, RemainderMoments* remainders) {
  return TRAINFLOPS_DISPATCH(
      (avx2::offsets_moments<std::int32_t, avx2::Offsets32Loader>(cu_seqlens, n, spec, excess, remainders)),
      portable::offsets_moments(cu_seqlens, n, spec, excess, remainders));
}

#undef TRAINFLOPS_DISPATCH

bool use_vector_loops(bool enabled) {
#ifdef TRAINFLOPS_AVX2
  enabled = enabled && has_avx2();
#else
  enabled = false;
#endif
  return vector_loops.exchange(enabled, std::memory_order_relaxed);
}

}  // namespace trainflops
