#include "accounting/length_moments.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TRAINFLOPS_X86_VECTORS 1
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

void add_remainders(std::uint64_t length, const MomentSpec& spec, RemainderMoments* remainders) {
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    const PoolSpec& pool = spec.pools[p];
    if (length <= pool.threshold) continue;
    const std::uint64_t r = is_power_of_two(pool.pool) ? length & (pool.pool - 1) : length % pool.pool;
    remainders[p].sum += r;
    remainders[p].squares += r * r;
  }
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
  add_remainders(length, spec, remainders);
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

#ifdef TRAINFLOPS_X86_VECTORS
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
// -1. Remainders below 2^11 square into 32 bits, and a lane's share of a
// block of those squares sums below 2^32.
struct PoolGroup {
  int whole = -1;
  int selected = -1;
};
constexpr std::uint64_t kMaxVectorPool = std::uint64_t{1} << 11;
static_assert(kBlockDocuments / 8 * (kMaxVectorPool - 1) * (kMaxVectorPool - 1) < (std::uint64_t{1} << 32));

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

// The multiply-add loops (AVX-512 IFMA, 512-bit registers): eight documents
// per register in 64-bit lanes, where one vpmadd52luq multiplies and adds.
// Its products are exact below 2^52, so these loops take only blocks whose
// lengths are all below 2^26 (any other block goes to the loops above).
// Instead of the excess m = max(L - c, 0) they sum a = min(L, c) and a^2,
// which is cheaper and gives the excess moments since L = a + m and a = c
// wherever m > 0:
//   sum m = sum L - sum a,    sum m^2 = sum L^2 - sum a^2 - 2c sum m.
// A selected pool's remainders are those of the whole pool, added under a
// mask of the documents longer than its threshold.
namespace ifma {

#define TRAINFLOPS_TARGET __attribute__((target("avx2,avx512f,avx512ifma")))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

constexpr std::uint64_t kMaxLength = (std::uint64_t{1} << 26) - 1;

// Where the processor runs 512-bit instructions at full width, each takes
// twice the documents of a 256-bit one; where it splits them, no fewer.
TRAINFLOPS_TARGET inline __m512i load(const void* at) { return _mm512_loadu_si512(at); }
// Sums wrap modulo 2^64 (_mm512_reduce_add_epi64 adds signed lanes, whose
// overflow is undefined).
TRAINFLOPS_TARGET inline std::uint64_t sum_of_64(__m512i v) {
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  std::uint64_t sum = 0;
  for (std::uint64_t lane : lanes) sum += lane;
  return sum;
}
TRAINFLOPS_TARGET inline std::uint64_t or_of_64(__m512i v) {
  return static_cast<std::uint64_t>(_mm512_reduce_or_epi64(v));
}

// A sum of values below 2^26 and of their squares, over two registers at a
// time, each into accumulators of its own (so that consecutive multiply-adds
// do not wait for each other, and no sum of the two is kept between them).
struct SquareSum {
  TRAINFLOPS_TARGET SquareSum() : sum_a(_mm512_setzero_si512()), sum_b(sum_a), squares_a(sum_a), squares_b(sum_a) {}
  __m512i sum_a, sum_b, squares_a, squares_b;
  TRAINFLOPS_TARGET void add(__m512i a, __m512i b) {
    sum_a = _mm512_add_epi64(sum_a, a);
    sum_b = _mm512_add_epi64(sum_b, b);
    add_squares(a, b);
  }
  TRAINFLOPS_TARGET void add_squares(__m512i a, __m512i b) {
    squares_a = _mm512_madd52lo_epu64(squares_a, a, a);
    squares_b = _mm512_madd52lo_epu64(squares_b, b, b);
  }
  // Adds a and b where ka and kb have their lanes.
  TRAINFLOPS_TARGET void add_where(__mmask8 ka, __mmask8 kb, __m512i a, __m512i b) {
    sum_a = _mm512_mask_add_epi64(sum_a, ka, sum_a, a);
    sum_b = _mm512_mask_add_epi64(sum_b, kb, sum_b, b);
    squares_a = _mm512_mask_madd52lo_epu64(squares_a, ka, a, a);
    squares_b = _mm512_mask_madd52lo_epu64(squares_b, kb, b, b);
  }
  TRAINFLOPS_TARGET void merge(const SquareSum& other) {
    sum_a = _mm512_add_epi64(sum_a, other.sum_a);
    sum_b = _mm512_add_epi64(sum_b, other.sum_b);
    squares_a = _mm512_add_epi64(squares_a, other.squares_a);
    squares_b = _mm512_add_epi64(squares_b, other.squares_b);
  }
  TRAINFLOPS_TARGET std::uint64_t sum() const { return sum_of_64(_mm512_add_epi64(sum_a, sum_b)); }
  TRAINFLOPS_TARGET std::uint64_t squares() const { return sum_of_64(_mm512_add_epi64(squares_a, squares_b)); }
};

// Each loader gives sixteen lengths at a time, in two registers of eight, and
// keeps `bits`: an OR from which the caller sees whether every length was
// below 2^26 (and, for int32 offsets, every offset non-negative).
struct LengthsLoader {
  TRAINFLOPS_TARGET explicit LengthsLoader(const std::int64_t* in)
      : lengths(in), bits(_mm512_setzero_si512()), tokens(bits) {}
  const std::int64_t* lengths;
  __m512i bits, tokens;
  TRAINFLOPS_TARGET void operator()(std::size_t i, __m512i& a, __m512i& b) {
    a = load(lengths + i);
    b = load(lengths + i + 8);
    bits = _mm512_ternarylogic_epi64(bits, a, b, 0xFE);  // bits | a | b
    tokens = _mm512_add_epi64(tokens, _mm512_add_epi64(a, b));
  }
  TRAINFLOPS_TARGET bool short_lengths() const { return or_of_64(bits) <= kMaxLength; }
};

// 64-bit differences below 2^26 from a non-negative first offset to a last
// one at most 2^31 - 1 further are the true lengths (the caller checks the
// ends): their sum is below 2^64, so it equals the last minus the first.
struct Offsets64Loader {
  TRAINFLOPS_TARGET explicit Offsets64Loader(const std::int64_t* offsets)
      : cu_seqlens(offsets), bits(_mm512_setzero_si512()) {}
  const std::int64_t* cu_seqlens;
  __m512i bits;
  TRAINFLOPS_TARGET void operator()(std::size_t i, __m512i& a, __m512i& b) {
    a = _mm512_sub_epi64(load(cu_seqlens + i + 1), load(cu_seqlens + i));
    b = _mm512_sub_epi64(load(cu_seqlens + i + 9), load(cu_seqlens + i + 8));
    bits = _mm512_ternarylogic_epi64(bits, a, b, 0xFE);
  }
  TRAINFLOPS_TARGET bool short_lengths() const { return or_of_64(bits) <= kMaxLength; }
};

// Offsets of 32 bits that are all non-negative differ without wrapping, so a
// decreasing pair shows as a negative difference.
struct Offsets32Loader {
  TRAINFLOPS_TARGET explicit Offsets32Loader(const std::int32_t* offsets)
      : cu_seqlens(offsets), bits(_mm512_setzero_si512()), ends(bits) {}
  const std::int32_t* cu_seqlens;
  __m512i bits, ends;
  TRAINFLOPS_TARGET void operator()(std::size_t i, __m512i& a, __m512i& b) {
    const __m512i end = load(cu_seqlens + i + 1);
    const __m512i lengths = _mm512_sub_epi32(end, load(cu_seqlens + i));
    bits = _mm512_or_si512(bits, lengths);
    ends = _mm512_or_si512(ends, end);
    a = _mm512_and_si512(lengths, _mm512_set1_epi64(0xFFFFFFFF));
    b = _mm512_srli_epi64(lengths, 32);
  }
  TRAINFLOPS_TARGET bool short_lengths() const {
    constexpr std::uint64_t kLaneSigns = 0x8000000080000000;
    return (or_of_64(bits) & ~(kMaxLength | kMaxLength << 32)) == 0 && (or_of_64(ends) & kLaneSigns) == 0;
  }
};

// Sums over a block in the form these loops compute: per threshold c, sum a
// and sum a^2 (a = min(L, c)) in `excess`, which convert() turns into the
// moments of length_moments.h; the pools' remainders as they are.
using Pass = BlockLoops::Pass;

// The size of a plan's pool; of none, 1 (every remainder 0).
std::uint64_t pool_size(const MomentSpec& spec, int pool) {
  return pool < 0 ? 1 : spec.pools[static_cast<std::size_t>(pool)].pool;
}

// The remainders r = L mod p of a power-of-two pool, in the form their sums
// take. Pools of at most kMaxTablePool look r and r^2 up at once, r + r^2 *
// 2^32 from a table of eight entries indexed by L mod 8; larger ones mask
// (and their sums multiply-add the squares).
constexpr std::uint64_t kMaxTablePool = 8;
// Over a block a lane, both sets' together, adds at most kBlockDocuments / 8
// table entries: each 32-bit half holds its sum.
static_assert(kBlockDocuments / 8 * (kMaxTablePool - 1) * (kMaxTablePool - 1) < (std::uint64_t{1} << 32));

template <bool kTable>
struct Remainders {
  TRAINFLOPS_TARGET explicit Remainders(std::uint64_t pool)
      : mask(_mm512_set1_epi64(static_cast<long long>(pool - 1))) {}
  __m512i mask;
  TRAINFLOPS_TARGET __m512i of(__m512i lengths) const { return _mm512_and_si512(lengths, mask); }
};

template <>
struct Remainders<true> {
  TRAINFLOPS_TARGET explicit Remainders(std::uint64_t pool) {
    std::uint64_t table[8];
    for (std::uint64_t j = 0; j < 8; ++j) {
      const std::uint64_t r = j & (pool - 1);
      table[j] = r | r * r << 32;
    }
    entries = load(table);
  }
  __m512i entries;
  TRAINFLOPS_TARGET __m512i of(__m512i lengths) const { return _mm512_permutexvar_epi64(lengths, entries); }
};

// Sums of Remainders<kTable>::of values: r and r^2.
template <bool kTable>
struct RemainderSum {
  SquareSum sums;
  TRAINFLOPS_TARGET void add(__m512i a, __m512i b) { sums.add(a, b); }
  TRAINFLOPS_TARGET void add_where(__mmask8 ka, __mmask8 kb, __m512i a, __m512i b) { sums.add_where(ka, kb, a, b); }
  TRAINFLOPS_TARGET void merge(const RemainderSum& other) { sums.merge(other.sums); }
  TRAINFLOPS_TARGET RemainderMoments moments() const { return {sums.sum(), sums.squares()}; }
};

template <>
struct RemainderSum<true> {
  TRAINFLOPS_TARGET RemainderSum() : packed_a(_mm512_setzero_si512()), packed_b(packed_a) {}
  __m512i packed_a, packed_b;
  TRAINFLOPS_TARGET void add(__m512i a, __m512i b) {
    packed_a = _mm512_add_epi64(packed_a, a);
    packed_b = _mm512_add_epi64(packed_b, b);
  }
  TRAINFLOPS_TARGET void add_where(__mmask8 ka, __mmask8 kb, __m512i a, __m512i b) {
    packed_a = _mm512_mask_add_epi64(packed_a, ka, packed_a, a);
    packed_b = _mm512_mask_add_epi64(packed_b, kb, packed_b, b);
  }
  TRAINFLOPS_TARGET void merge(const RemainderSum& other) {
    packed_a = _mm512_add_epi64(packed_a, other.packed_a);
    packed_b = _mm512_add_epi64(packed_b, other.packed_b);
  }
  TRAINFLOPS_TARGET RemainderMoments moments() const {
    alignas(64) std::uint64_t lanes[8];
    _mm512_store_si512(lanes, _mm512_add_epi64(packed_a, packed_b));
    RemainderMoments out;
    for (std::uint64_t lane : lanes) {
      out.sum += lane & 0xFFFFFFFF;
      out.squares += lane >> 32;
    }
    return out;
  }
};

// What a pass adds up: the squares, up to kThresholds thresholds' sums, and a
// whole and a selected pool's remainders if kWhole and kSelected.
template <int kThresholds, bool kWhole, bool kSelected, bool kTable>
struct PassSums {
  SquareSum lengths, below[kThresholds + 1];
  RemainderSum<kTable> whole, selected;
  // Sixteen lengths, in two registers; `c`: the thresholds, broadcast (the
  // selected pool's first).
  TRAINFLOPS_TARGET void add(__m512i a, __m512i b, const __m512i* c, const Remainders<kTable>& pool) {
    lengths.add_squares(a, b);
    for (int t = 0; t < kThresholds; ++t) below[t].add(_mm512_min_epu64(a, c[t]), _mm512_min_epu64(b, c[t]));
    if constexpr (kWhole || kSelected) {
      const __m512i ra = pool.of(a), rb = pool.of(b);
      if constexpr (kWhole) whole.add(ra, rb);
      if constexpr (kSelected) {
        selected.add_where(_mm512_cmpgt_epu64_mask(a, c[0]), _mm512_cmpgt_epu64_mask(b, c[0]), ra, rb);
      }
    }
  }
  TRAINFLOPS_TARGET void merge(const PassSums& other) {
    lengths.merge(other.lengths);
    for (int t = 0; t < kThresholds; ++t) below[t].merge(other.below[t]);
    whole.merge(other.whole);
    selected.merge(other.selected);
  }
};

// The documents a pass takes a turn: two loads of sixteen.
constexpr std::size_t kGroup = 32;

// One pass over `groups` groups of kGroup documents, as `plan` says;
// returns the sum of the squares. Each output is set, not added to, so that a
// threshold or pool met by two passes gets the same sums twice.
template <int kThresholds, bool kWhole, bool kSelected, bool kTable, typename Loader>
TRAINFLOPS_TARGET std::uint64_t pass(Loader& result, std::size_t groups, const MomentSpec& spec, const Pass& plan,
                                     ExcessMoments* excess, RemainderMoments* remainders) {
  Loader loader = result;  // in registers, not in memory that the outputs may alias
  __m512i c[kThresholds + 1];
  for (int t = 0; t < kThresholds; ++t)
    c[t] = _mm512_set1_epi64(static_cast<long long>(spec.thresholds[plan.thresholds[t]]));
  // The whole and the selected pool of a pass have one size.
  const Remainders<kTable> pool(pool_size(spec, kSelected ? plan.selected : plan.whole));
  // A multiply-add waits for the one before it on the same accumulator, so
  // the two halves of a group go to two sets of sums.
  PassSums<kThresholds, kWhole, kSelected, kTable> sums, odd;
  for (std::size_t i = 0; i < kGroup * groups; i += kGroup) {
    __m512i a, b, d, e;
    loader(i, a, b);
    loader(i + kGroup / 2, d, e);
    sums.add(a, b, c, pool);
    odd.add(d, e, c, pool);
  }
  sums.merge(odd);
  for (int t = 0; t < kThresholds; ++t) excess[plan.thresholds[t]] = {sums.below[t].sum(), sums.below[t].squares()};
  if constexpr (kWhole) remainders[plan.whole] = sums.whole.moments();
  if constexpr (kSelected) remainders[plan.selected] = sums.selected.moments();
  result = loader;
  return sums.lengths.squares();
}

template <typename Loader>
TRAINFLOPS_TARGET std::uint64_t pass(Loader& loader, std::size_t groups, const MomentSpec& spec, const Pass& plan,
                                     ExcessMoments* excess, RemainderMoments* remainders) {
#define TRAINFLOPS_PASS(t, whole, selected)                                               \
  (table ? pass<t, whole, selected, true>(loader, groups, spec, plan, excess, remainders) \
         : pass<t, whole, selected, false>(loader, groups, spec, plan, excess, remainders))
  const bool whole = plan.whole >= 0, selected = plan.selected >= 0;  // selected only with a threshold
  const bool table = pool_size(spec, plan.whole) <= kMaxTablePool && pool_size(spec, plan.selected) <= kMaxTablePool;
  switch (plan.threshold_count) {
    case 0: return whole ? TRAINFLOPS_PASS(0, true, false) : TRAINFLOPS_PASS(0, false, false);
    case 1:
      if (selected) return whole ? TRAINFLOPS_PASS(1, true, true) : TRAINFLOPS_PASS(1, false, true);
      return whole ? TRAINFLOPS_PASS(1, true, false) : TRAINFLOPS_PASS(1, false, false);
    default:
      if (selected) return whole ? TRAINFLOPS_PASS(2, true, true) : TRAINFLOPS_PASS(2, false, true);
      return whole ? TRAINFLOPS_PASS(2, true, false) : TRAINFLOPS_PASS(2, false, false);
  }
#undef TRAINFLOPS_PASS
}

// The passes a spec needs: each selected pool with its threshold (and the
// whole pool of its size), then the other whole pools, then the other
// thresholds, two per pass; at least one pass, for the squares.
std::size_t plan_passes(const MomentSpec& spec, Pass* plans) {
  std::uint64_t thresholds_done = 0, pools_done = 0;
  const auto next_threshold = [&](Pass& plan) {
    for (std::size_t t = 0; t < spec.thresholds.size(); ++t) {
      if (thresholds_done >> t & 1) continue;
      thresholds_done |= std::uint64_t{1} << t;
      plan.thresholds[plan.threshold_count++] = t;
      return true;
    }
    return false;
  };
  const auto take_whole = [&](Pass& plan, std::uint64_t size) {
    for (std::size_t p = 0; p < spec.pools.size(); ++p) {
      if (pools_done >> p & 1 || spec.pools[p].threshold != 0 || spec.pools[p].pool != size) continue;
      pools_done |= std::uint64_t{1} << p;
      plan.whole = static_cast<int>(p);
      return;
    }
  };
  std::size_t count = 0;
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    if (spec.pools[p].threshold == 0) continue;
    Pass& plan = plans[count++];
    const auto t = std::find(spec.thresholds.begin(), spec.thresholds.end(), spec.pools[p].threshold);
    plan.thresholds[plan.threshold_count++] = static_cast<std::size_t>(t - spec.thresholds.begin());
    thresholds_done |= std::uint64_t{1} << plan.thresholds[0];
    plan.selected = static_cast<int>(p);
    next_threshold(plan);
    take_whole(plan, spec.pools[p].pool);
  }
  for (std::size_t p = 0; p < spec.pools.size(); ++p) {
    if (pools_done >> p & 1 || spec.pools[p].threshold != 0) continue;
    Pass& plan = plans[count++];
    take_whole(plan, spec.pools[p].pool);
    next_threshold(plan) && next_threshold(plan);
  }
  const std::uint64_t every_threshold = (std::uint64_t{1} << spec.thresholds.size()) - 1;
  while (thresholds_done != every_threshold || count == 0) {
    Pass& plan = plans[count++];
    next_threshold(plan) && next_threshold(plan);
  }
  return count;
}

// The sums of the documents [first, last) that the groups of kGroup left,
// one by one, added in the same form.
template <typename Length>
void add_rest(Length length, std::size_t first, std::size_t last, const MomentSpec& spec, std::uint64_t& squares,
              ExcessMoments* excess, RemainderMoments* remainders) {
  for (std::size_t i = first; i < last; ++i) {
    const std::uint64_t l = length(i);
    squares += l * l;
    for (std::size_t t = 0; t < spec.thresholds.size(); ++t) {
      const std::uint64_t a = std::min(l, spec.thresholds[t]);
      excess[t].sum += a;
      excess[t].squares += a * a;
    }
    portable::add_remainders(l, spec, remainders);
  }
}

// The excess moments of length_moments.h from the sums above.
void convert(const BlockMoments& block, const MomentSpec& spec, ExcessMoments* excess) {
  for (std::size_t t = 0; t < spec.thresholds.size(); ++t) {
    const std::uint64_t m = block.tokens - excess[t].sum;
    excess[t] = {m, block.squares - excess[t].squares - 2 * spec.thresholds[t] * m};
  }
}

// The passes of plan_passes() over a block.
template <typename Loader>
TRAINFLOPS_TARGET std::uint64_t passes(Loader& loader, std::size_t groups, const MomentSpec& spec, const Pass* plans,
                                       std::size_t count, ExcessMoments* excess, RemainderMoments* remainders) {
  std::uint64_t squares = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Loader again = loader;
    squares = pass(again, groups, spec, plans[i], excess, remainders);
    if (i + 1 == count) loader = again;
  }
  return squares;
}

// Each returns nullopt for a block these loops do not take.
TRAINFLOPS_TARGET std::optional<BlockMoments> lengths_moments(const std::int64_t* lengths, std::size_t n,
                                                              const MomentSpec& spec, const Pass* plans,
                                                              std::size_t count, ExcessMoments* excess,
                                                              RemainderMoments* remainders) {
  const std::size_t head = n / kGroup * kGroup;
  LengthsLoader loader(lengths);
  BlockMoments block;
  block.squares = passes(loader, head / kGroup, spec, plans, count, excess, remainders);
  if (!loader.short_lengths()) return std::nullopt;
  block.tokens = sum_of_64(loader.tokens);
  for (std::size_t i = head; i < n; ++i) {
    if (static_cast<std::uint64_t>(lengths[i]) > kMaxLength) return std::nullopt;
    block.tokens += static_cast<std::uint64_t>(lengths[i]);
  }
  if (block.tokens > kMaxBlockTokens) return std::nullopt;
  add_rest([&](std::size_t i) { return static_cast<std::uint64_t>(lengths[i]); }, head, n, spec, block.squares, excess,
           remainders);
  convert(block, spec, excess);
  return block;
}

template <typename Offset, typename Loader>
TRAINFLOPS_TARGET std::optional<BlockMoments> offsets_moments(const Offset* cu_seqlens, std::size_t n,
                                                              const MomentSpec& spec, const Pass* plans,
                                                              std::size_t count, ExcessMoments* excess,
                                                              RemainderMoments* remainders) {
  const std::int64_t first = cu_seqlens[0], last = cu_seqlens[n];
  if (first < 0 || last < first || last - first > static_cast<std::int64_t>(kMaxBlockTokens)) return std::nullopt;
  const std::size_t head = n / kGroup * kGroup;
  Loader loader(cu_seqlens);
  BlockMoments block;
  block.squares = passes(loader, head / kGroup, spec, plans, count, excess, remainders);
  if (!loader.short_lengths()) return std::nullopt;
  // Differences in 64 bits, wrapping as the loader's do.
  const auto length = [&](std::size_t i) {
    return static_cast<std::uint64_t>(std::int64_t{cu_seqlens[i + 1]}) -
           static_cast<std::uint64_t>(std::int64_t{cu_seqlens[i]});
  };
  for (std::size_t i = head; i < n; ++i) {
    if (length(i) > kMaxLength) return std::nullopt;
  }
  block.tokens = static_cast<std::uint64_t>(last - first);
  add_rest(length, head, n, spec, block.squares, excess, remainders);
  convert(block, spec, excess);
  return block;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef TRAINFLOPS_TARGET

}  // namespace ifma

Loops best_loops() {
  __builtin_cpu_init();  // this may run before the runtime's own initializer
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512ifma")) {
    return Loops::kIfma;
  }
  return __builtin_cpu_supports("avx2") ? Loops::kAvx2 : Loops::kPortable;
}

// The vector loops take remainders of small power-of-two pools only; the
// multiply-add ones any power of two, and selected pools whose threshold is
// one of the spec's.
bool avx2_takes(const MomentSpec& spec) {
  for (const PoolSpec& pool : spec.pools) {
    if (!is_power_of_two(pool.pool) || pool.pool > avx2::kMaxVectorPool) return false;
  }
  return true;
}

bool ifma_takes(const MomentSpec& spec) {
  if (spec.thresholds.size() > BlockLoops::kMaxThresholds || spec.pools.size() > BlockLoops::kMaxPools) return false;
  for (const PoolSpec& pool : spec.pools) {
    if (!is_power_of_two(pool.pool)) return false;
    if (pool.threshold != 0 &&
        std::find(spec.thresholds.begin(), spec.thresholds.end(), pool.threshold) == spec.thresholds.end()) {
      return false;
    }
  }
  return true;
}

std::atomic<Loops> loops_in_use{best_loops()};
#else
Loops best_loops() { return Loops::kPortable; }
std::atomic<Loops> loops_in_use{Loops::kPortable};
#endif

}  // namespace

BlockLoops::BlockLoops(const MomentSpec& spec) : spec_(spec) {
#ifdef TRAINFLOPS_X86_VECTORS
  const Loops loops = loops_in_use.load(std::memory_order_relaxed);
  ifma_ = loops == Loops::kIfma && ifma_takes(spec);
  avx2_ = loops != Loops::kPortable && avx2_takes(spec);
  if (ifma_) pass_count_ = ifma::plan_passes(spec, passes_);
#endif
}

// Each tries the multiply-add loops, which decline blocks with a length of
// 2^26 or more, then the vector loops, then the portable ones.
BlockMoments BlockLoops::lengths(const std::int64_t* lengths, std::size_t n, ExcessMoments* excess,
                                 RemainderMoments* remainders) const {
#ifdef TRAINFLOPS_X86_VECTORS
  if (ifma_) {
    if (auto block = ifma::lengths_moments(lengths, n, spec_, passes_, pass_count_, excess, remainders)) return *block;
  }
  if (avx2_) return avx2::lengths_moments(lengths, n, spec_, excess, remainders);
#endif
  return portable::lengths_moments(lengths, n, spec_, excess, remainders);
}

template <typename Offset>
BlockMoments BlockLoops::offsets_of(const Offset* cu_seqlens, std::size_t n, ExcessMoments* excess,
                                    RemainderMoments* remainders) const {
#ifdef TRAINFLOPS_X86_VECTORS
  using Loaders = std::conditional_t<sizeof(Offset) == 8, std::pair<ifma::Offsets64Loader, avx2::Offsets64Loader>,
                                     std::pair<ifma::Offsets32Loader, avx2::Offsets32Loader>>;
  if (ifma_) {
    if (auto block = ifma::offsets_moments<Offset, typename Loaders::first_type>(cu_seqlens, n, spec_, passes_,
                                                                                 pass_count_, excess, remainders)) {
      return *block;
    }
  }
  if (avx2_) {
    return avx2::offsets_moments<Offset, typename Loaders::second_type>(cu_seqlens, n, spec_, excess, remainders);
  }
#endif
  return portable::offsets_moments(cu_seqlens, n, spec_, excess, remainders);
}

BlockMoments BlockLoops::offsets(const std::int64_t* cu_seqlens, std::size_t n, ExcessMoments* excess,
                                 RemainderMoments* remainders) const {
  return offsets_of(cu_seqlens, n, excess, remainders);
}

BlockMoments BlockLoops::offsets(const std::int32_t* cu_seqlens, std::size_t n, ExcessMoments* excess,
                                 RemainderMoments* remainders) const {
  return offsets_of(cu_seqlens, n, excess, remainders);
}

Loops use_loops(Loops loops) {
  const Loops best = best_loops();
  if (static_cast<int>(loops) > static_cast<int>(best)) loops = best;
  return loops_in_use.exchange(loops, std::memory_order_relaxed);
}

Loops available_loops() { return best_loops(); }

}  // namespace trainflops
