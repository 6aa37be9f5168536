// Block-sparse grouped-query attention against a count made by walking every
// query, key, head and weight matrix of a one-layer model, and its rules.
#include <gtest/gtest.h>

#include <vector>

#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

constexpr std::int64_t kHidden = 16, kVocab = 50;

BlockSparseAttention small_layer() {
  BlockSparseAttention a;
  a.attention.num_heads = 4;
  a.attention.num_query_groups = 2;
  a.attention.head_dim = 8;
  a.indexer_num_heads = 2;
  a.indexer_head_dim = 4;
  a.block_size = 4;
  a.topk_blocks = 3;
  a.init_blocks = 1;
  return a;
}

Model one_layer(const Mixer& mixer) {
  Model model;
  model.hidden_size = kHidden;
  model.vocab_size = kVocab;
  model.layers.push_back(Layer{mixer, std::nullopt});
  return model;
}

// One iteration's FLOPs over `lengths`, multiply-add by multiply-add: the
// query, key, value and output projections and the logits train (x3), the
// core attention trains over the keys of the selected blocks (the query's own
// up to itself, then the first blocks), the indexer runs forward once.
Int128 brute_force(const BlockSparseAttention& a, const std::vector<std::int64_t>& lengths) {
  const std::int64_t n = a.attention.num_heads, g = a.attention.num_query_groups, d = *a.attention.head_dim;
  Int128 trained = 0, forward_only = 0;
  for (const std::int64_t length : lengths) {
    for (std::int64_t query = 1; query <= length; ++query) {
      for (std::int64_t out = 0; out < n * d + 2 * g * d; ++out) trained += kHidden;  // q, k, v
      for (std::int64_t out = 0; out < kHidden; ++out) trained += n * d;              // o
      for (std::int64_t out = 0; out < kVocab; ++out) trained += kHidden;             // logits
      for (std::int64_t out = 0; out < (a.indexer_num_heads + 1) * a.indexer_head_dim; ++out) forward_only += kHidden;
      const std::int64_t own = (query - 1) / a.block_size;
      for (std::int64_t key = 1; key <= query; ++key) {
        for (std::int64_t head = 0; head < a.indexer_num_heads; ++head) forward_only += a.indexer_head_dim;
        const std::int64_t block = (key - 1) / a.block_size;
        if (block != own && block >= a.topk_blocks - 1) continue;
        for (std::int64_t head = 0; head < n; ++head) trained += 2 * d;  // q.k and p v
      }
    }
  }
  return 2 * (3 * trained + forward_only);
}

TEST(BlockSparseAttentionTest, CountsEveryMultiplyAddOfTheSelectedBlocks) {
  const BlockSparseAttention layer = small_layer();
  // Below, at and above one block and the K blocks, in one batch and alone.
  const std::vector<std::vector<std::int64_t>> batches = {{1}, {3}, {4}, {5}, {12}, {13}, {40}, {0, 7, 12, 13, 31}};
  for (const auto& lengths : batches) {
    SCOPED_TRACE("L = " + std::to_string(lengths.back()));
    for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
      const Result<Report> counted = count(one_layer(layer), PackedDocuments{lengths}, mode);
      ASSERT_TRUE(counted.ok()) << counted.error().message();
      EXPECT_EQ(to_decimal(*counted.value().total.exact), to_decimal(brute_force(layer, lengths)));
    }
  }
}

// Megatron-LM has no block-sparse attention: megatron mode counts the
// grouped-query attention it is built on.
TEST(BlockSparseAttentionTest, MegatronModeCountsItsGroupedQueryAttention) {
  const BlockSparseAttention layer = small_layer();
  for (const std::int64_t length : {5, 40}) {
    const Workload batch = Bshd{3, length};
    EXPECT_EQ(count(one_layer(layer), batch, Mode::kMegatron).value().total.value,
              count(one_layer(layer.attention), batch, Mode::kMegatron).value().total.value);
  }
}

TEST(BlockSparseAttentionTest, RulesNameTheFieldAndValue) {
  const struct {
    void (*edit)(BlockSparseAttention&);
    std::string message;
  } cases[] = {
      {[](BlockSparseAttention& a) { a.init_blocks = 3; },
       "layers[0].mixer.init_blocks = 3: must be less than topk_blocks = 3 (the query's own block is attended too)"},
      {[](BlockSparseAttention& a) { a.block_size = 0; }, "layers[0].mixer.block_size = 0: must be a positive integer"},
      {[](BlockSparseAttention& a) { a.attention.window = 128; },
       "layers[0].mixer.attention.window = 128: block-sparse attention selects its keys by blocks"},
      {[](BlockSparseAttention& a) { a.attention.num_query_groups = 3; },
       "layers[0].mixer.attention.num_query_groups = 3: must divide num_heads = 4"},
  };
  for (const auto& c : cases) {
    BlockSparseAttention layer = small_layer();
    c.edit(layer);
    const Status status = validate(one_layer(layer));
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(), c.message);
  }
}

TEST(BlockSparseAttentionTest, ReadsFromTheNativeConfig) {
  const Result<Model> model = parse_native_config(R"({"hidden_size": 16, "vocab_size": 50,
    "mixers": {"sparse": {"type": "block_sparse", "num_heads": 4, "num_query_groups": 2, "head_dim": 8,
               "indexer_num_heads": 2, "indexer_head_dim": 4, "block_size": 4, "topk_blocks": 3, "init_blocks": 1}},
    "layers": [{"mixer": "sparse"}]})");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model.value().layers[0], one_layer(small_layer()).layers[0]);
  EXPECT_EQ(layer_kind(model.value().layers[0]), "block-sparse");
}

}  // namespace
}  // namespace trainflops
