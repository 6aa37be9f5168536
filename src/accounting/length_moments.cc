#include "accounting/length_moments.h"

#include <atomic>

#include "accounting/length_moments_avx2.h"

namespace trainflops {
namespace {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

bool is_power_of_two(std::uint64_t x) { return (x & (x - 1)) == 0; }

// The portable loops: one document at a time. Lengths of blocks that do not
// fit may wrap here; the caller ignores those moments.
void clear(const MomentSpec& spec, ExcessMoments* excess, RemainderMoments* remainders) {
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

// Each sets `excess` and `remainders` to the moments of its n documents.
BlockMoments lengths_moments(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                             RemainderMoments* remainders) {
  clear(spec, excess, remainders);
  BlockMoments block;
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
  clear(spec, excess, remainders);
  BlockMoments block;
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

// The blocks of a first part (head) and the rest (tail) of the documents as one.
BlockMoments joined_lengths(const BlockMoments& head, const BlockMoments& tail) {
  BlockMoments block;
  block.tokens = head.tokens + tail.tokens;
  block.squares = head.squares + tail.squares;
  block.valid = head.valid && tail.valid;
  block.fits = head.fits && tail.fits && block.tokens <= kMaxBlockTokens;  // parts that fit sum without wrapping
  return block;
}

template <typename Offset>
BlockMoments joined_offsets(const BlockMoments& head, const BlockMoments& tail, const Offset* cu_seqlens,
                            std::size_t n) {
  BlockMoments block;
  block.tokens = offset_at(cu_seqlens, n) - offset_at(cu_seqlens, 0);
  block.squares = head.squares + tail.squares;
  block.valid = head.valid && tail.valid;
  block.fits = block.valid && block.tokens <= kMaxBlockTokens;
  return block;
}

bool processor_has_avx2() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // this may run before the runtime's own initializer
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

Loops best_loops() { return avx2_loops() && processor_has_avx2() ? Loops::kAvx2 : Loops::kPortable; }

// The AVX2 loops take remainders of small power-of-two pools only.
bool avx2_takes(const MomentSpec& spec) {
  for (const PoolSpec& pool : spec.pools) {
    if (!is_power_of_two(pool.pool) || pool.pool > kMaxAvx2Pool) return false;
  }
  return true;
}

std::atomic<Loops> loops_in_use{best_loops()};

}  // namespace

BlockLoops::BlockLoops(const MomentSpec& spec)
    : spec_(spec),
      avx2_(loops_in_use.load(std::memory_order_relaxed) == Loops::kAvx2 && avx2_takes(spec) ? avx2_loops()
                                                                                             : nullptr) {}

// With the AVX2 loops, the last n % 8 documents go through the portable loop
// first (which sets the outputs), then the groups of eight, which add to them.
BlockMoments BlockLoops::lengths(const std::int64_t* lengths, std::size_t n, ExcessMoments* excess,
                                 RemainderMoments* remainders) const {
  const std::size_t head = avx2_ ? n / 8 * 8 : 0;
  const BlockMoments tail = lengths_moments(lengths + head, n - head, spec_, excess, remainders);
  if (head == 0) return tail;
  return joined_lengths(avx2_->lengths(lengths, head, spec_, excess, remainders), tail);
}

template <typename Offset>
BlockMoments BlockLoops::offsets_of(const Offset* cu_seqlens, std::size_t n, ExcessMoments* excess,
                                    RemainderMoments* remainders) const {
  const std::size_t head = avx2_ ? n / 8 * 8 : 0;
  const BlockMoments tail = offsets_moments(cu_seqlens + head, n - head, spec_, excess, remainders);
  if (head == 0) return tail;
  BlockMoments block;
  if constexpr (sizeof(Offset) == 8) {
    block = avx2_->offsets64(cu_seqlens, head, spec_, excess, remainders);
  } else {
    block = avx2_->offsets32(cu_seqlens, head, spec_, excess, remainders);
  }
  return joined_offsets(block, tail, cu_seqlens, n);
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
  if (best_loops() == Loops::kPortable) loops = Loops::kPortable;
  return loops_in_use.exchange(loops, std::memory_order_relaxed);
}

Loops available_loops() { return best_loops(); }

}  // namespace trainflops
