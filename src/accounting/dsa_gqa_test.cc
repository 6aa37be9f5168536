// DSA over grouped-query attention against a count made by walking every
// query, key, head and weight matrix of a one-layer model, in model and
// executed modes and every grad mode; what megatron mode counts; its rules and
// its native config.
#include <gtest/gtest.h>

#include <vector>

#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

constexpr std::int64_t kHidden = 16, kVocab = 50;
using GradMode = DsaIndexer::GradMode;

DsaGqaAttention small_layer(GradMode grad_mode = GradMode::kOff) {
  DsaGqaAttention a;
  a.attention.num_heads = 4;
  a.attention.num_query_groups = 2;
  a.attention.head_dim = 8;
  a.indexer.num_heads = 3;
  a.indexer.head_dim = 4;
  a.indexer.topk = 5;
  a.indexer.grad_mode = grad_mode;
  return a;
}

Model one_layer(const Mixer& mixer) {
  Model model;
  model.hidden_size = kHidden;
  model.vocab_size = kVocab;
  model.layers.push_back(Layer{mixer, std::nullopt});
  return model;
}

// One iteration's FLOPs over `lengths`, multiply-add by multiply-add. The
// query, key, value and output projections, the logits and the core attention
// over the k keys a query selects (all of them below k) train (x3). The
// indexer projects nh queries, one key and nh head weights from the hidden
// state and scores every earlier key (and the query itself) with each head;
// how often each runs depends on the grad mode: off, forward only; detached
// and sparse, projections forward and weight gradient (x2), full x3; the
// scores' backward (x2) over every causal pair (detached, full) or the
// selected ones (sparse). Executed: each score also weights the heads (nh per
// pair), and a trained indexer's KL target computes the main attention's
// logits (n d per pair, forward only) over the pairs its backward covers.
Int128 brute_force(const DsaGqaAttention& a, const std::vector<std::int64_t>& lengths, bool executed) {
  const std::int64_t n = a.attention.num_heads, g = a.attention.num_query_groups, d = *a.attention.head_dim;
  const std::int64_t nh = a.indexer.num_heads, hd = a.indexer.head_dim, k = *a.indexer.topk;
  const GradMode mode = a.indexer.grad_mode;
  const int projection_runs = mode == GradMode::kOff ? 1 : mode == GradMode::kFull ? 3 : 2;
  Int128 fmas = 0;
  for (const std::int64_t length : lengths) {
    for (std::int64_t query = 1; query <= length; ++query) {
      for (std::int64_t out = 0; out < n * d + 2 * g * d; ++out) fmas += 3 * kHidden;  // q, k, v
      for (std::int64_t out = 0; out < kHidden; ++out) fmas += 3 * n * d;              // o
      for (std::int64_t out = 0; out < kVocab; ++out) fmas += 3 * kHidden;             // logits
      if (a.runs_indexer) {
        for (std::int64_t out = 0; out < nh * hd + hd + nh; ++out) fmas += projection_runs * kHidden;
      }
      for (std::int64_t key = 1; key <= query; ++key) {
        // Any k of the query's keys: the selection decides which, not how many.
        const bool selected = key > query - k;
        if (selected) {
          for (std::int64_t head = 0; head < n; ++head) fmas += 3 * 2 * d;  // q.k and p v
        }
        if (!a.runs_indexer) continue;
        Int128 score = 0;
        for (std::int64_t head = 0; head < nh; ++head) score += hd + (executed ? 1 : 0);
        fmas += score;
        const bool backward = mode == GradMode::kDetached || mode == GradMode::kFull ||
                              (mode == GradMode::kSparse && selected);
        if (backward) {
          fmas += 2 * score;
          if (executed) fmas += n * d;  // the teacher's logits
        }
      }
    }
  }
  return 2 * fmas;
}

TEST(DsaGqaAttentionTest, CountsEveryMultiplyAddOfTheSelectedKeys) {
  // Below, at and above k, in one batch and alone.
  const std::vector<std::vector<std::int64_t>> batches = {{1}, {4}, {5}, {6}, {23}, {0, 3, 5, 6, 17}};
  for (const GradMode grad_mode : {GradMode::kOff, GradMode::kDetached, GradMode::kSparse, GradMode::kFull}) {
    for (const bool runs_indexer : {true, false}) {
      DsaGqaAttention layer = small_layer(grad_mode);
      layer.runs_indexer = runs_indexer;
      for (const auto& lengths : batches) {
        SCOPED_TRACE(std::string(grad_mode_name(grad_mode)) + (runs_indexer ? "" : ", shared") +
                     ", L = " + std::to_string(lengths.back()));
        for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
          const Result<Report> counted = count(one_layer(layer), PackedDocuments{lengths}, mode);
          ASSERT_TRUE(counted.ok()) << counted.error().message();
          EXPECT_EQ(to_decimal(*counted.value().total.exact),
                    to_decimal(brute_force(layer, lengths, mode == Mode::kExecuted)));
        }
      }
    }
  }
}

// Megatron-LM's hybrid function reads no `D` layer of this kind: the layer is
// in the breakdown with nothing counted. Its transformer function counts
// every layer as dense grouped-query attention.
TEST(DsaGqaAttentionTest, MegatronModeCountsWhatMegatronLmsFunctionsCount) {
  const DsaGqaAttention layer = small_layer(GradMode::kDetached);
  const Workload batch = Bshd{3, 40};
  Model hybrid = one_layer(layer);
  hybrid.megatron_path = MegatronPath::kHybrid;
  const Report report = count(hybrid, batch, Mode::kMegatron).value();
  EXPECT_EQ(report.total.value, 2.0 * 3 * kHidden * kVocab * 3 * 40);  // the logits alone
  ASSERT_EQ(report.layers.size(), 2u);
  EXPECT_EQ(report.layers[0].kind, "dsa-gqa");
  EXPECT_EQ(report.layers[0].flops.value, 0.0);
  EXPECT_EQ(count(one_layer(layer), batch, Mode::kMegatron).value().total.value,
            count(one_layer(layer.attention), batch, Mode::kMegatron).value().total.value);
}

// Beside its grouped-query attention the layer has the indexer's q (h x nh hd),
// k (h x hd) and head-weight (h x nh) projections and its keys' LayerNorm
// (2 hd); a layer that reuses another's selection has no indexer.
TEST(DsaGqaAttentionTest, ParametersAreTheAttentionsAndTheIndexers) {
  const DsaGqaAttention layer = small_layer();
  const auto total = [](const Mixer& mixer) {
    return count(one_layer(mixer), Bshd{1, 8}, Mode::kModel).value().parameters->total;
  };
  EXPECT_EQ(to_decimal(total(layer) - total(layer.attention)), to_decimal(16 * 12 + 16 * 4 + 16 * 3 + 2 * 4));
  DsaGqaAttention shared = layer;
  shared.runs_indexer = false;
  EXPECT_EQ(to_decimal(total(shared)), to_decimal(total(layer.attention)));
}

TEST(DsaGqaAttentionTest, ModelModeNeedsATopK) {
  DsaGqaAttention layer = small_layer();
  layer.indexer.topk = std::nullopt;
  const Result<Report> counted = count(one_layer(layer), Bshd{1, 8}, Mode::kModel);
  ASSERT_FALSE(counted.ok());
  EXPECT_EQ(counted.error().message(),
            "layers[0].mixer.indexer.topk is missing: model mode counts the keys a DSA layer selects (only megatron "
            "mode counts a layer without a top-k, as Megatron-LM's function does: every causal pair)");
}

TEST(DsaGqaAttentionTest, RulesNameTheFieldAndValue) {
  const struct {
    void (*edit)(DsaGqaAttention&);
    std::string message;
  } cases[] = {
      {[](DsaGqaAttention& a) { a.attention.window = 128; },
       "layers[0].mixer.attention.window = 128: DSA over grouped-query attention attends the keys its indexer "
       "selects"},
      {[](DsaGqaAttention& a) { a.attention.chunk = 64; },
       "layers[0].mixer.attention.chunk = 64: DSA over grouped-query attention attends the keys its indexer selects"},
      {[](DsaGqaAttention& a) { a.attention.key_is_value = true; },
       "layers[0].mixer.attention.key_is_value = 1: DSA over grouped-query attention projects its own keys and "
       "values"},
      {[](DsaGqaAttention& a) { a.attention.head_dim = std::nullopt; },
       "layers[0].mixer.attention.head_dim = 0: is required for DSA over grouped-query attention"},
      {[](DsaGqaAttention& a) { a.attention.num_query_groups = 3; },
       "layers[0].mixer.attention.num_query_groups = 3: must divide num_heads = 4"},
      {[](DsaGqaAttention& a) { a.indexer.pool_size = 2; },
       "layers[0].mixer.indexer.pool_size = 2: must be 1: KPool is DSA's over MLA; DSA over grouped-query attention "
       "has none"},
      {[](DsaGqaAttention& a) { a.indexer.num_heads = 0; },
       "layers[0].mixer.indexer.num_heads = 0: must be a positive integer"},
      {[](DsaGqaAttention& a) { a.indexer.topk = 0; }, "layers[0].mixer.indexer.topk = 0: must be a positive integer"},
  };
  for (const auto& c : cases) {
    DsaGqaAttention layer = small_layer();
    c.edit(layer);
    const Status status = validate(one_layer(layer));
    ASSERT_FALSE(status.ok()) << c.message;
    EXPECT_EQ(status.error().message(), c.message);
  }
}

TEST(DsaGqaAttentionTest, ReadsFromTheNativeConfig) {
  const Result<Model> model = parse_native_config(R"({"hidden_size": 16, "vocab_size": 50,
    "mixers": {"sparse": {"type": "dsa_gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8,
               "indexer": {"num_heads": 3, "head_dim": 4, "topk": 5, "grad_mode": "sparse"}},
               "shared": {"type": "dsa_gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8,
               "indexer": {"num_heads": 3, "head_dim": 4, "topk": 5, "grad_mode": "sparse"}, "reuses_topk": true}},
    "layers": [{"mixer": "sparse"}, {"mixer": "shared"}]})");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model.value().layers[0], one_layer(small_layer(GradMode::kSparse)).layers[0]);
  EXPECT_EQ(layer_kind(model.value().layers[0]), "dsa-gqa");
  EXPECT_EQ(layer_kind(model.value().layers[1]), "dsa-gqa-shared");
}

}  // namespace
}  // namespace trainflops
