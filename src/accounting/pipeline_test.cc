#include "trainflops/pipeline.h"

#include <gtest/gtest.h>

#include "trainflops/megatron_args.h"

namespace trainflops {
namespace {

Model model_from(const std::string& args_json) {
  const Result<ParsedMegatronArgs> args = parse_megatron_args_json(args_json);
  if (!args.ok()) ADD_FAILURE() << args.error().message();
  const Result<Model> model = args.ok() ? model_from_megatron_args(args.value().args) : Result<Model>(Model{});
  if (!model.ok()) ADD_FAILURE() << model.error().message();
  return model.ok() ? model.value() : Model{};
}

// 8 dense GQA layers and one MTP depth.
const char* const kEightLayers = R"({"num_layers": 8, "hidden_size": 64, "ffn_hidden_size": 256,
  "num_attention_heads": 4, "kv_channels": 16, "padded_vocab_size": 1000, "mtp_num_layers": 1})";
// The same with two MTP depths.
const char* const kTwoMtpDepths = R"({"num_layers": 8, "hidden_size": 64, "ffn_hidden_size": 256,
  "num_attention_heads": 4, "kv_channels": 16, "padded_vocab_size": 1000, "mtp_num_layers": 2})";
// A hybrid pattern with its own stages: 2 | 3 | 1 layers.
const char* const kHybridStages = R"({"num_layers": 6, "hidden_size": 64, "ffn_hidden_size": 256,
  "num_attention_heads": 4, "kv_channels": 16, "padded_vocab_size": 1000, "hybrid_layer_pattern": "M*|-M*|-",
  "mamba_state_dim": 16, "mamba_head_dim": 16, "mamba_num_groups": 2, "mamba_num_heads": 8})";

PipelineSplit megatron_layout(std::int64_t stages, std::string layout) {
  PipelineSplit split;
  split.stages = stages;
  split.layout = std::move(layout);
  return split;
}

std::vector<std::int64_t> decoder_layers_of(const PipelineLayout& layout) {
  std::vector<std::int64_t> layers;
  for (const PipelineChunk& chunk : layout.chunks) layers.push_back(chunk.decoder_layers);
  return layers;
}

TEST(PipelineTest, Layouts) {
  struct Case {
    const char* model;
    PipelineSplit split;
    std::vector<std::int64_t> stage_layers;
    std::string origin;
  };
  const std::vector<Case> cases = {
      {kEightLayers, {}, {}, ""},
      {kEightLayers, {1, std::nullopt, std::nullopt}, {8}, "pipeline_stages 1, even split"},
      {kEightLayers, {4, std::nullopt, std::nullopt}, {2, 2, 2, 2}, "pipeline_stages 4, even split"},
      {kEightLayers, {3, 2, std::nullopt}, {2, 3, 3}, "pipeline_stages 3, first stage 2 layers"},
      {kEightLayers, {3, std::nullopt, 0}, {4, 4, 0}, "pipeline_stages 3, last stage 0 layers"},
      {kEightLayers, {3, 1, 1}, {1, 6, 1}, "pipeline_stages 3, first stage 1 layers, last stage 1 layers"},
      {kEightLayers, {2, 3, 5}, {3, 5}, "pipeline_stages 2, first stage 3 layers, last stage 5 layers"},
      {kHybridStages, {}, {2, 3, 1}, "hybrid_layer_pattern '|', 3 stages"},
      {kHybridStages, {3, std::nullopt, std::nullopt}, {2, 3, 1}, "hybrid_layer_pattern '|', 3 stages"},
      {kEightLayers, {2, std::nullopt, std::nullopt, 2}, {2, 2, 2, 2}, "pipeline_stages 2 x 2 virtual stages"},
      {kEightLayers,
       megatron_layout(2, "Et|tt|t|ttt|t,m|L"),
       {1, 2, 1, 3, 1, 0},
       "pipeline_model_parallel_layout, 2 stages x 3 chunks"},
      {kEightLayers, megatron_layout(1, "E(tt)*4mL"), {8}, "pipeline_model_parallel_layout, 1 stages x 1 chunks"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << c.model << " stages " << c.split.stages.value_or(-1));
    const Result<PipelineLayout> layout = pipeline_layout(model_from(c.model), c.split);
    ASSERT_TRUE(layout.ok()) << layout.error().message();
    EXPECT_EQ(decoder_layers_of(layout.value()), c.stage_layers);
    EXPECT_EQ(layout.value().origin, c.origin);
  }
}

TEST(PipelineTest, LayoutErrors) {
  struct Case {
    const char* model;
    PipelineSplit split;
    std::string message;
  };
  const std::vector<Case> cases = {
      {kEightLayers, {0, std::nullopt, std::nullopt}, "pipeline_stages = 0: must be a positive integer"},
      {kEightLayers,
       {3, std::nullopt, std::nullopt},
       "pipeline_stages = 3: must divide the 8 decoder layers for an even split (or set "
       "decoder_first_pipeline_num_layers / decoder_last_pipeline_num_layers)"},
      {kEightLayers, {std::nullopt, 2, std::nullopt}, "decoder_first_pipeline_num_layers = 2: needs pipeline_stages"},
      {kEightLayers,
       {1, 2, std::nullopt},
       "pipeline_stages = 1: an uneven first or last stage (decoder_first_pipeline_num_layers = 2) needs at least 2 "
       "stages"},
      {kEightLayers, {3, -1, std::nullopt}, "decoder_first_pipeline_num_layers = -1: must be a non-negative integer"},
      {kEightLayers,
       {1000000000000, 8, std::nullopt},
       "pipeline_stages = 1000000000000: more stages than the 8 decoder layers can fill"},
      {kEightLayers,
       {2, std::nullopt, std::nullopt, 1000000000000},
       "num_virtual_stages_per_pipeline_rank = 1000000000000: 2 stages x 1000000000000 chunks must divide the 8 "
       "decoder layers"},
      {kEightLayers,
       {3, 5, 4},
       "decoder_first_pipeline_num_layers = 5 and decoder_last_pipeline_num_layers = 4: more than the 8 decoder "
       "layers"},
      {kEightLayers,
       {4, 1, std::nullopt},
       "pipeline_stages = 4: the 7 decoder layers that decoder_first_pipeline_num_layers = 1 leave must divide "
       "evenly over the 3 other stages"},
      {kEightLayers,
       {2, 1, 1},
       "pipeline_stages = 2: the 6 decoder layers that decoder_first_pipeline_num_layers = 1 and "
       "decoder_last_pipeline_num_layers = 1 leave must divide evenly over the 0 other stages"},
      {kHybridStages,
       {2, std::nullopt, std::nullopt},
       "pipeline_stages = 2: hybrid_layer_pattern splits the decoder into 3 stages with '|'"},
      {kHybridStages,
       {3, 1, std::nullopt},
       "decoder_first_pipeline_num_layers = 1: hybrid_layer_pattern places the layers with '|'; give one or the "
       "other"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const Result<PipelineLayout> layout = pipeline_layout(model_from(c.model), c.split);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().message(), c.message);
  }
}

// Megatron-LM's layout syntax and the checks of its validate_layer_layout.
TEST(PipelineTest, MegatronLayoutErrors) {
  const std::string prefix = "pipeline_model_parallel_layout = \"";
  const struct {
    std::string layout;
    std::int64_t stages;
    std::string rule;
  } errors[] = {
      {"Et*7|m|L", 3, "places 7 decoder layers (t); the model has 8"},
      {"Et*8|L", 2, "places 0 MTP depths (m); the model has 1"},
      {"t*8E|m|L", 3, "E (the embedding) must be the first layer, once"},
      {"Et*8|m", 2, "L (the output layer and loss) must be the last layer, once"},
      {"Et*8|L|m", 3, "L (the output layer and loss) must be the last layer"},
      {"Et*4m|t*4|L", 3, "the decoder layers (t) must come before the MTP depths (m)"},
      {"Et*8|m|L", 2, "3 chunks do not divide evenly over pipeline_stages = 2"},
      {"Ex*8|m|L", 3,
       "'x' is not a layer: E embedding, t decoder layer, m MTP depth, L output layer and loss, '|' "
       "between chunks"},
      {"E((tt)*2)*2|m|L", 3, "'(' at position 2 must be closed by ')' with no parentheses between (they do not nest)"},
      {"E(tt)|m|L", 3, "a group in parentheses must be followed by '*' and a repeat count"},
      {"Et*|m|L", 3, "'*' must be followed by a repeat count"},
      {"E(t)*99999999999|m|L", 3, "unrolls to more than 1048576 characters"},
  };
  for (const auto& e : errors) {
    SCOPED_TRACE(e.layout);
    const Result<PipelineLayout> layout =
        pipeline_layout(model_from(kEightLayers), megatron_layout(e.stages, e.layout));
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().message(), prefix + e.layout + "\": " + e.rule);
  }
  const Result<PipelineLayout> two_mtp_chunks =
      pipeline_layout(model_from(kTwoMtpDepths), megatron_layout(2, "Et*8m|mL"));
  ASSERT_FALSE(two_mtp_chunks.ok());
  EXPECT_EQ(two_mtp_chunks.error().message(), prefix + "Et*8m|mL\": the MTP depths (m) must all be in one chunk");
}

// With a virtual pipeline a stage runs several chunks, chunk i on stage
// i mod stages: its FLOPs are those of its chunks' rows.
TEST(PipelineTest, VirtualStagesHoldInterleavedChunks) {
  const Model model = model_from(kEightLayers);
  const Result<Report> report = count(model, PackedDocuments{{100, 7, 1}}, Mode::kModel);
  ASSERT_TRUE(report.ok()) << report.error().message();
  const Result<PipelineLayout> layout = pipeline_layout(model, megatron_layout(2, "Et|tt|t|ttt|t,m|L"));
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  const PipelineReport pipeline = pipeline_report(report.value(), layout.value());
  ASSERT_EQ(pipeline.stages.size(), 2u);
  EXPECT_EQ(pipeline.stages[0].layers, "embedding + decoder.1 | decoder.4 | decoder.8 + mtp1");
  EXPECT_EQ(pipeline.stages[1].layers, "decoder.2-3 | decoder.5-7 | logits");
  EXPECT_EQ(pipeline.stages[0].decoder_layers, 3);
  EXPECT_EQ(pipeline.stages[1].decoder_layers, 5);
  // Identical decoder layers: stage 0 runs 3 and the MTP depth, stage 1 runs 5 and every head's logits.
  Int128 layer = 0, mtp = 0, logits = 0;
  for (const LayerFlops& row : report.value().layers) {
    if (row.name == "decoder.1") layer = *row.flops.exact;
    if (row.name.rfind("mtp1", 0) == 0) mtp += *row.flops.exact;
    if (row.name == "logits") logits = *row.flops.exact;
  }
  EXPECT_EQ(*pipeline.stages[0].flops.exact, 3 * layer + mtp);
  EXPECT_EQ(*pipeline.stages[1].flops.exact, 5 * layer + logits);
  EXPECT_EQ(*pipeline.stages[0].flops.exact + *pipeline.stages[1].flops.exact, *report.value().total.exact);
}

// Each stage holds the rows of its layers: the stages partition the report,
// so they sum exactly to its total; MTP and logits sit on the last stage.
TEST(PipelineTest, StagesPartitionTheReport) {
  const Model model = model_from(kEightLayers);
  const Result<Report> report = count(model, PackedDocuments{{100, 7, 1}}, Mode::kModel);
  ASSERT_TRUE(report.ok()) << report.error().message();
  const Result<ModelParameters> parameters = count_parameters(model);
  ASSERT_TRUE(parameters.ok()) << parameters.error().message();
  const PipelineLayout layout = consecutive_stages({1, 6, 1}, 1, "test");
  const PipelineReport pipeline = pipeline_report(report.value(), layout, &parameters.value());

  ASSERT_EQ(pipeline.stages.size(), 3u);
  EXPECT_EQ(pipeline.stages[0].layers, "embedding + decoder.1");
  EXPECT_EQ(pipeline.stages[1].layers, "decoder.2-7");
  EXPECT_EQ(pipeline.stages[2].layers, "decoder.8 + mtp1 + logits");
  Int128 flops = 0, held = 0;
  for (const PipelineStage& stage : pipeline.stages) {
    flops += *stage.flops.exact;
    held += *stage.parameters;
  }
  EXPECT_EQ(flops, *report.value().total.exact);
  EXPECT_EQ(held, parameters.value().embedding.total + parameters.value().output_layer.total +
                      parameters.value().decoder.total + parameters.value().mtp.total);
  // Identical decoder layers: the middle stage is six times the first's.
  const Int128 layer = *report.value().layers[0].flops.exact;
  EXPECT_EQ(*pipeline.stages[0].flops.exact, layer);
  EXPECT_EQ(*pipeline.stages[1].flops.exact, 6 * layer);
  EXPECT_EQ(pipeline.slowest, 1u);
  const double mean = to_double(*report.value().total.exact) / 3;
  EXPECT_DOUBLE_EQ(pipeline.imbalance, to_double(6 * layer) / mean);
}

TEST(PipelineTest, EmptyStagesAndAllZero) {
  const Model model = model_from(kEightLayers);
  const Result<Report> report = count(model, Bshd{1, 16}, Mode::kMegatron);
  ASSERT_TRUE(report.ok()) << report.error().message();
  const PipelineReport pipeline = pipeline_report(report.value(), consecutive_stages({0, 8, 0}, 1, "test"));
  EXPECT_EQ(pipeline.stages[0].layers, "embedding");
  EXPECT_EQ(pipeline.stages[0].flops.value, 0);
  EXPECT_EQ(pipeline.stages[2].layers, "mtp1 + logits");
  EXPECT_FALSE(pipeline.stages[0].parameters);
  EXPECT_EQ(pipeline.slowest, 1u);

  const PipelineReport nothing = pipeline_report(Report{}, consecutive_stages({0, 0, 0}, 0, "test"));
  EXPECT_EQ(nothing.stages[1].layers, "-");
  EXPECT_EQ(nothing.imbalance, 1);
}

}  // namespace
}  // namespace trainflops
