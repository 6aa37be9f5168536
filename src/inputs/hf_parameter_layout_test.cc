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
  EXPECT_EQ(rows, 11);
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
