// Internal: the loops of the exact packed-sequence statistics. Every
// statistic of a document is a polynomial in its length L, in its excess over
// a threshold, m = max(L - c, 0), and in the remainder of L modulo a pool size
// (statistic_sums.h derives each one); so the statistics of many documents
// follow from a few sums of these and their squares: the moments computed here.
//
// A block holds at most kBlockDocuments documents of at most kMaxBlockTokens
// tokens in all, so that every moment fits in 64 bits
// (sum L^2 <= (sum L)^2 < 2^62) and every length in 31 bits: the loops run
// without branches: eight documents at a time with AVX2 where the processor
// has it (length_moments_avx2.cc), else one at a time in portable C++
// (length_moments.cc). Blocks that break these bounds are counted document by
// document by the caller, in 128 bits.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_H_
#define TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace trainflops {

inline constexpr std::size_t kBlockDocuments = 4096;
inline constexpr std::uint64_t kMaxBlockTokens = (std::uint64_t{1} << 31) - 1;

// Over the documents of a block: sum m and sum m^2 of the excess
// m = max(L - threshold, 0).
struct ExcessMoments {
  std::uint64_t sum = 0;
  std::uint64_t squares = 0;
};

// Over the documents of a block longer than `threshold`: sum r and sum r^2 of
// the remainder r = L mod pool. (With threshold 0, over every document, since
// a document of 0 tokens has no remainder.)
struct PoolSpec {
  std::uint64_t pool = 1;       // >= 1
  std::uint64_t threshold = 0;  // <= kMaxBlockTokens
  auto operator<=>(const PoolSpec&) const = default;
};
struct RemainderMoments {
  std::uint64_t sum = 0;
  std::uint64_t squares = 0;
};

// What to compute besides sum L and sum L^2: one ExcessMoments per threshold
// (each <= kMaxBlockTokens) and one RemainderMoments per pool; the pools
// sorted, so that those of one size are next to each other.
struct MomentSpec {
  std::span<const std::uint64_t> thresholds;
  std::span<const PoolSpec> pools;
};

struct BlockMoments {
  bool valid = true;          // no negative length, no decreasing offset
  bool fits = true;           // valid and at most kMaxBlockTokens tokens: the moments hold
  std::uint64_t tokens = 0;   // sum L
  std::uint64_t squares = 0;  // sum L^2
};

// Which loops run: portable C++, or AVX2 where the processor has it. A spec
// that the AVX2 loops decline (a pool that is not a power of two, or larger
// than 2^11) goes to the portable ones, so either choice gives the same moments.
enum class Loops { kPortable, kAvx2 };
// The fastest loops this processor runs.
Loops available_loops();
// For tests and benchmarks: runs `loops` (or the portable ones where the
// processor lacks AVX2) for every BlockLoops made from now on; returns the
// loops in use before. Safe to call from any thread.
Loops use_loops(Loops loops);

struct Avx2Loops;

// The loops for one spec, chosen once for every block of an array. The spec's
// spans must outlive it. Immutable once made: several threads may use one.
class BlockLoops {
 public:
  explicit BlockLoops(const MomentSpec& spec);

  // The moments of n <= kBlockDocuments documents, given by their lengths or
  // by the n + 1 offsets cu_seqlens[0..n] (the caller checks that the first
  // offset of the whole array is 0: a block's first offset is the previous
  // block's last). `excess` and `remainders` hold one entry per threshold and
  // per pool; they are meaningful only when the block fits.
  BlockMoments lengths(const std::int64_t* lengths, std::size_t n, ExcessMoments* excess,
                       RemainderMoments* remainders) const;
  BlockMoments offsets(const std::int64_t* cu_seqlens, std::size_t n, ExcessMoments* excess,
                       RemainderMoments* remainders) const;
  BlockMoments offsets(const std::int32_t* cu_seqlens, std::size_t n, ExcessMoments* excess,
                       RemainderMoments* remainders) const;

 private:
  template <typename Offset>
  BlockMoments offsets_of(const Offset* cu_seqlens, std::size_t n, ExcessMoments* excess,
                          RemainderMoments* remainders) const;

  MomentSpec spec_;
  const Avx2Loops* avx2_;  // null: the portable loops
};

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_H_
