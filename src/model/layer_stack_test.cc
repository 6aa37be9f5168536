#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/layer_stack_builder.h"
#include "trainflops/count.h"
#include "trainflops/model.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

Layer mlp(std::int64_t width) { return Layer{std::nullopt, DenseMlp{width, true}}; }

// The widths of the MLP layers at every position, read one by one.
std::vector<std::int64_t> widths(const LayerStack& stack) {
  std::vector<std::int64_t> out;
  for (const Layer& layer : stack) out.push_back(std::get<DenseMlp>(*layer.channel_mixer).ffn_hidden_size);
  return out;
}

TEST(LayerStackTest, HoldsEachDistinctLayerOnceAndTheOrderAsRuns) {
  struct Case {
    std::vector<std::pair<std::int64_t, std::int64_t>> appended;  // width, count
    std::vector<std::int64_t> positions;
    std::size_t distinct;
    std::vector<std::pair<std::size_t, std::int64_t>> runs;  // distinct index, count
  };
  const std::vector<Case> cases = {
      {{{8, 1}}, {8}, 1, {{0, 1}}},
      {{{8, 3}}, {8, 8, 8}, 1, {{0, 3}}},
      {{{8, 1}, {8, 2}}, {8, 8, 8}, 1, {{0, 3}}},
      {{{8, 1}, {16, 1}, {8, 2}}, {8, 16, 8, 8}, 2, {{0, 1}, {1, 1}, {0, 2}}},
      {{{8, 2}, {16, 1}, {24, 1}, {16, 1}}, {8, 8, 16, 24, 16}, 3, {{0, 2}, {1, 1}, {2, 1}, {1, 1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.positions));
    LayerStack stack;
    for (const auto& [width, count] : c.appended) stack.append(mlp(width), count);
    EXPECT_EQ(widths(stack), c.positions);
    ASSERT_EQ(stack.size(), c.positions.size());
    for (std::size_t i = 0; i < c.positions.size(); ++i) {
      EXPECT_EQ(std::get<DenseMlp>(*stack[i].channel_mixer).ffn_hidden_size, c.positions[i]) << "position " << i;
    }
    EXPECT_EQ(stack.distinct().size(), c.distinct);
    ASSERT_EQ(stack.runs().size(), c.runs.size());
    std::int64_t start = 0;
    for (std::size_t r = 0; r < c.runs.size(); ++r) {
      EXPECT_EQ(stack.runs()[r].layer, c.runs[r].first);
      EXPECT_EQ(stack.runs()[r].count, c.runs[r].second);
      EXPECT_EQ(stack.runs()[r].start, start);
      start += c.runs[r].second;
    }
  }
}

TEST(LayerStackTest, EqualWhenThePositionsAreEqualHoweverStored) {
  LayerStack appended;
  appended.append(mlp(8), 2);
  appended.append(mlp(16));
  LayerStack again;  // a duplicate distinct layer, appended by index
  again.append(mlp(8));
  LayerStackBuilder::append_again(again, 0);
  again.append(mlp(16));
  EXPECT_EQ(appended, again);
  EXPECT_EQ(appended, LayerStack({mlp(8), mlp(8), mlp(16)}));
  EXPECT_FALSE(appended == LayerStack({mlp(8), mlp(16), mlp(16)}));
  EXPECT_FALSE(appended == LayerStack({mlp(8), mlp(8)}));
}

TEST(LayerStackTest, SetChangesOnePositionEditEachEveryOne) {
  LayerStack stack;
  stack.append(mlp(8), 5);
  stack.set(2, mlp(16));
  EXPECT_EQ(widths(stack), (std::vector<std::int64_t>{8, 8, 16, 8, 8}));
  EXPECT_EQ(stack.runs().size(), 3u);
  EXPECT_EQ(stack.distinct().size(), 2u);
  stack.edit_each([](Layer& layer) { std::get<DenseMlp>(*layer.channel_mixer).ffn_hidden_size *= 2; });
  EXPECT_EQ(widths(stack), (std::vector<std::int64_t>{16, 16, 32, 16, 16}));
}

// Validation checks each distinct layer at its first run, which relies on
// distinct() following the first positions, whatever built the stack.
TEST(LayerStackTest, DistinctLayersFollowTheirFirstPositions) {
  LayerStack stack({mlp(8), mlp(16), mlp(8), mlp(32)});
  stack.set(0, mlp(64));
  LayerStackBuilder::append_again(stack, 1);
  stack.append(mlp(16));
  std::vector<std::int64_t> distinct;
  for (const Layer& layer : stack.distinct())
    distinct.push_back(std::get<DenseMlp>(*layer.channel_mixer).ffn_hidden_size);
  EXPECT_EQ(distinct, (std::vector<std::int64_t>{64, 16, 8, 32}));
  EXPECT_EQ(widths(stack), (std::vector<std::int64_t>{64, 16, 8, 32, 16, 16}));
}

// A config's `repeat` is one run: the model holds one layer whatever the
// count, and counts as that many layers (2 FLOPs per FMA, x3 for training).
TEST(LayerStackTest, RepeatIsOneRunOfOneLayer) {
  for (const std::int64_t repeat : {1, 7, 100000}) {
    SCOPED_TRACE(repeat);
    const Result<Model> model = parse_native_config(
        R"({"hidden_size": 64, "vocab_size": 100, "channel_mixers": {"m": {"type": "mlp", "ffn_hidden_size": 256}},
            "layers": [{"channel_mixer": "m", "repeat": )" +
        std::to_string(repeat) + "}]}");
    ASSERT_TRUE(model.ok()) << model.error().message();
    EXPECT_EQ(model.value().layers.size(), static_cast<std::size_t>(repeat));
    EXPECT_EQ(model.value().layers.distinct().size(), 1u);
    EXPECT_EQ(model.value().layers.runs().size(), 1u);
    const Result<FlopsCounter> counter = FlopsCounter::create(model.value(), Mode::kModel);
    ASSERT_TRUE(counter.ok()) << counter.error().message();
    const std::int64_t tokens = 1000;
    const Int128 per_token = Int128{6} * (repeat * 2 * 64 * 256 + 64 * 100);
    EXPECT_EQ(to_decimal(*counter.value().total(Bshd{1, tokens}).value().exact), to_decimal(per_token * tokens));
  }
}

}  // namespace
}  // namespace trainflops
