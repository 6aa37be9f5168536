// The delta rule in executed mode, Kimi Delta Attention's, the gated delta
// net's and the gated delta product's: the chunked form, against a walk over
// each document's chunks that counts every product of the form one by one,
// and the gated delta product's backward against flash-linear-attention's
// own reference (tests/data/gated_delta_product).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
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

// executed minus model mode's count of `component` over `docs` (both count
// the same projections and convolutions).
Int128 executed_over_model(std::string_view config, Component component,
                           const std::vector<std::int64_t>& docs = kDocs) {
  const Result<Model> model = parse_native_config(config);
  EXPECT_TRUE(model.ok()) << model.error().message();
  if (!model.ok()) return 0;
  const Int128 model_mode = flops_of(count(model.value(), PackedDocuments{docs}, Mode::kModel).value(), component);
  const Int128 executed = flops_of(count(model.value(), PackedDocuments{docs}, Mode::kExecuted).value(), component);
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

// flash-linear-attention's chunk_gated_delta_product forward for one head
// over a document of `length` tokens with `steps` keys each: the steps' keys,
// values and betas as steps * length positions in chunks of 64, each chunk's
// key-key scores and transformed keys (dk per pair of its positions) and
// values (dv per pair), its substitution (row i an i x i product), the
// transformed keys' read of the state and its update (dk dv each per
// position); then per chunk of 64 tokens each query's read of the state (dk
// dv) and, for each step, its scores with that step's keys of the chunk's
// tokens (dk per pair) and their read of the new values (dv per pair).
Int128 product_forward_walk(std::int64_t length, std::int64_t steps, std::int64_t dk, std::int64_t dv) {
  constexpr std::int64_t kChunk = 64;
  Int128 fmas = 0;
  for (std::int64_t start = 0; start < steps * length; start += kChunk) {
    const std::int64_t c = std::min(kChunk, steps * length - start);
    for (std::int64_t row = 0; row < c; ++row) {
      for (std::int64_t column = 0; column < c; ++column) fmas += 2 * dk + dv;
      fmas += row * row;
      fmas += 2 * dk * dv;
    }
  }
  for (std::int64_t start = 0; start < length; start += kChunk) {
    const std::int64_t c = std::min(kChunk, length - start);
    for (std::int64_t query = 0; query < c; ++query) {
      fmas += dk * dv;
      for (std::int64_t step = 0; step < steps; ++step) {
        for (std::int64_t key = 0; key < c; ++key) fmas += dk + dv;
      }
    }
  }
  return fmas;
}

// Executed mode counts the gated delta product's forward as
// chunk_gated_delta_product runs it and its backward as twice the forward
// of fla's reference chunk_gated_delta_product_ref (the chunked gated delta
// rule over the interleaved positions, whose backward the kernel runs),
// counted document by document by that reference itself. Model mode counts
// Megatron-LM's (4n + 3) d dk FLOPs per token, trained.
TEST(GatedDeltaProductTest, ExecutedModeCountsFlashLinearAttentionsChunkedForm) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/gated_delta_product/fla_chunk_ref.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json data = nlohmann::json::parse(in);
  ASSERT_EQ(data["chunk_size"], kGatedDeltaProductChunkSize);
  int checked = 0;
  for (const nlohmann::json& r : data["records"]) {
    const std::int64_t steps = r["num_householder"], heads = r["heads"], dk = r["key_dim"], dv = r["value_dim"];
    const auto docs = r["documents"].get<std::vector<std::int64_t>>();
    const auto reference = r["forward_fmas"].get<std::vector<std::int64_t>>();
    ASSERT_EQ(docs.size(), reference.size());
    const std::string config = R"({"hidden_size": 8, "vocab_size": 10, "mixers": {"p": {"type": "gdp", "inner_dim": )" +
                               std::to_string(heads * dv) + R"(, "num_heads": )" + std::to_string(heads) +
                               R"(, "num_groups": 1, "state_dim": )" + std::to_string(dk) +
                               R"(, "num_householder": )" + std::to_string(steps) +
                               R"(}}, "layers": [{"mixer": "p"}]})";
    SCOPED_TRACE(config);
    Int128 forward = 0, backward = 0, recurrent = 0;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      forward += heads * product_forward_walk(docs[i], steps, dk, dv);
      backward += 2 * Int128{reference[i]};
      recurrent += 3 * Int128{docs[i]} * (4 * steps + 3) * heads * dv * dk;  // FLOPs
    }
    EXPECT_EQ(to_decimal(executed_over_model(config, Component::kGatedDeltaProduct, docs)),
              to_decimal(2 * (forward + backward) - recurrent));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace trainflops
