// The delta rule in executed mode, Kimi Delta Attention's and the gated delta
// net's: the chunked form, against a walk over each document's chunks that
// counts every product of the form one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "accounting/report_component.h"
#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

// One head's forward multiply-adds over a document of `length` tokens, a
// dk x dv state, chunks of `chunk`: per chunk of c tokens, each (row, column)
// pair of the c x c key-key and query-key scores and of the transformed keys
// takes dk; of the transformed values and the scores' read of the new values,
// dv; each row i of the forward substitution multiplies its i entries by the
// i x i rows above; each token's reads of the state and its share of the
// update take dk dv each.
Int128 walk(std::int64_t length, std::int64_t dk, std::int64_t dv, std::int64_t chunk) {
  Int128 fmas = 0;
  for (std::int64_t start = 0; start < length; start += chunk) {
    const std::int64_t c = std::min(chunk, length - start);
    for (std::int64_t row = 0; row < c; ++row) {
      for (std::int64_t column = 0; column < c; ++column) {
        fmas += 3 * dk;  // key-key, query-key, transformed keys
        fmas += 2 * dv;  // transformed values, output
      }
      for (std::int64_t a = 0; a < row; ++a) {
        for (std::int64_t b = 0; b < row; ++b) ++fmas;  // substitution
      }
      fmas += 3 * dk * dv;  // new values, output, update
    }
  }
  return fmas;
}

const std::vector<std::int64_t> kDocs = {1, 63, 64, 65, 200, 7};

// executed minus model mode's count of `component` (both count the same
// projections and convolutions).
Int128 executed_over_model(std::string_view config, Component component) {
  const Result<Model> model = parse_native_config(config);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) return 0;
  const Int128 model_mode = flops_of(count(model.value(), PackedDocuments{kDocs}, Mode::kModel).value(), component);
  const Int128 executed = flops_of(count(model.value(), PackedDocuments{kDocs}, Mode::kExecuted).value(), component);
  return executed - model_mode;
}

TEST(KimiDeltaAttentionTest, ExecutedModeCountsTheChunkedDeltaRule) {
  struct Case {
    std::int64_t heads, head_dim;
    std::string chunk;  // the native config's field, empty for the default (64)
    std::int64_t chunk_size;
  };
  for (const Case& c : {Case{2, 3, "", 64}, Case{1, 16, ", \"chunk_size\": 32", 32},
                        Case{3, 8, ", \"chunk_size\": 5", 5}, Case{4, 4, ", \"chunk_size\": 1", 1}}) {
    const std::string config = R"({"hidden_size": 16, "vocab_size": 10, "mixers": {"kda": {"type": "kda",
      "num_heads": )" + std::to_string(c.heads) + R"(, "head_dim": )" + std::to_string(c.head_dim) +
                               R"(, "conv_kernel_dim": 4, "forget_gate_rank": 2)" + c.chunk +
                               R"(}}, "layers": [{"mixer": "kda"}]})";
    SCOPED_TRACE(config);
    // Model mode counts the recurrent form's 4 d^2 per token and head.
    // Trained: 3 x 2 FLOPs.
    Int128 chunked = 0, recurrent = 0;
    for (const std::int64_t length : kDocs) {
      chunked += c.heads * walk(length, c.head_dim, c.head_dim, c.chunk_size);
      recurrent += c.heads * length * 4 * c.head_dim * c.head_dim;
    }
    EXPECT_EQ(to_decimal(executed_over_model(config, Component::kKimiDeltaAttention)),
              to_decimal(6 * (chunked - recurrent)));
  }
}

// The gated delta net's heads are its value heads, each with its group's key
// head; model mode counts Megatron-LM's recurrent 4 dv^2 per token and value
// head whatever dk.
TEST(GatedDeltaNetTest, ExecutedModeCountsTheChunkedDeltaRulePerValueHead) {
  struct Case {
    std::string type;
    std::int64_t key_heads, value_heads, key_dim, value_dim;
    std::string chunk;  // the native config's field, empty for the default (64)
    std::int64_t chunk_size;
  };
  for (const Case& c : {Case{"gdn", 2, 4, 3, 5, "", 64}, Case{"gdn", 1, 3, 6, 2, ", \"chunk_size\": 16", 16},
                        Case{"gdn2", 2, 2, 4, 4, ", \"chunk_size\": 5", 5},
                        Case{"gdn", 16, 32, 8, 8, ", \"chunk_size\": 1", 1}}) {
    const std::string config = R"({"hidden_size": 16, "vocab_size": 10, "mixers": {"g": {"type": ")" + c.type +
                               R"(", "key_head_dim": )" + std::to_string(c.key_dim) +
                               R"(, "value_head_dim": )" + std::to_string(c.value_dim) +
                               R"(, "num_key_heads": )" + std::to_string(c.key_heads) +
                               R"(, "num_value_heads": )" + std::to_string(c.value_heads) +
                               R"(, "conv_kernel_dim": 4)" + c.chunk + R"(}}, "layers": [{"mixer": "g"}]})";
    SCOPED_TRACE(config);
    Int128 chunked = 0, recurrent = 0;
    for (const std::int64_t length : kDocs) {
      chunked += c.value_heads * walk(length, c.key_dim, c.value_dim, c.chunk_size);
      recurrent += c.value_heads * length * 4 * c.value_dim * c.value_dim;
    }
    EXPECT_EQ(to_decimal(executed_over_model(config, Component::kGatedDeltaNet)),
              to_decimal(6 * (chunked - recurrent)));
  }
}

}  // namespace
}  // namespace trainflops
