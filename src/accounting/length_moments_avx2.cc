// The AVX2 loops: eight documents per 256-bit register, in 32-bit lanes. Where
// a block fits, every length, excess and remainder is below 2^31, so their sums
// over the block fit in a lane and _mm256_mul_epu32 (32 x 32 -> 64 bits, even
// lanes) squares them exactly.
//
// This file alone is compiled with -mavx2. Any inline function it shares with
// the rest of the library could be kept by the linker in its AVX2 form and run
// on a processor without AVX2, so it calls none besides std::span's accessors
// (loads, no vector code); everything of its own sits in an unnamed namespace.
#include "accounting/length_moments_avx2.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>
#endif

namespace trainflops {

#if defined(__x86_64__) && defined(__AVX2__)
namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

inline __m256i load(const void* at) { return _mm256_loadu_si256(static_cast<const __m256i*>(at)); }

// The low halves of the eight 64-bit lanes of a and b, in some order (the
// moments are sums, so the order of documents does not matter).
inline __m256i low_halves(__m256i a, __m256i b) {
  return _mm256_castps_si256(
      _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0)));
}

inline std::uint64_t sum_of_64(__m256i v) {
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

inline std::uint64_t or_of_64(__m256i v) {
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] | lanes[1] | lanes[2] | lanes[3];
}

inline std::uint64_t sum_of_32(__m256i v) {
  alignas(32) std::uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  std::uint64_t sum = 0;
  for (std::uint32_t lane : lanes) sum += lane;
  return sum;
}

// A sum of eight values and of their squares (the squares in two 64-bit halves).
struct SquareSum {
  SquareSum() : sum(_mm256_setzero_si256()), even(sum), odd(sum) {}
  __m256i sum, even, odd;

  void add(__m256i v) {
    sum = _mm256_add_epi32(sum, v);
    add_squares(v);
  }
  void add_squares(__m256i v) {
    const __m256i high = _mm256_srli_epi64(v, 32);
    even = _mm256_add_epi64(even, _mm256_mul_epu32(v, v));
    odd = _mm256_add_epi64(odd, _mm256_mul_epu32(high, high));
  }
  std::uint64_t squares() const { return sum_of_64(_mm256_add_epi64(even, odd)); }
};

// Each loader reads eight lengths at a time and keeps what validity needs.
struct LengthsLoader {
  explicit LengthsLoader(const std::int64_t* in) : lengths(in), bits(_mm256_setzero_si256()), tokens(bits) {}
  const std::int64_t* lengths;
  __m256i bits, tokens;
  __m256i operator()(std::size_t i) {
    const __m256i a = load(lengths + i), b = load(lengths + i + 4);
    bits = _mm256_or_si256(bits, _mm256_or_si256(a, b));
    tokens = _mm256_add_epi64(tokens, _mm256_add_epi64(a, b));
    return low_halves(a, b);
  }
};

struct Offsets64Loader {
  explicit Offsets64Loader(const std::int64_t* offsets) : cu_seqlens(offsets), bits(_mm256_setzero_si256()) {}
  const std::int64_t* cu_seqlens;
  __m256i bits;
  __m256i operator()(std::size_t i) {
    const __m256i end_a = load(cu_seqlens + i + 1), end_b = load(cu_seqlens + i + 5);
    const __m256i a = _mm256_sub_epi64(end_a, load(cu_seqlens + i));
    const __m256i b = _mm256_sub_epi64(end_b, load(cu_seqlens + i + 4));
    bits = _mm256_or_si256(bits, _mm256_or_si256(_mm256_or_si256(end_a, end_b), _mm256_or_si256(a, b)));
    return low_halves(a, b);
  }
  // A set sign bit in any 64-bit lane: a negative offset or difference.
  bool any_negative() const { return _mm256_movemask_pd(_mm256_castsi256_pd(bits)) != 0; }
};

struct Offsets32Loader {
  explicit Offsets32Loader(const std::int32_t* offsets) : cu_seqlens(offsets), bits(_mm256_setzero_si256()) {}
  const std::int32_t* cu_seqlens;
  __m256i bits;
  __m256i operator()(std::size_t i) {
    const __m256i end = load(cu_seqlens + i + 1);
    const __m256i length = _mm256_sub_epi32(end, load(cu_seqlens + i));
    bits = _mm256_or_si256(bits, _mm256_or_si256(end, length));
    return length;
  }
  bool any_negative() const { return _mm256_movemask_ps(_mm256_castsi256_ps(bits)) != 0; }
};

// A pool size's remainders: over every document (`whole`, threshold 0) and
// over those longer than a threshold (`selected`); indices into spec.pools, or
// -1. Remainders below kMaxAvx2Pool square into 32 bits, and a lane's share of
// a block of those squares sums below 2^32.
struct PoolGroup {
  int whole = -1;
  int selected = -1;
};
static_assert(kBlockDocuments / 8 * (kMaxAvx2Pool - 1) * (kMaxAvx2Pool - 1) < (std::uint64_t{1} << 32));

// One pass over `vectors` groups of eight documents, computing the squares,
// up to two thresholds' moments and one pool group's, which it adds to
// `excess` and `remainders`; returns the sum of the squares.
template <int kThresholds, bool kWhole, bool kSelected, typename Loader>
std::uint64_t pass(Loader& result, std::size_t vectors, const std::uint64_t* thresholds, ExcessMoments* excess,
                   const PoolSpec& pool, RemainderMoments* whole, RemainderMoments* selected) {
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

// The pass for kThresholds thresholds and the pools present (w, s non-null).
template <int kThresholds, typename Loader>
std::uint64_t pass(Loader& loader, std::size_t vectors, const std::uint64_t* c, ExcessMoments* excess,
                   const PoolSpec& pool, RemainderMoments* w, RemainderMoments* s) {
  if (w && s) return pass<kThresholds, true, true>(loader, vectors, c, excess, pool, w, s);
  if (w) return pass<kThresholds, true, false>(loader, vectors, c, excess, pool, w, s);
  if (s) return pass<kThresholds, false, true>(loader, vectors, c, excess, pool, w, s);
  return pass<kThresholds, false, false>(loader, vectors, c, excess, pool, w, s);
}

template <typename Loader>
std::uint64_t pass(Loader& loader, std::size_t vectors, const MomentSpec& spec, std::size_t first_threshold,
                   std::size_t thresholds, PoolGroup group, ExcessMoments* excess, RemainderMoments* remainders) {
  const std::uint64_t* c = spec.thresholds.data() + first_threshold;
  excess += first_threshold;
  PoolSpec pool;  // the group's size, and its selected pool's threshold
  if (group.whole >= 0) pool = spec.pools[static_cast<std::size_t>(group.whole)];
  if (group.selected >= 0) pool = spec.pools[static_cast<std::size_t>(group.selected)];
  RemainderMoments* w = group.whole >= 0 ? &remainders[group.whole] : nullptr;
  RemainderMoments* s = group.selected >= 0 ? &remainders[group.selected] : nullptr;
  switch (thresholds) {
    case 0: return pass<0>(loader, vectors, c, excess, pool, w, s);
    case 1: return pass<1>(loader, vectors, c, excess, pool, w, s);
    default: return pass<2>(loader, vectors, c, excess, pool, w, s);
  }
}

// The next pool group from spec.pools[first]: a whole pool with the selected
// one after it when they share their size (spec.pools is sorted), else one.
PoolGroup pool_group(const MomentSpec& spec, std::size_t first) {
  PoolGroup group;
  if (first >= spec.pools.size()) return group;
  (spec.pools[first].threshold == 0 ? group.whole : group.selected) = static_cast<int>(first);
  const std::size_t next = first + 1;
  if (group.whole >= 0 && next < spec.pools.size() && spec.pools[next].pool == spec.pools[first].pool) {
    group.selected = static_cast<int>(next);
  }
  return group;
}

// Every group of eight documents through as many passes as the spec needs:
// one for up to two thresholds and one pool size. The first pass leaves in
// `loader` what validity needs; returns the sum of the squares.
template <typename Loader>
std::uint64_t passes(Loader& loader, std::size_t vectors, const MomentSpec& spec, ExcessMoments* excess,
                     RemainderMoments* remainders) {
  const Loader fresh = loader;
  std::uint64_t squares = 0;
  std::size_t t = 0, p = 0;
  do {
    const std::size_t left = spec.thresholds.size() - t;
    const std::size_t thresholds = left < 2 ? left : 2;
    const PoolGroup group = pool_group(spec, p);
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

BlockMoments lengths_moments(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec,
                             ExcessMoments* excess, RemainderMoments* remainders) {
  LengthsLoader loader(lengths);
  BlockMoments block;
  block.squares = passes(loader, n / 8, spec, excess, remainders);
  const std::uint64_t bits = or_of_64(loader.bits);
  block.tokens = sum_of_64(loader.tokens);
  block.valid = (bits & kSignBit) == 0;
  // Every length below 2^31: their sum did not wrap.
  block.fits = bits <= kMaxBlockTokens && block.tokens <= kMaxBlockTokens;
  return block;
}

template <typename Offset, typename Loader>
BlockMoments offsets_moments(const Offset* cu_seqlens, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                             RemainderMoments* remainders) {
  Loader loader(cu_seqlens);
  BlockMoments block;
  block.squares = passes(loader, n / 8, spec, excess, remainders);
  block.valid = !loader.any_negative();
  block.tokens = static_cast<std::uint64_t>(std::int64_t{cu_seqlens[n]}) -
                 static_cast<std::uint64_t>(std::int64_t{cu_seqlens[0]});
  block.fits = block.valid && block.tokens <= kMaxBlockTokens;
  return block;
}

constexpr Avx2Loops kLoops = {lengths_moments, offsets_moments<std::int64_t, Offsets64Loader>,
                              offsets_moments<std::int32_t, Offsets32Loader>};

}  // namespace

const Avx2Loops* avx2_loops() { return &kLoops; }
#else
const Avx2Loops* avx2_loops() { return nullptr; }
#endif

}  // namespace trainflops
