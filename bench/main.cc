// Runs every benchmark, then prints the figures of the README's Performance
// table, each beside its baseline from the same run and its target.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

struct Measured {
  double seconds = 0;  // real time per iteration
  double items_per_second = 0;
};

// The console output, and every run kept by name (the median where
// repetitions were asked for).
class FigureReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      Measured measured;
      measured.seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      if (auto it = run.counters.find("items_per_second"); it != run.counters.end()) {
        measured.items_per_second = it->second.value;
      }
      std::string name = run.run_name.function_name;
      if (!run.run_name.args.empty()) name += "/" + run.run_name.args;
      if (run.run_type == Run::RT_Aggregate || !measured_.count(name)) measured_[name] = measured;
    }
  }

  std::optional<Measured> find(const std::string& name) const {
    const auto it = measured_.find(name);
    if (it == measured_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, Measured> measured_;
};

std::string rate(double per_second, const char* unit) {
  char text[64];
  if (per_second >= 1e9) {
    std::snprintf(text, sizeof text, "%.2f G %s/s", per_second / 1e9, unit);
  } else if (per_second >= 1e6) {
    std::snprintf(text, sizeof text, "%.2f M %s/s", per_second / 1e6, unit);
  } else {
    std::snprintf(text, sizeof text, "%.0f %s/s", per_second, unit);
  }
  return text;
}

void print_figures(const FigureReporter& r) {
  std::printf("\nFigures (README, Performance)\n");
  std::printf("%-48s %-18s %-40s %s\n", "figure", "measured", "ratio (same run)", "target");
  const auto row = [](const std::string& figure, const std::string& measured, const std::string& ratio,
                      const std::string& target) {
    std::printf("%-48s %-18s %-40s %s\n", figure.c_str(), measured.c_str(), ratio.c_str(), target.c_str());
  };
  char text[128];
  if (auto count = r.find("CountGlm5MegatronAggregates")) {
    std::snprintf(text, sizeof text, "%.0f ns/eval", count->seconds * 1e9);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2f of the 200 ns budget", count->seconds * 1e9 / 200);
    row("count GLM-5 (megatron, aggregates), prepared", text, ratio, "< 200 ns");
  }
  if (auto exact = r.find("CountGlm5ModelBshd")) {
    std::snprintf(text, sizeof text, "%.0f ns/eval", exact->seconds * 1e9);
    row("count GLM-5 (model, exact, BSHD), prepared", text, "", "");
  }
  if (auto build = r.find("BuildGlm5Model")) {
    std::snprintf(text, sizeof text, "%.2f us", build->seconds * 1e6);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2f of the 2 us target", build->seconds * 1e6 / 2);
    row("GLM-5 model from Megatron-LM arguments", text, ratio, "<= 2 us");
  }
  if (auto prepare = r.find("PrepareGlm5")) {
    std::snprintf(text, sizeof text, "%.2f us", prepare->seconds * 1e6);
    row("GLM-5 counter prepared (megatron mode)", text, "", "");
  }
  const auto few = r.find("RepeatedLayerConfig/32"), many = r.find("RepeatedLayerConfig/100000");
  if (few && many) {
    std::snprintf(text, sizeof text, "%.1f / %.1f us", few->seconds * 1e6, many->seconds * 1e6);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx from 32 to 100,000 layers", many->seconds / few->seconds);
    row("config of one layer repeated 32 / 100,000 times", text, ratio, "independent of repeat");
  }
  for (const char* width : {"int64", "int32"}) {
    const auto plain = r.find(std::string("PlainSum/") + width);
    const auto plain_avx2 = r.find(std::string("PlainSum/") + width + "/avx2");
    double best_plain = 0;
    if (plain) best_plain = plain->items_per_second;
    if (plain_avx2 && plain_avx2->items_per_second > best_plain) best_plain = plain_avx2->items_per_second;
    if (best_plain > 0)
      row(std::string("plain sum over cu_seqlens, ") + width, rate(best_plain, "docs"),
          "1 (best of SSE2 and AVX2 loops)", "");
    for (const char* model : {"kpool", "dsa"}) {
      const auto stats = r.find(std::string("SeqStats/") + width + "/" + model);
      if (!stats || best_plain == 0) continue;
      std::snprintf(text, sizeof text, "%.2f of the plain sum", stats->items_per_second / best_plain);
      std::string ratio = text;
      if (auto closed = r.find(std::string("ClosedFormsPerDocument/") + width + "/" + model)) {
        std::snprintf(text, sizeof text, ", %.0fx per-document", stats->items_per_second / closed->items_per_second);
        ratio += text;
      }
      row(std::string("SeqStats ") + width + " cu_seqlens, 1M docs, GLM-5 " +
              (std::string(model) == "kpool" ? "DSA+KPool" : "DSA"),
          rate(stats->items_per_second, "docs"), ratio,
          std::string(model) == "kpool" ? ">= 0.6 of plain sum" : ">= 0.8 of plain sum");
    }
  }
  if (auto cli = r.find("CliColdStart")) {
    std::snprintf(text, sizeof text, "%.1f ms", cli->seconds * 1e3);
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2f of the 20 ms budget", cli->seconds * 1e3 / 20);
    row("CLI cold start, count GLM-5", text, ratio, "< 20 ms");
  }
  if (auto sweep = r.find("Sweep1M")) {
    row("sweep of 1M configurations, in process", rate(sweep->items_per_second, "configs"), "", "report");
  }
  if (auto batch = r.find("BatchRecords")) {
    row("batch records (JSON in, line out), in process", rate(batch->items_per_second, "records"), "", "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  FigureReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_figures(reporter);
  benchmark::Shutdown();
  return 0;
}
