// Kimi Delta Attention's delta rule in executed mode: the chunked form,
// against a walk over each document's chunks that counts every product of
// the form one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "accounting/report_component.h"
#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

// One head's forward multiply-adds over a document of `length` tokens, d
// channels, chunks of `chunk`: per chunk of c tokens, each (row, column)
// pair of the c x c key-key and query-key scores takes d; each row i of the
// forward substitution multiplies its i entries by the i x i rows above;
// the transformed keys and values and the scores' read of the new values
// take d per (row, column) pair; each token's reads of the state and its
// share of the update take d^2 each.
Int128 walk(std::int64_t length, std::int64_t d, std::int64_t chunk) {
  Int128 fmas = 0;
  for (std::int64_t start = 0; start < length; start += chunk) {
    const std::int64_t c = std::min(chunk, length - start);
    for (std::int64_t row = 0; row < c; ++row) {
      for (std::int64_t column = 0; column < c; ++column) fmas += 5 * d;  // kk, qk, keys, values, output
      for (std::int64_t a = 0; a < row; ++a) {
        for (std::int64_t b = 0; b < row; ++b) ++fmas;  // substitution
      }
      fmas += 3 * d * d;  // new values, output, update
    }
  }
  return fmas;
}

TEST(KimiDeltaAttentionTest, ExecutedModeCountsTheChunkedDeltaRule) {
  struct Case {
    std::int64_t heads, head_dim;
    std::string chunk;  // the native config's field, empty for the default (64)
    std::int64_t chunk_size;
  };
  const std::vector<std::int64_t> docs = {1, 63, 64, 65, 200, 7};
  for (const Case& c : {Case{2, 3, "", 64}, Case{1, 16, ", \"chunk_size\": 32", 32},
                        Case{3, 8, ", \"chunk_size\": 5", 5}, Case{4, 4, ", \"chunk_size\": 1", 1}}) {
    const std::string config = R"({"hidden_size": 16, "vocab_size": 10, "mixers": {"kda": {"type": "kda",
      "num_heads": )" + std::to_string(c.heads) + R"(, "head_dim": )" + std::to_string(c.head_dim) +
                               R"(, "conv_kernel_dim": 4, "forget_gate_rank": 2)" + c.chunk +
                               R"(}}, "layers": [{"mixer": "kda"}]})";
    SCOPED_TRACE(config);
    const Result<Model> model = parse_native_config(config);
    ASSERT_TRUE(model.ok()) << model.error().message();
    const Int128 model_mode =
        flops_of(count(model.value(), PackedDocuments{docs}, Mode::kModel).value(), Component::kKimiDeltaAttention);
    const Int128 executed = flops_of(count(model.value(), PackedDocuments{docs}, Mode::kExecuted).value(),
                                     Component::kKimiDeltaAttention);
    // Both modes count the same projections and convolutions; model mode
    // the recurrent form's 4 d^2 per token and head. Trained: 3 x 2 FLOPs.
    Int128 chunked = 0, recurrent = 0;
    for (const std::int64_t length : docs) {
      chunked += c.heads * walk(length, c.head_dim, c.chunk_size);
      recurrent += c.heads * length * 4 * c.head_dim * c.head_dim;
    }
    EXPECT_EQ(to_decimal(executed - model_mode), to_decimal(6 * (chunked - recurrent)));
  }
}

}  // namespace
}  // namespace trainflops
