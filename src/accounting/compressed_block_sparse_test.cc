// Qwen3.8's sparse attention (QSA) in the exact modes, against per-query
// loops over each document's keys and blocks; and the rules of its
// description.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "accounting/report_component.h"
#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

using nlohmann::json;

// Query i sees the complete blocks ending at or before it (block b holds
// keys (b-1)r+1 .. br) and attends the keys of budget / r of them (any: the
// count is the same) and every key after the last complete block.
TEST(CompressedBlockSparseAttentionTest, ExactModesMatchPerQueryLoops) {
  std::mt19937_64 rng(38);
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t h = 8, n = pick(1, 4), g = n % 2 == 0 ? 2 : 1, head_dim = pick(1, 8);
    const std::int64_t nh = pick(1, 4), kh = pick(1, 2), hd = pick(1, 8), r = pick(1, 6);
    const std::int64_t budget = r * pick(1, 8);
    const bool gate = pick(0, 1) == 1;
    const json a = {{"type", "qsa"},           {"num_heads", n},         {"num_query_groups", g},
                    {"head_dim", head_dim},    {"output_gate", gate},    {"indexer_num_heads", nh},
                    {"indexer_key_heads", kh}, {"indexer_head_dim", hd}, {"block_size", r},
                    {"budget", budget}};
    const json config = {
        {"hidden_size", h}, {"vocab_size", 10}, {"mixers", {{"a", a}}}, {"layers", {{{"mixer", "a"}}}}};
    SCOPED_TRACE(config.dump());
    const Result<Model> model = parse_native_config(config.dump());
    ASSERT_TRUE(model.ok()) << model.error().message();
    const std::vector<std::int64_t> docs = {1, static_cast<std::int64_t>(rng() % 300),
                                            static_cast<std::int64_t>(rng() % 40)};
    Int128 projections = 0, core = 0, indexer_projections = 0, scoring = 0;
    const Int128 q = n * head_dim, kv = g * head_dim;
    for (std::int64_t length : docs) {
      for (std::int64_t i = 1; i <= length; ++i) {
        projections += 6 * (h * (q + 2 * kv + (gate ? q : 0)) + q * h);
        std::int64_t blocks = 0;
        for (std::int64_t end = r; end <= i; end += r) ++blocks;
        for (std::int64_t key = 1; key <= i; ++key) {
          const std::int64_t block = (key - 1) / r;  // 0-based; complete when block < blocks
          const bool attended = block >= blocks || block < budget / r;
          core += attended ? 6 * 2 * q : 0;
        }
        indexer_projections += 2 * h * (nh + kh) * hd;
        scoring += 2 * blocks * nh * hd;
      }
    }
    for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
      const Report report = count(model.value(), PackedDocuments{docs}, mode).value();
      EXPECT_EQ(to_decimal(flops_of(report, Component::kAttentionProjections)), to_decimal(projections));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kCoreAttention)), to_decimal(core));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kIndexerProjections)), to_decimal(indexer_projections));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kIndexerScoring)), to_decimal(scoring));
    }
  }
}

TEST(CompressedBlockSparseAttentionTest, InvalidDescriptions) {
  const json base = {{"type", "qsa"},         {"num_heads", 2},         {"num_query_groups", 1},
                     {"head_dim", 8},         {"indexer_num_heads", 2}, {"indexer_key_heads", 1},
                     {"indexer_head_dim", 4}, {"block_size", 4},        {"budget", 8}};
  struct Case {
    json changes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"budget", 6}}, "layers[0].mixer.budget = 6: must be a multiple of block_size = 4"},
      {{{"block_size", 0}}, "layers[0].mixer.block_size = 0: must be a positive integer"},
      {{{"indexer_key_heads", 0}}, "layers[0].mixer.indexer_key_heads = 0: must be a positive integer"},
      {{{"window", 16}}, "layers[0].mixer.attention.window = 16: QSA selects its keys by blocks"},
  };
  for (const Case& c : cases) {
    json a = base;
    a.update(c.changes);
    const json config = {
        {"hidden_size", 8}, {"vocab_size", 10}, {"mixers", {{"a", a}}}, {"layers", {{{"mixer", "a"}}}}};
    const Result<Model> model = parse_native_config(config.dump());
    ASSERT_FALSE(model.ok()) << c.message;
    EXPECT_EQ(model.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
