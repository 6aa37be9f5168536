// Internal to length_moments.cc: the AVX2 loops of the packed-sequence
// moments, in length_moments_avx2.cc. That file alone is compiled for AVX2
// (CMakeLists.txt sets its flags); length_moments.cc calls these loops only
// after checking at run time that the processor has AVX2, so the rest of the
// library runs on any x86-64.
#ifndef TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_AVX2_H_
#define TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_AVX2_H_

#include <cstddef>
#include <cstdint>

#include "accounting/length_moments.h"

namespace trainflops {

// The loops take a spec whose pools are all powers of two of at most this
// size: their remainders square into 32-bit lanes.
inline constexpr std::uint64_t kMaxAvx2Pool = std::uint64_t{1} << 11;

// Each adds the moments of n documents, n a multiple of 8, to `excess` and
// `remainders` (one entry per threshold and per pool of the spec), and returns
// those documents' own BlockMoments. The moments hold only where the returned
// block fits. Several threads may call them at once.
struct Avx2Loops {
  BlockMoments (*lengths)(const std::int64_t* lengths, std::size_t n, const MomentSpec& spec, ExcessMoments* excess,
                          RemainderMoments* remainders);
  BlockMoments (*offsets64)(const std::int64_t* cu_seqlens, std::size_t n, const MomentSpec& spec,
                            ExcessMoments* excess, RemainderMoments* remainders);
  BlockMoments (*offsets32)(const std::int32_t* cu_seqlens, std::size_t n, const MomentSpec& spec,
                            ExcessMoments* excess, RemainderMoments* remainders);
};

// The loops, or null where this build has none (a processor other than
// x86-64, or a compiler without AVX2).
const Avx2Loops* avx2_loops();

}  // namespace trainflops

#endif  // TRAINFLOPS_SRC_ACCOUNTING_LENGTH_MOMENTS_AVX2_H_
