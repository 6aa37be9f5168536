// Counting with a prepared model: what a training loop pays per iteration.
#include <benchmark/benchmark.h>

#include "bench_models.h"
#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops::bench {
namespace {

// 1,024 packed documents of 4,096 tokens on average, given as the aggregates
// Megatron-LM all-reduces (T, S2); each evaluation counts another batch.
void CountGlm5MegatronAggregates(benchmark::State& state) {
  const Result<FlopsCounter> counter = FlopsCounter::create(glm5_model(), Mode::kMegatron);
  if (!counter.ok()) fail(counter.error().message());
  Int128 tokens = 4194304, squares = Int128{tokens} * 6000;
  for (auto _ : state) {
    const Result<Flops> flops = counter.value().total(SequenceAggregates{tokens, squares});
    benchmark::DoNotOptimize(flops.ok() ? flops.value().value : 0);
    squares += 4096;  // another batch
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(CountGlm5MegatronAggregates)->Repetitions(5)->ReportAggregatesOnly(true);

// The exact count of a BSHD batch, in 128-bit integers.
void CountGlm5ModelBshd(benchmark::State& state) {
  const Result<FlopsCounter> counter = FlopsCounter::create(glm5_model(), Mode::kModel);
  if (!counter.ok()) fail(counter.error().message());
  std::int64_t batch = 1024;
  for (auto _ : state) {
    const Result<Flops> flops = counter.value().total(Bshd{batch, 4096});
    benchmark::DoNotOptimize(flops.ok() ? flops.value().value : 0);
    batch = batch % 4096 + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(CountGlm5ModelBshd)->Repetitions(5)->ReportAggregatesOnly(true);

// Megatron-LM arguments to a validated model: what every new configuration
// of a sweep, a batch record or a fresh args namespace pays.
void BuildGlm5Model(benchmark::State& state) {
  const MegatronArgs args = glm5_args();
  for (auto _ : state) {
    Result<Model> model = model_from_megatron_args(args);
    benchmark::DoNotOptimize(model.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BuildGlm5Model)->Repetitions(5)->ReportAggregatesOnly(true);

// Preparing the model once: building every layer's terms.
void PrepareGlm5(benchmark::State& state) {
  const Model model = glm5_model();
  for (auto _ : state) {
    Result<FlopsCounter> counter = FlopsCounter::create(model, Mode::kMegatron);
    benchmark::DoNotOptimize(counter.ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(PrepareGlm5);

// A config whose one layer repeats `repeat` times, read, prepared and counted:
// the same cost at 32 layers and at 100,000, as the layers are never expanded.
void RepeatedLayerConfig(benchmark::State& state) {
  const std::string config =
      R"({"hidden_size": 4096, "vocab_size": 128256,
          "mixers": {"attention": {"type": "gqa", "num_heads": 32, "num_query_groups": 8, "head_dim": 128}},
          "channel_mixers": {"swiglu": {"type": "mlp", "ffn_hidden_size": 14336, "gated": true}},
          "layers": [{"mixer": "attention", "channel_mixer": "swiglu", "repeat": )" +
      std::to_string(state.range(0)) + "}]}";
  for (auto _ : state) {
    const Result<Model> model = parse_native_config(config);
    if (!model.ok()) fail(model.error().message());
    const Result<FlopsCounter> counter = FlopsCounter::create(model.value(), Mode::kModel);
    const Result<Flops> flops = counter.value().total(Bshd{1, 4096});
    benchmark::DoNotOptimize(flops.ok() ? flops.value().value : 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(RepeatedLayerConfig)->Arg(32)->Arg(100000)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
}  // namespace trainflops::bench
