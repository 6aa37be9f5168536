#include "trainflops/statistic.h"

#include <gtest/gtest.h>

namespace trainflops {
namespace {

// Independent counts: walk every query position and every key it may see.
Int128 brute_force(const Statistic& statistic, std::int64_t length) {
  Int128 count = 0;
  for (std::int64_t query = 1; query <= length; ++query) {
    if (statistic.kind == StatisticKind::kTokens) {
      ++count;
      continue;
    }
    for (std::int64_t key = 1; key <= query; ++key) ++count;
  }
  return count;
}

TEST(StatisticTest, DocumentCountsMatchPerQueryLoops) {
  for (const Statistic& statistic : {kTokens, kCausalPairs}) {
    for (std::int64_t length : {0, 1, 2, 3, 10, 127, 1000}) {
      SCOPED_TRACE(statistic_name(statistic) + " L=" + std::to_string(length));
      EXPECT_EQ(document_count(statistic, length), std::optional<Int128>(brute_force(statistic, length)));
    }
  }
  // Near the 64-bit limit the count is still exact.
  const Int128 max = INT64_MAX;
  EXPECT_EQ(to_decimal(*document_count(kCausalPairs, INT64_MAX)), to_decimal(max * (max + 1) / 2));
}

TEST(StatisticTest, MegatronEstimates) {
  // Documents 3 and 5: T = 8, S2 = 34.
  EXPECT_EQ(megatron_estimate(kTokens, 8, 34), 8);
  EXPECT_EQ(megatron_estimate(kCausalPairs, 8, 34), 17);  // exact would be 6 + 15 = 21 = 17 + T/2
}

}  // namespace
}  // namespace trainflops
