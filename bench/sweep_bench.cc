// Design-space searches: many configurations, each turned into a model and
// counted.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench_models.h"
#include "trainflops/batch.h"
#include "trainflops/count.h"

namespace trainflops::bench {
namespace {

constexpr std::int64_t kConfigurations = 1'000'000;

// Configuration i of a GLM-5-class design space: depth, width, experts' width
// and top-k, DSA top-k and context length all vary.
MegatronArgs configuration(const MegatronArgs& base, std::int64_t i) {
  MegatronArgs args = base;
  const std::int64_t layers = 40 + i % 61;
  args.num_layers = layers;
  std::vector<std::int64_t> moe_layers(static_cast<std::size_t>(layers), 1);
  std::fill_n(moe_layers.begin(), 3, 0);
  args.moe_layer_freq = LayerFrequency{std::move(moe_layers)};
  args.hidden_size = 4096 + 1024 * (i / 61 % 4);
  args.moe_ffn_hidden_size = 1024 + 512 * (i / 244 % 4);
  args.moe_router_topk = 4 + 2 * (i / 976 % 4);
  args.dsa_indexer_topk = 512 << (i / 3904 % 4);
  args.seq_length = 4096 << (i / 15616 % 6);
  return args;
}

// In process, as `trainflops batch` does per record but without the JSON:
// Megatron-LM arguments -> validated model -> prepared counter -> total.
void Sweep1M(benchmark::State& state) {
  const MegatronArgs base = glm5_args();
  double checksum = 0;
  for (auto _ : state) {
    for (std::int64_t i = 0; i < kConfigurations; ++i) {
      const MegatronArgs args = configuration(base, i);
      const Result<Model> model = model_from_megatron_args(args);
      if (!model.ok()) fail("configuration " + std::to_string(i) + ": " + model.error().message());
      const Result<FlopsCounter> counter = FlopsCounter::create(model.value(), Mode::kMegatron);
      const Result<Flops> flops = counter.value().total(Bshd{1024, *args.seq_length});
      checksum += flops.value().value;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations() * kConfigurations);
}
BENCHMARK(Sweep1M)->Iterations(1)->Unit(benchmark::kSecond);

// `trainflops batch` itself, in process: one JSON record in, one result line
// out, over 4,096 distinct records of the same design space.
void BatchRecords(benchmark::State& state) {
  std::string args_text;
  {
    std::FILE* file = std::fopen(glm5_args_path().c_str(), "r");
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) args_text.append(buffer, n);
    std::fclose(file);
  }
  std::vector<std::string> records;
  for (int i = 0; i < 4096; ++i) {
    const std::string hidden = std::to_string(4096 + 1024 * (i % 4));
    std::string args = args_text;
    args.replace(args.find("\"hidden_size\": 6144"), 19, "\"hidden_size\": " + hidden);
    records.push_back("{\"args\": " + args + ", \"mode\": \"megatron\", \"batch_size\": " + std::to_string(1 + i) +
                      "}");
  }
  std::size_t next = 0;
  for (auto _ : state) {
    const std::string line = answer_batch_line(records[next], 1).json;
    if (line.compare(0, 9, "{\"flops\":") != 0) fail("batch: " + line);
    next = (next + 1) % records.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BatchRecords)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trainflops::bench
