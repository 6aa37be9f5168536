// Shared by the fuzz targets: whatever a parser accepts is counted every way
// the library can count it, and the results are checked against each other,
// so that a fuzzed input reaches the formulas, the exact arithmetic and the
// renderers, not just the parser.
#ifndef TRAINFLOPS_FUZZ_FUZZ_HELPERS_H_
#define TRAINFLOPS_FUZZ_FUZZ_HELPERS_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/render.h"
#include "trainflops/seq_stats.h"

namespace trainflops::fuzz {

// An invariant broke: report it and crash, so that libFuzzer keeps the input.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Workloads from tiny to the 64-bit limits, in every form.
inline const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = {
      Bshd{1, 1},
      Bshd{3, 4097},
      Bshd{INT64_MAX, INT64_MAX},
      PackedDocuments{{0, 1, 2049, 70000, 3}},
      PackedDocuments{{INT64_MAX, 5}},
      SequenceAggregates{8, 34},
      SequenceAggregates{Int128{1} << 100, Int128{1} << 120},
  };
  return all;
}

// Counting must never crash, and where it succeeds its figures must agree:
// total() with report(), the components and the layers with the total.
inline void count_every_way(const Model& model) {
  std::size_t layers = model.layers.size();
  for (const auto& depth : model.mtp_depths) layers += depth.size();
  if (layers > 2000) return;  // bounded work per input; counting is linear in the layers
  for (Mode mode : {Mode::kMegatron, Mode::kModel}) {
    const Result<FlopsCounter> counter = FlopsCounter::create(model, mode);
    if (!counter.ok()) continue;
    bool rendered = false;
    for (const Workload& workload : workloads()) {
      const Result<Flops> total = counter.value().total(workload);
      const Result<Report> report = counter.value().report(workload);
      if (total.ok() != report.ok()) broken("total() and report() disagree on failing");
      if (!report.ok()) continue;
      if (total.value().exact != report.value().total.exact) broken("total() and report() differ");
      if (report.value().total.exact) {
        Int128 components = 0, rows = 0;
        for (const ComponentFlops& c : report.value().components) components += *c.flops.exact;
        for (const LayerFlops& l : report.value().layers) rows += *l.flops.exact;
        if (components != *report.value().total.exact) broken("the components do not sum to the total");
        if (rows != *report.value().total.exact) broken("the layers do not sum to the total");
      }
      // Rendering costs far more than counting (a large model's table and JSON
      // take about a millisecond): once per mode keeps the fuzzers fast.
      if (!rendered) {
        for (Format format : {Format::kTable, Format::kJson, Format::kCsv}) {
          if (render(report.value(), format).empty()) broken("an empty rendering");
        }
        rendered = true;
      }
    }
  }
  Result<SeqStats> stats = SeqStats::create(model);
  if (!stats.ok()) return;
  const std::vector<std::int64_t> lengths = {0, 1, 2049, 70000, 3};
  if (!stats.value().add_lengths(lengths).ok()) return;
  const Result<Flops> from_stats = stats.value().flops();
  const Result<Flops> direct = FlopsCounter::create(model, Mode::kModel).value().total(PackedDocuments{lengths});
  if (from_stats.ok() != direct.ok()) broken("SeqStats and the counter disagree on failing");
  if (from_stats.ok() && from_stats.value().exact != direct.value().exact) broken("SeqStats and the counter differ");
}

}  // namespace trainflops::fuzz

#endif  // TRAINFLOPS_FUZZ_FUZZ_HELPERS_H_
