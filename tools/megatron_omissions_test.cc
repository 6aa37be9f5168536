// What megatron-mode reports say Megatron-LM's function leaves out, as a
// user reads them: JSON, CSV and the table of `trainflops count`.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;
using trainflops::cli_test::run;

std::string data(const std::string& name) { return std::string(TRAINFLOPS_TEST_DATA) + "/" + name; }
const std::string kDsaGqaFlags = " --megatron -- @" + data("../../examples/dsa-gqa-hybrid-8b.flags");

// `arguments` as JSON: the option goes before any Megatron-LM flags (after `--`).
nlohmann::json json_of(const std::string& arguments) {
  const std::size_t flags = arguments.find(" --megatron -- ");
  const CliRun result = run(flags == std::string::npos
                                ? arguments + " --format json"
                                : arguments.substr(0, flags) + " --format json" + arguments.substr(flags));
  EXPECT_EQ(result.status, 0) << result.err;
  return nlohmann::json::parse(result.out.empty() ? "{}" : result.out);
}

struct Omission {
  std::string convention;
  std::string choice;
  std::optional<std::string> exact;  // unset: listed without a size
};

struct Case {
  std::string command;  // `count` options, the workload included
  std::vector<Omission> omissions;
};

// Each expected size is a difference compare's Megatron rows show for the
// same convention, and those rows are checked against the frameworks' own
// functions (tests/data/compare): Kimi K3's against Megatron-Bridge's
// (Megatron-Bridge row), DSA over grouped-query attention's against
// Megatron-LM's (its main row: model mode 1660057607471104 minus the
// function's 1609685023064064, tests/data/compare/dsa_gqa_frameworks.json).
TEST(MegatronOmissionsTest, ListsWhatMegatronLmLeavesOutWithModelModeFlops) {
  const std::vector<Case> cases = {
      {"count --preset kimi-k3 --global-batch-size 1 --seq-length 4096",
       {{"mla_output_gate", "not counted", "-51951924412416"},
        {"attention_residuals", "not counted", "-529539268608"}}},
      {"count --global-batch-size 4 --seq-length 8192" + kDsaGqaFlags,
       {{"dsa_gqa", "not counted", "-50372584407040"}}},
      // T and S2 alone: model mode cannot count the batch.
      {"count --total-real-tokens 18226 --seqlen-squared-sum 93882514" + kDsaGqaFlags,
       {{"dsa_gqa", "not counted", std::nullopt}}},
      // Nothing left out: a dense GQA model.
      {"count --preset llama-3.1-8b --global-batch-size 1 --seq-length 4096", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const nlohmann::json report = json_of(c.command);
    ASSERT_TRUE(report.contains("megatron_omissions"));
    const nlohmann::json& listed = report["megatron_omissions"];
    ASSERT_EQ(listed.size(), c.omissions.size()) << listed.dump();
    for (std::size_t i = 0; i < c.omissions.size(); ++i) {
      EXPECT_EQ(listed[i]["convention"], c.omissions[i].convention);
      EXPECT_EQ(listed[i]["choice"], c.omissions[i].choice);
      if (c.omissions[i].exact) {
        EXPECT_EQ(listed[i]["exact"], *c.omissions[i].exact);
        EXPECT_EQ(listed[i]["flops"].get<double>(), std::stod(*c.omissions[i].exact));
      } else {
        EXPECT_TRUE(listed[i]["exact"].is_null());
        EXPECT_TRUE(listed[i]["flops"].is_null());
      }
    }
  }
}

// The residual-stream machinery is a component of its own in model mode:
// what megatron mode leaves out of it is that component's count, to the FLOP.
// Zero-computation experts: every pick charged as a real expert, as compare's
// rows that know no zero experts charge them (+103903848824832 at 4096).
TEST(MegatronOmissionsTest, LeftOutMachineryCostsItsModelModeComponent) {
  struct Machinery {
    std::string source, convention, component;
  };
  const std::vector<Machinery> cases = {
      {"--hf " + data("hf/deepseek-v4.1-flash.json"), "hyper_connections", "hyper_connections"},
      {"--hf " + data("hf/deepseek-v4.1-flash.json"), "ngram_memory", "ngram_memory"},
      {"--hf " + data("hf/qwen3.8-flash-next.json"), "hyper_connections", "hyper_connections"},
      {"--config " + data("compare/gemma-4-e2b-maxtext.json"), "per_layer_embedding", "per_layer_embedding"},
      {"--preset kimi-k3", "attention_residuals", "attention_residuals"},
  };
  for (const Machinery& c : cases) {
    SCOPED_TRACE(c.source + ": " + c.convention);
    const std::string workload = " --global-batch-size 2 --seq-length 4096 ";
    const nlohmann::json megatron = json_of("count" + workload + c.source);
    const nlohmann::json model = json_of("count --mode model" + workload + c.source);
    bool found = false;
    for (const nlohmann::json& omission : megatron["megatron_omissions"]) {
      if (omission["convention"] != c.convention) continue;
      found = true;
      EXPECT_EQ(omission["choice"], "not counted");
      EXPECT_EQ(omission["exact"], "-" + model["breakdown"][c.component]["exact"].get<std::string>());
    }
    EXPECT_TRUE(found) << megatron["megatron_omissions"].dump();
  }
  const nlohmann::json longcat =
      json_of("count --global-batch-size 1 --seq-length 4096 --hf " + data("hf/longcat-flash-transformers-defaults.json"));
  ASSERT_EQ(longcat["megatron_omissions"].size(), 1u);
  EXPECT_EQ(longcat["megatron_omissions"][0]["convention"], "zero_experts");
  EXPECT_EQ(longcat["megatron_omissions"][0]["choice"], "charged as real experts");
  EXPECT_EQ(longcat["megatron_omissions"][0]["exact"], "103903848824832");
  // Block-sparse attention: charged as the dense grouped-query attention it
  // selects from, without its indexer.
  const nlohmann::json minimax = json_of("count --preset minimax-m3 --global-batch-size 1 --seq-length 4096");
  ASSERT_EQ(minimax["megatron_omissions"].size(), 1u);
  EXPECT_EQ(minimax["megatron_omissions"][0]["convention"], "block_sparse");
  EXPECT_EQ(minimax["megatron_omissions"][0]["choice"], "dense GQA over causal pairs, no indexer");
}

// Packed documents: each document's part. On the DSA-over-GQA example
// Megatron-LM's function and model mode agree on every other layer (Mamba-2,
// MLP and logits are per token), so what it leaves out is model mode's count
// minus its number for the same documents (tests/data/megatron_dsa_gqa.json).
TEST(MegatronOmissionsTest, PackedDocumentsEachCounted) {
  std::ifstream in(data("megatron_dsa_gqa.json"));
  const nlohmann::json oracle = nlohmann::json::parse(in);
  const nlohmann::json& packed = oracle["cases"][2];
  ASSERT_EQ(packed["name"], "8B example");
  ASSERT_EQ(packed["workload"]["total_real_tokens"], 18226);
  const std::string docs = " --docs 8192,4096,2048,2048,1000,777,64,1";
  const nlohmann::json model = json_of("count --mode model" + docs + kDsaGqaFlags);
  const nlohmann::json megatron = json_of("count" + docs + kDsaGqaFlags);
  const double theirs = std::stod(packed["flops"].get<std::string>());
  EXPECT_EQ(megatron["total"]["flops"].get<double>(), theirs);
  ASSERT_EQ(megatron["megatron_omissions"].size(), 1u);
  EXPECT_EQ(megatron["megatron_omissions"][0]["flops"].get<double>(),
            theirs - std::stod(model["total"]["exact"].get<std::string>()));
}

TEST(MegatronOmissionsTest, EveryFormatShowsThem) {
  const std::string kimi = "count --preset kimi-k3 --global-batch-size 1 --seq-length 4096";
  const CliRun table = run(kimi);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("MLA output gate                     not counted                                 "
                           "-5.1952e+13\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("attention residuals                 not counted                                 "
                           "-5.2954e+11\n"),
            std::string::npos);
  const CliRun csv = run(kimi + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("\nmegatron_omission,mla_output_gate,\"not counted\",total,-51951924412416,-51951924412416,\n"),
            std::string::npos)
      << csv.out;
  const CliRun packed = run("count --global-batch-size 4 --seq-length 8192 --format csv" + kDsaGqaFlags);
  ASSERT_EQ(packed.status, 0) << packed.err;
  EXPECT_NE(packed.out.find("\nmegatron_omission,dsa_gqa,\"not counted\",total,-50372584407040,-50372584407040,\n"),
            std::string::npos)
      << packed.out;
  // The exact modes list nothing: they count every feature.
  EXPECT_FALSE(json_of(kimi + " --mode model").contains("megatron_omissions"));
  const CliRun model_csv = run(kimi + " --mode model --format csv");
  EXPECT_EQ(model_csv.out.find("megatron_omission"), std::string::npos);
}

}  // namespace
