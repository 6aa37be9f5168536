// Exact packed-sequence statistics over a million documents, beside a plain
// sum over the same cu_seqlens array (the speed of reading it).
#include <benchmark/benchmark.h>

#include <span>

#include "bench_models.h"
#include "trainflops/seq_stats.h"

namespace trainflops::bench {
namespace {

constexpr std::size_t kDocuments = 1 << 20;

// Each figure is the median of five runs: the machine may be busy.
void median_of_five(benchmark::internal::Benchmark* benchmark) {
  benchmark->Repetitions(5)->ReportAggregatesOnly(true);
}

template <typename Offset>
const std::vector<Offset>& offsets() {
  static const std::vector<Offset> cached = [] {
    const std::vector<std::int64_t> wide = packed_cu_seqlens(kDocuments);
    return std::vector<Offset>(wide.begin(), wide.end());
  }();
  return cached;
}

template <typename Offset>
std::int64_t plain_sum(const Offset* values, std::size_t n) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += values[i];
  return sum;
}

// The same loop, compiled for AVX2 as the statistics' vector loops are.
template <typename Offset>
__attribute__((target("avx2"))) std::int64_t plain_sum_avx2(const Offset* values, std::size_t n) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += values[i];
  return sum;
}

template <typename Offset, bool kAvx2>
void PlainSum(benchmark::State& state) {
  const std::vector<Offset>& cu_seqlens = offsets<Offset>();
  for (auto _ : state) {
    benchmark::DoNotOptimize(kAvx2 ? plain_sum_avx2(cu_seqlens.data(), cu_seqlens.size())
                                   : plain_sum(cu_seqlens.data(), cu_seqlens.size()));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kDocuments));
}
BENCHMARK(PlainSum<std::int64_t, false>)->Name("PlainSum/int64")->Apply(median_of_five);
BENCHMARK(PlainSum<std::int32_t, false>)->Name("PlainSum/int32")->Apply(median_of_five);
BENCHMARK(PlainSum<std::int64_t, true>)->Name("PlainSum/int64/avx2")->Apply(median_of_five);
BENCHMARK(PlainSum<std::int32_t, true>)->Name("PlainSum/int32/avx2")->Apply(median_of_five);

template <typename Offset>
void AddCuSeqlens(benchmark::State& state, const Model& model) {
  const std::vector<Offset>& cu_seqlens = offsets<Offset>();
  Result<SeqStats> stats = SeqStats::create(model);
  if (!stats.ok()) fail(stats.error().message());
  for (auto _ : state) {
    const Status added = stats.value().add_cu_seqlens(std::span<const Offset>(cu_seqlens));
    if (!added.ok()) fail(added.error().message());
  }
  benchmark::DoNotOptimize(stats.value().vector());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kDocuments));
  state.SetLabel(std::to_string(stats.value().counter().statistics().size()) + " statistics");
}
void SeqStatsInt64Kpool(benchmark::State& state) { AddCuSeqlens<std::int64_t>(state, glm5_kpool_model()); }
void SeqStatsInt32Kpool(benchmark::State& state) { AddCuSeqlens<std::int32_t>(state, glm5_kpool_model()); }
void SeqStatsInt64Dsa(benchmark::State& state) { AddCuSeqlens<std::int64_t>(state, glm5_model()); }
void SeqStatsInt32Dsa(benchmark::State& state) { AddCuSeqlens<std::int32_t>(state, glm5_model()); }
BENCHMARK(SeqStatsInt64Kpool)->Name("SeqStats/int64/kpool")->Apply(median_of_five);
BENCHMARK(SeqStatsInt32Kpool)->Name("SeqStats/int32/kpool")->Apply(median_of_five);
BENCHMARK(SeqStatsInt64Dsa)->Name("SeqStats/int64/dsa")->Apply(median_of_five);
BENCHMARK(SeqStatsInt32Dsa)->Name("SeqStats/int32/dsa")->Apply(median_of_five);

// What SeqStats did before its moments: every statistic of every document in
// closed form (document_count), summed with overflow checks.
void ClosedFormsPerDocument(benchmark::State& state) {
  const std::vector<std::int64_t>& cu_seqlens = offsets<std::int64_t>();
  const Result<FlopsCounter> counter = FlopsCounter::create(glm5_kpool_model(), Mode::kModel);
  if (!counter.ok()) fail(counter.error().message());
  const std::vector<Statistic>& statistics = counter.value().statistics();
  for (auto _ : state) {
    const Result<std::vector<std::int64_t>> lengths = lengths_from_cu_seqlens(cu_seqlens);
    std::vector<Int128> sums(statistics.size(), 0);
    for (std::int64_t length : lengths.value()) {
      for (std::size_t i = 0; i < statistics.size(); ++i) {
        const auto sum = checked_add(sums[i], document_count(statistics[i], length).value());
        if (!sum) fail("overflow");
        sums[i] = *sum;
      }
    }
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kDocuments));
}
BENCHMARK(ClosedFormsPerDocument)->Name("ClosedFormsPerDocument/int64/kpool");

}  // namespace
}  // namespace trainflops::bench
