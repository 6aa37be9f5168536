// DSA over grouped-query attention from Megatron-LM arguments and flags
// (the `D` layers of its DSA-over-GQA layer spec), and megatron mode against
// what Megatron-LM's own function returns on that pull request's branch
// (tests/data/megatron_dsa_gqa.json, written by scripts/megatron-dsa-gqa).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "inputs/megatron_branch_records.h"
#include "trainflops/count.h"
#include "trainflops/megatron_args.h"
#include "trainflops/model_input.h"

namespace trainflops {
namespace {

using nlohmann::json;
using branch_records::model_of;
using branch_records::read_branch_records;
using branch_records::workload_of;

TEST(MegatronDsaGqaTest, MegatronModeIsTheBranchsFunctionToTheBit) {
  const json data = read_branch_records("megatron_dsa_gqa.json");
  ASSERT_EQ(data.at("commit"), "d7abd1415eebbafd8bce42dd70e8ef36e18c089f");
  std::size_t cases = 0;
  for (const json& record : data.at("cases")) {
    SCOPED_TRACE(record.at("name").get<std::string>() + ", " + record.at("workload").dump());
    const Result<Model> model = model_of(record.at("args"));
    ASSERT_TRUE(model.ok()) << model.error().message();
    const Result<Report> report = count(model.value(), workload_of(record.at("workload")), Mode::kMegatron);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(report.value().total.value, std::stod(record.at("flops").get<std::string>()));
    ++cases;
  }
  EXPECT_EQ(cases, 12u);
}

// The D layers are grouped-query attention with the indexer, sharing top-k
// selections as DSA does; megatron mode shows them with nothing counted.
TEST(MegatronDsaGqaTest, DLayersAreDsaOverGroupedQueryAttention) {
  const json records = read_branch_records("megatron_dsa_gqa.json").at("cases");
  const struct {
    std::size_t record;
    std::vector<std::string> d_kinds;
  } cases[] = {
      {0, {"dsa-gqa", "dsa-gqa", "dsa-gqa", "dsa-gqa"}},
      // dsa_indexer_topk_freq 2: the D layers are numbers 11, 23, 34 and 46 of
      // the pattern (every symbol counts); the odd ones run their own indexer.
      {3, {"dsa-gqa", "dsa-gqa", "dsa-gqa-shared", "dsa-gqa-shared"}},
  };
  for (const auto& c : cases) {
    const json& record = records.at(c.record);
    SCOPED_TRACE(record.at("name").get<std::string>());
    const Model model = model_of(record.at("args")).value();
    std::vector<std::string> d_kinds;
    for (const Layer& layer : model.layers) {
      if (layer.mixer && std::holds_alternative<DsaGqaAttention>(*layer.mixer)) d_kinds.push_back(layer_kind(layer));
    }
    EXPECT_EQ(d_kinds, c.d_kinds);
    const auto& first = std::get<DsaGqaAttention>(*model.layers[10].mixer);
    EXPECT_EQ(first.attention, (GqaAttention{.num_heads = 32, .num_query_groups = 8, .head_dim = 128}));
    EXPECT_EQ(first.indexer.num_heads, 32);
    EXPECT_EQ(first.indexer.head_dim, 64);
    EXPECT_EQ(first.indexer.grad_mode, DsaIndexer::GradMode::kDetached);
    const Report report = count(model, Bshd{1, 8192}, Mode::kMegatron).value();
    EXPECT_EQ(report.layers[10].kind, "dsa-gqa");
    EXPECT_EQ(report.layers[10].flops.value, 0.0);
    EXPECT_TRUE(report.layers[10].components.empty());
  }
}

TEST(MegatronDsaGqaTest, TheExampleFlagsFileIsTheBranchsExample) {
  const json example = read_branch_records("megatron_dsa_gqa.json").at("cases").at(0);
  ASSERT_EQ(example.at("name"), "8B example");
  ModelInput input;
  input.megatron_flags = std::vector<std::string>{"@" + std::string(TRAINFLOPS_TEST_DATA) +
                                                  "/../../examples/dsa-gqa-hybrid-8b.flags"};
  const Result<ResolvedModel> resolved = resolve_model(input);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message();
  const Model from_args = model_of(example.at("args")).value();
  EXPECT_TRUE(resolved.value().model.layers == from_args.layers);
  EXPECT_EQ(resolved.value().model.hidden_size, from_args.hidden_size);
  EXPECT_EQ(resolved.value().model.vocab_size, from_args.vocab_size);
  ASSERT_EQ(resolved.value().global_batch_size, 4);
  ASSERT_EQ(resolved.value().seq_length, 8192);
  const Report report = count(resolved.value().model, Bshd{4, 8192}, Mode::kMegatron).value();
  EXPECT_EQ(report.total.value, std::stod(example.at("flops").get<std::string>()));
}

TEST(MegatronDsaGqaTest, RefusalsNameTheArgument) {
  const json example = read_branch_records("megatron_dsa_gqa.json").at("cases").at(0).at("args");
  const struct {
    const char* name;
    json patch;
    MegatronBranch branch;
    std::string message;
  } cases[] = {
      {"no GQA", {{"group_query_attention", false}}, MegatronBranch::kMain,
       "group_query_attention = false: the hybrid_stack_spec_dsa_gqa spec's D layers are grouped-query attention, "
       "which needs group_query_attention true"},
      {"MLA", {{"multi_latent_attention", true}}, MegatronBranch::kMain,
       "multi_latent_attention = true: the hybrid_stack_spec_dsa_gqa spec's D layers are grouped-query attention, "
       "not multi-latent attention"},
      {"no kv_channels", {{"kv_channels", nullptr}}, MegatronBranch::kMain,
       "kv_channels is missing: required for attention layers"},
      {"KPool", {{"dsa_kpool_size", 2}, {"dsa_indexer_loss_coeff", nullptr}}, MegatronBranch::kMain,
       "layers[10].mixer.indexer.pool_size = 2: must be 1: KPool is DSA's over MLA; DSA over grouped-query "
       "attention has none"},
      {"dev", json::object(), MegatronBranch::kDev,
       "experimental_attention_variant = \"dsa\": Megatron-LM's dev branch counts DSA on the standard path only, "
       "not on the hybrid-model path (hybrid_layer_pattern); describe the model without a pattern"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    json args = example;
    args.merge_patch(c.patch);
    Result<Model> model = model_of(args, c.branch);
    Status status = model.ok() ? validate(model.value()) : Status(model.error());
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
