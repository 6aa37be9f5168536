#include "trainflops/statistic.h"

namespace trainflops {

std::optional<Int128> document_count(const Statistic& statistic, std::int64_t length) {
  const Int128 l = length;
  switch (statistic.kind) {
    case StatisticKind::kTokens: return l;
    case StatisticKind::kCausalPairs: return l * (l + 1) / 2;  // < 2^126 for any int64 length
  }
  return std::nullopt;
}

double megatron_estimate(const Statistic& statistic, double total_tokens, double squared_sum) {
  switch (statistic.kind) {
    case StatisticKind::kTokens: return total_tokens;
    case StatisticKind::kCausalPairs: return squared_sum / 2;
  }
  return 0;
}

std::string statistic_name(const Statistic& statistic) {
  switch (statistic.kind) {
    case StatisticKind::kTokens: return "tokens";
    case StatisticKind::kCausalPairs: return "causal_pairs";
  }
  return "unknown";
}

}  // namespace trainflops
