// Kimi Delta Attention from Megatron-LM arguments and flags (its Kimi Delta
// Attention pull request: `K` in the hybrid layer pattern, and
// experimental_attention_variant "kda" with linear_attention_freq), and
// megatron mode against what that pull request's own function returns
// (tests/data/megatron_kda.json, written by scripts/megatron-kda).
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

double megatron_flops(const json& record, MegatronBranch branch) {
  const Result<Model> model = model_of(record.at("args"), branch);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) return 0;
  const Result<Report> report = count(model.value(), workload_of(record.at("workload")), Mode::kMegatron);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return report.ok() ? report.value().total.value : 0;
}

// The pull request is based on Megatron-LM's dev branch: megatron mode on dev
// is its function, to the bit, on every case.
TEST(MegatronKdaTest, MegatronModeOnDevIsThePullRequestsFunctionToTheBit) {
  const json data = read_branch_records("megatron_kda.json");
  ASSERT_EQ(data.at("commit"), "7f3c18b0b8a864b677e67fdefe8a82d25ec78281");
  std::size_t cases = 0;
  for (const json& record : data.at("cases")) {
    SCOPED_TRACE(record.at("name").get<std::string>() + ", " + record.at("workload").dump());
    EXPECT_EQ(megatron_flops(record, MegatronBranch::kDev), std::stod(record.at("flops").get<std::string>()));
    ++cases;
  }
  EXPECT_EQ(cases, 24u);
}

// Main counts the same KDA layers; it differs from the pull request (and dev)
// only where main's hybrid function does: no MTP projection and norms, 2h^2 +
// 3h multiply-adds per token and depth, trained.
TEST(MegatronKdaTest, MegatronModeOnMainDiffersOnlyByTheHybridMtpProjection) {
  const json records = read_branch_records("megatron_kda.json").at("cases");
  std::size_t hybrid_mtp = 0;
  for (const json& record : records) {
    SCOPED_TRACE(record.at("name").get<std::string>() + ", " + record.at("workload").dump());
    const json& args = record.at("args");
    const json& w = record.at("workload");
    double mtp_projection = 0;
    if (args.contains("hybrid_layer_pattern") && args.contains("mtp_num_layers")) {
      const double h = args.at("hidden_size").get<double>();
      const double tokens = w.contains("seq_length") ? w.at("batch_size").get<double>() * w.at("seq_length").get<double>()
                                                     : w.at("total_real_tokens").get<double>();
      mtp_projection = 6 * (2 * h * h + 3 * h) * tokens * args.at("mtp_num_layers").get<double>();
      ++hybrid_mtp;
    }
    EXPECT_EQ(megatron_flops(record, MegatronBranch::kMain) + mtp_projection,
              std::stod(record.at("flops").get<std::string>()));
  }
  EXPECT_EQ(hybrid_mtp, 3u);
}

TEST(MegatronKdaTest, TheLayersAreKimiDeltaAttentionWithFullRankGates) {
  const json records = read_branch_records("megatron_kda.json").at("cases");
  const auto kda = [](std::int64_t heads, std::int64_t head_dim, std::int64_t kernel) -> Mixer {
    return KimiDeltaAttention{.num_heads = heads, .head_dim = head_dim, .conv_kernel_dim = kernel};
  };
  const struct {
    std::size_t record;
    std::string mixers;  // per decoder layer: K for KDA, G for GDN, * for attention, M for Mamba
    Mixer kda;
  } cases[] = {
      {0, "KKK*KKK*", kda(16, 128, 4)},
      {3, "KKK*KKK*", kda(32, 64, 3)},
      {9, "K*K*K*K*", kda(16, 128, 4)},
      // The hybrid path's defaults: 16 value heads for KDA (32 for the GDN beside it).
      {12, "KKK*KKK*", kda(16, 128, 4)},
      {18, "KKK*KKK*", kda(32, 64, 3)},
      {21, "MKG*KKMK*", kda(16, 128, 4)},
  };
  for (const auto& c : cases) {
    const json& record = records.at(c.record);
    SCOPED_TRACE(record.at("name").get<std::string>());
    const Model model = model_of(record.at("args"), MegatronBranch::kDev).value();
    std::string mixers;
    for (const Layer& layer : model.layers) {
      if (!layer.mixer) continue;
      if (std::holds_alternative<KimiDeltaAttention>(*layer.mixer)) {
        EXPECT_EQ(*layer.mixer, c.kda);
        mixers += 'K';
      } else if (const auto* gdn = std::get_if<GatedDeltaNet>(&*layer.mixer)) {
        EXPECT_EQ(gdn->num_value_heads, 32);
        mixers += 'G';
      } else if (std::holds_alternative<GqaAttention>(*layer.mixer)) {
        mixers += '*';
      } else {
        mixers += 'M';
      }
    }
    EXPECT_EQ(mixers, c.mixers);
  }
}

// Model mode counts the same layer: its projections, convolutions and
// recurrent delta rule are the terms Megatron-LM's function charges.
TEST(MegatronKdaTest, ModelModeChargesTheKdaLayersAsThePullRequest) {
  const json records = read_branch_records("megatron_kda.json").at("cases");
  for (std::size_t record : {0u, 3u, 15u, 18u}) {
    const json& r = records.at(record);
    SCOPED_TRACE(r.at("name").get<std::string>());
    const Model model = model_of(r.at("args"), MegatronBranch::kDev).value();
    const Report megatron = count(model, Bshd{4, 4096}, Mode::kMegatron).value();
    const Report exact = count(model, Bshd{4, 4096}, Mode::kModel).value();
    ASSERT_EQ(megatron.layers.size(), exact.layers.size());
    std::size_t kda_layers = 0;
    for (std::size_t i = 0; i < exact.layers.size(); ++i) {
      if (!exact.layers[i].kind.starts_with("kda")) continue;  // "kda" on the hybrid path, "kda+mlp" on GPT's
      ++kda_layers;
      const auto kda_part = [](const LayerFlops& layer) {
        for (const ComponentFlops& part : layer.components) {
          if (part.component == Component::kKimiDeltaAttention) return part.flops.value;
        }
        return -1.0;
      };
      EXPECT_EQ(kda_part(exact.layers[i]), kda_part(megatron.layers[i]));
      EXPECT_GT(kda_part(exact.layers[i]), 0);
    }
    EXPECT_GT(kda_layers, 0u);
  }
}

TEST(MegatronKdaTest, RefusesWhatThePullRequestRefuses) {
  const json refused = read_branch_records("megatron_kda.json").at("refused");
  ASSERT_EQ(refused.size(), 3u);
  const std::string kLayout =
      ": Kimi Delta Attention needs as many value heads as key heads, each as wide (Megatron-LM's "
      "KimiDeltaAttention and its FLOPs function refuse other layouts)";
  const std::string messages[] = {
      "linear_num_value_heads = 32, linear_num_key_heads = 16" + kLayout,
      "linear_value_head_dim = 64, linear_key_head_dim = 128" + kLayout,
      "linear_num_value_heads = 32, linear_num_key_heads = 16" + kLayout,
  };
  for (std::size_t i = 0; i < refused.size(); ++i) {
    SCOPED_TRACE(refused.at(i).at("name").get<std::string>());
    ASSERT_EQ(refused.at(i).at("raises"), "ValueError");
    for (MegatronBranch branch : {MegatronBranch::kMain, MegatronBranch::kDev}) {
      const Result<Model> model = model_of(refused.at(i).at("args"), branch);
      ASSERT_FALSE(model.ok());
      EXPECT_EQ(model.error().code(), ErrorCode::kInvalidInput);
      EXPECT_EQ(model.error().message(), messages[i]);
    }
  }
  // The GPT path has no defaults for the sizes: Megatron-LM's function
  // multiplies the None.
  json args = read_branch_records("megatron_kda.json").at("cases").at(0).at("args");
  args.erase("linear_key_head_dim");
  const Result<Model> model = model_of(args, MegatronBranch::kMain);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().message(), "linear_key_head_dim is missing: required for Kimi Delta Attention layers");
}

TEST(MegatronKdaTest, ThePullRequestsFlagsReadAsItsArguments) {
  const json first = read_branch_records("megatron_kda.json").at("cases").at(0);
  ModelInput input;
  input.megatron_flags = std::vector<std::string>{
      "--num-layers", "8", "--hidden-size", "2048", "--num-attention-heads", "16", "--group-query-attention",
      "--num-query-groups", "4", "--kv-channels", "128", "--ffn-hidden-size", "5632", "--swiglu",
      "--vocab-size", "151936", "--make-vocab-size-divisible-by", "128", "--seq-length", "4096",
      "--global-batch-size", "4", "--experimental-attention-variant", "kda", "--linear-attention-freq", "4",
      "--linear-num-value-heads", "16", "--kda-safe-gate", "--kda-lower-bound", "-5",
      "--gated-attention-proj-granularity", "elementwise"};
  const Result<ResolvedModel> resolved = resolve_model(input);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message();
  const Model from_args = model_of(first.at("args"), MegatronBranch::kDev).value();
  EXPECT_TRUE(resolved.value().model.layers == from_args.layers);
  const Report report = count(resolved.value().model, Bshd{4, 4096}, Mode::kMegatron).value();
  EXPECT_EQ(report.total.value, std::stod(first.at("flops").get<std::string>()));
}

}  // namespace
}  // namespace trainflops
