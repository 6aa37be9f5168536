// What one training iteration processes: the global batch.
//
// Thread safety: Bshd, PackedDocuments, SequenceAggregates and Workload are
// plain values: several threads may read one at once, and a thread that changes
// one must be the only one using it. The functions here keep no state of their
// own: several threads may call them at once, given different objects to
// change.
#ifndef TRAINFLOPS_WORKLOAD_H_
#define TRAINFLOPS_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trainflops/int128.h"
#include "trainflops/result.h"

namespace trainflops {

// BSHD: `batch_size` sequences of `seq_length` tokens, each one causal document.
struct Bshd {
  std::int64_t batch_size = 0;
  std::int64_t seq_length = 0;
};

// THD: packed documents, by their real lengths (no padding).
struct PackedDocuments {
  std::vector<std::int64_t> lengths;
};

// Only the aggregates Megatron-LM all-reduces: T = sum L and S2 = sum L^2.
// They allow the `megatron` mode only.
struct SequenceAggregates {
  Int128 total_tokens = 0;
  Int128 squared_sum = 0;
};

using Workload = std::variant<Bshd, PackedDocuments, SequenceAggregates>;

// Checks sizes: positive batch and length; document lengths >= 0 with at least
// one token in all; aggregates with 0 < T <= S2 <= T^2 (what any list of
// lengths satisfies).
Status validate(const Workload& workload);

// Total tokens T of the batch (exact).
Int128 total_tokens(const Workload& workload);

// Document lengths from `cu_seqlens` (cumulative offsets starting at 0, as
// used by variable-length attention kernels): the differences of consecutive
// entries. Errors name the first entry that is negative or decreasing.
Result<std::vector<std::int64_t>> lengths_from_cu_seqlens(const std::vector<std::int64_t>& cu_seqlens);

// "4,096 x 8 sequences", "12 documents, 40,960 tokens", ...
std::string describe(const Workload& workload);
// The same for packed documents known by their number and tokens:
// "THD, 74 packed documents, 65,536 tokens".
std::string describe_packed(Int128 documents, Int128 tokens);

}  // namespace trainflops

#endif  // TRAINFLOPS_WORKLOAD_H_
