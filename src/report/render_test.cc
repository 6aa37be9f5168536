#include "trainflops/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

namespace trainflops {
namespace {

Report small_report(Mode mode) {
  Model model;
  model.name = "tiny";
  model.hidden_size = 64;
  model.vocab_size = 100;
  const GqaAttention attention{
      .num_heads = 4, .num_query_groups = 4, .head_dim = 16, .output_gate = false, .window = {}, .chunk = {}};
  const Layer dense{Mixer{attention}, ChannelMixer{DenseMlp{128, false}}};
  const Layer experts{Mixer{attention}, ChannelMixer{Moe{8, 2, 32, 32, std::nullopt, false}}};
  model.layers = {dense, experts, experts, experts};
  return count(model, PackedDocuments{{10, 6}}, mode).value();
}

TEST(RenderTest, JsonFollowsTheDocumentedSchema) {
  const Report report = small_report(Mode::kModel);
  const auto json = nlohmann::ordered_json::parse(render(report, Format::kJson));
  EXPECT_EQ(json["mode"], "model");
  EXPECT_EQ(json["model"], "tiny: 4 layers (1 gqa+mlp, 3 gqa+moe), hidden 64, vocab 100");
  EXPECT_EQ(json["workload"]["tokens"], "16");
  EXPECT_EQ(json["total"]["exact"], to_decimal(*report.total.exact));
  EXPECT_EQ(json["total"]["flops"].get<double>(), report.total.value);
  EXPECT_EQ(json["per_token"]["flops"].get<double>(), report.per_token);
  // By hand: embedding and output layer 100 x 64 each; attention 4 x 64 x 64
  // per layer; the MLP 2 x 64 x 128; MoE 8 experts of 2 x 64 x 32, the shared
  // expert 2 x 64 x 32, the router 64 x 8, of which a token uses 2 experts;
  // 2 RMSNorms of 64 per layer and the final one (576).
  EXPECT_EQ(json["parameters"]["total"], "207424");
  EXPECT_EQ(json["parameters"]["active"], "127296");
  EXPECT_EQ(json["parameters"]["embedding"], "6400");
  EXPECT_EQ(json["parameters"]["costing_flops"], "198912");     // less the table, the routers and the norms
  EXPECT_EQ(json["parameters"]["not_costing_flops"], "8512");   // 6400 + 3 x 512 + 576
  EXPECT_EQ(json["parameters"]["six_n_d"], "12220416");  // 6 x 127296 x 16 tokens
  std::vector<std::string> components;
  for (const auto& [name, part] : json["breakdown"].items()) components.push_back(name);
  EXPECT_EQ(components, (std::vector<std::string>{"attention_projections", "core_attention", "mlp", "moe_routed",
                                                  "moe_shared", "logits"}));
  ASSERT_EQ(json["layers"].size(), 5u);
  EXPECT_EQ(json["layers"][1]["name"], "decoder.2");
  EXPECT_EQ(json["layers"][1]["kind"], "gqa+moe");
  EXPECT_TRUE(json["layers"][1]["breakdown"].contains("moe_routed"));
  // The exact strings of the layers add up to the total.
  Int128 sum = 0;
  for (const auto& layer : json["layers"]) sum += *parse_decimal(layer["exact"].get<std::string>());
  EXPECT_EQ(to_decimal(sum), json["total"]["exact"]);
}

TEST(RenderTest, MegatronJsonHasNoExactStrings) {
  const auto json = nlohmann::json::parse(render(small_report(Mode::kMegatron), Format::kJson));
  EXPECT_FALSE(json["total"].contains("exact"));
  EXPECT_FALSE(json["layers"][0].contains("exact"));
}

TEST(RenderTest, CsvHasOneRowPerComponentAndLayerPart) {
  const Report report = small_report(Mode::kModel);
  std::istringstream csv(render(report, Format::kCsv));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(csv, line)) lines.push_back(line);
  EXPECT_EQ(lines[0], "section,name,kind,component,flops,exact,share");
  EXPECT_EQ(lines[1].rfind("total,,,total,", 0), 0u);
  EXPECT_NE(lines[1].find("," + to_decimal(*report.total.exact) + ",1"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].rfind("per_token,,,total,", 0), 0u);
  EXPECT_EQ(lines[3], "parameters,,,total,,207424,");
  EXPECT_EQ(lines[4], "parameters,,,active,,127296,");
  EXPECT_EQ(lines[5], "parameters,,,embedding,,6400,");
  EXPECT_EQ(lines[6], "parameters,,,costing_flops,,198912,");
  EXPECT_EQ(lines[7], "parameters,,,not_costing_flops,,8512,");
  EXPECT_EQ(lines[8].rfind("six_n_d,,,total,12220416,12220416,", 0), 0u) << lines[8];
  // header + total + per token + 5 parameters + 6 N D + 6 components + layer
  // rows (total + parts each).
  std::size_t layer_rows = 0;
  for (const auto& layer : report.layers) layer_rows += 1 + layer.components.size();
  EXPECT_EQ(lines.size(), 3 + 6 + 6 + layer_rows);
  EXPECT_EQ(lines[15].rfind("layer,decoder.1,gqa+mlp,total,", 0), 0u);
}

TEST(RenderTest, TableCollapsesIdenticalLayers) {
  const std::string table = render(small_report(Mode::kModel), Format::kTable);
  EXPECT_NE(table.find("trainflops: model mode, one training iteration\n"), std::string::npos);
  EXPECT_NE(table.find("\nworkload   THD, 2 packed documents, 16 tokens\n"), std::string::npos);
  EXPECT_NE(table.find("\ndecoder.1           gqa+mlp            1   3.2041e+06   26.2%\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("\ndecoder.2-4         gqa+moe            3   2.8109e+06   68.8%\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("\nexact      "), std::string::npos);
  EXPECT_NE(table.find("\nparameters 207K total, 127K active per token, 6.40K embedding; 199K cost FLOPs per "
                       "token, 8.51K do not\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n6 N D      1.2220e+07 FLOPs  (6 x active x tokens; total / 6 N D = "), std::string::npos)
      << table;
}

// Interleaved layers: a line per kind (default), per layer, or none.
TEST(RenderTest, LayerLinesByKindAllOrNone) {
  Model model;
  model.hidden_size = 64;
  model.vocab_size = 100;
  const GqaAttention attention{4, 4, 16, false, {}, {}};
  const Layer dense{Mixer{attention}, ChannelMixer{DenseMlp{128, false}}};
  const Layer experts{Mixer{attention}, ChannelMixer{Moe{8, 2, 32, 32, std::nullopt, false}}};
  for (int i = 0; i < 12; ++i) model.layers.push_back(i % 3 == 2 ? dense : experts);
  const Report report = count(model, Bshd{1, 16}, Mode::kModel).value();
  const std::string kinds = render(report, Format::kTable);
  EXPECT_NE(kinds.find("\ndecoder.1-2,4-5,... gqa+moe            8 "), std::string::npos) << kinds;
  EXPECT_NE(kinds.find("\ndecoder.3,6,9,12    gqa+mlp            4 "), std::string::npos) << kinds;
  EXPECT_NE(kinds.find("\nlogits              logits             1 "), std::string::npos) << kinds;
  const std::string all = render(report, Format::kTable, LayerRows::kAll);
  EXPECT_NE(all.find("\ndecoder.12          gqa+mlp            1 "), std::string::npos) << all;
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n') - std::count(kinds.begin(), kinds.end(), '\n'), 13 - 3);
  const std::string none = render(report, Format::kTable, LayerRows::kNone);
  EXPECT_EQ(none.find("FLOPs each"), std::string::npos);
  EXPECT_EQ(none, kinds.substr(0, none.size()));
  EXPECT_EQ(parse_layer_rows("kinds").value(), LayerRows::kKinds);
  EXPECT_EQ(parse_layer_rows("runs").error().message(), "layers = \"runs\": must be one of kinds, all, none");
}

TEST(RenderTest, ParseFormat) {
  EXPECT_EQ(parse_format("csv").value(), Format::kCsv);
  EXPECT_EQ(parse_format("yaml").error().message(), "format = \"yaml\": must be one of table, json, csv");
}

}  // namespace
}  // namespace trainflops
