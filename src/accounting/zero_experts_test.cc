// Zero-computation (identity) experts and LongCat-Flash's shortcut-connected
// MoE layers: the rules on real_experts_per_token, a per-token count by brute
// force, and the release's parameters against its published figures.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/input_file.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/int128.h"
#include "trainflops/model_input.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

// A LongCat-Flash config small enough to count by hand: 2 LongCat layers,
// h 16, dense FFNs of 12, 8 experts of 5 and 4 zero experts, top-3.
constexpr const char* kSmallLongcat = R"({"model_type": "longcat_flash", "hidden_size": 16, "vocab_size": 50,
  "num_layers": 2, "num_attention_heads": 2, "q_lora_rank": 8, "kv_lora_rank": 4, "qk_nope_head_dim": 4,
  "qk_rope_head_dim": 2, "v_head_dim": 4, "ffn_hidden_size": 12, "expert_ffn_hidden_size": 5,
  "n_routed_experts": 8, "moe_topk": 3, "zero_expert_num": 4, "zero_expert_type": "identity"})";

Model small_longcat(std::int64_t real) {
  Model model = import_hf_config(kSmallLongcat).value().model;
  EXPECT_TRUE(set_real_experts_per_token(model, real).ok());
  return model;
}

// Multiply-adds of a (rows x cols) matrix applied to one token, one by one.
std::int64_t matrix_fmas(std::int64_t rows, std::int64_t cols) {
  std::int64_t fmas = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) ++fmas;
  }
  return fmas;
}

// One gated FFN (gate, up: h -> f; down: f -> h) on one token.
std::int64_t swiglu_fmas(std::int64_t h, std::int64_t f) {
  return matrix_fmas(f, h) + matrix_fmas(f, h) + matrix_fmas(h, f);
}

Int128 component_flops(const Report& report, Component component) {
  for (const ComponentFlops& c : report.components) {
    if (c.component == component) return *c.flops.exact;
  }
  return 0;
}

// Per token and LongCat layer: two dense FFNs (the first counted as the
// MoE's shared expert) and `real` experts; 2 FLOPs per multiply-add, 3
// executions (forward, data and weight gradients).
TEST(ZeroExpertsTest, MoeAndDenseFfnsAreWhatEachTokenRuns) {
  const std::vector<std::int64_t> docs = {7, 3, 1};
  std::int64_t tokens = 0;
  for (const std::int64_t length : docs) tokens += length;
  for (const std::int64_t real : {0, 1, 2, 3}) {
    SCOPED_TRACE(real);
    std::int64_t routed = 0, dense = 0;
    for (std::int64_t token = 0; token < tokens; ++token) {
      for (int layer = 0; layer < 2; ++layer) {
        for (std::int64_t expert = 0; expert < real; ++expert) routed += swiglu_fmas(16, 5);
        for (int block = 0; block < 2; ++block) dense += swiglu_fmas(16, 12);
      }
    }
    const Report report = count(small_longcat(real), PackedDocuments{docs}, Mode::kModel).value();
    EXPECT_EQ(to_decimal(component_flops(report, Component::kMoeRouted)), to_decimal(Int128{6} * routed));
    EXPECT_EQ(to_decimal(component_flops(report, Component::kMoeShared) + component_flops(report, Component::kMlp)),
              to_decimal(Int128{6} * dense));
    // Megatron mode charges every one of the 3 picks as a real expert.
    const Report megatron = count(small_longcat(real), PackedDocuments{docs}, Mode::kMegatron).value();
    const double all_picks = 6.0 * tokens * 2 * 3 * swiglu_fmas(16, 5);
    double megatron_routed = 0;
    for (const ComponentFlops& c : megatron.components) {
      if (c.component == Component::kMoeRouted) megatron_routed = c.flops.value;
    }
    EXPECT_DOUBLE_EQ(megatron_routed, all_picks);
  }
}

TEST(ZeroExpertsTest, ImportedLayersAndTheAssumedValue) {
  const HfImport import = import_hf_config(kSmallLongcat).value();
  EXPECT_EQ(summarize(import.model), "longcat_flash: 4 layers (2 mla+moe, 2 mla+mlp), hidden 16, vocab 50");
  const Moe& moe = std::get<Moe>(*import.model.layers[0].channel_mixer);
  EXPECT_EQ(moe.zero_experts, 4);
  EXPECT_EQ(moe.real_experts_per_token, 3);  // the nominal 8, at most the top-3
  EXPECT_EQ(moe.shared_expert_ffn_hidden_size, 12);
  ASSERT_EQ(import.assumed.size(), 1u);
  EXPECT_EQ(import.assumed[0].rfind("real_experts_per_token = 3 of moe_topk = 3: ", 0), 0u) << import.assumed[0];
}

TEST(ZeroExpertsTest, RulesOfTheImportAndTheModel) {
  struct Case {
    std::string config;  // replaces the last key of kSmallLongcat
    std::string error;
  };
  const std::string base = kSmallLongcat;
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::vector<Case> cases = {
      {with("\"zero_expert_type\": \"identity\"", "\"zero_expert_type\": \"copy\""),
       "zero_expert_type = \"copy\": must be \"identity\""},
      {with("\"num_layers\": 2", "\"num_layers\": 2, \"num_hidden_layers\": 3"),
       "num_hidden_layers = 3: must be 2 * num_layers = 4"},
      {with("\"moe_topk\": 3", "\"moe_topk\": 13"),
       "moe_topk = 13: must not exceed n_routed_experts + zero_expert_num = 12"},
      {with("\"hidden_size\": 16", "\"hidden_size\": 16, \"attention_method\": \"GQA\""),
       "attention_method = \"GQA\": must be \"MLA\""},
  };
  for (const Case& c : cases) {
    const Result<HfImport> import = import_hf_config(c.config);
    ASSERT_FALSE(import.ok()) << c.error;
    EXPECT_NE(import.error().message().find(c.error), std::string::npos) << import.error().message();
  }
}

TEST(ZeroExpertsTest, RealExpertsPerTokenMustBeAPickCount) {
  struct Case {
    std::int64_t real;
    std::string error;
  };
  const std::vector<Case> cases = {
      {-1, "real_experts_per_token = -1: must be between 0 and topk = 3"},
      {4, "real_experts_per_token = 4: must be between 0 and topk = 3"},
  };
  for (const Case& c : cases) {
    Model model = small_longcat(2);
    const Status set = set_real_experts_per_token(model, c.real);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().message(), c.error);
    EXPECT_EQ(std::get<Moe>(*model.layers[0].channel_mixer).real_experts_per_token, 2);  // unchanged
  }
  Model dense = small_longcat(2);
  dense.layers.edit_each([](Layer& layer) {
    if (auto* moe = std::get_if<Moe>(&*layer.channel_mixer)) {
      moe->zero_experts.reset();
      moe->real_experts_per_token.reset();
    }
  });
  EXPECT_EQ(set_real_experts_per_token(dense, 1).error().message(),
            "real_experts_per_token = 1: the model has no zero experts, so every one of its top-k picks is a real "
            "expert");
  // validate(): both fields or neither, and within 0..topk.
  struct ModelCase {
    std::optional<std::int64_t> zero, real;
    std::string error;
  };
  const std::vector<ModelCase> model_cases = {
      {4, std::nullopt,
       "layers[0].channel_mixer.zero_experts = 4: needs real_experts_per_token, how many of the topk picks are real "
       "experts"},
      {std::nullopt, 2, "layers[0].channel_mixer.real_experts_per_token = 2: applies only with zero_experts"},
      {0, 2, "layers[0].channel_mixer.zero_experts = 0: must be a positive integer"},
      {4, 5, "layers[0].channel_mixer.real_experts_per_token = 5: must be between 0 and topk = 3"},
  };
  for (const ModelCase& c : model_cases) {
    Model model = small_longcat(2);
    Layer layer = model.layers[0];
    Moe& moe = std::get<Moe>(*layer.channel_mixer);
    moe.zero_experts = c.zero;
    moe.real_experts_per_token = c.real;
    model.layers.set(0, layer);
    const Status valid = validate(model);
    ASSERT_FALSE(valid.ok()) << c.error;
    EXPECT_EQ(valid.error().message().substr(0, c.error.size()), c.error) << valid.error().message();
  }
}

TEST(ZeroExpertsTest, MeasuredValueReplacesTheAssumedOne) {
  ModelInput input;
  input.hf_config_json = kSmallLongcat;
  input.real_experts_per_token = 1;
  const ResolvedModel resolved = resolve_model(input).value();
  EXPECT_EQ(std::get<Moe>(*resolved.model.layers[0].channel_mixer).real_experts_per_token, 1);
  for (const std::string& note : resolved.assumed) EXPECT_EQ(note.find("real_experts_per_token"), std::string::npos);
  input.real_experts_per_token = 7;
  EXPECT_EQ(resolve_model(input).error().message(), "real_experts_per_token = 7: must be between 0 and topk = 3");
}

// LongCat-Flash-Chat: "560B" total, 18.6B to 31.3B activated, about 27B on
// average (its model card). Worked out by hand from the sizes: per layer two
// MLA blocks of 90,570,752, two dense FFNs of 226,492,416, a router of
// 6144 x 768 and 28,672 norm weights (2 x (6144 x 2 + 1536 + 512)), 28 layers;
// each expert 37,748,736; the output layer 131072 x 6144 and its norm.
TEST(ZeroExpertsTest, LongcatFlashParametersAreThePublishedOnes) {
  const HfImport import =
      import_hf_config(
          read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/longcat-flash-transformers-defaults.json",
                          kMaxConfigFileBytes)
              .value())
          .value();
  EXPECT_TRUE(import.unknown.empty());
  EXPECT_EQ(summarize(import.model), "longcat_flash: 56 layers (28 mla+moe, 28 mla+mlp), hidden 6144, vocab 131072");
  const Int128 fixed_layer = Int128{2} * 90570752 + Int128{2} * 226492416 + Int128{6144} * 768 + 28672;
  const Int128 expert = 37748736, output = Int128{131072} * 6144 + 6144;
  struct Case {
    std::int64_t real;
    double published_active;  // the card's figure, 0 where it gives none
  };
  for (const Case& c : {Case{0, 18.6e9}, Case{8, 27e9}, Case{12, 31.3e9}}) {
    SCOPED_TRACE(c.real);
    Model model = import.model;
    ASSERT_TRUE(set_real_experts_per_token(model, c.real).ok());
    const ModelParameters parameters = count_parameters(model).value();
    EXPECT_EQ(to_decimal(parameters.decoder.total), to_decimal(28 * (fixed_layer + 512 * expert)));
    EXPECT_EQ(to_decimal(parameters.decoder.active), to_decimal(28 * (fixed_layer + c.real * expert)));
    const double active = to_double(parameters.decoder.active + output);
    EXPECT_NEAR(active, c.published_active, c.real == 8 ? 0.2e9 : 0.1e9);
  }
  const ModelParameters parameters = count_parameters(import.model).value();
  EXPECT_NEAR(to_double(parameters.total().total), 560e9, 1e9);
}

}  // namespace
}  // namespace trainflops
