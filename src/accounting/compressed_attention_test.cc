// DeepSeek-V4 attention and sliding-window / chunked attention in the exact
// modes, against per-query loops over each document's keys and compressed
// entries; and the conventions megatron mode keeps for them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "trainflops/batch.h"
#include "trainflops/count.h"
#include "trainflops/megatron_args.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

using nlohmann::json;

Int128 core_of(const Report& report, Component wanted) {
  for (const ComponentFlops& part : report.components) {
    if (part.component == wanted) return part.flops.exact ? *part.flops.exact : static_cast<Int128>(part.flops.value);
  }
  return 0;
}

// Attention FLOPs of one DeepSeek-V4 layer of compression `ratio` at query
// position i: walks the window's keys and the compressed entries (entry e
// covers positions (e-1)r+1 .. er and exists once complete).
Int128 dsv4_attention_at(const json& a, std::int64_t ratio, std::int64_t i) {
  const Int128 n = a["num_attention_heads"], dv = a["v_head_dim"], w = a["csa_window_size"];
  const Int128 nh = a["dsa_indexer_n_heads"], hd = a["dsa_indexer_head_dim"], k = a["dsa_indexer_topk"];
  Int128 fmas = 0;
  for (std::int64_t key = 1; key <= i; ++key) fmas += i - key < w ? 2 * n * dv : 0;
  if (ratio == 0) return 3 * 2 * fmas;
  Int128 entries = 0;
  for (std::int64_t end = ratio; end <= i; end += ratio) ++entries;
  if (ratio == 4) {
    for (Int128 e = 1; e <= entries; ++e) fmas += (e <= k ? 2 * n * dv : 0) + 2 * nh * hd;
  } else {
    for (Int128 e = 1; e <= entries; ++e) fmas += 2 * n * dv;
  }
  return 3 * 2 * fmas;
}

json dsv4_args(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  json a = {{"num_layers", pick(1, 4)},
            {"hidden_size", 64},
            {"num_attention_heads", pick(1, 4)},
            {"ffn_hidden_size", 32},
            {"swiglu", true},
            {"padded_vocab_size", 100},
            {"multi_latent_attention", true},
            {"q_lora_rank", pick(1, 16)},
            {"v_head_dim", pick(1, 16)},
            {"experimental_attention_variant", "dsv4_hybrid"},
            {"o_groups", pick(1, 4)},
            {"o_lora_rank", pick(1, 8)},
            {"csa_window_size", pick(1, 20)},
            {"dsa_indexer_n_heads", pick(1, 4)},
            {"dsa_indexer_head_dim", pick(1, 8)},
            {"dsa_indexer_topk", pick(1, 6)},
            {"seq_length", 64}};
  const std::int64_t depths = pick(0, 1);
  a["mtp_num_layers"] = depths;
  std::vector<std::int64_t> ratios;
  for (std::int64_t i = 0; i < a["num_layers"].get<std::int64_t>() + depths; ++i) {
    ratios.push_back(std::vector<std::int64_t>{0, 4, 128}[pick(0, 2)]);
  }
  a["csa_compress_ratios"] = ratios;
  return a;
}

Report count_record(const json& args, const std::vector<std::int64_t>& docs, Mode mode) {
  const json record = {{"args", args}, {"mode", mode_name(mode)}, {"docs", docs}};
  const Result<CountRequest> request = parse_count_request(record.dump());
  EXPECT_TRUE(request.ok()) << request.error().message();
  return count(request.value().model, request.value().workload, mode).value();
}

// The attention terms that depend on positions (window keys, compressed
// entries, the CSA indexer's scores) equal the per-query loops exactly.
TEST(CompressedAttentionTest, ModelModeMatchesPerQueryLoops) {
  std::mt19937_64 rng(4096);
  for (int trial = 0; trial < 200; ++trial) {
    const json args = dsv4_args(rng);
    std::vector<std::int64_t> docs = {1, static_cast<std::int64_t>(rng() % 600), static_cast<std::int64_t>(rng() % 40)};
    SCOPED_TRACE(args.dump());
    const Report report = count_record(args, docs, Mode::kModel);
    Int128 expected = 0;
    for (std::int64_t length : docs) {
      for (std::int64_t i = 1; i <= length; ++i) {
        for (const json& ratio : args["csa_compress_ratios"]) expected += dsv4_attention_at(args, ratio, i);
      }
    }
    const Int128 got = core_of(report, Component::kCoreAttention) + core_of(report, Component::kDsaCoreAttention) +
                       core_of(report, Component::kIndexerScoring);
    EXPECT_EQ(to_decimal(got), to_decimal(expected));
  }
}

// A sliding window or chunks shrink the exact count; megatron mode, like
// Megatron-LM, charges full causal attention.
TEST(CompressedAttentionTest, WindowedAndChunkedAttention) {
  const auto config = [](const std::string& extra) {
    return R"({"hidden_size": 64, "vocab_size": 100,
      "mixers": {"a": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 16)" +
           extra + R"(}},
      "layers": [{"mixer": "a"}]})";
  };
  const Model full = parse_native_config(config("")).value();
  const Model window = parse_native_config(config(R"(, "window": 3)")).value();
  const Model chunk = parse_native_config(config(R"(, "chunk": 4)")).value();
  EXPECT_EQ(layer_kind(window.layers[0]), "swa");
  EXPECT_EQ(layer_kind(chunk.layers[0]), "chunked");
  const Workload docs = PackedDocuments{{10, 2}};
  const Int128 per_pair = 3 * 2 * 2 * 64;  // trained, 2 FLOPs per FMA, 2q FMAs with q = 64
  // Window 3: 10 tokens see 1+2+3*8 = 27 keys, 2 tokens see 1+2 = 3.
  EXPECT_EQ(core_of(count(window, docs, Mode::kModel).value(), Component::kCoreAttention), per_pair * 30);
  // Chunks of 4: 10 tokens = 4+4+2 -> 10 + 10 + 3 pairs; 2 tokens: 3.
  EXPECT_EQ(core_of(count(chunk, docs, Mode::kModel).value(), Component::kCoreAttention), per_pair * 26);
  EXPECT_EQ(core_of(count(full, docs, Mode::kModel).value(), Component::kCoreAttention), per_pair * (55 + 3));
  for (const Model* model : {&window, &chunk}) {
    EXPECT_EQ(count(*model, docs, Mode::kMegatron).value().total.value,
              count(full, docs, Mode::kMegatron).value().total.value);
  }
  EXPECT_EQ(parse_native_config(config(R"(, "window": 3, "chunk": 4)")).error().message(),
            "layers[0].mixer.chunk = 4: cannot be combined with window = 3");
}

TEST(CompressedAttentionTest, MegatronNeedsTheSeqLengthForPackedBatches) {
  std::mt19937_64 rng(1);
  json args = dsv4_args(rng);
  args["csa_compress_ratios"] = std::vector<int>(args["csa_compress_ratios"].size(), 4);
  args.erase("seq_length");
  const json record = {{"args", args}, {"mode", "megatron"}, {"docs", {100, 20}}};
  const CountRequest request = parse_count_request(record.dump()).value();
  EXPECT_EQ(count(request.model, request.workload, Mode::kMegatron).error().message(),
            "seq_length is missing: Megatron-LM estimates DeepSeek-V4's selected entries from it; give the model's "
            "seq_length (args) or a BSHD batch");
  EXPECT_TRUE(count(request.model, Bshd{2, 64}, Mode::kMegatron).ok());
}

TEST(CompressedAttentionTest, Errors) {
  std::mt19937_64 rng(2);
  json args = dsv4_args(rng);
  args["csa_compress_ratios"][0] = 8;
  EXPECT_EQ(model_from_megatron_args(parse_megatron_args_json(args.dump()).value().args).error().message(),
            "csa_compress_ratios[0] = 8: must be 0 (window only), 4 (CSA) or 128 (HCA)");
  args["csa_compress_ratios"] = {4};
  args["num_layers"] = 3;
  args["mtp_num_layers"] = 0;
  EXPECT_EQ(model_from_megatron_args(parse_megatron_args_json(args.dump()).value().args).error().message(),
            "csa_compress_ratios: the list has 1 entries; it must have num_layers + mtp_num_layers = 3");
  args["csa_compress_ratios"] = {4, 4, 4};
  args.erase("o_groups");
  EXPECT_EQ(model_from_megatron_args(parse_megatron_args_json(args.dump()).value().args).error().message(),
            "o_groups is missing: required for DeepSeek-V4 attention layers");
}

}  // namespace
}  // namespace trainflops
