// Megatron-LM launch-script flags into MegatronArgs: each relevant flag, the
// defaults and derivations of Megatron-LM's parser and validate_args, the
// vocabulary padding, the layer-frequency patterns, typos, ignored flags and
// errors, and one DeepSeek-V3-like script through the model builder.
#include "trainflops/megatron_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "inputs/megatron_known_flags.h"

namespace trainflops {
namespace {

using Argv = std::vector<std::string>;

std::string render(std::int64_t value) { return std::to_string(value); }
std::string render(bool value) { return value ? "true" : "false"; }
std::string render(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}
std::string render(const std::string& value) { return "\"" + value + "\""; }

std::string render(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i == 0 ? "" : ",") + std::to_string(values[i]);
  return out + "]";
}

std::string render(const LayerFrequency& frequency) {
  return std::visit([](const auto& value) { return render(value); }, frequency);
}

std::string render(const std::vector<std::string>& words) {
  std::string out = "[";
  for (std::size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : " ") + words[i];
  return out + "]";
}

template <typename T>
std::string render(const std::optional<T>& value) {
  return value ? render(*value) : "None";
}

// The member `name` of `args` as text; "None" when unset.
std::string member(const MegatronArgs& args, std::string_view name) {
  std::string out = "<no member " + std::string(name) + ">";
  for_each_megatron_arg(args, [&](std::string_view member_name, const auto& value) {
    if (member_name == name) out = render(value);
  });
  return out;
}

std::string flag_of(std::string_view name) {
  std::string flag = "--" + std::string(name);
  for (char& c : flag) c = c == '_' ? '-' : c;
  return flag;
}

// A launch script's flags, split at spaces.
Argv words(std::string_view line) {
  Argv argv;
  for (std::size_t start = 0; start < line.size();) {
    const std::size_t end = std::min(line.find(' ', start), line.size());
    argv.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

// Runs of equal entries, e.g. runs({{0, 3}, {1, 2}}) == [0,0,0,1,1].
std::vector<std::int64_t> runs(std::initializer_list<std::pair<std::int64_t, int>> parts, int times = 1) {
  std::vector<std::int64_t> out;
  for (int t = 0; t < times; ++t) {
    for (const auto& [value, count] : parts) out.insert(out.end(), count, value);
  }
  return out;
}

struct MemberCase {
  Argv argv;
  std::string member;
  std::string want;  // as render() shows it
};

void expect_members(const std::vector<MemberCase>& cases) {
  for (const MemberCase& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.argv) + " -> " + c.member);
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(c.argv);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(member(parsed.value().args, c.member), c.want);
    EXPECT_TRUE(parsed.value().ignored.empty()) << testing::PrintToString(parsed.value().ignored);
  }
}

// What Megatron-LM's parser rejects, as parse_megatron_flags words it.
std::string unknown_flag(std::string_view flag, std::optional<std::string_view> intended) {
  std::string message = "unknown flag " + std::string(flag) + ": Megatron-LM's parser has no such option";
  if (intended) message += "; did you mean " + std::string(*intended) + "?";
  return message + " (allow unknown flags to count the model without it)";
}

struct ErrorCase {
  Argv argv;
  std::string message;
};

void expect_errors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.argv));
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(c.argv);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message(), c.message);
  }
}

TEST(MegatronFlagsTest, ParsesEachRelevantFlag) {
  expect_members({
      {{"--num-layers", "32"}, "num_layers", "32"},
      {{"--hidden-size", "4096"}, "hidden_size", "4096"},
      {{"--ffn-hidden-size", "11008"}, "ffn_hidden_size", "11008"},
      {{"--num-attention-heads", "32"}, "num_attention_heads", "32"},
      {{"--group-query-attention"}, "group_query_attention", "true"},
      {{"--num-query-groups", "8"}, "num_query_groups", "8"},
      {{"--kv-channels", "128"}, "kv_channels", "128"},
      {{"--attention-output-gate"}, "attention_output_gate", "true"},
      {{"--swiglu"}, "swiglu", "true"},
      {{"--padded-vocab-size", "151552"}, "padded_vocab_size", "151552"},
      {{"--seq-length", "4096"}, "seq_length", "4096"},
      {{"--num-experts", "160"}, "num_experts", "160"},
      {{"--moe-layer-freq", "2"}, "moe_layer_freq", "2"},
      {{"--moe-layer-freq", "[0,1]*2"}, "moe_layer_freq", "[0,1,0,1]"},
      {{"--moe-router-topk", "8"}, "moe_router_topk", "8"},
      {{"--moe-ffn-hidden-size", "1536"}, "moe_ffn_hidden_size", "1536"},
      {{"--moe-shared-expert-intermediate-size", "1536"}, "moe_shared_expert_intermediate_size", "1536"},
      {{"--num-experts", "64", "--moe-latent-size", "1024"}, "moe_latent_size", "1024"},
      {{"--mtp-num-layers", "1"}, "mtp_num_layers", "1"},
      {{"--mtp-num-layers", "-1"}, "mtp_num_layers", "-1"},
      {{"--multi-latent-attention"}, "multi_latent_attention", "true"},
      {{"--q-lora-rank", "1536"}, "q_lora_rank", "1536"},
      {{"--kv-lora-rank", "512"}, "kv_lora_rank", "512"},
      {{"--qk-head-dim", "192"}, "qk_head_dim", "192"},
      {{"--qk-pos-emb-head-dim", "32"}, "qk_pos_emb_head_dim", "32"},
      {{"--v-head-dim", "256"}, "v_head_dim", "256"},
      {{"--experimental-attention-variant", "gated_delta_net"},
       "experimental_attention_variant",
       "\"gated_delta_net\""},
      {{"--linear-attention-freq", "4"}, "linear_attention_freq", "4"},
      {{"--linear-attention-freq", "[1,1,1,0]"}, "linear_attention_freq", "[1,1,1,0]"},
      {{"--linear-key-head-dim", "64"}, "linear_key_head_dim", "64"},
      {{"--linear-value-head-dim", "96"}, "linear_value_head_dim", "96"},
      {{"--linear-num-key-heads", "8"}, "linear_num_key_heads", "8"},
      {{"--linear-num-value-heads", "24"}, "linear_num_value_heads", "24"},
      {{"--linear-conv-kernel-dim", "3"}, "linear_conv_kernel_dim", "3"},
      {{"--hybrid-layer-pattern", "M-M*-"}, "hybrid_layer_pattern", "\"M-M*-\""},
      {{"--hybrid-override-pattern", "M-M*-"}, "hybrid_layer_pattern", "\"M-M*-\""},
      {{"--mamba-state-dim", "64"}, "mamba_state_dim", "64"},
      {{"--mamba-head-dim", "32"}, "mamba_head_dim", "32"},
      {{"--mamba-num-groups", "4"}, "mamba_num_groups", "4"},
      {{"--mamba-num-heads", "128"}, "mamba_num_heads", "128"},
      {{"--gdp-num-householder", "2"}, "gdp_num_householder", "2"},
      {{"--spec", "megatron.core.models.hybrid.hybrid_layer_specs", "gdp_stack_spec"},
       "spec",
       "[megatron.core.models.hybrid.hybrid_layer_specs gdp_stack_spec]"},
      {{"--spec", "--swiglu"}, "spec", "[]"},
      {{"--encoder-num-layers", "24"}, "num_layers", "24"},
      {{"--encoder-seq-length", "2048"}, "seq_length", "2048"},
  });
}

// Every MegatronArgs member is read from its flag, never ignored: the flag
// table is the struct itself.
TEST(MegatronFlagsTest, EveryMemberHasAFlag) {
  MegatronArgs members;
  for_each_megatron_arg(members, [](std::string_view name, auto& value) {
    using Member = std::decay_t<decltype(value)>;
    Argv argv = {flag_of(name)};
    if constexpr (std::is_same_v<Member, std::optional<bool>>) {
    } else if constexpr (std::is_same_v<Member, std::optional<std::string>>) {
      argv.push_back("x");
    } else {
      argv.push_back("1");
    }
    if (name == "moe_latent_size") argv.insert(argv.end(), {"--num-experts", "2"});
    SCOPED_TRACE(argv[0]);
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(argv);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_TRUE(parsed.value().ignored.empty());
    EXPECT_NE(member(parsed.value().args, name), "None");
  });
}

TEST(MegatronFlagsTest, GlobalBatchSize) {
  for (const Argv& argv : {Argv{"--global-batch-size", "1024"}, Argv{"--global-batch-size=1024"}}) {
    SCOPED_TRACE(testing::PrintToString(argv));
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(argv);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed.value().global_batch_size, 1024);
  }
  const Result<ParsedMegatronFlags> none = parse_megatron_flags({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value().global_batch_size, std::nullopt);
}

TEST(MegatronFlagsTest, AppliesMegatronDefaults) {
  expect_members({
      {{}, "num_layers", "None"},
      {{}, "hidden_size", "None"},
      {{}, "ffn_hidden_size", "None"},
      {{}, "num_attention_heads", "None"},
      {{}, "group_query_attention", "false"},
      {{}, "num_query_groups", "1"},
      {{}, "kv_channels", "None"},
      {{}, "attention_output_gate", "false"},
      {{}, "swiglu", "false"},
      {{}, "padded_vocab_size", "None"},
      {{}, "seq_length", "None"},
      {{}, "num_experts", "None"},
      {{}, "moe_layer_freq", "1"},
      {{}, "moe_router_topk", "2"},
      {{}, "moe_ffn_hidden_size", "None"},
      {{}, "moe_shared_expert_intermediate_size", "None"},
      {{}, "moe_latent_size", "None"},
      {{}, "mtp_num_layers", "None"},
      {{}, "multi_latent_attention", "false"},
      {{}, "q_lora_rank", "None"},
      {{}, "kv_lora_rank", "32"},
      {{}, "qk_head_dim", "128"},
      {{}, "qk_pos_emb_head_dim", "64"},
      {{}, "v_head_dim", "128"},
      {{}, "experimental_attention_variant", "None"},
      {{}, "linear_attention_freq", "None"},
      {{}, "linear_key_head_dim", "128"},
      {{}, "linear_value_head_dim", "128"},
      {{}, "linear_num_key_heads", "16"},
      {{}, "linear_num_value_heads", "32"},
      {{}, "linear_conv_kernel_dim", "4"},
      {{}, "hybrid_layer_pattern", "None"},
      {{}, "mamba_state_dim", "128"},
      {{}, "mamba_head_dim", "64"},
      {{}, "mamba_num_groups", "8"},
      {{}, "mamba_num_heads", "None"},
      {{}, "gdp_num_householder", "3"},
      {{}, "spec", "None"},
      // validate_args derivations.
      {{"--hidden-size", "4096"}, "ffn_hidden_size", "16384"},
      {{"--hidden-size", "4096", "--swiglu"}, "ffn_hidden_size", "10880"},
      {{"--hidden-size", "5120", "--swiglu"}, "ffn_hidden_size", "13632"},
      {{"--hidden-size", "4096", "--swiglu", "--ffn-hidden-size", "11008"}, "ffn_hidden_size", "11008"},
      {{"--hidden-size", "4096", "--num-attention-heads", "32"}, "kv_channels", "128"},
      {{"--hidden-size", "4096", "--num-attention-heads", "48", "--kv-channels", "64"}, "kv_channels", "64"},
      {{"--hidden-size", "4096"}, "kv_channels", "None"},
      {{"--num-experts", "8", "--hidden-size", "1024"}, "moe_ffn_hidden_size", "4096"},
      {{"--num-experts", "8", "--ffn-hidden-size", "1000", "--moe-ffn-hidden-size", "256"},
       "moe_ffn_hidden_size",
       "256"},
      {{"--num-experts", "0", "--hidden-size", "1024"}, "num_experts", "None"},
      {{"--num-experts", "0", "--hidden-size", "1024"}, "moe_ffn_hidden_size", "None"},
      {{"--hidden-size", "1024"}, "moe_ffn_hidden_size", "None"},
  });
}

TEST(MegatronFlagsTest, PadsTheVocabularyAsMegatron) {
  expect_members({
      {{"--vocab-size", "151552"}, "padded_vocab_size", "151552"},
      {{"--vocab-size", "151552", "--make-vocab-size-divisible-by", "128", "--tensor-model-parallel-size", "1"},
       "padded_vocab_size",
       "151552"},
      {{"--vocab-size", "50257"}, "padded_vocab_size", "50304"},
      {{"--vocab-size", "50257", "--tensor-model-parallel-size", "4"}, "padded_vocab_size", "50688"},
      {{"--vocab-size", "50257", "--tensor-model-parallel-size", "8"}, "padded_vocab_size", "51200"},
      {{"--vocab-size", "50257", "--make-vocab-size-divisible-by", "64", "--tensor-model-parallel-size", "8"},
       "padded_vocab_size",
       "50688"},
      {{"--vocab-size", "129280", "--tensor-model-parallel-size", "2"}, "padded_vocab_size", "129280"},
      {{"--vocab-size", "1"}, "padded_vocab_size", "128"},
      {{"--vocab-size", "50257", "--make-vocab-size-divisible-by", "1"}, "padded_vocab_size", "50257"},
      {{"--vocab-size", "50257", "--padded-vocab-size", "50300"}, "padded_vocab_size", "50300"},
      {{"--padded-vocab-size", "50300", "--vocab-size", "50257"}, "padded_vocab_size", "50300"},
      {{"--tensor-model-parallel-size", "8"}, "padded_vocab_size", "None"},
      // Since April 2026 NullTokenizer adds no end-of-document token: 128256 stays 128256.
      {{"--vocab-size", "128", "--tokenizer-type", "NullTokenizer"}, "padded_vocab_size", "128"},
      {{"--vocab-size", "128256", "--tokenizer-type", "NullTokenizer"}, "padded_vocab_size", "128256"},
      {{"--vocab-size", "128", "--tokenizer-type", "HuggingFaceTokenizer"}, "padded_vocab_size", "128"},
  });
  expect_errors({
      {{"--vocab-size", "0"}, "--vocab-size = 0: must be a positive integer"},
      {{"--vocab-size", "100", "--make-vocab-size-divisible-by", "0"},
       "--make-vocab-size-divisible-by = 0: must be a positive integer"},
      {{"--vocab-size", "100", "--tensor-model-parallel-size", "-2"},
       "--tensor-model-parallel-size = -2: must be a positive integer"},
      {{"--vocab-size", "9223372036854775807"},
       "--vocab-size = 9223372036854775807: padding it to a multiple of 128 * 1 overflows 64 bits"},
  });
}

struct PatternCase {
  std::string text;
  LayerFrequency want;
};

TEST(MegatronFlagsTest, EvaluatesLayerFrequencyPatterns) {
  const std::vector<PatternCase> cases = {
      {"[0]*3+[1]*75", runs({{0, 3}, {1, 75}})},
      {"([1]*3+[0]*1)*12", runs({{1, 3}, {0, 1}}, 12)},
      {"([0]+[1]*23)", runs({{0, 1}, {1, 23}})},
      {"[1,0,1]", std::vector<std::int64_t>{1, 0, 1}},
      {"[1,0,]", std::vector<std::int64_t>{1, 0}},
      {"[]", std::vector<std::int64_t>{}},
      {"[1]*0", std::vector<std::int64_t>{}},
      {"3*[1]", std::vector<std::int64_t>{1, 1, 1}},
      {"(1+2)*[0]+[1]", std::vector<std::int64_t>{0, 0, 0, 1}},
      {"[2*3,1+1]", std::vector<std::int64_t>{6, 2}},
      {"[1]*2*2", std::vector<std::int64_t>{1, 1, 1, 1}},
      {"((([1])))", std::vector<std::int64_t>{1}},
      {"[00]", std::vector<std::int64_t>{0}},
      {"4", std::int64_t{4}},
      {"+4", std::int64_t{4}},
      {"0", std::int64_t{0}},
  };
  for (const PatternCase& c : cases) {
    for (const char* flag : {"--moe-layer-freq", "--linear-attention-freq"}) {
      SCOPED_TRACE(std::string(flag) + " " + c.text);
      const Result<ParsedMegatronFlags> parsed = parse_megatron_flags({flag, c.text});
      ASSERT_TRUE(parsed.ok()) << parsed.error().message();
      const MegatronArgs& args = parsed.value().args;
      EXPECT_EQ(std::string(flag) == "--moe-layer-freq" ? args.moe_layer_freq : args.linear_attention_freq, c.want);
    }
  }
}

TEST(MegatronFlagsTest, RejectsBadLayerFrequencyPatterns) {
  const std::string allowed = " is not allowed (Megatron-LM accepts only digits and , [ ] ( ) + *)";
  expect_errors({
      {{"--moe-layer-freq", "[1, 0]"}, "--moe-layer-freq = \"[1, 0]\": ' ' at position 4" + allowed},
      {{"--moe-layer-freq", "'[1]*4'"}, "--moe-layer-freq = \"'[1]*4'\": ''' at position 1" + allowed},
      {{"--moe-layer-freq", "[1]-[0]"}, "--moe-layer-freq = \"[1]-[0]\": '-' at position 4" + allowed},
      {{"--moe-layer-freq", "[1,0"}, "--moe-layer-freq = \"[1,0\": ends where ',' or ']' is expected"},
      {{"--moe-layer-freq", "[1]*"}, "--moe-layer-freq = \"[1]*\": ends where an integer, '[' or '(' is expected"},
      {{"--moe-layer-freq", "([1]"},
       "--moe-layer-freq = \"([1]\": ends where ')' closing the '(' at position 1 is expected"},
      {{"--moe-layer-freq", "[1]*(2"},
       "--moe-layer-freq = \"[1]*(2\": ends where ')' closing the '(' at position 5 is expected"},
      {{"--moe-layer-freq", "[,1]"},
       "--moe-layer-freq = \"[,1]\": expected an integer, '[' or '(' at position 2, found ','"},
      {{"--moe-layer-freq", "[1 0]"}, "--moe-layer-freq = \"[1 0]\": ' ' at position 3" + allowed},
      {{"--moe-layer-freq", "[1][0]"}, "--moe-layer-freq = \"[1][0]\": unexpected '[' at position 4"},
      {{"--moe-layer-freq", "[1]]"}, "--moe-layer-freq = \"[1]]\": unexpected ']' at position 4"},
      {{"--moe-layer-freq", "[1]*[2]"},
       "--moe-layer-freq = \"[1]*[2]\": cannot multiply a list by a list at position 4"},
      {{"--moe-layer-freq", "[1]+2"}, "--moe-layer-freq = \"[1]+2\": cannot add a list and an integer at position 4"},
      {{"--moe-layer-freq", "[01]"},
       "--moe-layer-freq = \"[01]\": '01' at position 2 has a leading zero, which Python rejects"},
      {{"--moe-layer-freq", "[[1]]"},
       "--moe-layer-freq = \"[[1]]\": the list entry at position 2 is a list; entries must be integers"},
      {{"--moe-layer-freq", "[99999999999999999999]"},
       "--moe-layer-freq = \"[99999999999999999999]\": '99999999999999999999' at position 2 does not fit in a signed "
       "64-bit integer"},
      {{"--moe-layer-freq", "[1]*2000000"},
       "--moe-layer-freq = \"[1]*2000000\": the list would have more than 1048576 entries"},
      {{"--moe-layer-freq", "abc"},
       "--moe-layer-freq = \"abc\": must be an integer or a list expression such as ([0]*3+[1]*75)"},
      {{"--moe-layer-freq", "(3)"},
       "--moe-layer-freq = \"(3)\": must be an integer or a list expression such as ([0]*3+[1]*75)"},
      {{"--linear-attention-freq", "[1,1,1,0"},
       "--linear-attention-freq = \"[1,1,1,0\": ends where ',' or ']' is expected"},
      {{"--moe-layer-freq"}, "--moe-layer-freq: expects a value"},
      {{"--num-layers", "4", "--use-checkpoint-args"},
       "--use-checkpoint-args: the model comes from the checkpoint, which trainflops cannot read; remove the flag to "
       "count the model the other flags describe"},
      // Nesting is limited (the evaluator recurses); a long value is shown by its start.
      {{"--moe-layer-freq", std::string(101, '[') + std::string(101, ']')},
       "--moe-layer-freq = \"" + std::string(100, '[') +
           "... (202 characters)\": '[' at position 101 opens more "
           "than 100 nested levels"},
      {{"--moe-layer-freq", std::string(7000, '(') + "[1]" + std::string(7000, ')')},
       "--moe-layer-freq = \"" + std::string(100, '(') +
           "... (14003 characters)\": '(' at position 101 opens "
           "more than 100 nested levels"},
  });
}

TEST(MegatronFlagsTest, ReportsTypos) {
  expect_errors({
      {{"--num-layer", "4"}, unknown_flag("--num-layer", "--num-layers")},
      {{"--num_layers", "4"}, unknown_flag("--num_layers", "--num-layers")},
      {{"--hiden-size", "4096"}, unknown_flag("--hiden-size", "--hidden-size")},
      {{"--moe-router-tokp", "8"}, unknown_flag("--moe-router-tokp", "--moe-router-topk")},
      {{"--num-atention-head", "32"}, unknown_flag("--num-atention-head", "--num-attention-heads")},
      {{"--swigl"}, unknown_flag("--swigl", "--swiglu")},
      {{"--vocab-sizes", "100"}, unknown_flag("--vocab-sizes", "--vocab-size")},
      {{"--tensor-model-paralel-size", "8"},
       unknown_flag("--tensor-model-paralel-size", "--tensor-model-parallel-size")},
      {{"--sequence-paralel"}, unknown_flag("--sequence-paralel", "--sequence-parallel")},
      {{"--lrr", "3e-4"}, unknown_flag("--lrr", "--lr")},
      {{"--bf61"}, unknown_flag("--bf61", "--bf16")},
      {{"--hybrid-overide-pattern", "M"}, unknown_flag("--hybrid-overide-pattern", "--hybrid-override-pattern")},
  });
}

TEST(MegatronFlagsTest, RecordsIgnoredFlagsInOrderWithTheirValues) {
  const Argv argv = words(
      "--lr 3e-4 --num-layers 2 --bf16 --data-path 0.5 a 0.5 b --min-lr=1e-5 --swiglu --rampup-batch-size 32 32 1000 "
      "--use-distributed-optimizer --weight-decay 0.1 --profile-ranks 0 3");
  const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(argv);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().ignored,
            (std::vector<std::string>{"--lr 3e-4", "--bf16", "--data-path 0.5 a 0.5 b", "--min-lr 1e-5",
                                      "--rampup-batch-size 32 32 1000", "--use-distributed-optimizer",
                                      "--weight-decay 0.1", "--profile-ranks 0 3"}));
  EXPECT_TRUE(parsed.value().unknown.empty());
  EXPECT_EQ(parsed.value().args.num_layers, 2);
  EXPECT_EQ(parsed.value().args.swiglu, true);
}

// A flag takes as many values as Megatron-LM's parser gives it, so a stray
// word is an error instead of being swallowed by the flag before it.
TEST(MegatronFlagsTest, TakesAsManyValuesAsMegatronLmsParser) {
  expect_errors({
      {{"--bf16", "4"}, "unexpected argument \"4\" (flags start with --)"},
      {{"--lr", "3e-4", "1e-5"}, "unexpected argument \"1e-5\" (flags start with --)"},
      {{"--lr"}, "--lr: expects a value"},
      {{"--lr", "--bf16"}, "--lr: expects a value"},
      {{"--rampup-batch-size", "32", "32"}, "--rampup-batch-size: expects 3 values"},
      {{"--rampup-batch-size=32"}, "--rampup-batch-size: takes 3 values, not one after '='"},
      {{"--profile-ranks"}, "--profile-ranks: expects a value"},
      {{"--bf16=yes"}, "--bf16 = \"yes\": is a switch and takes no value"},
  });
}

// Flags Megatron-LM's parser rejects are rejected, with a did-you-mean for a
// misspelling or a shortened name; allowed, they are counted as absent and
// reported.
TEST(MegatronFlagsTest, RejectsWhatMegatronLmsParserRejects) {
  expect_errors({
      {{"--ffn-size", "3"}, unknown_flag("--ffn-size", "--ffn-hidden-size")},
      {{"--seq-len", "4096"}, unknown_flag("--seq-len", "--seq-length")},
      {{"--moe-topk", "2"}, unknown_flag("--moe-topk", "--moe-router-topk")},
      {{"--checkpoint-activations"},
       "--checkpoint-activations: no longer valid in Megatron-LM, which stops at it; use --recompute-activations"},
      {{"--batch-size", "8"},
       "--batch-size: no longer valid in Megatron-LM, which stops at it; use --micro-batch-size"},
      {{"--zzz-qqq"}, unknown_flag("--zzz-qqq", std::nullopt)},
  });
  const Result<ParsedMegatronFlags> allowed = parse_megatron_flags(
      words("--num-layers 2 --ffn-size 3 --zzz-qqq=1 --custom-thing a b --hidden-size 8"), UnknownFlags::kWarned);
  ASSERT_TRUE(allowed.ok()) << allowed.error().message();
  EXPECT_EQ(allowed.value().args.num_layers, 2);
  EXPECT_EQ(allowed.value().args.hidden_size, 8);
  EXPECT_EQ(allowed.value().args.ffn_hidden_size, 32);  // 4h: --ffn-size did not set it
  ASSERT_EQ(allowed.value().unknown.size(), 3u);
  const std::string first = unknown_flag("--ffn-size", "--ffn-hidden-size");
  EXPECT_EQ(allowed.value().unknown[0], first.substr(0, first.find(" (allow")) + " (counted without it: --ffn-size 3)");
  EXPECT_TRUE(allowed.value().unknown[1].ends_with(" (counted without it: --zzz-qqq 1)"));
  EXPECT_TRUE(allowed.value().unknown[2].ends_with(" (counted without it: --custom-thing a b)"));
}

// Megatron-LM's virtual pipeline: layers per chunk become chunks per stage;
// one chunk per stage is no virtual pipeline.
TEST(MegatronFlagsTest, VirtualPipeline) {
  const struct {
    std::string flags;
    std::optional<std::int64_t> virtual_stages;
    std::optional<std::string> layout;
  } cases[] = {
      {"--num-layers 8 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2", 2, std::nullopt},
      {"--num-layers 8 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4", std::nullopt,
       std::nullopt},
      {"--num-layers 8 --num-virtual-stages-per-pipeline-rank 4", 4, std::nullopt},
      {"--num-layers 8 --pipeline-model-parallel-layout Et*8|L", std::nullopt, "Et*8|L"},
      // The embedding and the loss take a layer's place in the split.
      {"--num-layers 6 --pipeline-model-parallel-size 2 --account-for-embedding-in-pipeline-split "
       "--account-for-loss-in-pipeline-split",
       std::nullopt, "Ettt|tttL"},
      {"--num-layers 7 --mtp-num-layers 1 --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
       "--account-for-embedding-in-pipeline-split",
       std::nullopt, "Et|tt|tt|ttmL"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(words(c.flags));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed.value().pipeline.virtual_stages, c.virtual_stages);
    EXPECT_EQ(parsed.value().pipeline.layout, c.layout);
  }
}

// What executed mode recomputes: every layer (full, uniform), core attention
// (selective with its default module, or --recompute-activations), nothing
// for modules that re-run no product; what it cannot count is an error.
TEST(MegatronFlagsTest, Recomputation) {
  const struct {
    std::string flags;
    std::optional<std::string> recompute;
  } cases[] = {
      {"--recompute-granularity full --recompute-method uniform --recompute-num-layers 1", "full"},
      {"--recompute-granularity selective", "selective"},
      {"--recompute-activations", "selective"},
      {"--recompute-granularity selective --recompute-modules core_attn layernorm", "selective"},
      {"--recompute-granularity selective --recompute-modules moe_act layernorm", std::nullopt},
      {"--recompute-modules mlp", std::nullopt},  // without selective granularity, modules change nothing
      {"--lr 1", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(words(c.flags));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed.value().recompute, c.recompute);
  }
  expect_errors({
      {words("--recompute-granularity selective --recompute-modules core_attn mlp"),
       "--recompute-modules: recomputing \"mlp\" is not counted; core_attn is, and the activations and norms "
       "(moe_act, layernorm, gdn_norm_out) re-run no product"},
      {words("--recompute-activations --recompute-modules attn"),
       "--recompute-modules: \"attn\" is not a module (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
       "shared_experts, gdn_norm_out, gdp_in_proj, gdp_qkv, mhc)"},
      {words("--recompute-granularity block"), "--recompute-granularity = \"block\": must be full or selective"},
  });
}

TEST(MegatronFlagsTest, AcceptsFlagEqualsValue) {
  expect_members({
      {{"--num-layers=32"}, "num_layers", "32"},
      {{"--num-layers=-3"}, "num_layers", "-3"},
      {{"--moe-layer-freq=([0]*1+[1]*3)"}, "moe_layer_freq", "[0,1,1,1]"},
      {{"--hybrid-layer-pattern=M*M*/MM"}, "hybrid_layer_pattern", "\"M*M*/MM\""},
      {{"--experimental-attention-variant=gated_delta_net"}, "experimental_attention_variant", "\"gated_delta_net\""},
      {{"--spec=local"}, "spec", "[local]"},
      {{"--vocab-size=50257"}, "padded_vocab_size", "50304"},
  });
}

TEST(MegatronFlagsTest, LastRepeatedFlagWins) {
  expect_members({
      {{"--num-layers", "2", "--num-layers", "4"}, "num_layers", "4"},
      {{"--hybrid-override-pattern", "M", "--hybrid-layer-pattern", "M*"}, "hybrid_layer_pattern", "\"M*\""},
      {{"--spec", "a", "b", "--spec", "c"}, "spec", "[c]"},
      {{"--moe-layer-freq", "[1]", "--moe-layer-freq", "2"}, "moe_layer_freq", "2"},
      {{"--vocab-size", "100", "--vocab-size", "200"}, "padded_vocab_size", "256"},
  });
}

TEST(MegatronFlagsTest, ReportsBadInput) {
  expect_errors({
      {{"--num-layers", "abc"}, "--num-layers = \"abc\": must be an integer"},
      {{"--num-layers=1.5"}, "--num-layers = \"1.5\": must be an integer"},
      {{"--num-layers", ""}, "--num-layers = \"\": must be an integer"},
      {{"--num-layers", "4k"}, "--num-layers = \"4k\": must be an integer"},
      {{"--num-layers", "+-4"}, "--num-layers = \"+-4\": must be an integer"},
      {{"--hidden-size", "99999999999999999999"},
       "--hidden-size = \"99999999999999999999\": must fit in a signed 64-bit integer"},
      {{"--num-layers"}, "--num-layers: expects a value"},
      {{"--num-layers", "--swiglu"}, "--num-layers: expects a value"},
      {{"--swiglu", "true"}, "--swiglu = \"true\": is a switch and takes no value"},
      {{"--swiglu=1"}, "--swiglu = \"1\": is a switch and takes no value"},
      {{"--group-query-attention", "8"}, "--group-query-attention = \"8\": is a switch and takes no value"},
      {{"--multi-latent-attention="}, "--multi-latent-attention = \"\": is a switch and takes no value"},
      {{"foo"}, "unexpected argument \"foo\" (flags start with --)"},
      {{"-h"}, "unexpected argument \"-h\" (flags start with --)"},
      {{"--"}, "unexpected argument \"--\" (flags start with --)"},
      {{"--=3"}, "unexpected argument \"--=3\" (flags start with --)"},
      {{"--num-layers", "4", "5"}, "unexpected argument \"5\" (flags start with --)"},
      {{"--hidden-size", "4000", "--num-attention-heads", "48"},
       "--hidden-size = 4000: must be divisible by --num-attention-heads = 48 when --kv-channels is not given "
       "(kv_channels = hidden_size / heads)"},
      {{"--num-layers", "2", "--encoder-num-layers", "2"},
       "--encoder-num-layers = 2: cannot be given together with --num-layers"},
      {{"--seq-length", "2048", "--encoder-seq-length", "4096"},
       "--encoder-seq-length = 4096: cannot be given together with --seq-length"},
      {{"--moe-latent-size", "64"},
       "--moe-latent-size = 64: needs --num-experts (MoE latent projections apply only to MoE layers)"},
      {{"--num-experts", "8", "--moe-latent-size", "0"}, "--moe-latent-size = 0: must be a positive integer"},
      {{"--num-virtual-stages-per-pipeline-rank", "2", "--pipeline-model-parallel-layout", "Et|L"},
       "--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank and "
       "--pipeline-model-parallel-layout: give at most one"},
      {{"--num-layers", "8", "--pipeline-model-parallel-size", "2", "--num-layers-per-virtual-pipeline-stage", "3"},
       "--num-layers-per-virtual-pipeline-stage = 3: must divide the layers of each stage (--num-layers 8 over "
       "--pipeline-model-parallel-size 2)"},
      {{"--num-layers", "8", "--pipeline-model-parallel-size", "2", "--decoder-first-pipeline-num-layers", "2",
        "--num-layers-per-virtual-pipeline-stage", "2"},
       "--num-layers-per-virtual-pipeline-stage: with an uneven first or last stage, give "
       "--num-virtual-stages-per-pipeline-rank"},
      {{"--num-layers", "8", "--pipeline-model-parallel-size", "1000000000000",
        "--account-for-embedding-in-pipeline-split"},
       "--account-for-embedding-in-pipeline-split: 1000000000000 stages x 1 chunks are more than the 9 layers with "
       "the embedding or loss"},
      {{"--num-layers", "8", "--pipeline-model-parallel-size", "2", "--account-for-loss-in-pipeline-split"},
       "--account-for-loss-in-pipeline-split: the 8 decoder layers with the embedding or loss (9) must divide evenly "
       "over 2 chunks"},
  });
}

TEST(MegatronFlagsKnownList, HoldsEveryUpstreamMemberFlag) {
  MegatronArgs members;
  for_each_megatron_arg(members, [](std::string_view name, auto&) {
    const std::string flag = flag_of(name);
    // The DSA pull request's flags, not in the main and dev branches the table was read from.
    for (const char* branch_only : {"--dsa-indexer-grad-mode", "--dsa-kpool-size", "--dsa-kpool-tail"}) {
      if (flag == branch_only) return;
    }
    // Megatron-Bridge's Kimi K3 fields: Megatron-LM's parser has none of them.
    for (const char* bridge_field : {"--kimi-kda-layers", "--kimi-linear-num-heads", "--kimi-linear-head-dim",
                                     "--kimi-linear-conv-kernel-size"}) {
      if (flag == bridge_field) {
        EXPECT_EQ(find_megatron_known_flag(flag), nullptr);
        return;
      }
    }
    // add_bias_linear is set by --disable-bias-linear (store_false) alone.
    if (flag == "--add-bias-linear") {
      EXPECT_EQ(find_megatron_known_flag(flag), nullptr);
      EXPECT_NE(find_megatron_known_flag("--disable-bias-linear"), nullptr);
      return;
    }
    EXPECT_NE(find_megatron_known_flag(flag), nullptr) << flag;
  });
  EXPECT_GT(megatron_known_flags().size(), 900u);
  EXPECT_EQ(find_megatron_known_flag("--num-layer"), nullptr);
}

// How many values Megatron-LM's parser gives each kind of option.
TEST(MegatronFlagsKnownList, KnowsHowManyValuesEachFlagTakes) {
  const struct {
    const char* flag;
    int fewest, most;
  } cases[] = {
      {"--bf16", 0, 0},
      {"--lr", 1, 1},
      {"--override-opt_param-scheduler", 0, 0},
      {"--rampup-batch-size", 3, 3},
      {"--data-path", 0, kUnlimitedValues},
      {"--recompute-modules", 1, kUnlimitedValues},
      {"--enable-gpt-oss", 0, 0},  // a post-training flag that launch scripts pass
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flag);
    const MegatronFlagShape* shape = find_megatron_known_flag(c.flag);
    ASSERT_NE(shape, nullptr);
    EXPECT_EQ(shape->fewest_values, c.fewest);
    EXPECT_EQ(shape->most_values, c.most);
  }
}

// A DeepSeek-V3-like launch script: MLA, 3 dense layers then 58 MoE layers,
// one MTP depth; the flags build a model.
TEST(MegatronFlagsEndToEnd, DeepSeekV3LikeScriptBuildsAModel) {
  const Argv argv = words(
      "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
      "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 "
      "--v-head-dim 128 --num-experts 256 --moe-layer-freq ([0]*3+[1]*58) --moe-ffn-hidden-size 2048 "
      "--moe-shared-expert-intermediate-size 2048 --moe-router-topk 8 --mtp-num-layers 1 --swiglu "
      "--vocab-size 129280 --make-vocab-size-divisible-by 128 --tensor-model-parallel-size 1 --seq-length 4096 "
      "--max-position-embeddings 163840 --global-batch-size 15360 --micro-batch-size 1 "
      "--pipeline-model-parallel-size 16 --expert-model-parallel-size 64 --bf16 --lr 2.2e-4 --lr-decay-style cosine "
      "--normalization RMSNorm --position-embedding-type rope --disable-bias-linear "
      "--untie-embeddings-and-output-weights --moe-router-score-function sigmoid --moe-router-enable-expert-bias "
      "--moe-router-topk-scaling-factor 2.5 --moe-token-dispatcher-type alltoall --moe-grouped-gemm "
      "--moe-aux-loss-coeff 1e-4 --data-path /data/a --split 99,1,0");
  const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(argv);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value().global_batch_size, 15360);
  // --pipeline-model-parallel-size is read (it splits the stages), and so are
  // the flags of the parameter layout.
  EXPECT_EQ(parsed.value().ignored.size(), 14u);
  EXPECT_EQ(parsed.value().pipeline.stages, 16);
  EXPECT_EQ(parsed.value().ignored.front(), "--max-position-embeddings 163840");
  const Result<Model> model = model_from_megatron_args(parsed.value().args);
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model.value().vocab_size, 129280);
  EXPECT_EQ(model.value().hidden_size, 7168);
  ASSERT_EQ(model.value().layers.size(), 61u);
  ASSERT_EQ(model.value().mtp_depths.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<DenseMlp>(*model.value().layers[2].channel_mixer));
  ASSERT_TRUE(std::holds_alternative<Moe>(*model.value().layers[3].channel_mixer));
  const Moe& moe = std::get<Moe>(*model.value().layers[3].channel_mixer);
  EXPECT_EQ(moe.topk, 8);
  EXPECT_EQ(moe.expert_ffn_hidden_size, 2048);
  EXPECT_TRUE(moe.gated);
  const auto& mla = std::get<MlaAttention>(*model.value().layers[0].mixer);
  EXPECT_EQ(mla.q_lora_rank, 1536);
  EXPECT_EQ(mla.kv_lora_rank, 512);
}

// Norms, biases and the tied embedding as Megatron-LM's parser has them:
// LayerNorm, biases and a tied embedding unless the flags say otherwise.
TEST(MegatronFlagsEndToEnd, ParameterLayoutFollowsMegatronLmDefaults) {
  using Normalization = ParameterLayout::Normalization;
  const std::string base = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 1000 ";
  const std::pair<std::string, ParameterLayout> cases[] = {
      {"", {.normalization = Normalization::kLayerNorm, .linear_biases = true, .tied_embedding = true}},
      {"--normalization RMSNorm --disable-bias-linear --untie-embeddings-and-output-weights", {}},
      {"--disable-bias-linear --add-qkv-bias --qk-layernorm --softmax-type learnable",
       {.normalization = Normalization::kLayerNorm,
        .qk_norm = ParameterLayout::QkNorm::kPerHead,
        .qkv_biases = true,
        .attention_sinks = true,
        .tied_embedding = true}},
      {"--normalization RMSNorm --softmax-type off-by-one --moe-router-enable-expert-bias --moe-shared-expert-gate",
       {.linear_biases = true, .expert_bias = true, .shared_expert_gate = true, .tied_embedding = true}},
  };
  for (const auto& [flags, layout] : cases) {
    SCOPED_TRACE(flags);
    const Result<ParsedMegatronFlags> parsed = parse_megatron_flags(words(base + flags));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    const Result<Model> model = model_from_megatron_args(parsed.value().args);
    ASSERT_TRUE(model.ok()) << model.error().message();
    EXPECT_EQ(model.value().parameter_layout, layout);
  }
  const Result<ParsedMegatronFlags> wrong = parse_megatron_flags(words(base + "--normalization BatchNorm"));
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(model_from_megatron_args(wrong.value().args).error().message(),
            "normalization = \"BatchNorm\": must be one of LayerNorm, RMSNorm");
}

// The model a few flags describe, or the error building it.
Result<Model> model_of(std::string_view line) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const ParsedMegatronFlags parsed, parse_megatron_flags(words(line)));
  return model_from_megatron_flags(parsed);
}

constexpr std::string_view kSmallGpt =
    "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 64 ";

// Megatron-LM's window_size (left, right) on the layers whose 1-based number
// window_attn_skip_freq marks (is_layer_window_attention in
// megatron/core/transformer/utils.py): a query attends left keys and itself.
TEST(MegatronFlagsModel, SlidingWindowsOnTheLayersMegatronLmWindows) {
  const struct {
    std::string flags;
    std::vector<std::optional<std::int64_t>> windows;
  } cases[] = {
      {"--window-size 128,0 --window-attn-skip-freq 2", {129, std::nullopt, 129, std::nullopt}},
      {"--window-size (7,0)", {8, 8, 8, 8}},
      {"--window-size 7,0 --window-attn-skip-freq [1,0,0,1]", {8, std::nullopt, std::nullopt, 8}},
      {"--window-size=-1,0", {std::nullopt, std::nullopt, std::nullopt, std::nullopt}},
      {"--window-attn-skip-freq 2", {std::nullopt, std::nullopt, std::nullopt, std::nullopt}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    const Result<Model> model = model_of(std::string(kSmallGpt) + c.flags);
    ASSERT_TRUE(model.ok()) << model.error().message();
    ASSERT_EQ(model.value().layers.size(), c.windows.size());
    for (std::size_t i = 0; i < c.windows.size(); ++i) {
      EXPECT_EQ(std::get<GqaAttention>(*model.value().layers[i].mixer).window, c.windows[i]) << "layer " << i;
    }
  }
}

TEST(MegatronFlagsModel, RejectsWindowsItCannotCount) {
  const struct {
    std::string flags, message;
  } cases[] = {
      {"--window-size 128,4", "window_size = (128, 4): the right side must be 0: a causal query attends no later key"},
      {"--window-size 128", "window_size = (128): must be two integers, the keys left and right of a query"},
      {"--window-size -2,0",
       "window_size = (-2, 0): the left side must be a non-negative integer below 2^63 - 1, or -1 for no window"},
      {"--window-size 1,x", "--window-size = \"x\": must be integers separated by commas"},
      {"--window-size 8,0 --window-attn-skip-freq [1,0]",
       "window_attn_skip_freq: the list has 2 entries; it must have num_layers = 4"},
      {"--window-size 8,0 --multi-latent-attention",
       "window_size: a sliding window on multi-latent attention is not counted; it is on grouped-query attention"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flags);
    const Result<Model> model = model_of(std::string(kSmallGpt) + c.flags);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().message(), c.message);
  }
}

// --quick-geglu is a gated MLP (gated_linear_unit with quick GELU) that
// Megatron-LM's estimate, reading only --swiglu, charges as ungated.
TEST(MegatronFlagsModel, QuickGegluIsGatedButChargedUngatedByMegatronLm) {
  const Result<Model> dense = model_of(std::string(kSmallGpt) + "--quick-geglu");
  ASSERT_TRUE(dense.ok()) << dense.error().message();
  const auto& mlp = std::get<DenseMlp>(*dense.value().layers[0].channel_mixer);
  EXPECT_TRUE(mlp.gated);
  EXPECT_TRUE(mlp.megatron_charges_ungated);
  const Result<Model> experts =
      model_of(std::string(kSmallGpt) + "--quick-geglu --num-experts 4 --moe-ffn-hidden-size 32");
  ASSERT_TRUE(experts.ok()) << experts.error().message();
  const auto& moe = std::get<Moe>(*experts.value().layers[0].channel_mixer);
  EXPECT_TRUE(moe.gated);
  EXPECT_TRUE(moe.megatron_charges_ungated);
  const Result<Model> swiglu = model_of(std::string(kSmallGpt) + "--swiglu");
  ASSERT_TRUE(swiglu.ok()) << swiglu.error().message();
  EXPECT_FALSE(std::get<DenseMlp>(*swiglu.value().layers[0].channel_mixer).megatron_charges_ungated);
}

// Megatron-LM's MambaMixer is mamba_num_heads * mamba_head_dim wide when the
// heads are given, else 2h (megatron/core/ssm/mamba_mixer.py).
TEST(MegatronFlagsModel, MambaWidthIsHeadsTimesHeadDim) {
  const std::string hybrid =
      "--hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 64 --hybrid-layer-pattern M "
      "--mamba-head-dim 32 ";
  const Result<Model> with_heads = model_of(hybrid + "--mamba-num-heads 8");
  ASSERT_TRUE(with_heads.ok()) << with_heads.error().message();
  EXPECT_EQ(std::get<Mamba2>(*with_heads.value().layers[0].mixer).inner_dim, 256);
  EXPECT_EQ(std::get<Mamba2>(*with_heads.value().layers[0].mixer).num_heads, 8);
  const Result<Model> without = model_of(hybrid);
  ASSERT_TRUE(without.ok()) << without.error().message();
  EXPECT_EQ(std::get<Mamba2>(*without.value().layers[0].mixer).inner_dim, 128);
  EXPECT_EQ(std::get<Mamba2>(*without.value().layers[0].mixer).num_heads, 4);
}

}  // namespace
}  // namespace trainflops

namespace trainflops {
namespace {

// Each factor of 1 once copied the whole list: a million entries times 40,000
// factors (320 GB of copies) took 14 seconds in an optimized build, minutes
// in a debug or sanitizer build. Evaluation is linear in the pattern now.
TEST(MegatronFlagsTest, LayerFrequencyPatternsEvaluateInLinearTime) {
  std::string pattern = "[1]*1048576";
  for (int i = 0; i < 40000; ++i) pattern += "*1";
  const auto start = std::chrono::steady_clock::now();
  const Result<ParsedMegatronFlags> parsed = parse_megatron_flags({"--moe-layer-freq", pattern});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  const auto* flags = std::get_if<std::vector<std::int64_t>>(&*parsed.value().args.moe_layer_freq);
  ASSERT_NE(flags, nullptr);
  EXPECT_EQ(flags->size(), 1048576u);
  EXPECT_LT(seconds, 10.0);
}

// "@PATH" stands for a flags file only where a flag name stands; as a value
// it is the value.
TEST(MegatronFlagsTest, ExpandsFlagsFilesWhereAFlagNameStands) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trainflops_flags_at_test";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.flags").string(), nested = (dir / "nested.flags").string();
  std::ofstream(model) << "--num-layers 4 \\\n  --hidden-size 64\n";
  std::ofstream(nested) << "--lr 1 --wandb-project @team @" << model << "\n";
  const Result<ParsedMegatronFlags> expanded =
      parse_megatron_flags({"--seq-length", "8", "@" + model, "--wandb-project", "@team", "--swiglu"});
  ASSERT_TRUE(expanded.ok()) << expanded.error().message();
  EXPECT_EQ(expanded.value().args.num_layers, 4);
  EXPECT_EQ(expanded.value().args.hidden_size, 64);
  EXPECT_EQ(expanded.value().args.seq_length, 8);
  EXPECT_EQ(expanded.value().ignored, (std::vector<std::string>{"--wandb-project @team"}));

  const Result<ParsedMegatronFlags> twice = parse_megatron_flags({"@" + nested});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), nested + ": \"@" + model + "\": a flags file cannot name another flags file");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainflops
