// Hyper-connections and hashed n-gram memory: hand-derived terms, a count
// against loops that walk every product of the reference implementations one
// multiply-add at a time, parameters, megatron mode (which leaves both out),
// the native config and the rules.
#include <gtest/gtest.h>

#include "trainflops/compare.h"
#include "trainflops/count.h"
#include "trainflops/layer_flops.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/native_config.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

constexpr auto kManifold = HyperConnections::Variant::kManifold;
constexpr auto kGatedResidual = HyperConnections::Variant::kGatedResidual;

Int128 forward_flops(const Terms& terms) {
  Int128 sum = 0;
  for (const Term& term : terms) {
    EXPECT_EQ(term.component, term.component == Component::kNgramMemory ? Component::kNgramMemory
                                                                        : Component::kHyperConnections);
    EXPECT_EQ(term.per, kTokens);
    EXPECT_EQ(term.executions, kTrainingExpansion);
    sum += term.forward_flops;
  }
  return sum;
}

TEST(HyperConnectionTest, HandDerivedTerms) {
  const Convention model{Mode::kModel};
  const HyperConnections mhc{kManifold, 2, 0};
  const HyperConnections gated{kGatedResidual, 2, 3};
  // h = 8, n = 2, nh = 16. mHC per sublayer: projection 16 * (4 + 4) = 128,
  // read 16, write 16, mixing 2 * 16 = 32: 192 FMAs.
  EXPECT_EQ(forward_flops(hyper_connection_terms(mhc, 1, 8, model)), 2 * 192);
  EXPECT_EQ(forward_flops(hyper_connection_terms(mhc, 2, 8, model)), 2 * 2 * 192);
  EXPECT_TRUE(hyper_connection_terms(mhc, 0, 8, model).empty());
  // Gated residual, rank 3: gate 2 * 16 * 3 = 96, average 16, write gates
  // 2 * 16 = 32, write 16: 160 FMAs.
  EXPECT_EQ(forward_flops(hyper_connection_terms(gated, 1, 8, model)), 2 * 160);
  // Executed mode runs the same products; megatron mode, as Megatron-LM's
  // function, counts none.
  EXPECT_EQ(forward_flops(hyper_connection_terms(gated, 2, 8, Convention{Mode::kExecuted})), 2 * 2 * 160);
  EXPECT_TRUE(hyper_connection_terms(gated, 2, 8, Convention{Mode::kMegatron}).empty());
  // Heads: mHC 16 x 2 read weights + the 16 read = 48; gated residual the
  // gate 96 + the 16 average = 112.
  EXPECT_EQ(forward_flops({hyper_connection_head_term(mhc, 8)}), 2 * 48);
  EXPECT_EQ(forward_flops({hyper_connection_head_term(gated, 8)}), 2 * 112);
  // n-gram memory, h = 8, 2 streams, e = 6, 4 taps: keys 6 * 16 = 96, value
  // 6 * 8 = 48, gates 16, gated values 16, convolution 4 * 16 = 64: 240 FMAs.
  const NgramMemory memory{6, 2, 4, 1000};
  EXPECT_EQ(forward_flops(ngram_memory_terms(memory, 8, model)), 2 * 240);
  EXPECT_TRUE(ngram_memory_terms(memory, 8, Convention{Mode::kMegatron}).empty());
}

// A small model: GQA + MLP layers, one MoE layer without a mixer, an MTP
// depth; n-gram memory on layer 1.
Model small_model(std::optional<HyperConnections> hc, bool memory) {
  Model model;
  model.hidden_size = 12;
  model.vocab_size = 50;
  const Mixer attention = GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 3};
  const ChannelMixer mlp = DenseMlp{20, true};
  const ChannelMixer moe = Moe{8, 2, 6, 6, std::nullopt, true, false};
  const std::int64_t streams = hc ? hc->streams : 1;
  Layer with_memory{attention, mlp};
  if (memory) with_memory.ngram_memory = NgramMemory{10, streams, 3, 0};
  model.layers = {Layer{attention, mlp}, with_memory, Layer{std::nullopt, moe}, Layer{attention, moe}};
  model.mtp_depths = {LayerStack{Layer{attention, moe}}};
  model.hyper_connections = hc;
  return model;
}

Int128 exact_total(const Model& model, const Workload& workload, Mode mode) {
  const Result<Report> report = count(model, workload, mode);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return *report.value().total.exact;
}

// Multiply-adds per token of the hyper-connections and the n-gram memory of
// small_model(), one at a time, as the reference modules compute them
// (Megatron-LM's and MaxText's mHC, Qwen3.8's gated residual, MaxText's Engram).
Int128 brute_force_fmas_per_token(const HyperConnections& hc, std::int64_t h, bool memory) {
  const std::int64_t n = hc.streams;
  Int128 fmas = 0;
  const auto sublayer = [&] {
    if (hc.variant == kManifold) {
      for (std::int64_t i = 0; i < n * h; ++i) {
        for (std::int64_t j = 0; j < n * n + 2 * n; ++j) ++fmas;  // mapping projection
      }
      for (std::int64_t s = 0; s < n; ++s) {
        for (std::int64_t d = 0; d < h; ++d) ++fmas;  // read: input[d] += pre[s] x[s][d]
      }
      for (std::int64_t s = 0; s < n; ++s) {
        for (std::int64_t d = 0; d < h; ++d) ++fmas;  // write: x[s][d] += post[s] y[d]
      }
      for (std::int64_t t = 0; t < n; ++t) {
        for (std::int64_t s = 0; s < n; ++s) {
          for (std::int64_t d = 0; d < h; ++d) ++fmas;  // mixing: out[t][d] += res[t][s] x[s][d]
        }
      }
    } else {
      for (std::int64_t i = 0; i < n * h; ++i) {
        for (std::int64_t r = 0; r < hc.rank; ++r) fmas += 2;  // down and up projections
        ++fmas;                                                 // mean of gate * normed stream
        for (std::int64_t s = 0; s < n; ++s) ++fmas;            // block_inject_weight
        ++fmas;                                                 // residual + output * inject weight
      }
    }
  };
  // Decoder: three layers with both sublayers, one MoE layer alone; the MTP
  // layer has both.
  for (int i = 0; i < 3 * 2 + 1 + 2; ++i) sublayer();
  // Two heads (decoder, MTP depth), each a final read.
  for (int head = 0; head < 2; ++head) {
    for (std::int64_t i = 0; i < n * h; ++i) {
      if (hc.variant == kManifold) {
        fmas += n;  // read weights
      } else {
        fmas += 2 * hc.rank;  // the gate
      }
      ++fmas;  // the read
    }
  }
  if (memory) {
    const std::int64_t e = 10, taps = 3;
    for (std::int64_t i = 0; i < e; ++i) {
      for (std::int64_t c = 0; c < n * h; ++c) ++fmas;  // keys
      for (std::int64_t d = 0; d < h; ++d) ++fmas;      // value
    }
    for (std::int64_t c = 0; c < n * h; ++c) {
      fmas += 2;     // the gate's dot product, the gated value added to the stream
      fmas += taps;  // depthwise causal convolution
    }
  }
  return fmas;
}

TEST(HyperConnectionTest, CountMatchesEveryProductWalkedOneByOne) {
  const Workload docs = PackedDocuments{{7, 1, 30}};
  const Int128 tokens = 38;
  for (const HyperConnections& hc :
       {HyperConnections{kManifold, 4, 0}, HyperConnections{kManifold, 1, 0}, HyperConnections{kGatedResidual, 3, 5}}) {
    for (bool memory : {false, true}) {
      SCOPED_TRACE(std::string(hyper_connection_variant_name(hc.variant)) + " x" + std::to_string(hc.streams) +
                   (memory ? " with memory" : ""));
      const Model plain = small_model(std::nullopt, false);
      const Model with = small_model(hc, memory);
      const Int128 expected = 2 * kTrainingExpansion * tokens * brute_force_fmas_per_token(hc, 12, memory);
      for (Mode mode : {Mode::kModel, Mode::kExecuted}) {
        EXPECT_EQ(to_decimal(exact_total(with, docs, mode) - exact_total(plain, docs, mode)), to_decimal(expected));
      }
      // Megatron-LM's function has no term for either.
      EXPECT_EQ(count(with, docs, Mode::kMegatron).value().total.value,
                count(plain, docs, Mode::kMegatron).value().total.value);
    }
  }
}

TEST(HyperConnectionTest, BreakdownShowsTheComponents) {
  const Model model = small_model(HyperConnections{kManifold, 4, 0}, true);
  const Report report = count(model, Bshd{1, 16}, Mode::kModel).value();
  Int128 hc = 0, memory = 0;
  for (const ComponentFlops& part : report.components) {
    if (part.component == Component::kHyperConnections) hc = *part.flops.exact;
    if (part.component == Component::kNgramMemory) memory = *part.flops.exact;
  }
  // 16 tokens x 6 FLOPs per multiply-add: 9 sublayers of 12 * 4 * 24 + 3 * 48 * 4 ...
  // as walked above, split by component.
  const Int128 both = 6 * 16 * brute_force_fmas_per_token(HyperConnections{kManifold, 4, 0}, 12, true);
  EXPECT_EQ(hc + memory, both);
  EXPECT_EQ(memory, 6 * 16 * (10 * 48 + 10 * 12 + 48 * 5));
  // The heads' final reads sit in the logits row.
  const LayerFlops& logits = report.layers.back();
  EXPECT_EQ(logits.name, "logits");
  ASSERT_EQ(logits.components.size(), 2u);
  EXPECT_EQ(logits.components[0].component, Component::kHyperConnections);
  EXPECT_EQ(*logits.components[0].flops.exact, 6 * 16 * 2 * (48 * 4 + 48));
  EXPECT_EQ(logits.components[1].component, Component::kLogits);
}

TEST(HyperConnectionTest, Parameters) {
  const std::int64_t h = 12;
  const ModelParameters plain = count_parameters(small_model(std::nullopt, false)).value();
  Model model = small_model(HyperConnections{kManifold, 4, 0}, true);
  Layer layer = model.layers[1];
  layer.ngram_memory->table_parameters = 7000;
  model.layers.set(1, layer);
  const ModelParameters with = count_parameters(model).value();
  // mHC: 48 x 24 per sublayer, 9 sublayers; each of the 2 heads 48 x 4.
  const Int128 hc = 9 * 48 * 24 + 2 * 48 * 4;
  // n-gram memory: keys 10 x 48, value 10 x 12, convolution 3 x 48; the
  // tables are looked up, so not active.
  const Int128 memory = 10 * 48 + 10 * h + 3 * 48;
  // Besides, mHC's static parameters: 24 biases and 3 scales per sublayer,
  // 4 biases and a scale per head.
  const Int128 statics = 9 * (24 + 3) + 2 * (4 + 1);
  EXPECT_EQ(with.total().total - plain.total().total, hc + statics + memory + 7000);
  EXPECT_EQ(with.total().active - plain.total().active, hc + statics + memory);
  // The head of the decoder counts with the output layer, the MTP depth's with its projection.
  EXPECT_EQ(with.output_layer.total - plain.output_layer.total, 48 * 4 + 4 + 1);
  EXPECT_EQ(with.mtp.total - plain.mtp.total, 2 * 48 * 24 + 48 * 4 + 2 * (24 + 3) + 4 + 1);
  // Gated residual, rank 5: 2 x 36 x 5 + 36 x 3 per sublayer, heads 2 x 36 x 5.
  const ModelParameters gated = count_parameters(small_model(HyperConnections{kGatedResidual, 3, 5}, false)).value();
  EXPECT_EQ(gated.total().total - plain.total().total, 9 * (360 + 108) + 2 * 360);
}

TEST(HyperConnectionTest, CompareSaysWhoLeavesThemOut) {
  const Model model = small_model(HyperConnections{kManifold, 4, 0}, true);
  const Comparison comparison = compare_frameworks(model, 16, 1).value();
  const Int128 both = 6 * 16 * brute_force_fmas_per_token(HyperConnections{kManifold, 4, 0}, 12, true);
  for (const FrameworkCount& framework : comparison.frameworks) {
    SCOPED_TRACE(std::string(framework_name(framework.framework)));
    switch (framework.framework) {
      case Framework::kTrainflopsModel:
      case Framework::kTrainflopsExecuted: EXPECT_TRUE(framework.flops.has_value()); break;
      case Framework::kMegatronMain:
      case Framework::kMegatronDsaFix:
      case Framework::kMegatronBridge: {
        ASSERT_TRUE(framework.flops.has_value()) << framework.reason;
        Int128 left_out = 0;
        for (const ConventionDifference& difference : framework.differences) {
          if (difference.kind == ConventionKind::kHyperConnections || difference.kind == ConventionKind::kNgramMemory) {
            EXPECT_EQ(difference.choice, "not counted");
            left_out -= difference.flops;
          }
        }
        EXPECT_EQ(left_out, both);
        break;
      }
      case Framework::kMaxText:
        EXPECT_EQ(framework.reason, "MaxText has no hyper-connections outside its DeepSeek-V4 model");
        break;
      case Framework::kTorchtitan:
        EXPECT_EQ(framework.reason, "torchtitan has no model with hyper-connections or n-gram memory");
        break;
      case Framework::kNemoRl:
        EXPECT_EQ(framework.reason,
                  "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only; "
                  "hyper-connections and n-gram memory have no place in them");
        break;
      case Framework::kNemoAutomodel:
        EXPECT_EQ(framework.reason,
                  "NeMo Automodel counts hyper-connections and n-gram memory only in its DeepSeek-V4.1 and Qwen3.8 "
                  "functions");
        break;
    }
  }
}

// Megatron-LM's --enable-hyper-connections builds mHC over
// --num-residual-streams (default 4); megatron mode leaves it out, as
// Megatron-LM's function does.
TEST(HyperConnectionTest, MegatronFlags) {
  const std::vector<std::string> base = {"--num-layers", "2", "--hidden-size", "16", "--num-attention-heads", "2",
                                         "--ffn-hidden-size", "32", "--padded-vocab-size", "64", "--seq-length", "8"};
  const auto model_of = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), extra.begin(), extra.end());
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(argv);
    EXPECT_TRUE(parsed.ok()) << parsed.error().message();
    return model_from_megatron_flags(parsed.value()).value();
  };
  const Model plain = model_of({});
  const Model defaulted = model_of({"--enable-hyper-connections"});
  const Model three = model_of({"--enable-hyper-connections", "--num-residual-streams", "3"});
  EXPECT_EQ(plain.hyper_connections, std::nullopt);
  EXPECT_EQ(defaulted.hyper_connections, (HyperConnections{kManifold, 4, 0}));
  EXPECT_EQ(three.hyper_connections, (HyperConnections{kManifold, 3, 0}));
  EXPECT_EQ(model_of({"--num-residual-streams", "3"}).hyper_connections, std::nullopt);
  const Workload batch = Bshd{2, 8};
  EXPECT_EQ(count(three, batch, Mode::kMegatron).value().total.value,
            count(plain, batch, Mode::kMegatron).value().total.value);
  // 2 layers x 2 sublayers of 48 x 15 + 3 x 48 + 48 + 48 = 960, one head 48 x 3 + 48 = 192,
  // 16 tokens, x 6.
  EXPECT_EQ(exact_total(three, PackedDocuments{{8, 8}}, Mode::kModel) -
                exact_total(plain, PackedDocuments{{8, 8}}, Mode::kModel),
            6 * 16 * (4 * 960 + 192));
}

TEST(HyperConnectionTest, NativeConfig) {
  const auto config = [](const std::string& hc, const std::string& memory) {
    return R"({"hidden_size": 12, "vocab_size": 50, )" + hc +
           R"("mixers": {"a": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 3}},
      "channel_mixers": {"m": {"type": "mlp", "ffn_hidden_size": 20, "gated": true}},
      "layers": [{"mixer": "a", "channel_mixer": "m")" +
           memory + R"(}, {"mixer": "a", "channel_mixer": "m"}]})";
  };
  const Model model =
      parse_native_config(config(R"("hyper_connections": {"variant": "gated_residual", "streams": 3, "rank": 5}, )",
                                 R"(, "ngram_memory": {"embed_dim": 10, "conv_kernel": 3, "table_parameters": 99})"))
          .value();
  EXPECT_EQ(model.hyper_connections, (HyperConnections{kGatedResidual, 3, 5}));
  EXPECT_EQ(model.layers[0].ngram_memory, (NgramMemory{10, 3, 3, 99}));
  EXPECT_EQ(model.layers[1].ngram_memory, std::nullopt);
  EXPECT_EQ(parse_native_config(config("", R"(, "ngram_memory": {"embed_dim": 10, "conv_kernel": 0})"))
                .value()
                .layers[0]
                .ngram_memory,
            (NgramMemory{10, 1, 0, 0}));
  const std::vector<std::pair<std::string, std::string>> errors = {
      {config(R"("hyper_connections": {"variant": "mhc2", "streams": 4}, )", ""),
       "hyper_connections.variant = \"mhc2\": must be mhc or gated_residual"},
      {config(R"("hyper_connections": {"variant": "mhc", "streams": 0}, )", ""),
       "hyper_connections.streams = 0: must be a positive integer"},
      {config(R"("hyper_connections": {"variant": "mhc", "streams": 4, "rank": 8}, )", ""),
       "hyper_connections.rank = 8: applies to the gated_residual variant only"},
      {config(R"("hyper_connections": {"variant": "gated_residual", "streams": 4}, )", ""),
       "hyper_connections.rank = 0: must be a positive integer"},
      {config(R"("hyper_connections": {"variant": "mhc", "streams": 4, "width": 1}, )", ""),
       "hyper_connections.width: unknown key (this object takes rank, streams, variant)"},
      {config("", R"(, "ngram_memory": {"embed_dim": 0, "conv_kernel": 3})"),
       "layers[0].ngram_memory.embed_dim = 0: must be a positive integer"},
      {config("", R"(, "ngram_memory": {"embed_dim": 4, "conv_kernel": -1})"),
       "layers[0].ngram_memory.conv_kernel = -1: must be a non-negative integer"},
      {config("", R"(, "ngram_memory": {"embed_dim": 4, "conv_kernel": 1, "table_parameters": -2})"),
       "layers[0].ngram_memory.table_parameters = -2: must not be negative"},
  };
  for (const auto& [text, message] : errors) {
    EXPECT_EQ(parse_native_config(text).error().message(), message);
  }
  // A layer's memory built for other streams than the model's.
  Model mismatched = small_model(HyperConnections{kManifold, 4, 0}, true);
  Layer layer = mismatched.layers[1];
  layer.ngram_memory->streams = 2;
  mismatched.layers.set(1, layer);
  EXPECT_EQ(validate(mismatched).error().message(),
            "layers[1].ngram_memory.streams = 2: must equal the model's residual streams, 4 "
            "(hyper_connections.streams)");
  mismatched.hyper_connections.reset();
  EXPECT_EQ(validate(mismatched).error().message(),
            "layers[1].ngram_memory.streams = 2: must equal the model's residual streams, 1 "
            "(it has no hyper-connections)");
}

}  // namespace
}  // namespace trainflops
