#include "trainflops/count.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "accounting/counter_internals.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

Model llama_like(std::int64_t layers) {
  Model model;
  model.hidden_size = 512;
  model.vocab_size = 32000;
  const Layer layer{
      Mixer{GqaAttention{
          .num_heads = 8, .num_query_groups = 2, .head_dim = 64, .output_gate = false, .window = {}, .chunk = {}}},
      ChannelMixer{DenseMlp{1408, true}}};
  model.layers.append(layer, layers);
  return model;
}

// A dense model trains at 6 FLOPs per parameter per token (2 per FMA, x3 for
// forward, dgrad and wgrad), plus attention's 2 x q FMAs per causal pair.
TEST(CountTest, DenseModelIsSixTimesParamsTimesTokensPlusAttention) {
  const Model model = llama_like(4);
  const Int128 h = 512, q = 8 * 64, kv = 2 * 64, ffn = 1408, vocab = 32000, layers = 4;
  const Int128 params_per_layer = h * q + 2 * h * kv + q * h + 3 * h * ffn;  // Wq, Wk, Wv, Wo, SwiGLU
  const Int128 params = layers * params_per_layer + h * vocab;               // + output layer
  struct Case {
    Workload workload;
    Int128 tokens, pairs;
  };
  const std::vector<Case> cases = {
      {Bshd{3, 100}, 300, 3 * 100 * 101 / 2},
      {PackedDocuments{{5, 1, 0, 7}}, 13, 15 + 1 + 0 + 28},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(describe(c.workload));
    const Result<Report> report = count(model, c.workload, Mode::kModel);
    ASSERT_TRUE(report.ok()) << report.error().message();
    const Int128 expected = 6 * params * c.tokens + 6 * 2 * q * layers * c.pairs;
    EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(expected));
    // Beside it, the parameters: N = params and the RMSNorm weights (two per
    // layer, the final one), which cost no FLOPs (the embedding table is a
    // lookup); 6 N D leaves out the attention term and adds 6 per norm weight.
    ASSERT_TRUE(report.value().parameters.has_value());
    const ParameterSummary& p = *report.value().parameters;
    const Int128 norms = (2 * layers + 1) * h;
    EXPECT_EQ(to_decimal(p.active), to_decimal(params + norms));
    EXPECT_EQ(to_decimal(p.embedding), to_decimal(vocab * h));
    EXPECT_EQ(to_decimal(p.total), to_decimal(params + norms + vocab * h));
    EXPECT_EQ(to_decimal(p.costing_flops), to_decimal(params));
    EXPECT_EQ(to_decimal(p.not_costing_flops), to_decimal(norms + vocab * h));
    EXPECT_EQ(to_decimal(p.six_n_d), to_decimal(6 * (params + norms) * c.tokens));
  }
}

// Without num_experts an MoE layer has no total parameter count: the report
// comes without parameters rather than failing.
TEST(CountTest, ParametersLeftOutWhenExpertsAreUncounted) {
  Model model = llama_like(2);
  model.layers.set(1, Layer{model.layers[1].mixer, Moe{std::nullopt, 2, 256, std::nullopt, std::nullopt, true}});
  const Result<Report> report = count(model, Bshd{1, 16}, Mode::kModel);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_FALSE(report.value().parameters.has_value());
}

// Identical layers share their terms: layers that repeat, interleaved and
// beyond the few the counter remembers, each still count with their own width.
TEST(CountTest, RepeatedAndInterleavedLayersCountEachLayer) {
  Model model = llama_like(1);
  const std::vector<std::int64_t> widths = {1408, 1416, 1408, 1408, 1424, 1432, 1440, 1448,
                                            1456, 1464, 1472, 1480, 1408, 1416, 1480, 1496};
  const std::optional<Mixer> attention = model.layers[0].mixer;
  model.layers = {};
  for (std::int64_t width : widths) model.layers.push_back(Layer{attention, DenseMlp{width, true}});
  const Int128 h = 512, q = 8 * 64, kv = 2 * 64, vocab = 32000, tokens = 300, pairs = 3 * 100 * 101 / 2;
  Int128 params = h * vocab;
  for (std::int64_t ffn : widths) params += h * q + 2 * h * kv + q * h + 3 * h * ffn;
  const Int128 expected = 6 * params * tokens + 6 * 2 * q * static_cast<std::int64_t>(widths.size()) * pairs;
  const Result<Report> report = count(model, Bshd{3, 100}, Mode::kModel);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(expected));
  const Int128 mlp_flops_per_width = 6 * 3 * h * tokens;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    SCOPED_TRACE(i);
    const LayerFlops& layer = report.value().layers[i];
    const auto mlp = std::find_if(layer.components.begin(), layer.components.end(),
                                  [](const ComponentFlops& c) { return c.component == Component::kMlp; });
    ASSERT_NE(mlp, layer.components.end());
    EXPECT_EQ(to_decimal(*mlp->flops.exact), to_decimal(mlp_flops_per_width * widths[i]));
  }

  // Validation checks each distinct layer once, and still every layer.
  Model invalid = model;
  Layer bad_groups = invalid.layers[15];
  std::get<GqaAttention>(*bad_groups.mixer).num_query_groups = 3;
  invalid.layers.set(15, bad_groups);
  const Result<Report> failed = count(invalid, Bshd{3, 100}, Mode::kModel);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "layers[15].mixer.num_query_groups = 3: must divide num_heads = 8");
}

// Offsets read in place give the report of the documents they delimit, in
// every mode, from int64 and int32 offsets, errors included.
TEST(CountTest, CuSeqlensInPlaceEqualsTheirDocuments) {
  Model model = llama_like(3);
  model.layers.set(1, Layer{model.layers[1].mixer, Moe{8, 2, 256, std::nullopt, std::nullopt, true}});
  const std::vector<std::int64_t> offsets = {0, 5, 5, 90, 1000, 1001};
  const std::vector<std::int32_t> narrow(offsets.begin(), offsets.end());
  const Workload documents = PackedDocuments{lengths_from_cu_seqlens(offsets).value()};
  for (Mode mode : {Mode::kMegatron, Mode::kModel, Mode::kExecuted}) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const FlopsCounter counter = FlopsCounter::create(model, mode).value();
    const Report expected = counter.report(documents).value();
    for (const Result<Report>& in_place : {counter.report_cu_seqlens(offsets), counter.report_cu_seqlens(narrow)}) {
      ASSERT_TRUE(in_place.ok()) << in_place.error().message();
      const Report& got = in_place.value();
      EXPECT_EQ(got.total.value, expected.total.value);
      EXPECT_EQ(got.total.exact, expected.total.exact);
      EXPECT_EQ(to_decimal(got.tokens), to_decimal(expected.tokens));
      EXPECT_EQ(got.model_total.has_value(), expected.model_total.has_value());
      if (got.model_total) {
        EXPECT_EQ(got.model_total->exact, expected.model_total->exact);
      }
      ASSERT_EQ(got.components.size(), expected.components.size());
      for (std::size_t i = 0; i < got.components.size(); ++i) {
        EXPECT_EQ(got.components[i].flops.value, expected.components[i].flops.value);
      }
      ASSERT_EQ(got.layers.size(), expected.layers.size());
      for (std::size_t i = 0; i < got.layers.size(); ++i) {
        EXPECT_EQ(got.layers[i].flops.value, expected.layers[i].flops.value) << got.layers[i].name;
      }
      EXPECT_EQ(in_place.value().workload, "THD, 5 packed documents, 1,001 tokens");
    }
  }
  struct Bad {
    std::vector<std::int64_t> offsets;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {{0}, "cu_seqlens: needs at least two offsets (0 and the end of the first document), got 1"},
      {{1, 5}, "cu_seqlens[0] = 1: must be 0"},
      {{0, 5, 4}, "cu_seqlens[2] = 4: must not be smaller than the previous offset 5"},
      {{0, 0, 0}, "cu_seqlens: the batch holds no tokens (the last offset must be positive)"},
  };
  for (Mode mode : {Mode::kMegatron, Mode::kModel}) {
    const FlopsCounter counter = FlopsCounter::create(model, mode).value();
    for (const Bad& c : bad) {
      const std::vector<std::int32_t> narrow(c.offsets.begin(), c.offsets.end());
      for (const Result<Report>& in_place : {counter.report_cu_seqlens(c.offsets), counter.report_cu_seqlens(narrow)}) {
        ASSERT_FALSE(in_place.ok());
        EXPECT_EQ(in_place.error().message(), c.message);
      }
    }
  }
}

// Megatron-LM charges S2/2 causal pairs where the exact count is sum L(L+1)/2:
// the two differ by exactly T/2 pairs.
TEST(CountTest, MegatronModeDiffersFromModelModeByHalfAPairPerToken) {
  const Model model = llama_like(2);
  const Workload workload = PackedDocuments{{10, 20, 30}};
  const auto megatron = count(model, workload, Mode::kMegatron);
  const auto exact = count(model, workload, Mode::kModel);
  ASSERT_TRUE(megatron.ok() && exact.ok());
  const double core_per_pair = 6.0 * 2 * 512 * 2;  // X F 2q, two layers
  EXPECT_DOUBLE_EQ(exact.value().total.value - megatron.value().total.value, core_per_pair * 60 / 2);
}

// Counts on one thread share the storage of their statistics: counters of
// other models and modes in between, and a count that fails, leave nothing
// behind. Model mode against the closed form of the first test; megatron
// mode against it less half a pair per token of core attention.
TEST(CountTest, CountsInTurnOnOneThreadAreIndependent) {
  const Int128 h = 512, q = 8 * 64, kv = 2 * 64, ffn = 1408, vocab = 32000;
  const auto exact_flops = [&](Int128 layers, Int128 tokens, Int128 pairs) {
    const Int128 params = layers * (h * q + 2 * h * kv + q * h + 3 * h * ffn) + h * vocab;
    return 6 * params * tokens + 6 * 2 * q * layers * pairs;
  };
  struct Case {
    std::int64_t layers;
    Mode mode;
    Workload workload;
    Int128 tokens, pairs;
  };
  const std::vector<Case> cases = {
      {4, Mode::kModel, Bshd{3, 100}, 300, 3 * 100 * 101 / 2},
      {2, Mode::kMegatron, PackedDocuments{{10, 20, 30}}, 60, 55 + 210 + 465},
      {4, Mode::kModel, SequenceAggregates{60, 1400}, 0, 0},  // fails: model mode needs the lengths
      {2, Mode::kModel, PackedDocuments{{5, 1, 0, 7}}, 13, 15 + 1 + 0 + 28},
      {4, Mode::kMegatron, Bshd{2, 8}, 16, 2 * 8 * 9 / 2},
      {2, Mode::kModel, Bshd{1, 9}, 9, 45},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.layers) + " layers, " + std::string(mode_name(c.mode)) + ", " + describe(c.workload));
    const Result<FlopsCounter> counter = FlopsCounter::create(llama_like(c.layers), c.mode);
    ASSERT_TRUE(counter.ok()) << counter.error().message();
    std::array<double, kAllComponents.size()> components{};
    const Result<Flops> total = counter.value().total(c.workload);
    const Result<Flops> with_components = CounterInternals::total_and_components(counter.value(), c.workload, components);
    if (c.tokens == 0) {
      ASSERT_FALSE(total.ok());
      EXPECT_EQ(total.error().message(), with_components.error().message());
      EXPECT_NE(total.error().message().find("model mode counts every document exactly"), std::string::npos)
          << total.error().message();
      continue;
    }
    ASSERT_TRUE(total.ok() && with_components.ok());
    const Int128 exact = exact_flops(c.layers, c.tokens, c.pairs);
    if (c.mode == Mode::kModel) {
      EXPECT_EQ(to_decimal(*total.value().exact), to_decimal(exact));
      EXPECT_EQ(to_decimal(*with_components.value().exact), to_decimal(exact));
    } else {
      const double half_pair_per_token = 6.0 * 2 * static_cast<double>(q) * c.layers * (to_double(c.tokens) / 2);
      EXPECT_DOUBLE_EQ(total.value().value, to_double(exact) - half_pair_per_token);
      EXPECT_EQ(with_components.value().value, total.value().value);
    }
  }
}

// Random models of every layer type: the components sum to the total and so
// do the layers (exactly in model mode), and total() agrees with report().
class RandomModels {
 public:
  explicit RandomModels(std::uint64_t seed) : rng_(seed) {}

  std::int64_t size(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng_);
  }

  Mixer mixer() {
    switch (size(0, 5)) {
      case 0: {
        const std::int64_t groups = size(1, 4);
        return GqaAttention{.num_heads = groups * size(1, 4),
                            .num_query_groups = groups,
                            .head_dim = size(1, 3) == 1 ? std::nullopt : std::optional(size(8, 128)),
                            .output_gate = size(0, 1) == 1,
                            .window = {},
                            .chunk = {}};
      }
      case 1:
        return MlaAttention{size(1, 16),   size(0, 1) ? std::optional(size(16, 512)) : std::nullopt,
                            size(16, 512), size(8, 192),
                            size(0, 64),   size(8, 256)};
      case 2:
        return GatedDeltaNet{size(0, 1) ? GatedDeltaNet::Variant::kGdn2 : GatedDeltaNet::Variant::kGdn,
                             size(8, 128),
                             size(8, 128),
                             size(1, 16),
                             size(1, 32),
                             size(2, 4)};
      case 3: return Mamba2{size(64, 1024), size(1, 64), size(1, 8), size(16, 128)};
      default: return GatedDeltaProduct{size(64, 1024), size(1, 64), size(1, 8), size(16, 128), size(1, 3)};
    }
  }

  ChannelMixer channel_mixer() {
    if (size(0, 1)) return DenseMlp{size(64, 4096), size(0, 1) == 1};
    return Moe{std::nullopt,
               size(1, 8),
               size(64, 2048),
               size(0, 1) ? std::optional(size(64, 2048)) : std::nullopt,
               size(0, 2) == 0 ? std::optional(size(64, 512)) : std::nullopt,
               size(0, 1) == 1};
  }

  Layer layer() {
    switch (size(0, 2)) {
      case 0: return Layer{mixer(), std::nullopt};
      case 1: return Layer{std::nullopt, channel_mixer()};
      default: return Layer{mixer(), channel_mixer()};
    }
  }

  Model model() {
    Model m;
    m.hidden_size = size(64, 2048);
    m.vocab_size = size(1000, 200000);
    m.megatron_path = size(0, 1) ? MegatronPath::kHybrid : MegatronPath::kStandard;
    for (std::int64_t i = size(1, 12); i > 0; --i) m.layers.push_back(layer());
    const std::int64_t depths = size(0, 2);
    const std::vector<Layer> depth = {layer()};
    m.mtp_depths.assign(static_cast<std::size_t>(depths), depth);
    return m;
  }

  Workload workload() {
    if (size(0, 1)) return Bshd{size(1, 64), size(1, 8192)};
    PackedDocuments docs;
    for (std::int64_t i = size(1, 20); i > 0; --i) docs.lengths.push_back(size(0, 5000));
    docs.lengths.push_back(1);
    return docs;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(CountTest, BreakdownsSumToTheTotal) {
  RandomModels random(20261202);
  for (int trial = 0; trial < 300; ++trial) {
    const Model model = random.model();
    const Workload workload = random.workload();
    for (Mode mode : {Mode::kMegatron, Mode::kModel}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " " + std::string(mode_name(mode)));
      const Result<FlopsCounter> counter = FlopsCounter::create(model, mode);
      ASSERT_TRUE(counter.ok()) << counter.error().message();
      const Result<Report> report = counter.value().report(workload);
      ASSERT_TRUE(report.ok()) << report.error().message();
      const Report& r = report.value();
      const Result<Flops> total = counter.value().total(workload);
      ASSERT_TRUE(total.ok());
      EXPECT_EQ(total.value().value, r.total.value);
      // components() without the layers: the report's components.
      const Result<std::vector<ComponentFlops>> components = counter.value().components(workload);
      ASSERT_TRUE(components.ok()) << components.error().message();
      ASSERT_EQ(components.value().size(), r.components.size());
      for (std::size_t i = 0; i < r.components.size(); ++i) {
        EXPECT_EQ(components.value()[i].component, r.components[i].component);
        EXPECT_EQ(components.value()[i].flops.exact, r.components[i].flops.exact);
        EXPECT_NEAR(components.value()[i].flops.value, r.components[i].flops.value,
                    1e-14 * std::abs(r.components[i].flops.value));
      }
      // total_and_components(): total() and components()' values, the absent components 0.
      std::array<double, kAllComponents.size()> per_component;
      per_component.fill(-1);
      const Result<Flops> together = CounterInternals::total_and_components(counter.value(), workload, per_component);
      ASSERT_TRUE(together.ok()) << together.error().message();
      EXPECT_EQ(together.value().value, total.value().value);
      EXPECT_EQ(together.value().exact, total.value().exact);
      std::array<double, kAllComponents.size()> expected{};
      for (const ComponentFlops& part : components.value()) {
        expected[static_cast<std::size_t>(part.component)] = part.flops.value;
      }
      EXPECT_EQ(per_component, expected);
      if (mode == Mode::kModel) {
        Int128 by_component = 0, by_layer = 0;
        for (const auto& part : r.components) by_component += *part.flops.exact;
        for (const auto& layer : r.layers) by_layer += *layer.flops.exact;
        EXPECT_EQ(to_decimal(by_component), to_decimal(*r.total.exact));
        EXPECT_EQ(to_decimal(by_layer), to_decimal(*r.total.exact));
        EXPECT_EQ(total.value().exact, r.total.exact);
      } else {
        double by_component = 0, by_layer = 0;
        for (const auto& part : r.components) by_component += part.flops.value;
        for (const auto& layer : r.layers) by_layer += layer.flops.value;
        EXPECT_NEAR(by_component, r.total.value, 1e-15 * r.total.value * r.layers.size());
        EXPECT_NEAR(by_layer, r.total.value, 1e-15 * r.total.value * r.layers.size());
      }
    }
  }
}

// megatron_total() without a counter gives the counter's total bit for bit
// (a model's first count through the drop-in and its later ones agree), on
// every preset with DSA's indexer sharing, MTP and hybrid patterns, on random
// models of every layer type, on DSA with KPool, and on widths large enough
// for the order of addition to show.
TEST(CountTest, MegatronTotalWithoutACounterIsTheCounters) {
  std::vector<std::pair<std::string, Model>> models;
  for (const Preset& preset : presets()) models.emplace_back(preset.name, preset_model(preset).value());
  RandomModels random(20261204);
  for (int trial = 0; trial < 200; ++trial) models.emplace_back("random " + std::to_string(trial), random.model());
  Model kpool = llama_like(1);
  const MlaAttention mla{4, 64, 128, 64, 32, 64};
  kpool.layers = {
      Layer{Mixer{DsaAttention{mla, DsaIndexer{4, 32, 512, DsaIndexer::GradMode::kOff, 4, true}, true}}, DenseMlp{96}},
      Layer{Mixer{DsaAttention{mla, DsaIndexer{4, 32, 512, DsaIndexer::GradMode::kSparse, 1, true}, false}},
            std::nullopt}};
  kpool.mtp_depths = {kpool.layers};
  models.emplace_back("DSA with KPool", kpool);
  // Widths whose products pass 2^53, where the order of addition shows:
  // attention and MLP terms of several layers add to the same statistic.
  std::mt19937_64 widths(20261204);
  for (int trial = 0; trial < 20; ++trial) {
    const auto width = [&] { return std::uniform_int_distribution<std::int64_t>(1, 2'000'000'000)(widths); };
    Model wide = llama_like(1);
    wide.hidden_size = width();
    wide.layers = {};
    for (int i = 0; i < 6; ++i) {
      const std::int64_t groups = i % 3 + 1;
      wide.layers.push_back(Layer{GqaAttention{.num_heads = 4 * groups,
                                               .num_query_groups = groups,
                                               .head_dim = width() % 1024 + 1,
                                               .output_gate = i % 2 == 1,
                                               .window = {},
                                               .chunk = {}},
                                  DenseMlp{width(), i % 2 == 0}});
    }
    wide.mtp_depths = {wide.layers};
    models.emplace_back("wide " + std::to_string(trial), wide);
  }
  const std::vector<Workload> workloads = {Bshd{8, 4096}, PackedDocuments{{4096, 1, 0, 777, 12000}},
                                           SequenceAggregates{1'000'003, 7'654'321'987}};
  for (const auto& [name, model] : models) {
    for (const Workload& workload : workloads) {
      SCOPED_TRACE(name + ", " + describe(workload));
      const Result<Flops> total = FlopsCounter::create(model, Mode::kMegatron).value().total(workload);
      const Result<Flops> without_counter = megatron_total(model, workload);
      ASSERT_TRUE(total.ok() && without_counter.ok()) << total.error().message();
      EXPECT_EQ(without_counter.value().value, total.value().value);
      EXPECT_FALSE(without_counter.value().exact.has_value());
    }
  }
}

// Its errors are the counter's: the model's first, then the workload's.
TEST(CountTest, MegatronTotalErrorsAreTheCounters) {
  Model no_layers = llama_like(1);
  no_layers.layers = {};
  Model compressed = llama_like(1);
  // Heads 2 x 8, q_lora_rank 16, two output groups of rank 4, window 4, indexer 2 x 4, top-8.
  compressed.layers = {
      Layer{Mixer{CompressedSparseAttention{CompressedSparseAttention::Kind::kCsa, 2, 8, 16, 2, 4, 4, 2, 4, 8}},
            DenseMlp{64}}};
  struct Case {
    const char* name;
    Model model;
    Workload workload;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no layers, and a bad workload", no_layers, Bshd{0, 16}, "layers: must hold at least one layer"},
      {"zero batch", llama_like(1), Bshd{0, 16}, "batch_size = 0: must be a positive integer"},
      {"inconsistent aggregates", llama_like(1), SequenceAggregates{10, 5},
       "seqlen_squared_sum = 5: must be at least total_real_tokens = 10 (every L^2 >= L)"},
      {"DeepSeek-V4 without seq_length", compressed, SequenceAggregates{10, 50},
       "seq_length is missing: Megatron-LM estimates DeepSeek-V4's selected entries from it; give the model's "
       "seq_length (args) or a BSHD batch"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<FlopsCounter> counter = FlopsCounter::create(c.model, Mode::kMegatron);
    const Result<Flops> total = counter.ok() ? counter.value().total(c.workload) : counter.error();
    const Result<Flops> without_counter = megatron_total(c.model, c.workload);
    ASSERT_FALSE(total.ok());
    ASSERT_FALSE(without_counter.ok());
    EXPECT_EQ(total.error().message(), c.message);
    EXPECT_EQ(without_counter.error().message(), c.message);
  }
}

TEST(CountTest, ReportNamesLayersAndKinds) {
  Model model = llama_like(2);
  model.mtp_depths = {{model.layers[0]}};
  const Result<Report> report = count(model, Bshd{1, 16}, Mode::kModel);
  ASSERT_TRUE(report.ok());
  std::vector<std::string> names, kinds;
  for (const auto& layer : report.value().layers) {
    names.push_back(layer.name);
    kinds.push_back(layer.kind);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"decoder.1", "decoder.2", "mtp1.projection", "mtp1.1", "logits"}));
  EXPECT_EQ(kinds, (std::vector<std::string>{"gqa+mlp", "gqa+mlp", "projection", "gqa+mlp", "logits"}));
  EXPECT_EQ(to_decimal(report.value().tokens), "16");
}

TEST(CountTest, Errors) {
  const Model model = llama_like(1);
  struct Case {
    const char* name;
    Model model;
    Workload workload;
    Mode mode;
    std::string message;
  };
  Model no_layers = model;
  no_layers.layers = {};
  Model bad_groups = model;
  Layer bad_layer = bad_groups.layers[0];
  std::get<GqaAttention>(*bad_layer.mixer).num_query_groups = 3;
  bad_groups.layers.set(0, bad_layer);
  Model huge = model;
  huge.hidden_size = std::int64_t{1} << 40;
  Model bad_kda = model;
  bad_kda.layers.set(0, Layer{KimiDeltaAttention{4, 8, 4, 8, 0}, std::nullopt});
  Model two_gates = model;
  two_gates.layers.set(
      0,
      Layer{GqaAttention{.num_heads = 8, .num_query_groups = 2, .head_dim = 64, .output_gate = true, .head_gate = true},
            std::nullopt});
  Model bad_mtp = model;
  Layer bad_mtp_layer = model.layers[0];
  bad_mtp_layer.channel_mixer = DenseMlp{-5};
  bad_mtp.mtp_depths = {LayerStack{model.layers[0]}, LayerStack{model.layers[0], bad_mtp_layer}};
  const std::vector<Case> cases = {
      {"aggregates in model mode", model, SequenceAggregates{10, 50}, Mode::kModel,
       "model mode counts every document exactly and needs their lengths (docs, cu_seqlens or a BSHD batch); "
       "total_real_tokens and seqlen_squared_sum allow megatron mode only"},
      {"inconsistent aggregates", model, SequenceAggregates{10, 5}, Mode::kMegatron,
       "seqlen_squared_sum = 5: must be at least total_real_tokens = 10 (every L^2 >= L)"},
      {"impossible aggregates", model, SequenceAggregates{10, 101}, Mode::kMegatron,
       "seqlen_squared_sum = 101: must be at most total_real_tokens^2 = 100 (sum L^2 <= (sum L)^2)"},
      {"no tokens", model, PackedDocuments{{0, 0}}, Mode::kModel,
       "docs: the batch holds no tokens (at least one length must be positive)"},
      {"negative length", model, PackedDocuments{{4, -1}}, Mode::kModel,
       "docs[1] = -1: a document length must be >= 0"},
      {"zero batch", model, Bshd{0, 16}, Mode::kModel, "batch_size = 0: must be a positive integer"},
      {"no layers", no_layers, Bshd{1, 16}, Mode::kModel, "layers: must hold at least one layer"},
      {"groups", bad_groups, Bshd{1, 16}, Mode::kModel,
       "layers[0].mixer.num_query_groups = 3: must divide num_heads = 8"},
      {"two gates", two_gates, Bshd{1, 16}, Mode::kModel,
       "layers[0].mixer.head_gate = 1: a layer gates its output per element (output_gate) or per head, not both"},
      {"kda output gate rank", bad_kda, Bshd{1, 16}, Mode::kModel,
       "layers[0].mixer.output_gate_rank = 0: must be a positive integer"},
      {"MTP layer", bad_mtp, Bshd{1, 16}, Mode::kModel,
       "mtp_depths[1][1].channel_mixer.ffn_hidden_size = -5: must be a positive integer"},
      {"size cap", huge, Bshd{1, 16}, Mode::kModel, "hidden_size = 1099511627776: must be at most 2147483647"},
      {"overflow", model, Bshd{INT64_MAX, INT64_MAX}, Mode::kModel,
       "the causal_pairs of the batch does not fit in 128 bits; the workload is too large to count exactly"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<Report> report = count(c.model, c.workload, c.mode);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().message(), c.message);
  }
}

// Executed mode: recomputation adds one forward of what it re-executes, and the
// report carries the model-mode total (MFU's numerator) beside it.
TEST(CountTest, ExecutedModeRecomputation) {
  Model model = llama_like(2);
  model.layers.set(1, Layer{model.layers[1].mixer, Moe{8, 2, 256, std::nullopt, std::nullopt, true}});
  const Workload workload = PackedDocuments{{40, 7}};
  const Report none = count(model, workload, Mode::kExecuted).value();
  const Report selective = count(model, workload, Mode::kExecuted, Recompute::kSelective).value();
  const Report full = count(model, workload, Mode::kExecuted, Recompute::kFull).value();
  const Report exact = count(model, workload, Mode::kModel).value();
  ASSERT_TRUE(none.model_total.has_value());
  EXPECT_EQ(none.model_total->exact, exact.total.exact);
  // Every term here trains (3 executions), so a forward is a third of it.
  const auto core = [](const Report& r) {
    for (const auto& part : r.components) {
      if (part.component == Component::kCoreAttention) return *part.flops.exact;
    }
    return Int128{0};
  };
  EXPECT_EQ(to_decimal(*selective.total.exact - *none.total.exact), to_decimal(core(none) / 3));
  Int128 layers = 0;
  for (const auto& layer : none.layers) layers += layer.name == "logits" ? 0 : *layer.flops.exact;
  EXPECT_EQ(to_decimal(*full.total.exact - *none.total.exact), to_decimal(layers / 3));
  // The router: h x 8 experts per token, trained, on the MoE layer only.
  EXPECT_EQ(to_decimal(*none.total.exact - *exact.total.exact), to_decimal(Int128{6} * 512 * 8 * 47));
}

// The indexer's KL teacher runs once per step under every recomputation: in
// the first forward without recomputation or with selective recomputation
// (core attention alone), in the recomputation alone under full (the first
// forward of a fully recomputed layer runs without gradients, where
// Megatron-LM's DSA computes no loss). Every other forward term gains a
// forward under full recomputation.
TEST(CountTest, KlTeacherRunsOncePerStepUnderEveryRecomputation) {
  Model model = llama_like(1);
  const MlaAttention mla{4, 64, 128, 64, 32, 64};
  model.layers = {Layer{Mixer{DsaAttention{mla, DsaIndexer{4, 32, 16, DsaIndexer::GradMode::kDetached, 1, true}, true}},
                        DenseMlp{96}}};
  const Workload workload = PackedDocuments{{40, 7}};
  const auto component = [](const Report& report, Component wanted) {
    for (const auto& part : report.components) {
      if (part.component == wanted) return *part.flops.exact;
    }
    return Int128{0};
  };
  const Report none = count(model, workload, Mode::kExecuted).value();
  ASSERT_GT(component(none, Component::kIndexerTeacher), 0);
  for (const Recompute recompute : {Recompute::kSelective, Recompute::kFull}) {
    SCOPED_TRACE(recompute_name(recompute));
    const Report recomputed = count(model, workload, Mode::kExecuted, recompute).value();
    EXPECT_EQ(to_decimal(component(recomputed, Component::kIndexerTeacher)),
              to_decimal(component(none, Component::kIndexerTeacher)));
  }
  const Report full = count(model, workload, Mode::kExecuted, Recompute::kFull).value();
  EXPECT_GT(component(full, Component::kIndexerScoring), component(none, Component::kIndexerScoring));
}

TEST(CountTest, ExecutedModeErrors) {
  Model model = llama_like(1);
  model.layers.set(0, Layer{model.layers[0].mixer, Moe{std::nullopt, 2, 256, std::nullopt, std::nullopt, true}});
  EXPECT_EQ(count(model, Bshd{1, 8}, Mode::kExecuted).error().message(),
            "layers[0].channel_mixer.num_experts is missing: executed mode counts the router GEMM (h x num_experts)");
  EXPECT_EQ(count(llama_like(1), Bshd{1, 8}, Mode::kModel, Recompute::kFull).error().message(),
            "recompute = \"full\": applies to executed mode only (model FLOPs, MFU's numerator, exclude re-executed "
            "work)");
  EXPECT_EQ(parse_recompute("partial").error().message(),
            "recompute = \"partial\": must be one of none, selective, full");
}

// Lengths near the 64-bit limit either count exactly in 128 bits or fail.
TEST(CountTest, HugeLengthsCountExactly) {
  Model tiny;
  tiny.hidden_size = 1;
  tiny.vocab_size = 1;
  tiny.layers = {Layer{std::nullopt, ChannelMixer{DenseMlp{1, false}}}};
  const std::int64_t length = INT64_MAX;
  const Result<Report> report = count(tiny, PackedDocuments{{length}}, Mode::kModel);
  ASSERT_TRUE(report.ok()) << report.error().message();
  // Per token: MLP 2 FMAs + logits 1 FMA = 3 FMAs = 18 FLOPs trained.
  EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(Int128{18} * length));
}

}  // namespace
}  // namespace trainflops
