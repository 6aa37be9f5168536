// The frameworks' own counts of hyper-connections and hashed n-gram memory
// (tests/data/hyper_connections, from their source), reproduced from
// trainflops' terms less exactly what each framework leaves out.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trainflops/layer_flops.h"

namespace trainflops {
namespace {

using nlohmann::json;

json data(const std::string& name) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/hyper_connections/" + name);
  EXPECT_TRUE(in.good()) << name;
  return json::parse(in);
}

Int128 forward(const Terms& terms) {
  Int128 sum = 0;
  for (const Term& term : terms) sum += term.forward_flops;
  return sum;
}

// A framework's float, which holds an exact integer at these sizes.
Int128 exact(double flops) {
  EXPECT_EQ(flops, std::round(flops));
  return static_cast<Int128>(static_cast<std::int64_t>(std::llround(flops)));
}

constexpr Convention kModel{Mode::kModel};

TEST(HyperConnectionFrameworksTest, MaxText) {
  int checked = 0;
  for (const json& c : data("maxtext.json")) {
    const json& config = c["config"];
    const std::int64_t tokens = config["per_device_batch_size"].get<std::int64_t>() * config["max_target_length"].get<std::int64_t>();
    const std::int64_t n = config["mhc_expansion_rate"], d = config["emb_dim"];
    SCOPED_TRACE(c.dump());
    if (c["function"] == "calculate_mhc_flops_per_layer") {
      // One sublayer, in FLOPs for the forward; MaxText charges the write
      // (post_outer) one FLOP per product where trainflops charges a
      // multiply-add, and has no final read (its head is left out).
      const Terms sublayer = hyper_connection_terms({HyperConnections::Variant::kManifold, n, 0}, 1, d, kModel);
      EXPECT_EQ(to_decimal(exact(c["flops"].get<double>())), to_decimal(tokens * (forward(sublayer) - n * d)));
    } else {
      // Keys, value, the gate's dot product and the convolution, trained
      // (x3) on every Engram layer; the gated value added to the streams is
      // left out.
      const std::int64_t e = (config["engram_max_ngram_size"].get<std::int64_t>() - 1) *
                             config["engram_num_heads"].get<std::int64_t>() * config["engram_head_dim"].get<std::int64_t>();
      const NgramMemory memory{e, n, config["engram_kernel_size"], 0};
      const Int128 layers = config["engram_layers"].size();
      const Int128 expected = kTrainingExpansion * layers * tokens * (forward(ngram_memory_terms(memory, d, kModel)) - 2 * n * d);
      const double total = (c["learnable_tflops"].get<double>() + c["attention_tflops"].get<double>()) * 1e12;
      EXPECT_NEAR(total / to_double(expected), 1.0, 1e-12);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

TEST(HyperConnectionFrameworksTest, Automodel) {
  int checked = 0;
  for (const json& c : data("automodel.json")) {
    SCOPED_TRACE(c.dump());
    const Int128 tokens = c["gbs"].get<std::int64_t>() * c["seq_len"].get<std::int64_t>();
    const std::int64_t h = c["hidden_size"];
    Int128 expected = 0;
    if (c["function"] == "deepseek_v41_flops") {
      const std::int64_t n = c["hc_mult"];
      const Int128 nh = Int128{n} * h;
      if (c["part"] == "hyper_connections") {
        // The coefficient projections alone: no read, write or mixing
        // ("elementwise"), no final read.
        const Terms layer = hyper_connection_terms({HyperConnections::Variant::kManifold, n, 0}, 2, h, kModel);
        expected = kTrainingExpansion * tokens * c["layers"].get<std::int64_t>() *
                   (forward(layer) - 2 * 2 * (2 * nh + n * nh));
      } else {
        // The key and value projections alone, on the Engram layers below
        // num_hidden_layers.
        const std::int64_t e = (c["engram_max_ngram_size"].get<std::int64_t>() - 1) *
                               c["engram_n_heads"].get<std::int64_t>() * c["engram_head_dim"].get<std::int64_t>();
        Int128 layers = 0;
        for (const json& id : c["engram_layer_ids"]) layers += id.get<std::int64_t>() < c["layers"].get<std::int64_t>();
        expected = kTrainingExpansion * tokens * layers *
                   (forward(ngram_memory_terms(NgramMemory{e, n, 0, 0}, h, kModel)) - 2 * 2 * nh);
      }
    } else {
      const std::int64_t n = c["hc_count"];
      const Int128 nh = Int128{n} * h;
      if (c["part"] == "hyper_connections") {
        // The gate and write-gate projections: no average of the gated
        // streams, no write; the final read's gate without its average.
        const HyperConnections hc{HyperConnections::Variant::kGatedResidual, n, c["hc_lowrank"]};
        const Int128 per_layer = forward(hyper_connection_terms(hc, 2, h, kModel)) - 2 * 2 * 2 * nh;
        const Int128 head = forward({hyper_connection_head_term(hc, h)}) - 2 * nh;
        expected = kTrainingExpansion * tokens * (c["layers"].get<std::int64_t>() * per_layer + head);
      } else {
        // Keys, value and the convolution; no gate, no gated value.
        const NgramMemory memory{c["ple_embed_dim"], n, c["ple_conv_kernel_size"], 0};
        expected = kTrainingExpansion * tokens * static_cast<std::int64_t>(c["ple_layer_ids"].size()) *
                   (forward(ngram_memory_terms(memory, h, kModel)) - 2 * 2 * nh);
      }
    }
    EXPECT_EQ(to_decimal(exact(c["flops"].get<double>())), to_decimal(expected));
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

}  // namespace
}  // namespace trainflops
