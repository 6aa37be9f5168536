// `trainflops compare` and `sweep --compare` as a user runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;
using trainflops::cli_test::run;

std::string data(const std::string& name) { return std::string(TRAINFLOPS_TEST_DATA) + "/" + name; }

nlohmann::json json_of(const std::string& arguments) {
  const CliRun result = run(arguments + " --format json");
  EXPECT_EQ(result.status, 0) << result.err;
  return nlohmann::json::parse(result.out.empty() ? "{}" : result.out);
}

__int128 exact(const nlohmann::json& value) {
  __int128 out = 0;
  for (char c : value.get<std::string>().substr(value.get<std::string>()[0] == '-' ? 1 : 0)) out = out * 10 + (c - '0');
  return value.get<std::string>()[0] == '-' ? -out : out;
}

TEST(CompareCommandTest, EveryFrameworkReconciledExactly) {
  const nlohmann::json c = json_of("compare --hf " + data("hf/deepseek-v3.json") + " --seq-length 4096");
  EXPECT_EQ(c["seq_length"], 4096);
  EXPECT_EQ(c["sequences"], 1);
  ASSERT_EQ(c["frameworks"].size(), 9u);
  std::vector<std::string> names;
  for (const nlohmann::json& f : c["frameworks"]) {
    names.push_back(f["name"]);
    ASSERT_FALSE(f["flops"].is_null()) << f["name"];  // DeepSeek-V3: every framework counts it
    __int128 sum = 0;
    for (const nlohmann::json& d : f["differences"]) sum += exact(d["exact"]);
    EXPECT_TRUE(sum == exact(f["exact"]) - exact(c["model_flops"])) << f["name"];
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"trainflops-model", "trainflops-executed", "megatron-lm", "megatron-lm-dsa-fix",
                                      "megatron-bridge", "maxtext", "torchtitan", "nemo-rl", "nemo-automodel"}));
  // The modes' own counts.
  for (const auto& [index, mode] : {std::pair{0, "model"}, std::pair{1, "executed"}}) {
    const nlohmann::json counted = json_of(std::string("count --mode ") + mode + " --hf " +
                                           data("hf/deepseek-v3.json") + " --seq-length 4096 --global-batch-size 1");
    EXPECT_EQ(c["frameworks"][index]["exact"], counted["total"]["exact"]);
  }
}

// tests/data/compare/framework_functions.jsonl: what Megatron-LM's (main, and
// its dev branch on DeepSeek-V4 and hybrid patterns), Megatron-Bridge's, MaxText's and NeMo-RL's
// own FLOPs functions returned, run from their source by
// validation/framework_functions.py, on the presets, the release configs of
// tests/data/hf, DeepSeek-V4 configs and a few variants, at three lengths;
// Megatron-Bridge's also on Kimi K3 and MiniMax-M3 through the arguments its
// providers set (for MiniMax-M3 with the recipe aligned: the record also
// holds its number with the provider's MTP forced off).
TEST(CompareCommandTest, EveryRowIsWhatTheFrameworksOwnFunctionReturned) {
  std::ifstream in(data("compare/framework_functions.jsonl"));
  std::map<std::string, nlohmann::json> comparisons;  // by command
  std::set<std::string> frameworks;
  std::size_t records = 0, recipe_records = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    std::string command = "compare";
    for (std::string option : record["options"]) {
      if (option.rfind("tests/data/", 0) == 0) option = data(option.substr(std::string("tests/data/").size()));
      command += " " + option;
    }
    command += " --seq-length " + std::to_string(record["seq_length"].get<int>());
    SCOPED_TRACE(command + ": " + record["framework"].get<std::string>());
    if (!comparisons.count(command)) comparisons[command] = json_of(command);
    const double theirs = record["flops"];
    bool found = false;
    for (const nlohmann::json& row : comparisons[command]["frameworks"]) {
      if (row["name"] != record["framework"]) continue;
      found = true;
      ASSERT_FALSE(row["flops"].is_null());
      // Relative 1e-12 (they count in floating point), or one FLOP: compare's
      // counts are whole, a framework's need not be (MaxText's DeepSeek-V4 CSA).
      EXPECT_NEAR(row["flops"].get<double>(), theirs, std::max(1e-12 * theirs, 1.0));
      if (record.value("difference", "") == "mtp") {
        // The provider's own arguments leave the MTP depths out: less, and
        // the row names that recipe difference.
        EXPECT_LT(record["recipe_flops"].get<double>(), theirs);
        ASSERT_TRUE(row.contains("recipe_differences"));
        EXPECT_NE(row["recipe_differences"][0].get<std::string>().find("forces mtp_num_layers to None"),
                  std::string::npos);
        ++recipe_records;
      }
    }
    EXPECT_TRUE(found);
    frameworks.insert(record["framework"].get<std::string>());
    ++records;
  }
  EXPECT_GE(records, 300u);
  EXPECT_EQ(recipe_records, 3u);  // MiniMax-M3 (Megatron-Bridge's provider forces MTP off)
  EXPECT_EQ(frameworks,
            (std::set<std::string>{"maxtext", "megatron-bridge", "megatron-lm", "megatron-lm-dsa-fix", "nemo-rl"}));
}

// tests/data/compare/dsa_gqa_frameworks.json: what Megatron-LM's function
// (main; dev, the DSA fix row) and Megatron-Bridge's returned, run from their
// source, on the 8B example of Megatron-LM's DSA-over-GQA pull request; the
// other frameworks have no DSA over grouped-query attention, and say why.
TEST(CompareCommandTest, DsaOverGqaRowsAreWhatTheFrameworksOwnFunctionReturned) {
  std::ifstream in(data("compare/dsa_gqa_frameworks.json"));
  const nlohmann::json oracle = nlohmann::json::parse(in);
  const std::string flags = data("../../examples/dsa-gqa-hybrid-8b.flags");
  ASSERT_EQ(oracle["records"].size(), 6u);
  for (const nlohmann::json& record : oracle["records"]) {
    // --format json before the Megatron-LM flags.
    const std::string command = "compare --format json --seq-length " +
                                std::to_string(record["seq_length"].get<int>()) + " --global-batch-size " +
                                std::to_string(record["sequences"].get<int>()) + " --megatron -- @" + flags;
    SCOPED_TRACE(command + ": " + record["framework"].get<std::string>());
    const CliRun result = run(command);
    ASSERT_EQ(result.status, 0) << result.err;
    const nlohmann::json c = nlohmann::json::parse(result.out);
    const double theirs = std::stod(record["flops"].get<std::string>());  // C hex float
    bool found = false;
    for (const nlohmann::json& row : c["frameworks"]) {
      if (row["name"] != record["framework"]) continue;
      found = true;
      ASSERT_FALSE(row["flops"].is_null()) << row["reason"];
      EXPECT_EQ(row["flops"].get<double>(), theirs);
      ASSERT_EQ(row["differences"].size(), 1u);
      EXPECT_EQ(row["differences"][0]["convention"], "dsa_gqa");
      EXPECT_EQ(row["differences"][0]["choice"], record["framework"] == "megatron-lm-dsa-fix"
                                                     ? "dense GQA over causal pairs, no indexer"
                                                     : "not counted");
    }
    EXPECT_TRUE(found);
  }
  const CliRun result = run("compare --format json --megatron -- @" + flags);
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json c = nlohmann::json::parse(result.out);
  const std::map<std::string, std::string> reasons = {
      {"maxtext",
       "MaxText counts DSA's indexer inside its MLA count only (the indexer's queries from q_lora_rank): it has no DSA "
       "over grouped-query attention"},
      {"torchtitan", "torchtitan has no DeepSeek Sparse Attention model"},
      {"nemo-rl",
       "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only; none has "
       "DeepSeek Sparse Attention or its indexer"},
      {"nemo-automodel",
       "NeMo Automodel counts DSA only in its MLA formulas (deepseekv3_flops, mla_moe_flops: the indexer's queries "
       "from q_lora_rank); no formula, and no Hugging Face config type, has DSA over grouped-query attention"},
  };
  for (const nlohmann::json& row : c["frameworks"]) {
    const auto reason = reasons.find(row["name"].get<std::string>());
    if (reason == reasons.end()) continue;
    EXPECT_TRUE(row["flops"].is_null()) << row["name"];
    EXPECT_EQ(row["reason"], reason->second);
  }
}

// tests/data/compare/nemo_automodel.jsonl: what NeMo Automodel's own FLOPs
// formulas returned on each preset's release config, run from its source by
// validation/framework_functions.py. Where its formula leaves out part of the
// release's model (DeepseekV3Config's MTP depths) or adds to it (the gpt-oss
// formula's windows), the record holds its number for the recipe aligned,
// which compare shows, and compare names the difference.
TEST(CompareCommandTest, NemoAutomodelRowsAreWhatItsOwnFormulasReturned) {
  std::ifstream in(data("compare/nemo_automodel.jsonl"));
  std::size_t records = 0, aligned = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    std::string command = "compare";
    const nlohmann::json& options = record.contains("aligned_options") ? record["aligned_options"] : record["options"];
    for (std::string option : options) {
      if (option.rfind("tests/data/", 0) == 0) option = data(option.substr(std::string("tests/data/").size()));
      command += " " + option;
    }
    command += " --seq-length " + std::to_string(record["seq_length"].get<int>());
    SCOPED_TRACE(command);
    const nlohmann::json c = json_of(command);
    const nlohmann::json& row = c["frameworks"][8];
    ASSERT_EQ(row["name"], "nemo-automodel");
    ASSERT_FALSE(row["flops"].is_null()) << row["reason"];
    const double theirs = record.contains("aligned_flops") ? record["aligned_flops"].get<double>()
                                                           : record["flops"].get<double>();
    EXPECT_NEAR(row["flops"].get<double>(), theirs, 1e-12 * theirs);
    if (record.value("difference", "") == "mtp") {
      // Its number on the release config leaves the MTP depths out: less.
      EXPECT_LT(record["flops"].get<double>(), theirs);
      ASSERT_TRUE(row.contains("recipe_differences"));
      EXPECT_NE(row["recipe_differences"][0].get<std::string>().find("num_nextn_predict_layers"), std::string::npos);
    }
    aligned += record.contains("difference");
    ++records;
  }
  // 15 presets given as Megatron-LM arguments, 3 as release configs
  // (GLM-4.7-Flash, Qwen3.5-27B and -35B-A3B) and Nemotron-3-Nano's release
  // config, at 3 lengths.
  EXPECT_EQ(records, 57u);
  EXPECT_EQ(aligned, 9u);   // deepseek-v3 and deepseek-v3.2 (MTP), gpt-oss-120b (windows)
}

// The hybrid Mamba-2 models: each framework's row names what separates it
// from model mode (the numbers are in the record files above).
TEST(CompareCommandTest, HybridMambaRowsNameTheirConventions) {
  const auto differences = [](const std::string& preset) {
    std::map<std::string, std::set<std::string>> out;
    const nlohmann::json c = json_of("compare --preset " + preset + " --seq-length 4096");
    for (const nlohmann::json& f : c["frameworks"]) {
      std::set<std::string>& names = out[f["name"].get<std::string>()];
      if (f["flops"].is_null()) {
        names.insert("cannot express");
        continue;
      }
      for (const nlohmann::json& d : f["differences"]) names.insert(d["convention"].get<std::string>());
    }
    return out;
  };
  const std::set<std::string> none = {"cannot express"};
  // Nemotron-3-Nano: 64 Mamba heads of 64 (4096), which Megatron-LM's and
  // Bridge's hybrid functions take as 2h = 5376; 32 attention heads of 128
  // (4096), which Automodel's formula takes as h = 2688.
  const auto nano = differences("nemotron-3-nano-30b-a3b");
  for (const char* megatron : {"megatron-lm", "megatron-lm-dsa-fix", "megatron-bridge"}) {
    EXPECT_EQ(nano.at(megatron), (std::set<std::string>{"causal_pairs", "mamba_width"})) << megatron;
  }
  EXPECT_EQ(nano.at("nemo-automodel"), (std::set<std::string>{"causal_pairs", "moe_router", "attention_width"}));
  for (const char* other : {"maxtext", "torchtitan", "nemo-rl"}) EXPECT_EQ(nano.at(other), none) << other;
  // Nemotron-H-56B: widths as the functions take them; Automodel charges its
  // squared-ReLU MLPs as gated.
  const auto dense = differences("nemotron-h-56b");
  EXPECT_EQ(dense.at("megatron-lm"), (std::set<std::string>{"causal_pairs"}));
  EXPECT_EQ(dense.at("nemo-automodel"), (std::set<std::string>{"causal_pairs", "ungated_mlp"}));
}

// NeMo Automodel maps no formula from the config classes of Gemma 4, Kimi
// Linear, DeepSeek-V4 and a text-only Qwen3.5-MoE (Qwen3.8-2.4T-A95B's): it
// reports its generic transformer_flops estimate (which raises on the last),
// which compare names instead of modelling.
TEST(CompareCommandTest, NemoAutomodelFallbackIsNamed) {
  for (const auto& [source, formula] : std::vector<std::pair<std::string, std::string>>{
           {"--preset gemma-4-31b", "NeMo Automodel has no Gemma 4 formula"},
           {"--preset kimi-linear-48b-a3b", "NeMo Automodel has no Kimi Delta Attention formula"},
           {"--hf " + data("compare/deepseek-v4-flash.json"), "NeMo Automodel has no DeepSeek-V4 formula"},
           {"--preset qwen3.8-2.4t-a95b", "NeMo Automodel maps no formula from Qwen3_5MoeTextConfig"}}) {
    SCOPED_TRACE(source);
    const nlohmann::json c = json_of("compare " + source + " --seq-length 4096");
    const nlohmann::json& row = c["frameworks"][8];
    ASSERT_EQ(row["name"], "nemo-automodel");
    ASSERT_TRUE(row["flops"].is_null());
    const std::string reason = row["reason"];
    EXPECT_EQ(reason.rfind(formula, 0), 0u) << reason;
    EXPECT_NE(reason.find("falls back to transformer_flops"), std::string::npos) << reason;
  }
}

// tests/data/compare/nemo_automodel_2026.jsonl: what NeMo Automodel's
// deepseek_v41_flops and qwen3_8_flash_next_flops returned on the release
// configs of DeepSeek-V4.1 and Qwen3.8-Flash-Next and on small configs, one
// sequence at lengths below and above every window, top-k, block and
// candidate set, run from its source by validation/automodel_2026_functions.py.
// compare reproduces each by the conventions those functions take
// (docs/deepseek-v4.1.md, docs/qwen3.8.md) and names each difference.
TEST(CompareCommandTest, NemoAutomodelRowsOfThe2026ArchitecturesAreWhatItsFunctionsReturned) {
  std::ifstream in(data("compare/nemo_automodel_2026.jsonl"));
  std::map<std::string, std::size_t> records;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    std::string command = "compare";
    for (std::string option : record["options"]) {
      if (option.rfind("tests/data/", 0) == 0) option = data(option.substr(std::string("tests/data/").size()));
      command += " " + option;
    }
    command += " --seq-length " + std::to_string(record["seq_length"].get<int>());
    SCOPED_TRACE(command);
    const nlohmann::json c = json_of(command);
    const nlohmann::json& row = c["frameworks"][8];
    ASSERT_EQ(row["name"], "nemo-automodel");
    ASSERT_FALSE(row["flops"].is_null()) << row["reason"];
    const double theirs = record["flops"].get<double>();
    EXPECT_NEAR(row["flops"].get<double>(), theirs, 1e-12 * theirs);
    std::set<std::string> differences;
    for (const nlohmann::json& d : row["differences"]) differences.insert(d["convention"].get<std::string>());
    EXPECT_TRUE(differences.count("moe_router")) << row["differences"].dump();
    EXPECT_TRUE(differences.count("hyper_connections")) << row["differences"].dump();
    ++records[record["function"].get<std::string>()];
  }
  EXPECT_EQ(records,
            (std::map<std::string, std::size_t>{{"deepseek_v41_flops", 28}, {"qwen3_8_flash_next_flops", 28}}));
}

// Runs compare on every record of an Automodel file (one JSON object per
// line: options, seq_length, function, flops) and checks that NeMo
// Automodel's row is the number its function returned; `check` looks at the
// row's differences and the whole comparison.
void check_nemo_automodel_records(
    const std::string& file,
    const std::function<void(const std::string& function, const std::set<std::string>& differences,
                             const nlohmann::json& comparison)>& check) {
  std::ifstream in(data(file));
  ASSERT_TRUE(in) << file;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    std::string command = "compare";
    for (std::string option : record["options"]) {
      if (option.rfind("tests/data/", 0) == 0) option = data(option.substr(std::string("tests/data/").size()));
      command += " " + option;
    }
    command += " --seq-length " + std::to_string(record["seq_length"].get<int>());
    SCOPED_TRACE(command);
    const nlohmann::json c = json_of(command);
    const nlohmann::json& row = c["frameworks"][8];
    ASSERT_EQ(row["name"], "nemo-automodel");
    ASSERT_FALSE(row["flops"].is_null()) << row["reason"];
    const double theirs = record["flops"].get<double>();
    EXPECT_NEAR(row["flops"].get<double>(), theirs, 1e-12 * theirs);
    std::set<std::string> differences;
    for (const nlohmann::json& d : row["differences"]) differences.insert(d["convention"].get<std::string>());
    check(record["function"].get<std::string>(), differences, c);
  }
}

// tests/data/compare/nemo_automodel_longcat.jsonl: what NeMo Automodel's
// mla_moe_flops (its function for Transformers' LongcatFlashConfig) returned
// on LongCat-Flash's config, run from its source by
// validation/automodel_longcat_function.py. It charges every top-k pick as a
// real expert: compare reproduces it exactly by charging the zero experts'
// picks, and names that as the difference from trainflops' own count.
TEST(CompareCommandTest, NemoAutomodelRowOfLongcatFlashIsWhatItsFunctionReturned) {
  std::size_t records = 0;
  check_nemo_automodel_records("compare/nemo_automodel_longcat.jsonl",
                               [&](const std::string&, const std::set<std::string>& differences, const nlohmann::json&) {
                                 EXPECT_TRUE(differences.count("zero_experts"));
                                 ++records;
                               });
  EXPECT_EQ(records, 4u);
}

// tests/data/compare/nemo_automodel_step_mistral.jsonl: what NeMo Automodel's
// step3_5_flash_flops (Step3p5Config) and mla_moe_flops (Mistral3Config,
// Mistral Small 4) returned on small configs of those model types at 1500,
// 4096 and 131072 tokens, run from its source by
// validation/automodel_step_mistral_functions.py. compare reproduces each
// under the conventions those functions take (docs/step3.5.md,
// docs/mistral-small-4.md): Step-3.5's per-head gate left out, its MTP depths
// charged as the last decoder layer (full attention and MoE).
TEST(CompareCommandTest, NemoAutomodelRowsOfStep35AndMistralSmall4AreWhatItsFunctionsReturned) {
  std::map<std::string, std::size_t> records;
  check_nemo_automodel_records(
      "compare/nemo_automodel_step_mistral.jsonl",
      [&](const std::string& function, const std::set<std::string>& differences, const nlohmann::json& c) {
        if (function == "step3_5_flash_flops") {
          EXPECT_TRUE(differences.count("head_gate"));
          // The other frameworks take one attention width for every layer.
          EXPECT_TRUE(c["frameworks"][2]["flops"].is_null());
        }
        ++records[function];
      });
  EXPECT_EQ(records, (std::map<std::string, std::size_t>{{"mla_moe_flops", 6}, {"step3_5_flash_flops", 6}}));
}

TEST(CompareCommandTest, TorchtitanIsSixTimesThePublishedParameters) {
  // Llama-3.1-8B: 8,030,261,248 parameters published, less the embedding
  // (128256 x 4096), its 65 norm vectors among them; torchtitan adds 6 x 32
  // layers x 32 heads x (2 x 128) x S^2.
  const nlohmann::json c = json_of("compare --preset llama-3.1-8b --seq-length 4096 --global-batch-size 2");
  const __int128 non_embedding_parameters = 8030261248LL - 128256LL * 4096;
  const __int128 s = 4096;
  const __int128 per_sequence = 6 * non_embedding_parameters * s + 6 * 32 * 32 * 256 * s * s;
  EXPECT_TRUE(exact(c["frameworks"][6]["exact"]) == 2 * per_sequence);
  // Megatron-LM on main: the count `count` gives (its reference vectors tie it to Megatron-LM's function).
  EXPECT_EQ(c["frameworks"][2]["flops"],
            json_of("count --preset llama-3.1-8b --seq-length 4096 --global-batch-size 2")["total"]["flops"]);
}

TEST(CompareCommandTest, TableCsvAndWhatCannotBeExpressed) {
  const CliRun table = run("compare --preset glm-5.2 --seq-length 4k");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("one iteration: 1 sequence of 4096 tokens"), std::string::npos);
  // Name, FLOPs and ratio columns (22, 26 and 9 wide), then why not.
  const std::string torchtitan = "\ntorchtitan" + std::string(12 + 25, ' ') + "-" + std::string(8, ' ') +
                                 "-  cannot express: torchtitan has no DeepSeek Sparse Attention model\n";
  EXPECT_NE(table.out.find(torchtitan), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Only trainflops model is model FLOPs counted exactly: use it as MFU's numerator."),
            std::string::npos);
  const CliRun csv = run("compare --preset glm-5.2 --seq-length 4096 --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "framework,item,choice,flops");
  EXPECT_NE(csv.out.find("\ntorchtitan,total,\"cannot express: torchtitan has no DeepSeek Sparse Attention model\",\n"),
            std::string::npos);
  EXPECT_NE(csv.out.find("\nmegatron-lm,dsa_indexer,\"not counted\",-"), std::string::npos);
}

TEST(CompareCommandTest, SweepCompareMatchesCompareAtEachLength) {
  const nlohmann::json sweep = json_of("sweep --preset deepseek-v3.2 --compare --seq-lengths 1k,128k");
  ASSERT_EQ(sweep["points"].size(), 2u);
  for (const nlohmann::json& point : sweep["points"]) {
    const nlohmann::json c =
        json_of("compare --preset deepseek-v3.2 --seq-length " + std::to_string(point["seq_length"].get<int>()));
    for (std::size_t i = 0; i < c["frameworks"].size(); ++i) {
      EXPECT_EQ(point["frameworks"][i]["exact"],
                c["frameworks"][i]["flops"].is_null() ? nlohmann::json() : c["frameworks"][i]["exact"]);
    }
  }
}

TEST(CompareCommandTest, BadInput) {
  const std::pair<std::string, std::string> cases[] = {
      {"compare --hf " + data("hf/deepseek-v3.json"),
       "trainflops: the sequence length is missing: give --seq-length (e.g. 4096 or 4k)\n"},
      {"compare --preset glm-5 --seq-length 0",
       "trainflops: --seq-length = \"0\": must be an integer >= 1, optionally with k or m\n"},
      {"compare --preset glm-5 --seq-length 4096 --global-batch-size 0",
       "trainflops: --global-batch-size = \"0\": must be an integer >= 1\n"},
      {"compare --preset glm-5 --seq-length 4096 --format yaml",
       "trainflops: format = \"yaml\": must be one of table, json, csv\n"},
      {"sweep --preset glm-5 --compare --mode model",
       "trainflops: --mode model: --compare shows every framework (trainflops' modes among them) at once\n"},
      {"sweep --preset glm-5 --compare --plot x.png",
       "trainflops: --plot draws the modes' sweep; it does not draw --compare\n"},
  };
  for (const auto& [arguments, message] : cases) {
    SCOPED_TRACE(arguments);
    const CliRun result = run(arguments);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, message);
  }
}

}  // namespace
