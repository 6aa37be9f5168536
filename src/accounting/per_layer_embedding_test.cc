// Per-layer embeddings (Gemma 4 E2B, E4B): hand-derived terms in each mode, a
// count against a loop that walks every product of the reference
// implementations (Transformers' Gemma 4, MaxText's gemma4_small) one
// multiply-add at a time, parameters, what compare says each framework
// counts, the native config and the rules.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "accounting/report_component.h"
#include "trainflops/compare.h"
#include "trainflops/count.h"
#include "trainflops/layer_flops.h"
#include "trainflops/native_config.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

TEST(PerLayerEmbeddingTest, HandDerivedTerms) {
  struct Case {
    std::int64_t h, p;
    Mode mode;
    Int128 forward_flops;  // 0: no term
  };
  // h = 64, p = 8: the model projection's slice 64 x 8 = 512, the gate 512,
  // the gate times the embedding 8, the projection back 8 x 64 = 512: 1544
  // multiply-adds. Gemma 4 E2B (h = 1536, p = 256): 3 x 393216 + 256 = 1179904.
  const std::vector<Case> cases = {
      {64, 8, Mode::kModel, 2 * 1544},
      {64, 8, Mode::kExecuted, 2 * 1544},
      {64, 8, Mode::kMegatron, 0},  // Megatron-LM's function has no such term
      {1536, 256, Mode::kModel, 2 * 1179904},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.h) + " x " + std::to_string(c.p) + " " + std::string(mode_name(c.mode)));
    const Terms terms =
        per_layer_embedding_terms(PerLayerEmbedding{.dim = c.p, .vocabulary = 100}, c.h, Convention{c.mode});
    if (c.forward_flops == 0) {
      EXPECT_TRUE(terms.empty());
      continue;
    }
    ASSERT_EQ(terms.size(), 1u);
    EXPECT_EQ(terms[0].component, Component::kPerLayerEmbedding);
    EXPECT_EQ(terms[0].per, kTokens);
    EXPECT_EQ(terms[0].executions, kTrainingExpansion);
    EXPECT_EQ(to_decimal(terms[0].forward_flops), to_decimal(c.forward_flops));
  }
}

constexpr std::int64_t kHidden = 12, kDim = 5, kVocabulary = 40;

// Four GQA + gated MLP layers (the third sliding-window); per-layer
// embeddings on every layer when `embedded`.
Model small_model(bool embedded) {
  Model model;
  model.hidden_size = kHidden;
  model.vocab_size = 50;
  const GqaAttention full{.num_heads = 4, .num_query_groups = 2, .head_dim = 3};
  GqaAttention sliding = full;
  sliding.window = 4;
  const ChannelMixer mlp = DenseMlp{20, true};
  const std::optional<PerLayerEmbedding> embedding =
      embedded ? std::optional(PerLayerEmbedding{.dim = kDim, .vocabulary = kVocabulary}) : std::nullopt;
  for (const GqaAttention& attention : {full, full, sliding, full}) {
    model.layers.push_back(Layer{.mixer = Mixer{attention}, .channel_mixer = mlp, .per_layer_embedding = embedding});
  }
  return model;
}

// Multiply-adds per token of the per-layer embeddings of `layers` layers, one
// at a time, as the reference modules run them: the model-level projection
// of the token's embedding to layers x p (h inputs per output), then in each
// layer the gate (h -> p), the gate times the layer's embedding, the
// projection back (p -> h).
Int128 brute_force_fmas_per_token(std::int64_t layers, std::int64_t h, std::int64_t p) {
  Int128 fmas = 0;
  for (std::int64_t out = 0; out < layers * p; ++out) {
    for (std::int64_t in = 0; in < h; ++in) ++fmas;
  }
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    for (std::int64_t out = 0; out < p; ++out) {
      for (std::int64_t in = 0; in < h; ++in) ++fmas;  // gate
    }
    for (std::int64_t d = 0; d < p; ++d) ++fmas;  // gate x embedding
    for (std::int64_t out = 0; out < h; ++out) {
      for (std::int64_t in = 0; in < p; ++in) ++fmas;  // projection back
    }
  }
  return fmas;
}

Int128 exact_total(const Model& model, const Workload& workload, Mode mode) {
  const Result<Report> report = count(model, workload, mode);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return *report.value().total.exact;
}

TEST(PerLayerEmbeddingTest, CountMatchesEveryProductWalkedOneByOne) {
  const Workload docs = PackedDocuments{{7, 1, 30}};
  const Int128 tokens = 38;
  const Model plain = small_model(false);
  const Model embedded = small_model(true);
  const Int128 expected = 2 * kTrainingExpansion * tokens * brute_force_fmas_per_token(4, kHidden, kDim);
  for (Mode mode : {Mode::kModel, Mode::kExecuted}) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    EXPECT_EQ(to_decimal(exact_total(embedded, docs, mode) - exact_total(plain, docs, mode)), to_decimal(expected));
  }
  // Megatron-LM's function has no term for them.
  EXPECT_EQ(count(embedded, docs, Mode::kMegatron).value().total.value,
            count(plain, docs, Mode::kMegatron).value().total.value);
  // The breakdown names them, in each layer's row.
  EXPECT_EQ(flops_of(count(embedded, docs, Mode::kModel).value(), Component::kPerLayerEmbedding), expected);
  EXPECT_EQ(component_name(Component::kPerLayerEmbedding), "per_layer_embedding");
}

TEST(PerLayerEmbeddingTest, Parameters) {
  const ModelParameters plain = count_parameters(small_model(false)).value();
  const ModelParameters with = count_parameters(small_model(true)).value();
  // Per layer: the slice of the model projection 12 x 5, the gate 12 x 5, the
  // projection back 5 x 12, the norm after it (12); the table's 40 x 5 rows
  // are looked up, so never active.
  const Int128 weights = 4 * (3 * 12 * 5), norms = 4 * 12, tables = 4 * 40 * 5;
  EXPECT_EQ(with.total().total - plain.total().total, weights + norms + tables);
  EXPECT_EQ(with.total().active - plain.total().active, weights + norms);
}

// MaxText's Gemma 4 small function charges the projections (the model-level
// one, each layer's gate and projection back) but not the gate's product with
// the embedding; Megatron-LM's functions charge nothing; the others have no
// such model.
TEST(PerLayerEmbeddingTest, CompareSaysWhatEachFrameworkCounts) {
  const Comparison comparison = compare_frameworks(small_model(true), 16, 1).value();
  const Int128 all = 6 * 16 * brute_force_fmas_per_token(4, kHidden, kDim);
  const Int128 products = 6 * 16 * 4 * kDim;  // the gate times the embedding, 4 layers
  for (const FrameworkCount& framework : comparison.frameworks) {
    SCOPED_TRACE(std::string(framework_name(framework.framework)));
    std::optional<ConventionDifference> difference;
    for (const ConventionDifference& d : framework.differences) {
      if (d.kind == ConventionKind::kPerLayerEmbedding) difference = d;
    }
    switch (framework.framework) {
      case Framework::kTrainflopsModel:
      case Framework::kTrainflopsExecuted:
        EXPECT_TRUE(framework.flops.has_value());
        EXPECT_FALSE(difference);
        break;
      case Framework::kMegatronMain:
      case Framework::kMegatronDsaFix:
      case Framework::kMegatronBridge:
        ASSERT_TRUE(framework.flops.has_value()) << framework.reason;
        ASSERT_TRUE(difference);
        EXPECT_EQ(difference->choice, "not counted");
        EXPECT_EQ(difference->flops, -all);
        break;
      case Framework::kMaxText:
        ASSERT_TRUE(framework.flops.has_value()) << framework.reason;
        ASSERT_TRUE(difference);
        EXPECT_EQ(difference->choice, "projections only");
        EXPECT_EQ(difference->flops, -products);
        break;
      case Framework::kTorchtitan:
        EXPECT_EQ(framework.reason, "torchtitan has no per-layer embeddings (Gemma 4 E2B, E4B)");
        break;
      case Framework::kNemoRl:
        EXPECT_EQ(framework.reason,
                  "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only; "
                  "per-layer embeddings have no place in them");
        break;
      case Framework::kNemoAutomodel:
        EXPECT_EQ(framework.reason.substr(0, framework.reason.find(':')),
                  "NeMo Automodel has no Gemma 4 formula (attention whose keys are its values or that reuses another "
                  "layer's keys and values, per-layer embeddings)");
        break;
    }
  }
}

// Gemma 4 E2B and E4B as MaxText's configs define them, at 4096 tokens:
// MaxText's own function (tests/data/compare/framework_functions.jsonl) and
// trainflops' model mode differ by exactly three conventions, worked out by
// hand here: the global layers' L^2/2 pairs (L/2 fewer than the exact
// L (L + 1)/2) at 2 x 8 heads x 512 per pair; the windows' area L W - W^2/2
// (W/2 = 256 pairs fewer than the exact sum of min(i, W)) at 2 x 8 x 256 per
// pair; the gate's product with the embedding (p = 256 per layer), left out.
// Each at 6 FLOPs per multiply-add in training.
TEST(PerLayerEmbeddingTest, Gemma4SmallAgainstMaxText) {
  struct Case {
    std::string config;
    Int128 maxtext;  // its function's number
    std::int64_t layers, global_layers;
  };
  const std::vector<Case> cases = {
      {"gemma-4-e2b-maxtext.json", 60259464904704, 35, 7},
      {"gemma-4-e4b-maxtext.json", 118705379868672, 42, 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config);
    std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/compare/" + c.config);
    std::stringstream text;
    text << in.rdbuf();
    const Result<Model> model = parse_native_config(text.str());
    ASSERT_TRUE(model.ok()) << model.error().message();
    const Comparison comparison = compare_frameworks(model.value(), 4096, 1).value();
    const Int128 causal = -6 * Int128{2048} * c.global_layers * (2 * 8 * 512);
    const Int128 windows = -6 * Int128{256} * (c.layers - c.global_layers) * (2 * 8 * 256);
    const Int128 products = -6 * Int128{4096} * c.layers * 256;
    EXPECT_EQ(to_decimal(comparison.model_flops), to_decimal(c.maxtext - causal - windows - products));
    for (const FrameworkCount& framework : comparison.frameworks) {
      if (framework.framework != Framework::kMaxText) continue;
      ASSERT_TRUE(framework.flops.has_value()) << framework.reason;
      EXPECT_EQ(to_decimal(*framework.flops), to_decimal(c.maxtext));
      ASSERT_EQ(framework.differences.size(), 3u);
      EXPECT_EQ(framework.differences[0].kind, ConventionKind::kCausalPairs);
      EXPECT_EQ(framework.differences[0].flops, causal);
      EXPECT_EQ(framework.differences[1].kind, ConventionKind::kSlidingWindows);
      EXPECT_EQ(framework.differences[1].flops, windows);
      EXPECT_EQ(framework.differences[2].kind, ConventionKind::kPerLayerEmbedding);
      EXPECT_EQ(framework.differences[2].flops, products);
    }
  }
}

TEST(PerLayerEmbeddingTest, NativeConfigAndRules) {
  const auto config = [](const std::string& embedding) {
    return R"({"hidden_size": 12, "vocab_size": 50,
      "mixers": {"a": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 3}},
      "channel_mixers": {"m": {"type": "mlp", "ffn_hidden_size": 20, "gated": true}},
      "layers": [{"mixer": "a", "channel_mixer": "m")" +
           embedding + R"(}, {"mixer": "a", "channel_mixer": "m"}]})";
  };
  const Model model = parse_native_config(config(R"(, "per_layer_embedding": {"dim": 5, "vocabulary": 40})")).value();
  EXPECT_EQ(model.layers[0].per_layer_embedding, (PerLayerEmbedding{.dim = 5, .vocabulary = 40}));
  EXPECT_EQ(model.layers[1].per_layer_embedding, std::nullopt);
  const std::vector<std::pair<std::string, std::string>> errors = {
      {config(R"(, "per_layer_embedding": {"dim": 0, "vocabulary": 40})"),
       "layers[0].per_layer_embedding.dim = 0: must be a positive integer"},
      {config(R"(, "per_layer_embedding": {"dim": 5, "vocabulary": -1})"),
       "layers[0].per_layer_embedding.vocabulary = -1: must be a positive integer"},
      {config(R"(, "per_layer_embedding": {"dim": 5})"), "layers[0].per_layer_embedding.vocabulary is missing"},
      {config(R"(, "per_layer_embedding": {"dim": 5, "vocabulary": 40, "tables": 2})"),
       "layers[0].per_layer_embedding.tables: unknown key (this object takes dim, vocabulary)"},
  };
  for (const auto& [text, message] : errors) {
    const Result<Model> parsed = parse_native_config(text);
    ASSERT_FALSE(parsed.ok()) << message;
    EXPECT_EQ(parsed.error().message(), message);
  }
}

}  // namespace
}  // namespace trainflops
