// The parameter layout an imported Hugging Face config gives: each release
// config counts its checkpoint's parameters to the unit, and each layout
// field counts what the model type's modeling code holds.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "trainflops/hf_config.h"
#include "trainflops/int128.h"
#include "trainflops/parameter_part.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

std::string test_file(const std::string& name) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ModelParameters parameters_of(const std::string& config) {
  const Result<HfImport> imported = import_hf_config(config);
  if (!imported.ok()) {
    ADD_FAILURE() << imported.error().message();
    return {};
  }
  return count_parameters(imported.value().model).value();
}

// What a checkpoint holds of the model: the parts its record names ("parts",
// where the checkpoint stores no MTP module the config builds), else all.
Int128 stored(const ModelParameters& parameters, const nlohmann::json& row) {
  if (!row.contains("parts")) return parameters.total().total;
  std::vector<ParameterPart> parts;
  for (const auto& name : row["parts"]) parts.push_back(parse_parameter_part(name.get<std::string>()).value());
  return parameters.sum(parts).total;
}

// tests/data/parameters/hf_release_totals.jsonl: the release configs of
// tests/data/hf against their checkpoints' element counts, less what the
// checkpoint stores that is no parameter of the model.
TEST(HfParameterLayoutTest, ReleaseConfigsCountTheirCheckpoints) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/parameters/hf_release_totals.jsonl");
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    SCOPED_TRACE(row["config"].get<std::string>());
    std::int64_t expected = row["published"].get<std::int64_t>();
    for (const auto& [what, count] : row["not_parameters"].items()) expected -= count.get<std::int64_t>();
    EXPECT_EQ(expected, row["total"].get<std::int64_t>());
    const ModelParameters p = parameters_of(test_file(row["config"].get<std::string>()));
    EXPECT_EQ(to_decimal(stored(p, row)), std::to_string(expected));
    ++rows;
  }
  EXPECT_EQ(rows, 15);
}

// Small models, counted by hand: h = 64, 2 layers, 4 heads of 16 (2
// key/value heads), a vocabulary of 1000. Llama's layer: q and o 64 x 64, k
// and v 64 x 32, the gated MLP 3 x 64 x 96, two norms of 64: 30848; with the
// embedding, the output layer and the final norm, 189760 in all.
std::string small(const std::string& type, const std::string& extra) {
  return R"({"model_type": ")" + type + R"(", "hidden_size": 64, "intermediate_size": 96,
             "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
             "vocab_size": 1000)" +
         extra + "}";
}

TEST(HfParameterLayoutTest, LayoutFieldsCountWhatTheModelHolds) {
  const std::string experts =
      R"(, "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 1)";
  const std::string gemma4 = R"(, "sliding_window": 8, "layer_types": ["sliding_attention", "full_attention"])";
  const std::string gemma4_experts =
      R"(, "enable_moe_block": true, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 32)";
  const std::pair<std::string, std::int64_t> cases[] = {
      {small("llama", ""), 189760},
      {small("llama", R"(, "tie_word_embeddings": false)"), 189760},
      // The output layer is the table.
      {small("llama", R"(, "tie_word_embeddings": true)"), 189760 - 64000},
      // Biases on q and o (64 each), k and v (32 each), the MLP's gate and up
      // (96 each) and down (64), in each layer.
      {small("llama", R"(, "attention_bias": true, "mlp_bias": true)"), 189760 + 2 * 448},
      // Qwen2's q, k and v projections always have biases.
      {small("qwen2", ""), 189760 + 2 * 128},
      // Qwen3: a query and a key norm of head_dim in each layer.
      {small("qwen3", ""), 189760 + 2 * 32},
      // Qwen3's MoE: 8 experts of 3 x 64 x 32 and the 64 x 8 router in place
      // of the MLP.
      {small("qwen3_moe", experts), 189760 + 2 * (32 + 8 * 6144 + 512 - 18432)},
      // Gemma 3: tied; four norms per layer (before and after the attention
      // and the MLP) and the query and key norms: 30848 + 128 + 32 a layer.
      {small("gemma3_text", R"(, "sliding_window": 8, "sliding_window_pattern": 2)"), 2 * 31008 + 64000 + 64},
      // Gemma 4: Gemma 3's and a scalar per layer.
      {small("gemma4_text", gemma4), 2 * 31009 + 64000 + 64},
      // Gemma 4's MoE block beside the MLP: 8 experts of 3 x 64 x 32, the
      // 64 x 8 router with its input scale (64) and per-expert scales (8), the
      // experts' input norm and each branch's output norm (3 x 64).
      {small("gemma4_text", gemma4 + gemma4_experts), 2 * (31009 + 8 * 6144 + 512 + 64 + 8 + 192) + 64000 + 64},
      // A layer that reuses the previous layer's keys and values has no key
      // and value projections (2 x 64 x 32) and no key norm (16).
      {small("gemma4_text", R"(, "sliding_window": 8, "num_kv_shared_layers": 1,)"
                            R"( "layer_types": ["sliding_attention", "sliding_attention"])"),
       2 * 31009 - 4096 - 16 + 64000 + 64},
  };
  for (const auto& [config, total] : cases) {
    SCOPED_TRACE(config);
    EXPECT_EQ(to_decimal(parameters_of(config).total().total), std::to_string(total));
  }
}

// Gemma 3 1B (google/gemma-3-1b-it, text only), with the sizes public copies
// of its config.json give, counts the Hugging Face Hub's safetensors.total of
// the checkpoint, 999,885,952 (as public lists of Hub model sizes give it):
// its four norms per layer and its query and key norms included.
TEST(HfParameterLayoutTest, Gemma3OneBCountsItsCheckpoint) {
  const std::string config = R"({"model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912,
      "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
      "vocab_size": 262144, "sliding_window": 512, "sliding_window_pattern": 6})";
  EXPECT_EQ(to_decimal(parameters_of(config).total().total), "999885952");
}

// DeepSeek-V4 against a reference implementation's modules, built on one
// small config and counted by parameter
// (tests/data/parameters/deepseek_v4_reference_modules.json, NeMo
// Automodel's DeepSeek-V4 modules as validation/deepseek_v4_reference_parameters.py
// builds them): each attention kind (window, CSA, HCA) with its norms, sink
// and compressors' position biases and norms, the hyper-connections of a
// sublayer and of a head, and a hash-routed layer's router (no expert bias).
TEST(HfParameterLayoutTest, DeepSeekV4CountsTheReferenceModules) {
  const nlohmann::json reference = nlohmann::json::parse(test_file("parameters/deepseek_v4_reference_modules.json"));
  const nlohmann::json& modules = reference["modules"];
  const auto module = [&](const std::string& name) { return modules[name]["parameters"].get<std::int64_t>(); };
  nlohmann::json config = reference["config"];
  config["model_type"] = "deepseek_v4";
  config["num_hidden_layers"] = 3;
  config["num_key_value_heads"] = 1;
  config["moe_intermediate_size"] = 7;
  config["n_shared_experts"] = 1;
  config["num_nextn_predict_layers"] = 1;
  config["num_hash_layers"] = 1;
  config["compress_ratios"].push_back(4);  // the MTP layer's: a CSA
  const HfImport imported = import_hf_config(config.dump()).value();
  const Model& model = imported.model;
  const std::int64_t h = 48, vocabulary = 40, experts = 5, ffn = 7;
  ASSERT_EQ(model.layers.size(), 3u);

  // A layer's mixer alone: the attention module and its input norm (h).
  const std::string kinds[] = {"attention_ratio_0", "attention_ratio_4", "attention_ratio_128"};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(kinds[i]);
    const Layer mixer{model.layers[i].mixer, std::nullopt};
    const std::vector<KindParameters> parts = layer_parameters(mixer, h, model.parameter_layout).value();
    Int128 sum = 0;
    for (const KindParameters& kind : parts) sum += kind.count.total;
    EXPECT_EQ(to_decimal(sum), std::to_string(module(kinds[i]) + h));
  }

  // The whole model: each layer's attention, two norms, two
  // hyper-connections and its MoE (routed and shared experts of 3 h ffn, the
  // router's h x experts, and its expert bias unless hash-routed); the MTP
  // depth's e and h projections (2 h x h), its three norms and its head's
  // hyper-connections beside its layer; the table, the output layer, the
  // final norm and the head's hyper-connections.
  const std::int64_t moe = (experts + 1) * 3 * h * ffn + module("hash_gate");
  const std::int64_t sublayers = 2 * h + 2 * module("hyper_connection");
  const std::int64_t layers = module("attention_ratio_0") + module("attention_ratio_4") +
                              module("attention_ratio_128") + 3 * (sublayers + moe) + 2 * experts;
  const std::int64_t mtp =
      2 * h * h + 3 * h + module("hyper_head") + module("attention_ratio_4") + sublayers + moe + experts;
  const std::int64_t head = 2 * vocabulary * h + h + module("hyper_head");
  EXPECT_EQ(to_decimal(count_parameters(model).value().total().total), std::to_string(layers + mtp + head));
}

TEST(HfParameterLayoutTest, BiasesTheCountCannotHoldAreErrors) {
  const std::pair<std::string, std::string> cases[] = {
      {small("llama", R"(, "attention_bias": true)"),
       "attention_bias = true: the parameter count holds biases on every projection, or on the query, key and value "
       "projections alone, not on the attention's projections without the MLP's"},
      {small("llama", R"(, "mlp_bias": true)"),
       "mlp_bias = true: the parameter count holds biases on every projection, or on the query, key and value "
       "projections alone, not on the MLP's without the attention's"},
      {small("qwen3", R"(, "attention_bias": true)"),
       "attention_bias = true: the parameter count holds biases on every projection, or on the query, key and value "
       "projections alone, not on the attention's projections without the MLP's"},
      {small("llama", R"(, "tie_word_embeddings": 1)"), "tie_word_embeddings = 1: must be true or false"},
  };
  for (const auto& [config, message] : cases) {
    SCOPED_TRACE(config);
    const Result<HfImport> imported = import_hf_config(config);
    ASSERT_FALSE(imported.ok());
    EXPECT_EQ(imported.error().message(), message);
  }
}

}  // namespace
}  // namespace trainflops
