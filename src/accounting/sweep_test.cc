#include "trainflops/sweep.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "trainflops/presets.h"
#include "trainflops/render.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

Model preset(const char* name) { return preset_model(find_preset(name).value()).value(); }
// GLM-5.2: the indexer shared by groups of 4 layers after the first 3.
Model glm52() { return preset("glm-5.2"); }

TEST(SweepTest, DenseAccountingGrowsWithContextWhileDsaStaysNearlyFlat) {
  const auto points = sweep(glm52(), {4096, 262144}, Mode::kMegatron).value();
  ASSERT_EQ(points.size(), 2u);
  // Per token, dense attention grows linearly with context; DSA's core is capped at top-k keys
  // (6.71 at 256K: the absorbed core costs more per pair than the expanded one).
  EXPECT_GT(points[1].dense_per_token / points[1].per_token, 6.5);
  EXPECT_LT(points[0].dense_per_token / points[0].per_token, 1.05);
  // The dense count is exactly the model with DSA replaced by MLA, and the
  // components add up to the per-token total.
  const Report dense = count(with_dense_attention(glm52()), Bshd{1, 262144}, Mode::kMegatron).value();
  EXPECT_DOUBLE_EQ(points[1].dense_per_token, dense.per_token);
  double sum = 0;
  for (double part : points[1].components) sum += part;
  EXPECT_NEAR(sum, points[1].per_token, 1e-12 * sum);
}

TEST(SweepTest, WithDenseAttentionKeepsTheRestOfTheModel) {
  const Model model = glm52();
  const Model dense = with_dense_attention(model);
  ASSERT_EQ(dense.layers.size(), model.layers.size());
  EXPECT_EQ(layer_kind(model.layers[3]), "dsa-shared+moe");
  EXPECT_EQ(layer_kind(dense.layers[3]), "mla+moe");
  EXPECT_EQ(layer_kind(dense.mtp_depths[0][0]), "mla+moe");
}

// Windows are sparse attention too: in model mode a windowed model's dense
// accounting is full causal attention; a dense model has no such column.
TEST(SweepTest, DenseColumnsOnlyWhereAttentionIsSparse) {
  Model windowed = preset("llama-3.1-8b");
  windowed.layers.edit_each([](Layer& layer) { std::get<GqaAttention>(*layer.mixer).window = 1024; });
  const Model dense = with_dense_attention(windowed);
  EXPECT_EQ(layer_kind(windowed.layers[0]), "swa+mlp");
  EXPECT_EQ(layer_kind(dense.layers[0]), "gqa+mlp");
  // 8192 tokens: full attention charges sum_i i pairs, a 1024-key window sum_i min(i, 1024).
  const auto points = sweep(windowed, {8192}, Mode::kModel).value();
  EXPECT_GT(points[0].dense_per_token, points[0].per_token);
  const std::string table = render_sweep(points, "windowed", Mode::kModel, Format::kTable);
  EXPECT_NE(table.find("  context  dense attn  this model  dense/this"), std::string::npos) << table;
  EXPECT_NE(table.find("every sliding window as full causal attention"), std::string::npos) << table;
  // Megatron-LM's count ignores windows: no difference, no column.
  const auto megatron = sweep(windowed, {8192}, Mode::kMegatron).value();
  EXPECT_EQ(megatron[0].dense_per_token, megatron[0].per_token);
  const std::string plain = render_sweep(megatron, "windowed", Mode::kMegatron, Format::kTable);
  EXPECT_NE(plain.find("  context  this model  core attn"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("dense"), std::string::npos) << plain;
}

// The streamed table (header, then a row per point) is render_sweep's table,
// and dense_differs decides its columns as render_sweep does from every point.
TEST(SweepTest, SweeperStreamsTheSameTable) {
  Model windowed = preset("llama-3.1-8b");
  windowed.layers.edit_each([](Layer& layer) { std::get<GqaAttention>(*layer.mixer).window = 1024; });
  struct Case {
    Model model;
    Mode mode;
    std::vector<std::int64_t> lengths;
    bool dense;
  };
  const Case cases[] = {
      {glm52(), Mode::kMegatron, {4096, 1, 262144}, true},
      {preset("llama-3.1-8b"), Mode::kModel, {4096, 8192}, false},  // nothing to make dense
      {windowed, Mode::kModel, {512, 1024, 8192}, true},            // differs past the window only
      {windowed, Mode::kModel, {512, 1024}, false},                 // no length past the window
      {windowed, Mode::kMegatron, {8192}, false},                   // Megatron-LM ignores windows
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lengths.back());
    const Sweeper sweeper = Sweeper::create(c.model, c.mode).value();
    ASSERT_EQ(sweeper.dense_differs(c.lengths).value(), c.dense);
    std::string streamed = sweep_table_header("m", c.mode, c.dense);
    for (std::int64_t length : c.lengths) append_sweep_row(streamed, sweeper.point(length).value(), c.dense);
    EXPECT_EQ(streamed, render_sweep(sweep(c.model, c.lengths, c.mode).value(), "m", c.mode, Format::kTable));
  }
}

TEST(SweepTest, ParseSeqLengths) {
  EXPECT_EQ(parse_seq_lengths("4k,32K,1m,100").value(), (std::vector<std::int64_t>{4096, 32768, 1048576, 100}));
  for (const char* bad : {"", "4k,", "0", "-4k", "4g", "k", "+5"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_seq_lengths(bad).ok());
  }
  EXPECT_EQ(parse_seq_lengths("4k,x").error().message(),
            "--seq-lengths: \"x\" is not a context length (a positive integer, optionally with k or m)");
}

TEST(SweepTest, Renders) {
  const auto points = sweep(glm52(), {4096}, Mode::kModel).value();
  const std::string table = render_sweep(points, "GLM-5", Mode::kModel, Format::kTable);
  EXPECT_NE(table.find("  context  dense attn  this model  dense/this  core attn"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(render_sweep(points, "GLM-5", Mode::kModel, Format::kJson));
  EXPECT_EQ(json["points"][0]["seq_length"], 4096);
  EXPECT_TRUE(json["points"][0]["components_per_token"].contains("indexer_scoring"));
  const std::string csv = render_sweep(points, "GLM-5", Mode::kModel, Format::kCsv);
  EXPECT_EQ(csv.rfind("seq_length,per_token,dense_per_token,dense_over_this,attention_projections,", 0), 0u);
}

// The table's group columns add up to the per-token total, executed-mode
// components (the router, the indexer's teacher) included.
TEST(SweepTest, GroupColumnsAddUpToTheTotal) {
  Model model = preset("deepseek-v3.2");
  ASSERT_TRUE(set_dsa_indexer_grad_mode(model, DsaIndexer::GradMode::kDetached).ok());
  const auto points = sweep(model, {4096}, Mode::kExecuted).value();
  const std::string table = render_sweep(points, "DeepSeek-V3.2", Mode::kExecuted, Format::kTable);
  std::istringstream row(table.substr(table.rfind("     4096")));
  double context = 0, dense = 0, total = 0, groups_sum = 0, group = 0;
  std::string ratio;
  row >> context >> dense >> total >> ratio;
  for (int column = 0; column < 5; ++column) {
    row >> group;
    groups_sum += group;
  }
  ASSERT_TRUE(row) << table;
  EXPECT_NEAR(groups_sum, total, 5 * 0.05 + 1e-9) << table;  // five columns rounded to 0.1
  EXPECT_NEAR(total, points[0].per_token / 1e9, 0.05);
}

TEST(PresetsTest, EveryPresetBuildsAndIsFound) {
  ASSERT_GE(presets().size(), 2u);
  for (const Preset& preset : presets()) {
    SCOPED_TRACE(preset.name);
    EXPECT_FALSE(preset.title.empty());
    EXPECT_FALSE(preset.source.empty());
    ASSERT_TRUE(preset_model(preset).ok()) << preset_model(preset).error().message();
    EXPECT_EQ(find_preset(preset.name).value().name, preset.name);
  }
  struct Unknown {
    const char* name;
    const char* message_start;  // the list of known names follows
  };
  const std::vector<Unknown> unknown = {
      {"glm-6", "preset = \"glm-6\": unknown; did you mean \"glm-5\"? (known: deepseek-v3, "},
      {"glm5", "preset = \"glm5\": unknown; did you mean \"glm-5\"? (known: deepseek-v3, "},
      {"kimi-k-2", "preset = \"kimi-k-2\": unknown; did you mean \"kimi-k2\"? (known: deepseek-v3, "},
      {"gpt-4", "preset = \"gpt-4\": unknown (known: deepseek-v3, "},
  };
  for (const Unknown& u : unknown) {
    const std::string message = find_preset(u.name).error().message();
    EXPECT_EQ(message.rfind(u.message_start, 0), 0u) << message;
  }
}

// The DSA presets' layer schedules, as released.
TEST(PresetsTest, DsaPresetsHoldTheirPublishedShapes) {
  EXPECT_EQ(summarize(preset("glm-5")),
            "GLM-5: 78 layers (3 dsa+mlp, 75 dsa+moe) + 1 MTP depth, hidden 6144, vocab 154880");
  const Model glm = glm52();
  EXPECT_EQ(summarize(glm),
            "GLM-5.2: 78 layers (3 dsa+mlp, 57 dsa-shared+moe, 18 dsa+moe) + 1 MTP depth, hidden 6144, vocab 154880");
  // topk_freq 4, offset 3: layers 1-3 and every 4th after layer 3 (7, 11, ...) run their indexer.
  std::vector<int> running;
  for (std::size_t i = 0; i < glm.layers.size(); ++i) {
    if (std::get<DsaAttention>(*glm.layers[i].mixer).runs_indexer) running.push_back(static_cast<int>(i + 1));
  }
  EXPECT_EQ(std::vector<int>(running.begin(), running.begin() + 6), (std::vector<int>{1, 2, 3, 7, 11, 15}));
  const auto& dsa = std::get<DsaAttention>(*glm.layers[0].mixer);
  EXPECT_EQ(dsa.indexer.topk, 2048);
  EXPECT_EQ(dsa.indexer.num_heads, 32);
  const Model v32 = preset("deepseek-v3.2");
  EXPECT_EQ(summarize(v32),
            "DeepSeek-V3.2: 61 layers (3 dsa+mlp, 58 dsa+moe) + 1 MTP depth, hidden 7168, vocab 129280");
}

}  // namespace
}  // namespace trainflops
