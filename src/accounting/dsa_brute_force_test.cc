// An independent brute-force count of DSA models: per-query loops over the
// positions of every document, the keys or pools each query sees, and every
// layer, read straight from Megatron-LM arguments (its own numbering of layers
// for index sharing, its own grad-mode rules) with no closed form and no
// library code but the JSON parser. The library must agree exactly on random
// models and documents, in model and executed modes: standard and hybrid
// paths, KPool 1/2/4/8 with the tail on and off, sharing settings, MTP depths,
// patterns with `[ ]` and `|`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "trainflops/batch.h"
#include "trainflops/count.h"
#include "trainflops/dsa.h"

namespace trainflops {
namespace {

using nlohmann::json;

Int128 get(const json& a, const char* key, Int128 otherwise = 0) {
  return a.contains(key) && !a[key].is_null() ? Int128{a[key].get<std::int64_t>()} : otherwise;
}

struct BruteForce {
  const json& a;
  bool executed = false;  // what the kernels run, instead of model FLOPs
  Int128 h = get(a, "hidden_size"), n = get(a, "num_attention_heads");
  Int128 qk = get(a, "qk_head_dim"), rope = get(a, "qk_pos_emb_head_dim"), v = get(a, "v_head_dim");
  Int128 q_lora = get(a, "q_lora_rank"), kv_lora = get(a, "kv_lora_rank");
  Int128 nh = get(a, "dsa_indexer_n_heads"), hd = get(a, "dsa_indexer_head_dim"), k = get(a, "dsa_indexer_topk");
  Int128 p = get(a, "dsa_kpool_size", 1);
  bool tail = !a.contains("dsa_kpool_tail") || a["dsa_kpool_tail"].is_null() || a["dsa_kpool_tail"].get<bool>();
  Int128 freq = get(a, "dsa_indexer_topk_freq", 1), offset = get(a, "dsa_indexer_skip_topk_offset");
  Int128 ffx = a.value("swiglu", false) ? 3 : 2;

  std::string grad_mode() const {
    if (a.contains("dsa_indexer_grad_mode") && !a["dsa_indexer_grad_mode"].is_null()) {
      return a["dsa_indexer_grad_mode"];
    }
    const double coeff = a.contains("dsa_indexer_loss_coeff") && !a["dsa_indexer_loss_coeff"].is_null()
                             ? a["dsa_indexer_loss_coeff"].get<double>()
                             : 0;
    if (coeff <= 0) return "off";
    return a.value("dsa_indexer_use_sparse_loss", false) ? "sparse" : "detached";
  }

  bool runs_indexer(Int128 number) const {
    Int128 start = offset > 1 ? offset : 1;
    Int128 shifted = number - start > 0 ? number - start : 0;
    return shifted % freq == 0;
  }

  // GEMMs of the MLA projections, in multiply-adds per token.
  Int128 mla_projection_fmas() const {
    Int128 fmas = 0;
    const Int128 norm = executed ? 0 : 1;  // a norm is no product; Megatron-LM counts it
    if (q_lora > 0) {
      fmas += h * q_lora;                // down projection
      fmas += norm * q_lora;             // its norm
      fmas += q_lora * n * (qk + rope);  // up projection
    } else {
      fmas += h * n * (qk + rope);
    }
    fmas += h * (kv_lora + rope) + norm * kv_lora + kv_lora * n * (qk + v);
    fmas += n * v * h;
    return fmas;
  }

  Int128 pair_fmas() const { return n * (qk + rope) + n * v; }
  // Scores against the cached latent and its rotary key, values in the latent.
  Int128 absorbed_pair_fmas() const { return n * (kv_lora + rope) + n * kv_lora; }
  // An indexer's (query, key) or (query, pool) score: the heads' dot
  // products, and when executed their weighted sum.
  Int128 scoring_fmas() const { return nh * hd + (executed ? nh : 0); }

  // One layer at query position `i` of a document of `length` tokens.
  Int128 layer_at(char symbol, Int128 number, Int128 i, Int128 length) const {
    Int128 flops = 0;
    switch (symbol) {
      case '+': {
        flops += 3 * 2 * mla_projection_fmas();
        for (Int128 key = 1; key <= i; ++key) flops += 3 * 2 * pair_fmas();
        return flops;
      }
      case 'D': {
        flops += 3 * 2 * mla_projection_fmas();
        Int128 attended = 0;
        if (p == 1) {
          for (Int128 key = 1; key <= i; ++key) attended += i - key < k;  // the k nearest keys
        } else {
          Int128 complete = 0;
          for (Int128 pool_end = p; pool_end <= i; pool_end += p) ++complete;
          const Int128 selected = complete < k / p ? complete : k / p;
          for (Int128 pool = 0; pool < selected; ++pool) attended += p;
          if (tail) {
            for (Int128 key = complete * p + 1; key <= i; ++key) ++attended;
          }
        }
        flops += 3 * 2 * (executed ? absorbed_pair_fmas() : pair_fmas()) * attended;
        if (!runs_indexer(number)) return flops;
        const Int128 q_input = q_lora > 0 ? q_lora : h;
        const Int128 projection = q_input * nh * hd + h * hd + h * nh;
        const std::string mode = grad_mode();
        if (p > 1) {
          flops += 2 * (projection + h * hd);  // + the gate, forward only
          for (Int128 pool_end = p; pool_end <= i; pool_end += p) flops += 2 * scoring_fmas();
          // The pooling of the document's complete pools, charged once at its last token.
          if (i == length) {
            for (Int128 pool_end = p; pool_end <= length; pool_end += p) {
              for (Int128 key = pool_end - p + 1; key <= pool_end; ++key) flops += 2 * hd;
            }
          }
          return flops;
        }
        const int projection_runs = mode == "off" ? 1 : mode == "full" ? 3 : 2;
        flops += projection_runs * 2 * projection;
        for (Int128 key = 1; key <= i; ++key) {
          flops += 2 * scoring_fmas();  // forward scoring of every causal pair
          const bool selected = i - key < k;
          const bool trained = mode == "detached" || mode == "full" || (mode == "sparse" && selected);
          if (trained) flops += 2 * 2 * scoring_fmas();
          // The KL loss's target: the main attention's logits over the same
          // pairs as the loss, computed forward only.
          if (executed && trained) flops += 2 * n * (kv_lora + rope);
        }
        return flops;
      }
      case '-': return 3 * 2 * ffx * h * get(a, "ffn_hidden_size");
      case 'E': {
        const Int128 expert =
            a["moe_ffn_hidden_size"].is_null() ? get(a, "ffn_hidden_size") : get(a, "moe_ffn_hidden_size");
        const Int128 router = executed ? h * get(a, "num_experts") : 0;
        return 3 * 2 *
               (ffx * h * expert * get(a, "moe_router_topk") + ffx * h * get(a, "moe_shared_expert_intermediate_size") +
                router);
      }
      case 'M': {
        const Int128 d = 2 * h, state = get(a, "mamba_state_dim"), groups = get(a, "mamba_num_groups");
        const Int128 heads = get(a, "mamba_num_heads", d / get(a, "mamba_head_dim"));
        return 3 * (2 * (h * (2 * d + 2 * groups * state + heads) + d * h) + 7 * d * state);
      }
    }
    ADD_FAILURE() << "symbol " << symbol;
    return 0;
  }

  // (symbol, 1-based number) of every mixer and channel mixer; MTP depths
  // after the main layers, each numbered from 1.
  std::vector<std::pair<char, Int128>> layers(Int128& depths) const {
    std::vector<std::pair<char, Int128>> out;
    if (a.contains("hybrid_layer_pattern") && !a["hybrid_layer_pattern"].is_null()) {
      const std::string pattern = a["hybrid_layer_pattern"];
      Int128 number = 0;
      depths = 0;
      for (char c : pattern) {
        if (c == '|' || c == '[' || c == ']') continue;
        if (c == '/') {
          number = 0;
          ++depths;
          continue;
        }
        out.emplace_back(c, ++number);
      }
      return out;
    }
    const Int128 layers = get(a, "num_layers");
    depths = get(a, "mtp_num_layers");
    const char mixer = a.value("experimental_attention_variant", json()).is_null() ? '+' : 'D';
    std::vector<char> channel;
    for (Int128 i = 0; i < layers; ++i) {
      bool moe = false;
      if (!a["num_experts"].is_null()) {
        const json& f = a["moe_layer_freq"];
        moe = f.is_array() ? f[static_cast<std::size_t>(i)].get<int>() == 1 : i % f.get<std::int64_t>() == 0;
      }
      channel.push_back(moe ? 'E' : '-');
    }
    for (Int128 i = 0; i < layers + depths; ++i) {
      out.emplace_back(mixer, i < layers ? i + 1 : 1);
      out.emplace_back(i < layers ? channel[static_cast<std::size_t>(i)] : channel.back(), 0);
    }
    return out;
  }

  Int128 count(const std::vector<std::int64_t>& docs) const {
    Int128 depths = 0;
    const auto all = layers(depths);
    const Int128 vocab = get(a, "padded_vocab_size");
    Int128 total = 0;
    for (std::int64_t length : docs) {
      for (Int128 i = 1; i <= length; ++i) {
        for (const auto& [symbol, number] : all) total += layer_at(symbol, number, i, length);
        total += 3 * 2 * h * vocab * (1 + depths);                       // logits, every head
        total += 3 * 2 * depths * (2 * h * h + (executed ? 0 : 3 * h));  // MTP projections (and norms)
      }
    }
    return total;
  }
};

// Random DSA models as Megatron-LM arguments.
class RandomArgs {
 public:
  explicit RandomArgs(std::uint64_t seed) : rng_(seed) {}

  std::int64_t pick(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng_);
  }

  json dsa_args() {
    json a = {{"hidden_size", 8 * pick(2, 16)},
              {"num_attention_heads", pick(1, 4)},
              {"qk_head_dim", pick(1, 16)},
              {"qk_pos_emb_head_dim", pick(0, 8)},
              {"v_head_dim", pick(1, 16)},
              {"kv_lora_rank", pick(1, 32)},
              {"multi_latent_attention", true},
              {"swiglu", pick(0, 1) == 1},
              {"ffn_hidden_size", pick(1, 64)},
              {"padded_vocab_size", pick(1, 300)},
              {"dsa_indexer_n_heads", pick(1, 4)},
              {"dsa_indexer_head_dim", pick(1, 16)},
              {"moe_router_topk", pick(1, 3)},
              {"moe_ffn_hidden_size", pick(1, 32)},
              {"moe_shared_expert_intermediate_size", pick(0, 1) ? json(pick(1, 32)) : json()},
              {"mamba_state_dim", pick(1, 8)},
              {"mamba_head_dim", 8},
              {"mamba_num_groups", pick(1, 2)},
              {"experimental_attention_variant", "dsa"}};
    a["q_lora_rank"] = pick(0, 1) ? json(pick(1, 32)) : json();
    const std::int64_t pool = std::vector<std::int64_t>{1, 1, 2, 4, 8}[pick(0, 4)];
    a["dsa_kpool_size"] = pool == 1 && pick(0, 1) ? json() : json(pool);
    a["dsa_kpool_tail"] = pick(0, 2) == 0 ? json() : json(pick(0, 1) == 1);
    a["dsa_indexer_topk"] = pool * pick(1, 24);
    a["dsa_indexer_topk_freq"] = pick(0, 1) ? json(pick(1, 4)) : json();
    a["dsa_indexer_skip_topk_offset"] = pick(0, 1) ? json(pick(0, 4)) : json();
    if (pool == 1) {
      switch (pick(0, 4)) {
        case 0: a["dsa_indexer_grad_mode"] = "full"; break;
        case 1: a["dsa_indexer_loss_coeff"] = 0.01; break;
        case 2:
          a["dsa_indexer_loss_coeff"] = 0.1;
          a["dsa_indexer_use_sparse_loss"] = true;
          break;
        case 3: a["dsa_indexer_grad_mode"] = std::vector<std::string>{"off", "detached", "sparse"}[pick(0, 2)]; break;
        default: break;  // no loss: off
      }
    }
    const std::int64_t depths = pick(0, 2);
    if (pick(0, 1)) {
      std::string main = random_symbols(pick(1, 10)), mtp = random_symbols(pick(1, 3));
      std::string pattern = decorate(main);
      for (std::int64_t d = 0; d < depths; ++d) pattern += "/" + decorate(mtp);
      a["hybrid_layer_pattern"] = pattern;
      a["num_layers"] = main.size();
      a["num_experts"] = 8;
    } else {
      const std::int64_t layers = pick(1, 6);
      a["num_layers"] = layers;
      if (pick(0, 1)) {
        a["num_experts"] = 8;
        if (pick(0, 1)) {
          a["moe_layer_freq"] = pick(1, 3);
        } else {
          std::vector<int> pattern;
          for (std::int64_t i = 0; i < layers; ++i) pattern.push_back(static_cast<int>(pick(0, 1)));
          a["moe_layer_freq"] = pattern;
        }
      } else {
        a["num_experts"] = nullptr;
      }
    }
    a["mtp_num_layers"] = depths > 0 ? json(depths) : json();
    return a;
  }

  std::vector<std::int64_t> docs() {
    std::vector<std::int64_t> lengths;
    for (std::int64_t d = pick(1, 5); d > 0; --d) lengths.push_back(pick(0, 1) ? pick(0, 12) : pick(13, 160));
    lengths.push_back(1);
    return lengths;
  }

 private:
  std::string random_symbols(std::int64_t count) {
    std::string symbols;
    for (std::int64_t i = 0; i < count; ++i) symbols += "DDD+E-M"[pick(0, 6)];
    return symbols;
  }

  // Wraps a random run in brackets and inserts pipeline bars.
  std::string decorate(std::string symbols) {
    if (symbols.size() > 2 && pick(0, 1)) {
      const auto at = static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(symbols.size()) - 2));
      symbols.insert(at + 2, "]");
      symbols.insert(at, "[");
    }
    if (symbols.size() > 1 && pick(0, 1)) symbols.insert(static_cast<std::size_t>(pick(1, 1)), "|");
    return symbols;
  }

  std::mt19937_64 rng_;
};

TEST(DsaBruteForceTest, ModelModeMatchesPerQueryLoopsOnRandomModels) {
  RandomArgs random(314159);
  for (int trial = 0; trial < 400; ++trial) {
    const json args = random.dsa_args();
    const std::vector<std::int64_t> docs = random.docs();
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + args.dump());
    const json record = {{"args", args}, {"mode", "model"}, {"docs", docs}};
    const Result<CountRequest> request = parse_count_request(record.dump());
    ASSERT_TRUE(request.ok()) << request.error().message();
    const Result<Report> report = count(request.value().model, request.value().workload, Mode::kModel);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(BruteForce{args}.count(docs)));
  }
}

TEST(DsaBruteForceTest, ExecutedModeMatchesPerQueryLoopsOnRandomModels) {
  RandomArgs random(271828);
  for (int trial = 0; trial < 300; ++trial) {
    const json args = random.dsa_args();
    const std::vector<std::int64_t> docs = random.docs();
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + args.dump());
    const json record = {{"args", args}, {"mode", "executed"}, {"docs", docs}};
    const Result<CountRequest> request = parse_count_request(record.dump());
    ASSERT_TRUE(request.ok()) << request.error().message();
    const Result<Report> report = count(request.value().model, request.value().workload, Mode::kExecuted);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(to_decimal(*report.value().total.exact), to_decimal(BruteForce{args, true}.count(docs)));
  }
}

json glm_like_args() {
  return {{"num_layers", 4},
          {"hidden_size", 64},
          {"num_attention_heads", 2},
          {"multi_latent_attention", true},
          {"q_lora_rank", 16},
          {"kv_lora_rank", 8},
          {"qk_head_dim", 8},
          {"qk_pos_emb_head_dim", 4},
          {"v_head_dim", 8},
          {"ffn_hidden_size", 32},
          {"swiglu", true},
          {"padded_vocab_size", 100},
          {"experimental_attention_variant", "dsa"},
          {"dsa_indexer_n_heads", 2},
          {"dsa_indexer_head_dim", 8},
          {"dsa_indexer_topk", 16}};
}

Report count_args(const json& args, const std::vector<std::int64_t>& docs, Mode mode = Mode::kModel) {
  const json record = {{"args", args}, {"mode", mode_name(mode)}, {"docs", docs}};
  const Result<CountRequest> request = parse_count_request(record.dump());
  EXPECT_TRUE(request.ok()) << request.error().message();
  return count(request.value().model, request.value().workload, mode).value();
}

Int128 component(const Report& report, Component wanted) {
  for (const ComponentFlops& part : report.components) {
    if (part.component == wanted) return *part.flops.exact;
  }
  return 0;
}

// Documents no longer than top-k: every query attends all its keys, so DSA's
// core attention equals dense attention's in model mode.
TEST(DsaDegenerateTest, DocumentsShorterThanTopkAttendLikeDenseAttention) {
  json dense = glm_like_args();
  dense["experimental_attention_variant"] = nullptr;
  for (const std::vector<std::int64_t>& docs : std::vector<std::vector<std::int64_t>>{{16, 3, 1}, {1}, {7, 7}}) {
    const Report sparse_report = count_args(glm_like_args(), docs);
    const Report dense_report = count_args(dense, docs);
    EXPECT_EQ(to_decimal(component(sparse_report, Component::kDsaCoreAttention)),
              to_decimal(component(dense_report, Component::kCoreAttention)));
  }
}

// Megatron-LM's sparse scale for a mean length m = S2 / T within top-k has no
// shortcut to 1: with e = floor(m) it is e (1 - e / (2m)) / (m / 2), which is
// 1 only for a whole m. Its core attention is absorbed MLA: per pair
// n (kv_lora_rank + rope) + n kv_lora_rank = 2 (8 + 4) + 2 * 8 = 40 FMAs.
TEST(DsaDegenerateTest, MegatronScaleWithinTopkIsOneOnlyForAWholeMeanLength) {
  struct Case {
    std::vector<std::int64_t> docs;
    double scale;
  };
  const double m = 266.0 / 20;  // {16, 3, 1}: S2 = 256 + 9 + 1, T = 20
  for (const Case& c : {Case{{7, 7}, 1.0}, Case{{1}, 1.0}, Case{{16, 3, 1}, 13 * (1 - 13 / (2 * m)) / (m / 2)}}) {
    double squares = 0;
    for (std::int64_t length : c.docs) squares += static_cast<double>(length * length);
    const Report report = count_args(glm_like_args(), c.docs, Mode::kMegatron);
    const double core = report.components[1].flops.value;
    ASSERT_EQ(report.components[1].component, Component::kDsaCoreAttention);
    EXPECT_NEAR(core, 4 * 3 * 2 * 40 * squares / 2 * c.scale, 1e-9 * core);
  }
  EXPECT_NEAR(13 * (1 - 13 / (2 * m)) / (m / 2), 1 - 0.3 * 0.3 / (m * m), 1e-15);
}

// The indexer's KL teacher in executed mode, by per-query loops: the main
// attention's logits, n (kv_lora_rank + rope) = 2 (8 + 4) FMAs per pair,
// forward only, on each layer that runs an indexer, over every causal key
// (dense KL: detached, full) or the k nearest (sparse KL); none without a loss.
TEST(DsaTeacherTest, PerQueryLoopsForEveryGradMode) {
  const std::vector<std::int64_t> docs = {40, 3, 17};
  for (const char* mode : {"off", "detached", "sparse", "full"}) {
    for (std::int64_t freq : {1, 3}) {
      json args = glm_like_args();
      args["dsa_indexer_grad_mode"] = mode;
      args["dsa_indexer_topk_freq"] = freq;
      args["mtp_num_layers"] = 1;
      SCOPED_TRACE(std::string(mode) + ", topk_freq " + std::to_string(freq));
      Int128 running = 0;  // layers running an indexer: 1..4 of the decoder, then the MTP layer (numbered 1)
      for (std::int64_t number : {1, 2, 3, 4, 1}) running += (number - 1) % freq == 0;
      Int128 pairs = 0;
      for (std::int64_t length : docs) {
        for (std::int64_t i = 1; i <= length; ++i) {
          for (std::int64_t key = 1; key <= i; ++key) {
            const bool selected = i - key < 16;
            pairs += std::string(mode) == "detached" || std::string(mode) == "full" ||
                     (std::string(mode) == "sparse" && selected);
          }
        }
      }
      const Report executed = count_args(args, docs, Mode::kExecuted);
      EXPECT_EQ(to_decimal(component(executed, Component::kIndexerTeacher)),
                to_decimal(running * 2 * (2 * (8 + 4)) * pairs));
      EXPECT_EQ(component(count_args(args, docs, Mode::kModel), Component::kIndexerTeacher), 0);
    }
  }
}

TEST(DsaDegenerateTest, SingleTokenAndNoDsaLayers) {
  // One token: one pair per layer, one scored pair per indexer.
  const Report one = count_args(glm_like_args(), {1});
  EXPECT_EQ(to_decimal(component(one, Component::kDsaCoreAttention)), to_decimal(Int128{4} * 3 * 2 * (2 * 12 + 2 * 8)));
  EXPECT_EQ(to_decimal(component(one, Component::kIndexerScoring)), to_decimal(Int128{4} * 2 * 2 * 8));
  // A hybrid pattern without D layers counts no DSA part, whatever the DSA fields say.
  json hybrid = glm_like_args();
  hybrid["hybrid_layer_pattern"] = "+-+-";
  const Report without = count_args(hybrid, {50, 9});
  EXPECT_EQ(component(without, Component::kDsaCoreAttention), 0);
  EXPECT_EQ(component(without, Component::kIndexerProjections), 0);
  EXPECT_GT(component(without, Component::kCoreAttention), 0);
}

// Top-k beyond every document: no query is ever limited; and the megatron
// estimate agrees once the mean length is within k.
TEST(DsaDegenerateTest, TopkLargerThanEveryDocument) {
  json args = glm_like_args();
  args["dsa_indexer_topk"] = 4096;
  const std::vector<std::int64_t> docs = {100, 2000, 1};
  Int128 pairs = 0;
  for (Int128 l : docs) pairs += l * (l + 1) / 2;
  EXPECT_EQ(to_decimal(component(count_args(args, docs), Component::kDsaCoreAttention)),
            to_decimal(4 * 3 * 2 * (2 * 12 + 2 * 8) * pairs));
}

TEST(DsaBuildingBlocksTest, OneLayerFromPlainNumbers) {
  const MlaAttention mla{2, 16, 8, 8, 4, 8};
  const DsaIndexer indexer{2, 8, 16, DsaIndexer::GradMode::kSparse, 1, true};
  const std::vector<std::int64_t> docs = {20, 5};
  // Projections per token (see BruteForce::mla_projection_fmas) and pairs:
  // 20 tokens select 16 keys at most: 16*17/2 + 4*16 = 200; 5 tokens: 15.
  const Int128 projection = 64 * 16 + 16 + 16 * 2 * 12 + 64 * 12 + 8 + 8 * 2 * 16 + 2 * 8 * 64;
  const Int128 attention = 2 * (projection * 25 + (2 * 12 + 2 * 8) * (200 + 15));
  EXPECT_EQ(to_decimal(dsa_attention_forward_flops(64, mla, indexer, docs).value()), to_decimal(attention));
  // Indexer: (16 * 2 * 8 + 64 * 8 + 64 * 2) per token, 2 * 8 per causal pair (210 + 15).
  const Int128 indexer_flops = 2 * ((16 * 2 * 8 + 64 * 8 + 64 * 2) * 25 + 2 * 8 * (210 + 15));
  EXPECT_EQ(to_decimal(indexer_forward_flops(64, 16, indexer, docs).value()), to_decimal(indexer_flops));
  const DsaIndexer kpool{2, 8, 16, DsaIndexer::GradMode::kSparse, 4, true};
  EXPECT_EQ(indexer_forward_flops(64, 16, kpool, docs).error().message(),
            "layers[0].mixer.indexer.pool_size = 4: KPool requires the indexer loss disabled (grad mode off, got "
            "sparse)");
  EXPECT_EQ(dsa_attention_forward_flops(64, mla, indexer, std::vector<std::int64_t>{-1}).error().message(),
            "lengths[0] = -1: must be >= 0");
}

}  // namespace
}  // namespace trainflops
