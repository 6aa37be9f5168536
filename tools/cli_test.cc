// The command line as a user runs it: a subprocess, its exit status, stdout
// and stderr.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace {

using trainflops::cli_test::CliRun;
using trainflops::cli_test::run;
using trainflops::cli_test::scratch_dir;
using trainflops::cli_test::slurp;

std::string data(const std::string& name) { return std::string(TRAINFLOPS_TEST_DATA) + "/" + name; }

// LongCat-Flash's real experts per token, from the command line and a batch
// record: the same count, each real expert 6 x 3 h expert_ffn FLOPs per token
// and layer (28 layers, h 6144, experts of 2048), and the nominal value's
// note only when none is given.
TEST(CliTest, RealExpertsPerTokenFromEveryFrontEnd) {
  const std::string config = data("hf/longcat-flash-transformers-defaults.json");
  const auto exact_of = [](const std::string& text) {
    __int128 value = 0;
    for (const char digit : text) value = value * 10 + (digit - '0');
    return value;
  };
  const auto counted = [&](const std::string& extra) {
    const CliRun result =
        run("count --hf " + config + " --mode model --seq-length 4096 --global-batch-size 1 --format json" + extra);
    EXPECT_EQ(result.status, 0) << result.err;
    return result;
  };
  const CliRun nominal = counted("");
  EXPECT_NE(nominal.err.find("assumed real_experts_per_token = 8 of moe_topk = 12"), std::string::npos) << nominal.err;
  const CliRun none = counted(" --real-experts-per-token 0"), all = counted(" --real-experts-per-token 12");
  EXPECT_EQ(all.err.find("real_experts_per_token"), std::string::npos) << all.err;
  const __int128 per_expert = __int128{6} * 3 * 6144 * 2048 * 28 * 4096;
  const std::string none_exact = nlohmann::json::parse(none.out)["total"]["exact"];
  const std::string all_exact = nlohmann::json::parse(all.out)["total"]["exact"];
  const std::string nominal_exact = nlohmann::json::parse(nominal.out)["total"]["exact"];
  EXPECT_TRUE(exact_of(all_exact) - exact_of(none_exact) == 12 * per_expert);
  EXPECT_TRUE(exact_of(nominal_exact) - exact_of(none_exact) == 8 * per_expert);
  const CliRun batch = run("batch", R"({"hf": ")" + config +
                                        R"(", "mode": "model", "batch_size": 1, "seq_length": 4096, )"
                                        R"("real_experts_per_token": 12})" "\n");
  ASSERT_EQ(batch.status, 0) << batch.err;
  EXPECT_EQ(nlohmann::json::parse(batch.out)["exact"], all_exact);
  const CliRun wrong = run("count --hf " + config + " --mode model --seq-length 8 --real-experts-per-token 13");
  EXPECT_NE(wrong.err.find("real_experts_per_token = 13: must be between 0 and topk = 12"), std::string::npos)
      << wrong.err;
}

// What ../shared/tools/check_vectors.py does: every record, without its
// answer, through `trainflops batch`; one result line per record, in order.
TEST(CliTest, BatchReproducesEveryReferenceVector) {
  for (const char* file : {"megatron_main.jsonl", "megatron_dsa.jsonl", "dsa.jsonl", "dsv4.jsonl"}) {
    SCOPED_TRACE(file);
    std::ifstream in(data(file));
    std::vector<nlohmann::json> records;
    std::string line, input;
    bool any_error = false;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      records.push_back(nlohmann::json::parse(line));
      nlohmann::json request = records.back();
      any_error = any_error || request["flops"].is_null();
      request.erase("flops");
      request.erase("error");
      input += request.dump() + "\n";
    }
    const CliRun result = run("batch", input);
    ASSERT_EQ(result.status, any_error ? 1 : 0) << result.err;
    std::istringstream out(result.out);
    std::size_t index = 0, passed = 0;
    while (std::getline(out, line)) {
      ASSERT_LT(index, records.size());
      const auto got = nlohmann::json::parse(line);
      const auto& want = records[index++]["flops"];
      if (want.is_null()) {
        passed += got.contains("error");
      } else if (want.is_string()) {
        passed += got.value("exact", "") == want.get<std::string>();
      } else {
        passed += got.contains("flops") &&
                  std::abs(got["flops"].get<double>() - want.get<double>()) <= 1e-12 * std::abs(want.get<double>());
      }
    }
    EXPECT_EQ(index, records.size());
    EXPECT_EQ(passed, records.size());
  }
}

TEST(CliTest, BatchKeepsGoingAfterABadRecord) {
  const std::string good =
      R"({"args": {"num_layers": 2, "hidden_size": 64, "ffn_hidden_size": 128, "num_attention_heads": 4,)"
      R"( "kv_channels": 16, "padded_vocab_size": 100, "seq_length": 8}, "mode": "model", "batch_size": 2})";
  // Deeper than any reader allows: answered, not a crash that loses the other answers.
  const std::string deep = R"({"args": )" + std::string(70000, '[') + std::string(70000, ']') + "}";
  const CliRun result = run("batch", good + "\n{oops\n\n" + R"({"args": {}, "mode": "megatron", "batch_size": 1})" +
                                         "\n" + deep + "\n" + good + "\n");
  EXPECT_EQ(result.status, 1);  // some lines failed
  EXPECT_EQ(result.err, "");
  std::istringstream out(result.out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  // One answer per input line, in order, blank lines included: answer N is line N's.
  ASSERT_EQ(lines.size(), 6u) << result.out;
  EXPECT_NE(lines[0].find("\"exact\":\""), std::string::npos);
  EXPECT_EQ(lines[1],
            R"x({"error":"line 2: not valid JSON (line 1, column 2: syntax error while parsing object key - invalid )x"
            R"x(literal; last read: '{o'; expected string literal)"})x");
  EXPECT_EQ(lines[2], R"({"error":"line 3: blank: every line must hold one JSON record"})");
  EXPECT_EQ(lines[3], R"({"error":"line 4: hidden_size is missing: required for every model"})");
  EXPECT_EQ(lines[4], R"x({"error":"line 5: not valid JSON: nested deeper than 100 levels (line 1, column 109)"})x");
  EXPECT_EQ(lines[5], lines[0]);
  const CliRun all_good = run("batch", good + "\n" + good + "\n");
  EXPECT_EQ(all_good.status, 0);
}

// Inputs that once crashed the tool or were silently misread: each is now a clear error (status 2) or an
// exact reading of the value as Megatron-LM's parser would take it.
TEST(CliTest, HostileInputsAreErrorsNotCrashes) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "deep.json") << std::string(70000, '[') << std::string(70000, ']');
  struct Case {
    std::string arguments, err;
  };
  const std::string model =
      "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 "
      "--seq-length 8 --global-batch-size 1 --num-experts 4";
  const std::vector<Case> cases = {
      {"count --global-batch-size 1 --args " + dir + "deep.json",
       "trainflops: " + dir + "deep.json: args: not valid JSON: nested deeper than 100 levels (line 1, column 101)\n"},
      {"count --global-batch-size 1 --config " + dir + "deep.json",
       "trainflops: " + dir + "deep.json: not valid JSON: nested deeper than 100 levels (line 1, column 101)\n"},
      {"count --global-batch-size 1 --hf " + dir + "deep.json",
       "trainflops: " + dir + "deep.json: not valid JSON: nested deeper than 100 levels (line 1, column 101)\n"},
      {"count --global-batch-size 1 --args /dev/zero",
       "trainflops: /dev/zero: larger than 16777216 bytes, the most trainflops reads from one such file\n"},
      {"count --global-batch-size 1 --args " + dir, "trainflops: " + dir + ": is a directory, not a file\n"},
      // CLI11 never sees the words after --: brackets reach Megatron-LM's list syntax unchanged.
      {"count --megatron -- " + model + " --moe-layer-freq '[[1]]'",
       "trainflops: --moe-layer-freq = \"[[1]]\": the list entry at position 2 is a list; entries must be integers\n"},
      {"count --megatron -- " + model + " --moe-layer-freq '" + std::string(6000, '(') + "[1]*2" +
           std::string(6000, ')') + "'",
       "trainflops: --moe-layer-freq = \"" + std::string(100, '(') +
           "... (12005 characters)\": '(' at position 101 opens more than 100 nested levels\n"},
      // Sizes are parsed by trainflops: out of range is an error, never a clamped value.
      {"count --preset llama-3.1-8b --global-batch-size 99999999999999999999",
       "trainflops: --global-batch-size = \"99999999999999999999\": must be at most 9223372036854775807\n"},
      {"count --preset llama-3.1-8b --global-batch-size 1 --seq-length 1.5",
       "trainflops: --seq-length = \"1.5\": must be an integer >= 1, optionally with k or m\n"},
      {"count --preset llama-3.1-8b --docs 10,20 --seq-length 999",
       "trainflops: seq_length = 999: goes with batch_size (BSHD); docs, cu_seqlens and the aggregates carry their "
       "own lengths\n"},
      {"presets -- x",
       "trainflops: unexpected \"x\" after --: only count, sweep, mfu, plan and compare read Megatron-LM flags there "
       "(with --megatron)\n"},
      {"count --preset glm-5 --global-batch-size 1 -- --x",
       "trainflops: unexpected \"--x\" after --: Megatron-LM flags need --megatron (--megatron -- <flags>)\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments.substr(0, 200));
    const CliRun result = run(c.arguments);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.err, c.err);
    EXPECT_EQ(result.out, "");
  }
  const CliRun with_suffix = run("count --preset llama-3.1-8b --global-batch-size 1 --seq-length 4k --format json");
  const CliRun plain = run("count --preset llama-3.1-8b --global-batch-size 1 --seq-length 4096 --format json");
  ASSERT_EQ(with_suffix.status, 0) << with_suffix.err;
  EXPECT_EQ(with_suffix.out, plain.out);
  const CliRun repeated = run("count --format json --megatron -- " + model + " --moe-layer-freq '[1]*2'");
  const CliRun listed = run("count --format json --megatron -- " + model + " --moe-layer-freq '[1,1]'");
  ASSERT_EQ(repeated.status, 0) << repeated.err;
  EXPECT_EQ(repeated.out, listed.out);
}

// Output that cannot be written is a failure, not a silent success.
TEST(CliTest, LostOutputIsAnError) {
  const std::string err = scratch_dir() + "full_err";
  const int raw = std::system(
      (std::string(TRAINFLOPS_CLI) + " count --preset glm-5 --global-batch-size 1 > /dev/full 2> " + err).c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 3);
  EXPECT_EQ(slurp(err), "trainflops: cannot write the output (No space left on device)\n");
}

TEST(CliTest, MegatronFlagsGiveTheSameTotalAsArgsJson) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "args.json") << R"({
    "num_layers": 6, "hidden_size": 1024, "ffn_hidden_size": 4096, "num_attention_heads": 16,
    "group_query_attention": true, "num_query_groups": 4, "kv_channels": 64, "swiglu": true,
    "padded_vocab_size": 50304, "seq_length": 2048, "num_experts": 8, "moe_layer_freq": [0, 1, 1, 1, 1, 1],
    "moe_router_topk": 2, "moe_ffn_hidden_size": 512, "mtp_num_layers": 1})";
  const CliRun from_args = run("count --args " + dir + "args.json --global-batch-size 16 --format json");
  ASSERT_EQ(from_args.status, 0) << from_args.err;
  const CliRun from_flags =
      run("count --format json --megatron -- --num-layers 6 --hidden-size 1024 --ffn-hidden-size 4096 "
          "--num-attention-heads 16 --group-query-attention --num-query-groups 4 --kv-channels 64 --swiglu "
          "--vocab-size 50257 --seq-length 2048 --global-batch-size 16 --num-experts 8 "
          "--moe-layer-freq '[0]*1+[1]*5' --moe-router-topk 2 --moe-ffn-hidden-size 512 --mtp-num-layers 1 "
          "--lr 3e-4 --bf16");
  ASSERT_EQ(from_flags.status, 0) << from_flags.err;
  const auto a = nlohmann::json::parse(from_args.out), b = nlohmann::json::parse(from_flags.out);
  EXPECT_EQ(a["total"]["flops"], b["total"]["flops"]);
  EXPECT_EQ(a["model"], b["model"]);
}

TEST(CliTest, VerboseListsWhatDoesNotChangeFlops) {
  const CliRun result =
      run("count --verbose --megatron -- --num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 "
          "--seq-length 8 --global-batch-size 1 --lr 3e-4 --bf16 --data-path 0.5 a 0.5 b --rampup-batch-size 1 1 100 "
          "--fp8-format hybrid");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("ignored (does not change FLOPs): --lr 3e-4\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("ignored (does not change FLOPs): --bf16\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("ignored (does not change FLOPs): --data-path 0.5 a 0.5 b\n"), std::string::npos)
      << result.err;
  // Flags that change what a real run executes say what the count leaves out.
  EXPECT_NE(result.err.find("not counted: --rampup-batch-size 1 1 100: the count is of one iteration at "
                            "--global-batch-size; during the ramp-up iterations hold fewer sequences\n"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("not counted: --fp8-format hybrid: FLOPs are the same in FP8; MFU should then be taken "
                            "against the FP8 peak (mfu --dtype fp8)\n"),
            std::string::npos)
      << result.err;
}

TEST(CliTest, Version) {
  const CliRun version = run("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out, "trainflops " TRAINFLOPS_VERSION "\n");
}

// Only the subcommand named first is built; --help, which names none, lists them all.
TEST(CliTest, HelpListsEverySubcommand) {
  const CliRun help = run("--help");
  EXPECT_EQ(help.status, 0);
  for (const char* name : {"count", "batch", "sweep", "presets", "mfu", "gpus", "plan", "compare"}) {
    EXPECT_NE(help.out.find("\n  " + std::string(name) + " "), std::string::npos) << name;
  }
  const CliRun sweep_help = run("sweep --help");
  EXPECT_EQ(sweep_help.status, 0);
  EXPECT_NE(sweep_help.out.find("--seq-lengths"), std::string::npos) << sweep_help.out;
}

TEST(CliTest, BadInputExitsTwoWithAMessageAndNoOutput) {
  struct Case {
    std::string arguments;
    std::string message;
  };
  const std::string tiny = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 8";
  const std::vector<Case> cases = {
      {"count --megatron -- " + tiny + " --num-layer 3 --global-batch-size 1",
       "trainflops: unknown flag --num-layer: Megatron-LM's parser has no such option; did you mean --num-layers? "
       "(allow unknown flags to count the model without it)\n"},
      {"count --megatron -- " + tiny,
       "trainflops: no workload: give --global-batch-size N (N sequences of the model's 8 tokens, or of "
       "--seq-length), --docs L1,L2,... (packed documents), --cu-seqlens FILE, or --total-real-tokens with "
       "--seqlen-squared-sum (Megatron-LM's aggregates)\n"},
      {"count --preset llama-3.1-8b",
       "trainflops: no workload: give --global-batch-size N (N sequences of the model's 8192 tokens, or of "
       "--seq-length), --docs L1,L2,... (packed documents), --cu-seqlens FILE, or --total-real-tokens with "
       "--seqlen-squared-sum (Megatron-LM's aggregates)\n"},
      {"count --megatron --num-layers 2 --global-batch-size 1",
       "trainflops: The following arguments were not expected: 2 --num-layers; Megatron-LM flags go after --, as in: "
       "trainflops count --megatron -- --num-layers 32 --hidden-size 4096 ...\n"},
      {"count --megatron -- " + tiny + " --global-batch-size 1 --num-layers 0",
       "trainflops: num_layers = 0: must be a positive integer\n"},
      {"count --megatron -- " + tiny + " --global-batch-size 1 --num-layers 20000000",
       "trainflops: num_layers = 20000000: must be at most 100000 (trainflops describes every layer; published "
       "models have a few hundred)\n"},
      {"count --megatron -- " + tiny + " --global-batch-size 1 --mtp-num-layers 100001",
       "trainflops: mtp_num_layers = 100001: must be at most 100000 (trainflops describes every layer; published "
       "models have a few hundred)\n"},
      {"count --megatron --mode exact -- " + tiny + " --global-batch-size 1",
       "trainflops: mode = \"exact\": must be one of megatron, model, executed\n"},
      {"count --megatron --docs 5,x -- " + tiny,
       "trainflops: --docs: \"x\" is not a document length (a non-negative integer, optionally with k or m)\n"},
      {"count --megatron --mode model --total-real-tokens 10 --seqlen-squared-sum 50 -- " + tiny,
       "trainflops: model mode counts every document exactly and needs their lengths (docs, cu_seqlens or a BSHD "
       "batch); total_real_tokens and seqlen_squared_sum allow megatron mode only\n"},
      {"count --config /nonexistent.json --global-batch-size 1 --seq-length 8",
       "trainflops: /nonexistent.json: cannot open (No such file or directory)\n"},
      {"count --global-batch-size 1 --seq-length 8",
       "trainflops: no model: give exactly one model source: preset (a built-in model; trainflops presets lists "
       "them), args (Megatron-LM arguments, JSON), config (a trainflops config), hf (a Hugging Face config.json or "
       "its directory) or Megatron-LM flags\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.arguments);
    const CliRun result = run(c.arguments);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, c.message);
  }
}

TEST(CliTest, PackedBatchFromCuSeqlensAndDocsAgree) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "cu.txt") << "0 100 350 351\n";
  const std::string model = "--megatron -- --num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100";
  const CliRun docs = run("count --mode model --format csv --docs 100,250,1 " + model);
  const CliRun cu = run("count --mode model --format csv --cu-seqlens " + dir + "cu.txt " + model);
  ASSERT_EQ(docs.status, 0) << docs.err;
  ASSERT_EQ(cu.status, 0) << cu.err;
  EXPECT_EQ(docs.out, cu.out);
  // Lengths take the k of --seq-length: 1k is 1024 tokens.
  std::ofstream(dir + "cu_k.txt") << "0 1024 3072\n";
  const CliRun docs_k = run("count --mode model --format csv --docs 1k,2k " + model);
  const CliRun cu_k = run("count --mode model --format csv --cu-seqlens " + dir + "cu_k.txt " + model);
  ASSERT_EQ(docs_k.status, 0) << docs_k.err;
  EXPECT_EQ(docs_k.out, cu_k.out);
  // Offsets of no tokens are named as offsets, with their file, in every mode.
  std::ofstream(dir + "cu_empty.txt") << "0 0 0\n";
  for (const char* mode : {"megatron", "model"}) {
    const CliRun empty = run(std::string("count --mode ") + mode + " --cu-seqlens " + dir + "cu_empty.txt " + model);
    EXPECT_EQ(empty.status, 2);
    EXPECT_EQ(empty.err,
              "trainflops: " + dir +
                  "cu_empty.txt: cu_seqlens: the batch holds no tokens (the last offset must be positive)\n");
  }
}

TEST(CliTest, SweepAndPresets) {
  const CliRun presets = run("presets");
  ASSERT_EQ(presets.status, 0) << presets.err;
  EXPECT_NE(presets.out.find("glm-5 "), std::string::npos);
  EXPECT_NE(presets.out.find("deepseek-v3.2 "), std::string::npos);
  // The JSON form: one object per line of the table, the same counts in full.
  const CliRun presets_json = run("presets --format json");
  ASSERT_EQ(presets_json.status, 0) << presets_json.err;
  const auto listed = nlohmann::json::parse(presets_json.out);
  EXPECT_EQ(listed.size(), static_cast<std::size_t>(std::count(presets.out.begin(), presets.out.end(), '\n')));
  ASSERT_EQ(listed[0]["name"], "deepseek-v3");
  EXPECT_NE(presets.out.find("deepseek-v3              671B total, 36.6B active (+ 11.6B MTP)"), std::string::npos);
  EXPECT_EQ(listed[0]["parameters"]["total"].get<std::string>().substr(0, 3), "671");
  EXPECT_EQ(listed[0]["parameters"]["active"].get<std::string>().size(), 11u);  // 36.6B
  EXPECT_EQ(listed[0]["seq_length"], 4096);
  EXPECT_EQ(run("presets --format csv").err, "trainflops: --format = \"csv\": presets prints table or json\n");
  const CliRun sweep = run("sweep --preset glm-5.2 --seq-lengths 4k,256k --format json");
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const auto json = nlohmann::json::parse(sweep.out);
  ASSERT_EQ(json["points"].size(), 2u);
  EXPECT_EQ(json["points"][1]["seq_length"], 262144);
  EXPECT_GT(json["points"][1]["dense_over_this"].get<double>(), 6.5);
  const CliRun count = run("count --preset deepseek-v3.2 --global-batch-size 2 --format json");
  ASSERT_EQ(count.status, 0) << count.err;
  EXPECT_EQ(nlohmann::json::parse(count.out)["workload"]["tokens"], "8192");  // the preset's 4096 tokens
  // A table of 3000 rows is printed in several parts, every row once, in order.
  std::string lengths = "1";
  for (int length = 2; length <= 3000; ++length) lengths += "," + std::to_string(length);
  const CliRun table = run("sweep --preset glm-5.2 --seq-lengths " + lengths);
  ASSERT_EQ(table.status, 0) << table.err;
  ASSERT_GT(table.out.size(), std::size_t{1} << 17);
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 5 + 3000);
  EXPECT_NE(table.out.find("\n        1 "), std::string::npos);
  EXPECT_EQ(table.out.rfind("\n     3000 "), table.out.rfind('\n', table.out.size() - 2)) << table.out.substr(0, 600);
  const CliRun unknown = run("sweep --preset glm-6");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err.rfind("trainflops: preset = \"glm-6\": unknown; did you mean \"glm-5\"? (known: ", 0), 0u)
      << unknown.err;
  const CliRun bad_lengths = run("sweep --preset glm-5 --seq-lengths 4k,0");
  EXPECT_EQ(bad_lengths.err,
            "trainflops: --seq-lengths: \"0\" is not a context length (a positive integer, optionally with k or m)\n");
}

// --dsa-indexer-grad-mode trains every DSA indexer as told, whatever the model
// source: the same count as the Megatron-LM flags that set that training.
TEST(CliTest, DsaIndexerGradModeForAnySource) {
  const std::string model =
      "--num-layers 2 --hidden-size 64 --ffn-hidden-size 96 --num-attention-heads 2 --swiglu --vocab-size 100 "
      "--make-vocab-size-divisible-by 1 --multi-latent-attention --q-lora-rank 16 --kv-lora-rank 8 "
      "--qk-head-dim 8 --qk-pos-emb-head-dim 4 --v-head-dim 8 --experimental-attention-variant dsa "
      "--dsa-indexer-n-heads 2 --dsa-indexer-head-dim 8 --dsa-indexer-topk 16";
  const std::string workload = " --docs 40,3,17 --format json";
  struct Case {
    const char* grad_mode;
    const char* training_flags;
  };
  for (const Case& c : {Case{"detached", " --dsa-indexer-loss-coeff 0.01"},
                        Case{"sparse", " --dsa-indexer-loss-coeff 0.01 --dsa-indexer-use-sparse-loss"},
                        Case{"full", " --dsa-indexer-grad-mode full"}, Case{"off", ""}}) {
    SCOPED_TRACE(c.grad_mode);
    for (const char* mode : {"megatron", "model", "executed"}) {
      const CliRun told = run(std::string("count --mode ") + mode + workload + " --dsa-indexer-grad-mode " +
                              c.grad_mode + " --megatron -- " + model);
      const CliRun flags =
          run(std::string("count --mode ") + mode + workload + " --megatron -- " + model + c.training_flags);
      ASSERT_EQ(told.status, 0) << told.err;
      ASSERT_EQ(flags.status, 0) << flags.err;
      EXPECT_EQ(nlohmann::json::parse(told.out)["total"], nlohmann::json::parse(flags.out)["total"]);
    }
  }
  // A preset carries no training setting: the option trains its indexers, in sweep and mfu too.
  const CliRun sweep =
      run("sweep --preset deepseek-v3.2 --seq-lengths 4k --mode executed --format json "
          "--dsa-indexer-grad-mode detached");
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const CliRun untrained = run("sweep --preset deepseek-v3.2 --seq-lengths 4k --mode executed --format json");
  EXPECT_GT(nlohmann::json::parse(sweep.out)["points"][0]["per_token"].get<double>(),
            nlohmann::json::parse(untrained.out)["points"][0]["per_token"].get<double>());
  const CliRun mfu =
      run("mfu --preset deepseek-v3.2 --global-batch-size 1 --step-time 1 --num-gpus 8 --gpu h100-sxm "
          "--dsa-indexer-grad-mode sparse");
  EXPECT_EQ(mfu.status, 0) << mfu.err;
  const CliRun bad = run("count --preset deepseek-v3.2 --global-batch-size 1 --dsa-indexer-grad-mode dense");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "trainflops: dsa_indexer_grad_mode = \"dense\": must be one of off, detached, sparse, full\n");
  const CliRun dense = run("count --preset llama-3.1-8b --global-batch-size 1 --dsa-indexer-grad-mode full");
  EXPECT_EQ(dense.status, 2);
  EXPECT_EQ(dense.err,
            "trainflops: dsa_indexer_grad_mode = \"full\": the model has no DSA layer, so no indexer to train\n");
}

// --megatron-branch and a batch record's megatron_branch pick the branch the
// same way: dev charges a hybrid MTP depth's projection, 6 (3h + 2h^2) per
// token, that main leaves out; a misspelt branch is refused with a suggestion.
TEST(CliTest, MegatronBranchFromTheCommandLineAndBatch) {
  const std::string args =
      R"({"hidden_size": 64, "ffn_hidden_size": 128, "num_attention_heads": 4, "kv_channels": 16,)"
      R"( "padded_vocab_size": 100, "seq_length": 8, "hybrid_layer_pattern": "*-/*-", "mtp_num_layers": 1})";
  const auto total = [](const CliRun& result) {
    EXPECT_EQ(result.status, 0) << result.err;
    return nlohmann::json::parse(result.out)["flops"].get<double>();
  };
  const double main = total(run("batch", R"({"args": )" + args + R"(, "mode": "megatron", "batch_size": 2})" "\n"));
  const double dev = total(run(
      "batch", R"({"args": )" + args + R"(, "mode": "megatron", "batch_size": 2, "megatron_branch": "dev"})" "\n"));
  EXPECT_EQ(dev - main, 6.0 * (3 * 64 + 2 * 64 * 64) * 16);
  const std::string file = scratch_dir() + "megatron_branch_args.json";
  std::ofstream(file) << args;
  const CliRun counted = run("count --args " + file + " --global-batch-size 2 --format json --megatron-branch dev");
  ASSERT_EQ(counted.status, 0) << counted.err;
  EXPECT_EQ(nlohmann::json::parse(counted.out)["total"]["flops"].get<double>(), dev);
  const CliRun bad = run("count --args " + file + " --global-batch-size 2 --megatron-branch mian");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err, "trainflops: megatron_branch = \"mian\": must be main or dev; did you mean main?\n");
}

// Megatron-LM's recompute and pipeline flags count inside --megatron -- as
// trainflops' own options do outside.
TEST(CliTest, RecomputeAndPipelineFlagsOfMegatronLm) {
  const std::string model =
      " --megatron -- --num-layers 6 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 16 "
      "--global-batch-size 2";
  for (const char* granularity : {"full", "selective"}) {
    SCOPED_TRACE(granularity);
    const CliRun inside =
        run(std::string("count --mode executed --format json") + model + " --recompute-granularity " + granularity);
    const CliRun outside = run(std::string("count --mode executed --format json --recompute ") + granularity + model);
    ASSERT_EQ(inside.status, 0) << inside.err;
    EXPECT_EQ(inside.out, outside.out);
  }
  // Model FLOPs exclude recomputation: megatron mode counts a launch script with it as without.
  const CliRun megatron = run("count --format json" + model + " --recompute-granularity full");
  EXPECT_EQ(megatron.out, run("count --format json" + model).out);
  const CliRun stages_inside =
      run("count --format json" + model + " --pipeline-model-parallel-size 3 --decoder-first-pipeline-num-layers 2");
  const CliRun stages_outside =
      run("count --format json --pipeline-stages 3 --decoder-first-pipeline-num-layers 2" + model);
  ASSERT_EQ(stages_inside.status, 0) << stages_inside.err;
  EXPECT_EQ(nlohmann::json::parse(stages_inside.out)["pipeline"]["stages"].size(), 3u);
  EXPECT_EQ(stages_inside.out, stages_outside.out);
  // The virtual pipeline: a layout, or chunks per stage, inside as outside.
  for (const std::string& virtual_pipeline : {std::string(" --pipeline-model-parallel-layout 'Et|tt|t|t|t|L'"),
                                              std::string(" --num-virtual-stages-per-pipeline-rank 3")}) {
    SCOPED_TRACE(virtual_pipeline);
    const CliRun inside = run("count --format json" + model + " --pipeline-model-parallel-size 2" + virtual_pipeline);
    const CliRun outside = run("count --format json --pipeline-stages 2" + virtual_pipeline + model);
    ASSERT_EQ(inside.status, 0) << inside.err;
    EXPECT_EQ(inside.out, outside.out);
  }
  const nlohmann::json interleaved = nlohmann::json::parse(
      run("count --format json" + model + " --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 1")
          .out)["pipeline"]["stages"];
  ASSERT_EQ(interleaved.size(), 2u);
  EXPECT_EQ(interleaved[0]["layers"], "embedding + decoder.1 | decoder.3 | decoder.5");
  EXPECT_EQ(interleaved[1]["layers"], "decoder.2 | decoder.4 | decoder.6 + logits");
  const CliRun block = run("count --mode executed" + model + " --recompute-granularity full --recompute-method block");
  EXPECT_EQ(block.status, 2);
  EXPECT_EQ(block.err,
            "trainflops: --recompute-method = \"block\": recomputing only some layers of a stage is not counted; "
            "uniform (every layer) is\n");
}

// --window-size counts in the exact modes, from a flags file too; megatron
// mode charges full causal attention as Megatron-LM does.
TEST(CliTest, SlidingWindowFlagsChangeModelModeOnly) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "model.flags") << "# a small GPT\n--num-layers 4 --hidden-size 64 \\\n  --num-attention-heads 4 "
                                        "--vocab-size 100\n--seq-length 16 --global-batch-size 2\n";
  const std::string windows = " --window-size 3,0 --window-attn-skip-freq 2";
  auto total = [&](const std::string& mode, const std::string& extra) {
    const CliRun counted = run("count --format json --mode " + mode + " --megatron -- @" + dir + "model.flags" + extra);
    EXPECT_EQ(counted.status, 0) << counted.err;
    const nlohmann::json total = nlohmann::json::parse(counted.out)["total"];
    return total.contains("exact") ? total["exact"].get<std::string>() : total["flops"].dump();
  };
  // Layers 1 and 3 attend 4 keys: per sequence of 16, sum min(i, 4) = 58 pairs instead of 136; 78 pairs x
  // 4 heads x (16 + 16) FMAs x 2 x 3 = 59,904 FLOPs per layer and sequence, 239,616 for 2 layers x 2 sequences.
  const std::string model_full = total("model", ""), model_windowed = total("model", windows);
  EXPECT_EQ(std::stoll(model_full) - std::stoll(model_windowed), 239616);
  EXPECT_EQ(total("megatron", windows), total("megatron", ""));
}

// --pipeline-stages adds the stages to every format; their FLOPs sum to the total.
TEST(CliTest, PipelineStages) {
  const CliRun json =
      run("count --preset glm-5 --global-batch-size 1 --pipeline-stages 4 "
          "--decoder-first-pipeline-num-layers 18 --decoder-last-pipeline-num-layers 18 "
          "--mode model --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto report = nlohmann::json::parse(json.out);
  const auto& pipeline = report["pipeline"];
  ASSERT_EQ(pipeline["stages"].size(), 4u);
  EXPECT_EQ(pipeline["stages"][0]["layers"], "embedding + decoder.1-18");
  EXPECT_EQ(pipeline["stages"][1]["decoder_layers"], 21);
  EXPECT_EQ(pipeline["stages"][3]["layers"], "decoder.61-78 + mtp1 + logits");
  EXPECT_EQ(pipeline["slowest_stage"], 4);
  double sum = 0;
  for (const auto& stage : pipeline["stages"]) sum += stage["flops"].get<double>();
  EXPECT_NEAR(sum, report["total"]["flops"].get<double>(), 1e-9 * sum);
  const CliRun table = run("count --preset glm-5 --global-batch-size 1 --pipeline-stages 2");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("pipeline   2 stages (pipeline_stages 2, even split); slowest stage 2, imbalance "),
            std::string::npos)
      << table.out;
  const CliRun uneven = run("count --preset glm-5 --global-batch-size 1 --pipeline-stages 5");
  EXPECT_EQ(uneven.status, 2);
  EXPECT_EQ(uneven.err,
            "trainflops: pipeline_stages = 5: must divide the 78 decoder layers for an even split (or set "
            "decoder_first_pipeline_num_layers / decoder_last_pipeline_num_layers)\n");
}

// --hf reads a Hugging Face config.json and says what it assumed.
TEST(CliTest, HuggingFaceConfig) {
  const std::string dir = scratch_dir();
  std::ofstream(dir + "config.json") << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 100,
    "rope_theta": 10000})";
  const CliRun hf = run("count --hf " + dir + "config.json --global-batch-size 2 --seq-length 16 --format json");
  ASSERT_EQ(hf.status, 0) << hf.err;
  const CliRun megatron =
      run("count --format json --megatron -- --num-layers 2 --hidden-size 64 --ffn-hidden-size 256 --swiglu "
          "--num-attention-heads 4 --group-query-attention --num-query-groups 2 --vocab-size 100 "
          "--make-vocab-size-divisible-by 1 --global-batch-size 2 --seq-length 16");
  ASSERT_EQ(megatron.status, 0) << megatron.err;
  EXPECT_EQ(nlohmann::json::parse(hf.out)["total"], nlohmann::json::parse(megatron.out)["total"]);
  // A field trainflops does not know: a warning naming it, the count goes on; --strict makes it an error.
  std::ofstream(dir + "new.json") << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 100, "new_field": 1})";
  const std::string unknown_field =
      dir +
      "new.json: new_field = 1: not a field trainflops knows for model_type \"llama\", "
      "so it cannot tell whether it changes FLOPs (docs/hf-import.md lists the known fields)";
  const CliRun warned = run("count --hf " + dir + "new.json --global-batch-size 2 --seq-length 16 --format json");
  ASSERT_EQ(warned.status, 0) << warned.err;
  EXPECT_EQ(warned.err, "trainflops: warning: " + unknown_field + "\n");
  EXPECT_EQ(nlohmann::json::parse(warned.out)["total"], nlohmann::json::parse(hf.out)["total"]);
  const CliRun strict = run("count --strict --hf " + dir + "new.json --global-batch-size 2 --seq-length 16");
  EXPECT_EQ(strict.status, 2);
  EXPECT_EQ(strict.err, "trainflops: " + unknown_field + "\n");
  // A release directory: its config.json.
  std::filesystem::create_directories(dir + "release");
  std::filesystem::copy_file(dir + "config.json", dir + "release/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  const CliRun directory = run("count --hf " + dir + "release --global-batch-size 2 --seq-length 16 --format json");
  ASSERT_EQ(directory.status, 0) << directory.err;
  EXPECT_EQ(nlohmann::json::parse(directory.out)["total"], nlohmann::json::parse(hf.out)["total"]);
  std::ofstream(dir + "phi.json") << R"({"model_type": "phi3"})";
  const CliRun unknown = run("count --hf " + dir + "phi.json --global-batch-size 1 --seq-length 8");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err.rfind("trainflops: " + dir + "phi.json: model_type = \"phi3\": not supported (supported: ", 0),
            0u)
      << unknown.err;
}

}  // namespace
