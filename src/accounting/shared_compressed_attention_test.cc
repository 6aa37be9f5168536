// DeepSeek-V4.1 attention (CSA2) in model and executed modes, against
// per-query loops over each document's keys, cache entries and candidate
// blocks; and the rules of its description.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "accounting/report_component.h"
#include "trainflops/count.h"
#include "trainflops/native_config.h"

namespace trainflops {
namespace {

using nlohmann::json;

struct Expected {
  Int128 projections = 0, window = 0, selected = 0, compressor = 0, indexer_projections = 0, scoring = 0;
};

// Walks one document of `length` tokens through one layer `a` (native
// config fields): query i sees the keys i - w + 1 .. i, and the entries of
// the cache completed by then (entry e ends at token e r); it attends the
// first k of them (any k: the count is the same); a candidate consumer has
// as candidates the entries of its own (last) block and of K - 1 earlier
// blocks, scores them (all it sees when executed) and attends k of them.
void walk(const json& a, std::int64_t h, std::int64_t length, bool executed, Expected& out) {
  const Int128 n = a["num_heads"], dv = a["head_dim"], q_lora = a["q_lora_rank"], w = a["window"];
  const Int128 norm = executed ? 0 : 1;
  const std::int64_t r = a.value("compress_ratio", 0);
  const bool writes = a.value("writes_cache", false), indexes = a.value("runs_indexer", false);
  const bool consumer = a.value("candidates", "") == "consumer";
  const Int128 nh = a.value("indexer_num_heads", 0), hd = a.value("indexer_head_dim", 0);
  for (std::int64_t i = 1; i <= length; ++i) {
    out.projections += 6 * (q_lora * (h + n * dv + norm) + h * dv + norm * dv + n * dv * Int128{a["o_lora_rank"]} +
                            Int128{a["o_groups"]} * a["o_lora_rank"].get<std::int64_t>() * h);
    for (std::int64_t key = 1; key <= i; ++key) out.window += i - key < w ? 6 * 2 * n * dv : 0;
    if (r == 0) continue;
    std::int64_t entries = 0;
    for (std::int64_t end = r; end <= i; end += r) ++entries;
    const auto candidate = [&](std::int64_t e) {
      if (!consumer) return true;
      const std::int64_t block = (e - 1) / a["candidate_block_size"].get<std::int64_t>();
      const std::int64_t own = (entries - 1) / a["candidate_block_size"].get<std::int64_t>();
      return block == own || block < a["candidate_blocks"].get<std::int64_t>() - 1;
    };
    std::int64_t attended = 0;
    for (std::int64_t e = 1; e <= entries; ++e) {
      if (candidate(e) && attended < a["topk"].get<std::int64_t>()) ++attended;
    }
    out.selected += attended * 6 * 2 * n * dv;
    if (writes) out.compressor += 6 * (r > 1 ? 2 : 1) * Int128{h} * dv;
    if (!indexes) continue;
    out.indexer_projections += 2 * (q_lora * nh * hd + h * nh) + (writes && i % r == 0 ? 2 * dv * hd : 0);
    for (std::int64_t e = 1; e <= entries; ++e) {
      if (executed || candidate(e)) out.scoring += 2 * (nh * hd + (executed ? nh : 0));
    }
  }
}

json random_layer(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
  json a = {
      {"type", "csa2"},         {"num_heads", pick(1, 4)},   {"head_dim", pick(1, 16)}, {"q_lora_rank", pick(1, 8)},
      {"o_groups", pick(1, 3)}, {"o_lora_rank", pick(1, 8)}, {"window", pick(1, 40)},   {"compress_ratio", pick(0, 5)}};
  if (a["compress_ratio"] == 0) return a;
  a["topk"] = pick(1, 30);
  a["writes_cache"] = pick(0, 1) == 1;
  a["runs_indexer"] = pick(0, 1) == 1;
  if (!a["runs_indexer"]) return a;
  a["indexer_num_heads"] = pick(1, 4);
  a["indexer_head_dim"] = pick(1, 8);
  const std::int64_t role = pick(0, 2);
  if (role == 0) return a;
  a["candidates"] = role == 1 ? "source" : "consumer";
  a["candidate_blocks"] = pick(1, 6);
  a["candidate_block_size"] = pick(1, 9);
  return a;
}

TEST(SharedCompressedAttentionTest, ExactModesMatchPerQueryLoops) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    const json a = random_layer(rng);
    const std::int64_t h = 8;
    const json config = {
        {"hidden_size", h}, {"vocab_size", 10}, {"mixers", {{"a", a}}}, {"layers", {{{"mixer", "a"}}}}};
    SCOPED_TRACE(config.dump());
    const Result<Model> model = parse_native_config(config.dump());
    ASSERT_TRUE(model.ok()) << model.error().message();
    // Documents below and above every window, k, ratio and candidate set.
    const std::vector<std::int64_t> docs = {1, static_cast<std::int64_t>(rng() % 400),
                                            static_cast<std::int64_t>(rng() % 30), 3};
    for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
      Expected expected;
      for (std::int64_t length : docs) walk(a, h, length, mode == Mode::kExecuted, expected);
      const Report report = count(model.value(), PackedDocuments{docs}, mode).value();
      EXPECT_EQ(to_decimal(flops_of(report, Component::kAttentionProjections)), to_decimal(expected.projections));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kCoreAttention)), to_decimal(expected.window));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kDsaCoreAttention)), to_decimal(expected.selected));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kKvCompressor)), to_decimal(expected.compressor));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kIndexerProjections)), to_decimal(expected.indexer_projections));
      EXPECT_EQ(to_decimal(flops_of(report, Component::kIndexerScoring)), to_decimal(expected.scoring));
    }
  }
}

TEST(SharedCompressedAttentionTest, InvalidDescriptions) {
  const json base = {{"type", "csa2"},       {"num_heads", 2},       {"head_dim", 8},
                     {"q_lora_rank", 4},     {"o_groups", 1},        {"o_lora_rank", 2},
                     {"window", 4},          {"compress_ratio", 2},  {"topk", 3},
                     {"writes_cache", true}, {"runs_indexer", true}, {"indexer_num_heads", 2},
                     {"indexer_head_dim", 4}};
  struct Case {
    json changes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"topk", 0}}, "layers[0].mixer.topk = 0: must be a positive integer"},
      {{{"compress_ratio", -1}}, "layers[0].mixer.compress_ratio = -1: must be a non-negative integer"},
      {{{"indexer_head_dim", 0}}, "layers[0].mixer.indexer_head_dim = 0: must be a positive integer"},
      {{{"candidates", "source"}, {"candidate_blocks", 0}, {"candidate_block_size", 8}},
       "layers[0].mixer.candidate_blocks = 0: must be a positive integer"},
      {{{"candidates", "both"}}, "mixers.a.candidates = \"both\": must be \"source\" or \"consumer\""},
  };
  for (const Case& c : cases) {
    json a = base;
    a.update(c.changes);
    const json config = {
        {"hidden_size", 8}, {"vocab_size", 10}, {"mixers", {{"a", a}}}, {"layers", {{{"mixer", "a"}}}}};
    const Result<Model> model = parse_native_config(config.dump());
    ASSERT_FALSE(model.ok()) << c.message;
    EXPECT_EQ(model.error().message(), c.message);
  }
}

// What the model rules refuse that the native config cannot say: a cache
// written or indexed without being read, a candidate role off an index source.
TEST(SharedCompressedAttentionTest, ModelRules) {
  SharedCompressedAttention a{2, 8, 4, 1, 2, 4, 0};
  Model model;
  model.hidden_size = 8;
  model.vocab_size = 10;
  const auto message = [&](const SharedCompressedAttention& attention) {
    model.layers = LayerStack{Layer{Mixer{attention}, std::nullopt}};
    const Status status = validate(model);
    return status.ok() ? std::string("ok") : status.error().message();
  };
  EXPECT_EQ(message(a), "ok");
  a.writes_cache = true;
  EXPECT_EQ(message(a),
            "layers[0].mixer.writes_cache = 1: a layer that reads no cache (compress_ratio = 0) writes none");
  a.writes_cache = false;
  a.runs_indexer = true;
  EXPECT_EQ(message(a),
            "layers[0].mixer.runs_indexer = 1: a layer that reads no cache (compress_ratio = 0) indexes none");
  a.runs_indexer = false;
  a.compress_ratio = 1;
  a.topk = 4;
  a.candidate_role = SharedCompressedAttention::CandidateRole::kConsumer;
  EXPECT_EQ(message(a), "layers[0].mixer.runs_indexer = 0: a candidate source or consumer must be an index source");
}

}  // namespace
}  // namespace trainflops
