// The exact packed statistics against the per-document closed forms: the
// input picks a top-k, a pool size and whether the tail counts (first bytes),
// then holds document lengths (8 bytes each, little-endian); both the vector
// and the portable loops must give the closed forms' sums exactly, or the
// same error.
#include <cstring>

#include "accounting/length_moments.h"
#include "accounting/statistic_sums.h"
#include "fuzz_helpers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  if (size < 3) return 0;
  // Top-k and pool near the interesting sizes: small, powers of two, large.
  const std::int64_t pool = data[0] < 128 ? 1 + data[0] % 9 : std::int64_t{1} << (data[0] % 40);
  const std::int64_t topk = pool * (1 + (data[1] < 200 ? data[1] % 40 : std::int64_t{1} << (data[1] % 24)));
  const bool tail = data[2] % 2 == 1;
  std::vector<std::int64_t> lengths((size - 3) / 8);
  if (!lengths.empty()) std::memcpy(lengths.data(), data + 3, lengths.size() * 8);
  // Mostly short documents, so that blocks fit: squeeze each length by its top bits.
  for (auto& length : lengths) {
    const int shift = static_cast<int>(static_cast<std::uint64_t>(length) >> 58);  // 0..63
    if (shift >= 8)
      length = static_cast<std::int64_t>((static_cast<std::uint64_t>(length) & 0x03ffffffffffffff) >> shift);
  }
  const std::vector<Statistic> statistics = {kTokens,           kCausalPairs,
                                             topk_pairs(topk),  complete_pool_pairs(pool),
                                             pooled_keys(pool), pooled_attended_pairs(topk, pool, tail)};
  std::vector<Int128> expected(statistics.size(), 0);
  std::optional<std::string> expected_error;
  for (std::size_t d = 0; d < lengths.size() && !expected_error; ++d) {
    if (lengths[d] < 0) {
      expected_error = "lengths[" + std::to_string(d) + "] = " + std::to_string(lengths[d]) + ": must be >= 0";
      break;
    }
    for (std::size_t i = 0; i < statistics.size(); ++i) {
      const auto count = document_count(statistics[i], lengths[d]);
      const auto sum = count ? checked_add(expected[i], *count) : std::nullopt;
      if (!sum || *sum >= (Int128{1} << 94)) {
        expected_error = "the " + statistic_name(statistics[i]) + " of the documents exceed 2^94";
        break;
      }
      expected[i] = *sum;
    }
  }
  const StatisticSums summer(statistics, 94);
  for (Loops loops : {Loops::kAvx2, Loops::kPortable}) {
    use_loops(loops);
    std::vector<Int128> sums(statistics.size(), 0);
    const Status added = summer.add_lengths(lengths, sums);
    // Which statistic an overflow names may differ (blocks check at their end);
    // that one happens is what must agree.
    if (added.ok() != !expected_error) fuzz::broken("StatisticSums and the closed forms disagree on failing");
    if (added.ok() && sums != expected) fuzz::broken("StatisticSums differs from the closed forms");
    if (!added.ok() && expected_error->rfind("lengths[", 0) == 0 && added.error().message() != *expected_error) {
      fuzz::broken("a different error: " + added.error().message());
    }
  }
  return 0;
}
