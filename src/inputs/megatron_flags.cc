#include "trainflops/megatron_flags.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/decimal_text.h"
#include "base/edit_distance.h"
#include "inputs/flags_file.h"
#include "inputs/megatron_known_flags.h"

namespace trainflops {
namespace {

using std::int64_t;

// --- spellings ---------------------------------------------------------------

bool is_flag(std::string_view token) { return token.starts_with("--"); }

// Whether `flag` is Megatron-LM's spelling of the argument `arg_name`.
bool spells(std::string_view flag, std::string_view arg_name) {
  if (!flag.starts_with("--") || flag.size() != arg_name.size() + 2) return false;
  for (std::size_t i = 0; i < arg_name.size(); ++i) {
    if (flag[i + 2] != (arg_name[i] == '_' ? '-' : arg_name[i])) return false;
  }
  return true;
}

std::string spelling(std::string_view arg_name) {
  std::string flag = "--" + std::string(arg_name);
  std::replace(flag.begin() + 2, flag.end(), '_', '-');
  return flag;
}

// Megatron-LM renamed this flag to --hybrid-layer-pattern; launch scripts
// written before the rename still use it.
constexpr std::string_view kHybridOverridePattern = "--hybrid-override-pattern";
constexpr std::string_view kHybridLayerPattern = "--hybrid-layer-pattern";

// Flags that change FLOPs without being a MegatronArgs member.
struct Extras {
  std::optional<int64_t> vocab_size;
  std::optional<int64_t> make_vocab_size_divisible_by;
  std::optional<int64_t> tensor_model_parallel_size;
  std::optional<int64_t> encoder_num_layers;
  std::optional<int64_t> encoder_seq_length;
  std::optional<int64_t> global_batch_size;
  std::optional<int64_t> pipeline_stages, first_stage_layers, last_stage_layers;
  std::optional<int64_t> virtual_stages, layers_per_virtual_stage;
  std::optional<std::string> tokenizer_type, recompute_granularity, recompute_method, pipeline_layout;
  std::optional<std::vector<std::string>> recompute_modules;
  std::optional<bool> recompute_activations, embedding_in_split, loss_in_split;
};

// Names where the vocabulary comes from when --vocab-size does not give it.
constexpr std::string_view kTokenizerType = "--tokenizer-type";

// The KPool tail is on unless switched off, as in Megatron-LM.
constexpr std::string_view kNoDsaKpoolTail = "--no-dsa-kpool-tail";
// Projections have biases unless switched off (add_bias_linear).
constexpr std::string_view kDisableBiasLinear = "--disable-bias-linear";

struct ExtraFlag {
  std::string_view flag;
  std::optional<int64_t> Extras::*member;
};

constexpr std::array<ExtraFlag, 11> kExtraFlags = {{
    {"--vocab-size", &Extras::vocab_size},
    {"--make-vocab-size-divisible-by", &Extras::make_vocab_size_divisible_by},
    {"--tensor-model-parallel-size", &Extras::tensor_model_parallel_size},
    {"--encoder-num-layers", &Extras::encoder_num_layers},
    {"--encoder-seq-length", &Extras::encoder_seq_length},
    {"--global-batch-size", &Extras::global_batch_size},
    {"--pipeline-model-parallel-size", &Extras::pipeline_stages},
    {"--decoder-first-pipeline-num-layers", &Extras::first_stage_layers},
    {"--decoder-last-pipeline-num-layers", &Extras::last_stage_layers},
    {"--num-virtual-stages-per-pipeline-rank", &Extras::virtual_stages},
    {"--num-layers-per-virtual-pipeline-stage", &Extras::layers_per_virtual_stage},
}};
constexpr std::string_view kPipelineLayout = "--pipeline-model-parallel-layout";
constexpr std::string_view kRecomputeModulesFlag = "--recompute-modules";
constexpr std::string_view kRecomputeActivations = "--recompute-activations";
constexpr std::string_view kEmbeddingInSplit = "--account-for-embedding-in-pipeline-split";
constexpr std::string_view kLossInSplit = "--account-for-loss-in-pipeline-split";
// Flags Megatron-LM's parser still accepts but its argument validation stops
// at, each with its replacement.
struct RetiredFlag {
  std::string_view flag, replacement;
};
constexpr std::array<RetiredFlag, 4> kRetiredFlags = {{
    {"--batch-size", "--micro-batch-size"},
    {"--warmup", "--lr-warmup-fraction"},
    {"--model-parallel-size", "--tensor-model-parallel-size"},
    {"--checkpoint-activations", "--recompute-activations"},
}};

// Recomputation: what executed mode counts again.
constexpr std::string_view kRecomputeGranularity = "--recompute-granularity";
constexpr std::string_view kRecomputeMethod = "--recompute-method";

// Every flag parse_megatron_flags reads, for suggesting one when a flag is
// misspelled.
std::vector<std::string> relevant_flags() {
  std::vector<std::string> flags;
  MegatronArgs args;
  for_each_megatron_arg(args, [&](std::string_view name, auto&) { flags.push_back(spelling(name)); });
  for (const ExtraFlag& extra : kExtraFlags) flags.emplace_back(extra.flag);
  flags.emplace_back(kHybridOverridePattern);
  flags.emplace_back(kTokenizerType);
  flags.emplace_back(kRecomputeGranularity);
  flags.emplace_back(kRecomputeMethod);
  flags.emplace_back(kPipelineLayout);
  flags.emplace_back(kRecomputeModulesFlag);
  flags.emplace_back(kRecomputeActivations);
  flags.emplace_back(kEmbeddingInSplit);
  flags.emplace_back(kLossInSplit);
  flags.emplace_back(kNoDsaKpoolTail);
  return flags;
}

// --- tokens ------------------------------------------------------------------

// Walks argv. A flag's values are the tokens after it up to the next flag.
class Tokens {
 public:
  explicit Tokens(std::vector<std::string> argv) : argv_(std::move(argv)) {}

  bool done() const { return next_ == argv_.size(); }
  bool at_value() const { return !done() && !is_flag(argv_[next_]); }
  const std::string& take() { return argv_[next_++]; }

  // Where a flag name stands, "@PATH" stands for the words of the flags file
  // at PATH; elsewhere it is a value like any other ("--wandb-project @team").
  Status expand_flags_file() {
    if (done() || !argv_[next_].starts_with('@')) return Ok{};
    if (next_ < file_end_) {
      return Error(file_ + ": \"" + argv_[next_] + "\": a flags file cannot name another flags file");
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(FlagsFile file, read_flags_file(argv_[next_]));
    const auto at = argv_.begin() + static_cast<std::ptrdiff_t>(next_);
    argv_.insert(argv_.erase(at), std::make_move_iterator(file.words.begin()), std::make_move_iterator(file.words.end()));
    file_end_ = next_ + file.words.size();
    file_ = std::move(file.path);
    return Ok{};
  }

 private:
  std::vector<std::string> argv_;
  std::size_t next_ = 0;
  std::size_t file_end_ = 0;  // argv_[next_, file_end_) came from the flags file `file_`
  std::string file_;
};

// A flag as written: "--name" or "--name=value".
struct FlagUse {
  std::string_view name;
  std::optional<std::string_view> inline_value;
};

FlagUse split_flag(std::string_view token) {
  const std::size_t equals = token.find('=');
  if (equals == std::string_view::npos) return {token, std::nullopt};
  return {token.substr(0, equals), token.substr(equals + 1)};
}

// --- values ------------------------------------------------------------------

// A long value is shown by its start, so that the rule after it stays readable.
Error value_error(std::string_view flag, std::string_view value, std::string_view rule) {
  constexpr std::size_t kShown = 100;
  const std::string shown = value.size() <= kShown ? std::string(value)
                                                   : std::string(value.substr(0, kShown)) + "... (" +
                                                         std::to_string(value.size()) + " characters)";
  return Error(std::string(flag) + " = \"" + shown + "\": " + std::string(rule));
}

Result<std::string_view> single_value(const FlagUse& use, Tokens& tokens) {
  if (use.inline_value) return *use.inline_value;
  if (!tokens.at_value()) return Error(std::string(use.name) + ": expects a value");
  return std::string_view(tokens.take());
}

// Python's int() of a decimal, as argparse's type=int applies it.
Result<int64_t> parse_integer(std::string_view flag, std::string_view text, std::string_view rule) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) return value_error(flag, text, "must fit in a signed 64-bit integer");
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return value_error(flag, text, rule);
  }
  return value;
}

// Megatron-LM's layer-frequency patterns are Python list expressions that it
// checks for these characters and hands to eval.
constexpr std::string_view kPatternCharacters = "0123456789,[]()+*";
// No model has a million layers; a longer list is a mistake that would only
// exhaust memory.
constexpr std::size_t kMaxPatternEntries = std::size_t{1} << 20;
// The evaluator recurses once per bracket or parenthesis; Python's own parser
// stops at 200 levels.
constexpr int kMaxPatternNesting = 100;

// Evaluates a layer-frequency pattern with Python's meaning, without eval:
//   sum     := product ('+' product)*
//   product := atom ('*' atom)*
//   atom    := integer | '[' [sum (',' sum)* [',']] ']' | '(' sum ')'
// An integer times a list repeats the list, lists add by concatenation and
// integers by arithmetic; any other combination is an error, as in Python.
class PatternEvaluator {
 public:
  PatternEvaluator(std::string_view flag, std::string_view text) : flag_(flag), text_(text) {}

  Result<std::vector<int64_t>> evaluate();

 private:
  using Value = std::variant<int64_t, std::vector<int64_t>>;

  Result<Value> sum();
  Result<Value> product();
  Result<Value> atom();
  Result<Value> list();
  Result<Value> integer();
  // Enters one more level of brackets or parentheses opened at `at`.
  Status nest(std::size_t at);
  Result<Value> add(Value left, Value right, std::size_t at) const;
  Result<Value> multiply(Value left, Value right, std::size_t at) const;

  char peek() const { return next_ < text_.size() ? text_[next_] : '\0'; }
  bool accept(char c);
  static std::string where(std::size_t index) { return "at position " + std::to_string(index + 1); }
  Error error(const std::string& problem) const { return value_error(flag_, text_, problem); }
  Error expected(const std::string& what) const;

  std::string_view flag_;
  std::string_view text_;
  std::size_t next_ = 0;
  int depth_ = 0;
};

Result<std::vector<int64_t>> PatternEvaluator::evaluate() {
  for (std::size_t i = 0; i < text_.size(); ++i) {
    if (kPatternCharacters.find(text_[i]) == std::string_view::npos) {
      return error("'" + std::string(1, text_[i]) + "' " + where(i) +
                   " is not allowed (Megatron-LM accepts only digits and , [ ] ( ) + *)");
    }
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(Value value, sum());
  if (next_ != text_.size()) return error("unexpected '" + std::string(1, peek()) + "' " + where(next_));
  if (auto* flags = std::get_if<std::vector<int64_t>>(&value)) return std::move(*flags);
  return error("is an integer, not a list");
}

Result<PatternEvaluator::Value> PatternEvaluator::sum() {
  TRAINFLOPS_ASSIGN_OR_RETURN(Value left, product());
  while (peek() == '+') {
    const std::size_t at = next_++;
    TRAINFLOPS_ASSIGN_OR_RETURN(Value right, product());
    TRAINFLOPS_ASSIGN_OR_RETURN(left, add(std::move(left), std::move(right), at));
  }
  return left;
}

Result<PatternEvaluator::Value> PatternEvaluator::product() {
  TRAINFLOPS_ASSIGN_OR_RETURN(Value left, atom());
  while (peek() == '*') {
    const std::size_t at = next_++;
    TRAINFLOPS_ASSIGN_OR_RETURN(Value right, atom());
    TRAINFLOPS_ASSIGN_OR_RETURN(left, multiply(std::move(left), std::move(right), at));
  }
  return left;
}

Result<PatternEvaluator::Value> PatternEvaluator::atom() {
  const char c = peek();
  if (c == '[') return list();
  if (c >= '0' && c <= '9') return integer();
  if (c != '(') return expected("an integer, '[' or '('");
  const std::size_t open = next_++;
  TRAINFLOPS_RETURN_IF_ERROR(nest(open));
  TRAINFLOPS_ASSIGN_OR_RETURN(Value inner, sum());
  if (!accept(')')) return expected("')' closing the '(' " + where(open));
  --depth_;
  return inner;
}

Status PatternEvaluator::nest(std::size_t at) {
  if (++depth_ > kMaxPatternNesting) {
    return error("'" + std::string(1, text_[at]) + "' " + where(at) + " opens more than " +
                 std::to_string(kMaxPatternNesting) + " nested levels");
  }
  return Ok{};
}

Result<PatternEvaluator::Value> PatternEvaluator::list() {
  TRAINFLOPS_RETURN_IF_ERROR(nest(next_++));  // '['
  std::vector<int64_t> entries;
  while (!accept(']')) {
    const std::size_t at = next_;
    TRAINFLOPS_ASSIGN_OR_RETURN(Value entry, sum());
    const int64_t* number = std::get_if<int64_t>(&entry);
    if (number == nullptr) return error("the list entry " + where(at) + " is a list; entries must be integers");
    entries.push_back(*number);
    if (accept(']')) break;
    if (!accept(',')) return expected("',' or ']'");
  }
  --depth_;
  return Value(std::move(entries));
}

Result<PatternEvaluator::Value> PatternEvaluator::integer() {
  const std::size_t start = next_;
  while (peek() >= '0' && peek() <= '9') ++next_;
  const std::string_view digits = text_.substr(start, next_ - start);
  if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string_view::npos) {
    return error("'" + std::string(digits) + "' " + where(start) + " has a leading zero, which Python rejects");
  }
  int64_t value = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), value).ec != std::errc()) {
    return error("'" + std::string(digits) + "' " + where(start) + " does not fit in a signed 64-bit integer");
  }
  return Value(value);
}

Result<PatternEvaluator::Value> PatternEvaluator::add(Value left, Value right, std::size_t at) const {
  auto* left_list = std::get_if<std::vector<int64_t>>(&left);
  auto* right_list = std::get_if<std::vector<int64_t>>(&right);
  if (left_list != nullptr && right_list != nullptr) {
    if (left_list->size() + right_list->size() > kMaxPatternEntries) {
      return error("the list would have more than " + std::to_string(kMaxPatternEntries) + " entries");
    }
    left_list->insert(left_list->end(), right_list->begin(), right_list->end());
    return left;
  }
  if (left_list != nullptr || right_list != nullptr) return error("cannot add a list and an integer " + where(at));
  int64_t total = 0;
  if (__builtin_add_overflow(std::get<int64_t>(left), std::get<int64_t>(right), &total)) {
    return error("the sum " + where(at) + " does not fit in a signed 64-bit integer");
  }
  return Value(total);
}

Result<PatternEvaluator::Value> PatternEvaluator::multiply(Value left, Value right, std::size_t at) const {
  auto* left_list = std::get_if<std::vector<int64_t>>(&left);
  auto* right_list = std::get_if<std::vector<int64_t>>(&right);
  if (left_list != nullptr && right_list != nullptr) return error("cannot multiply a list by a list " + where(at));
  if (left_list == nullptr && right_list == nullptr) {
    int64_t product = 0;
    if (__builtin_mul_overflow(std::get<int64_t>(left), std::get<int64_t>(right), &product)) {
      return error("the product " + where(at) + " does not fit in a signed 64-bit integer");
    }
    return Value(product);
  }
  std::vector<int64_t>& unit = left_list != nullptr ? *left_list : *right_list;
  const int64_t times = std::get<int64_t>(left_list != nullptr ? right : left);
  if (times <= 0 || unit.empty()) return Value(std::vector<int64_t>{});  // Python: [1] * 0 == []
  // Unchanged, not copied: every other factor at least doubles the list up
  // to its cap, so that a pattern's evaluation stays linear in its length.
  if (times == 1) return left_list != nullptr ? std::move(left) : std::move(right);
  if (static_cast<std::uint64_t>(times) > kMaxPatternEntries / unit.size()) {
    return error("the list would have more than " + std::to_string(kMaxPatternEntries) + " entries");
  }
  std::vector<int64_t> repeated;
  repeated.reserve(unit.size() * static_cast<std::size_t>(times));
  for (int64_t i = 0; i < times; ++i) repeated.insert(repeated.end(), unit.begin(), unit.end());
  return Value(std::move(repeated));
}

bool PatternEvaluator::accept(char c) {
  if (peek() != c || next_ == text_.size()) return false;
  ++next_;
  return true;
}

Error PatternEvaluator::expected(const std::string& what) const {
  if (next_ == text_.size()) return error("ends where " + what + " is expected");
  return error("expected " + what + " " + where(next_) + ", found '" + std::string(1, peek()) + "'");
}

// Megatron-LM's moe_freq_type: a pattern when the text has a '[', otherwise
// an integer.
Result<LayerFrequency> parse_layer_frequency(std::string_view flag, std::string_view text) {
  if (text.find('[') == std::string_view::npos) {
    TRAINFLOPS_ASSIGN_OR_RETURN(
        const int64_t every,
        parse_integer(flag, text, "must be an integer or a list expression such as ([0]*3+[1]*75)"));
    return LayerFrequency(every);
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<int64_t> flags, PatternEvaluator(flag, text).evaluate());
  return LayerFrequency(std::move(flags));
}

// --- reading a flag into its destination -------------------------------------

Status read(const FlagUse& use, Tokens& tokens, std::optional<int64_t>& out) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string_view text, single_value(use, tokens));
  TRAINFLOPS_ASSIGN_OR_RETURN(out, parse_integer(use.name, text, "must be an integer"));
  return Ok{};
}

// Switches are argparse store_true actions: argparse rejects "--swiglu=true"
// and would leave the "true" of "--swiglu true" an unrecognized argument.
Status read(const FlagUse& use, Tokens& tokens, std::optional<bool>& out) {
  const char* rule = "is a switch and takes no value";
  if (use.inline_value) return value_error(use.name, *use.inline_value, rule);
  if (tokens.at_value()) return value_error(use.name, tokens.take(), rule);
  out = true;
  return Ok{};
}

Status read(const FlagUse& use, Tokens& tokens, std::optional<std::string>& out) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string_view text, single_value(use, tokens));
  out = std::string(text);
  return Ok{};
}

// Python's float() of a decimal, as argparse's type=float applies it.
Status read(const FlagUse& use, Tokens& tokens, std::optional<double>& out) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string_view text, single_value(use, tokens));
  const std::optional<double> value = parse_double(text);
  if (!value) return value_error(use.name, text, "must be a number");
  out = *value;
  return Ok{};
}

Status read(const FlagUse& use, Tokens& tokens, std::optional<LayerFrequency>& out) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string_view text, single_value(use, tokens));
  TRAINFLOPS_ASSIGN_OR_RETURN(out, parse_layer_frequency(use.name, text));
  return Ok{};
}

// Megatron-LM's tuple_type: integers separated by commas, in optional
// parentheses ("128,0", "(128,0)").
Result<std::vector<int64_t>> parse_tuple(std::string_view flag, std::string_view text) {
  std::string_view inner = text;
  while (inner.starts_with('(')) inner.remove_prefix(1);
  while (inner.ends_with(')')) inner.remove_suffix(1);
  std::vector<int64_t> numbers;
  for (std::size_t start = 0;;) {
    const std::size_t comma = std::min(inner.find(',', start), inner.size());
    TRAINFLOPS_ASSIGN_OR_RETURN(const int64_t number, parse_integer(flag, inner.substr(start, comma - start),
                                                                    "must be integers separated by commas"));
    numbers.push_back(number);
    if (comma == inner.size()) return numbers;
    start = comma + 1;
  }
}

// A list of integers: a list expression ("[0,4]*2+[128]", as the layer
// frequencies take), a tuple ("128,0"), or the words up to the next flag
// (nargs='+').
Status read(const FlagUse& use, Tokens& tokens, std::optional<std::vector<int64_t>>& out) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string_view first, single_value(use, tokens));
  if (first.find('[') != std::string_view::npos) {
    TRAINFLOPS_ASSIGN_OR_RETURN(out, PatternEvaluator(use.name, first).evaluate());
    return Ok{};
  }
  if (first.find_first_of(",(") != std::string_view::npos) {
    TRAINFLOPS_ASSIGN_OR_RETURN(out, parse_tuple(use.name, first));
    return Ok{};
  }
  std::vector<int64_t> numbers;
  TRAINFLOPS_ASSIGN_OR_RETURN(const int64_t number, parse_integer(use.name, first, "must be a list of integers"));
  numbers.push_back(number);
  while (!use.inline_value && tokens.at_value()) {
    const std::string& word = tokens.take();
    TRAINFLOPS_ASSIGN_OR_RETURN(const int64_t next, parse_integer(use.name, word, "must be a list of integers"));
    numbers.push_back(next);
  }
  out = std::move(numbers);
  return Ok{};
}

// nargs='*': the words up to the next flag; "--spec=x" is the one word x, as
// argparse reads it.
Status read(const FlagUse& use, Tokens& tokens, std::optional<std::vector<std::string>>& out) {
  std::vector<std::string> words;
  if (use.inline_value) {
    words.emplace_back(*use.inline_value);
  } else {
    while (tokens.at_value()) words.push_back(tokens.take());
  }
  out = std::move(words);
  return Ok{};
}

// Reads a flag that changes FLOPs into its destination; nullopt when `use`
// names no such flag.
std::optional<Status> read_relevant(const FlagUse& use, Tokens& tokens, MegatronArgs& args, Extras& extras) {
  for (const ExtraFlag& extra : kExtraFlags) {
    if (use.name == extra.flag) return read(use, tokens, extras.*extra.member);
  }
  if (use.name == kTokenizerType) return read(use, tokens, extras.tokenizer_type);
  if (use.name == kRecomputeGranularity) return read(use, tokens, extras.recompute_granularity);
  if (use.name == kRecomputeMethod) return read(use, tokens, extras.recompute_method);
  if (use.name == kPipelineLayout) return read(use, tokens, extras.pipeline_layout);
  if (use.name == kRecomputeModulesFlag) return read(use, tokens, extras.recompute_modules);
  if (use.name == kRecomputeActivations) return read(use, tokens, extras.recompute_activations);
  if (use.name == kEmbeddingInSplit) return read(use, tokens, extras.embedding_in_split);
  if (use.name == kLossInSplit) return read(use, tokens, extras.loss_in_split);
  if (use.name == kNoDsaKpoolTail) {
    std::optional<bool> given;
    Status status = read(use, tokens, given);
    if (status.ok()) args.dsa_kpool_tail = false;
    return status;
  }
  if (use.name == kDisableBiasLinear) {
    std::optional<bool> given;
    Status status = read(use, tokens, given);
    if (status.ok()) args.add_bias_linear = false;
    return status;
  }
  const std::string_view flag = use.name == kHybridOverridePattern ? kHybridLayerPattern : use.name;
  std::optional<Status> status;
  for_each_megatron_arg(args, [&](std::string_view name, auto& member) {
    if (!status && spells(flag, name)) status = read(use, tokens, member);
  });
  return status;
}

struct UncountedEffect {
  std::string_view flag;
  std::string_view effect;
};

constexpr UncountedEffect kUncountedEffects[] = {
    {"--rampup-batch-size",
     "the count is of one iteration at --global-batch-size; during the ramp-up iterations hold fewer sequences"},
    {"--recompute-method",
     "executed mode recomputes every layer under --recompute-granularity full; with the block method only "
     "--recompute-num-layers layers per stage do, and the executed count (HFU's numerator) is an upper bound"},
    {"--recompute-num-layers",
     "executed mode recomputes every layer under --recompute-granularity full; with the block method only this "
     "many layers per stage do, and the executed count (HFU's numerator) is an upper bound"},
    {"--fp8-format", "FLOPs are the same in FP8; MFU should then be taken against the FP8 peak (mfu --dtype fp8)"},
};

}  // namespace

std::optional<std::string_view> uncounted_effect(std::string_view flag) {
  for (const UncountedEffect& entry : kUncountedEffects) {
    if (entry.flag == flag) return entry.effect;
  }
  return std::nullopt;
}

namespace {

// A flag that does not change FLOPs, with the values Megatron-LM's parser
// gives it: "--lr 3e-4". An unknown flag (shape nullptr) takes the words up to
// the next flag.
Result<std::string> ignored_entry(const FlagUse& use, const MegatronFlagShape* shape, Tokens& tokens) {
  const int fewest = shape ? shape->fewest_values : 0;
  const int most = shape ? shape->most_values : kUnlimitedValues;
  std::string entry(use.name);
  if (use.inline_value) {
    if (most == 0) return value_error(use.name, *use.inline_value, "is a switch and takes no value");
    if (fewest > 1) {
      return Error(std::string(use.name) + ": takes " + std::to_string(fewest) + " values, not one after '='");
    }
    return entry + " " + std::string(*use.inline_value);
  }
  int taken = 0;
  for (; (most == kUnlimitedValues || taken < most) && tokens.at_value(); ++taken) entry += " " + tokens.take();
  if (taken < fewest) {
    return Error(std::string(use.name) + ": expects " +
                 (fewest == 1 ? std::string("a value") : std::to_string(fewest) + " values"));
  }
  return entry;
}

// --- typos -------------------------------------------------------------------

std::vector<std::string> flag_words(std::string_view flag) {
  std::vector<std::string> words(1);
  for (const char c : flag.substr(2)) {
    if (c == '-' || c == '_') {
      words.emplace_back();
    } else {
      words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return words;
}

// Whether each word of `shortened` starts a word of `flag`, in order
// ("--ffn-size" shortens "--ffn-hidden-size", "--seq-len" "--seq-length").
bool shortens(const std::vector<std::string>& shortened, const std::vector<std::string>& flag) {
  std::size_t next = 0;
  for (const std::string& word : shortened) {
    while (next < flag.size() && !flag[next].starts_with(word)) ++next;
    if (next == flag.size()) return false;
    ++next;
  }
  return true;
}

// The flag an unknown one most likely stands for: the nearest relevant or
// known flag within 2 edits (1 for names of at most 8 characters), else the
// one with the fewest words that it shortens; the first of equals.
std::optional<std::string> likely_intended(std::string_view unknown) {
  const std::vector<std::string> relevant = relevant_flags();
  std::vector<std::string_view> candidates(relevant.begin(), relevant.end());
  for (const MegatronFlagShape& flag : megatron_known_flags()) candidates.push_back(flag.name);
  if (std::optional<std::string> near = nearest_name(unknown, candidates, unknown.size() - 2 > 8 ? 2 : 1)) return near;
  const std::vector<std::string> unknown_words = flag_words(unknown);
  std::optional<std::string> best;
  std::size_t best_words = SIZE_MAX;
  for (const std::string_view candidate : candidates) {
    const std::vector<std::string> words = flag_words(candidate);
    if (words.size() < best_words && shortens(unknown_words, words)) {
      best = std::string(candidate);
      best_words = words.size();
    }
  }
  return best;
}

// --- Megatron-LM's defaults and derivations ----------------------------------

template <typename T, typename V>
void set_default(std::optional<T>& member, V value) {
  if (!member) member = T(value);
}

// The parser defaults of megatron/training/arguments.py (NVIDIA/Megatron-LM at
// commit 000c4ac24f61159c138b0975def722c65245983c) and, for the flags newer
// versions generate from TransformerConfig fields, the field defaults of
// megatron/core/transformer/transformer_config.py (commit
// 002526d81b81f6ab534e93844f9a228709887494).
void apply_parser_defaults(MegatronArgs& a) {
  set_default(a.dsa_kpool_tail, true);  // Megatron-LM's default: the KPool tail is attended
  set_default(a.add_bias_linear, true);         // Megatron-LM's default: --disable-bias-linear switches it off
  set_default(a.normalization, "LayerNorm");    // Megatron-LM's default: --normalization default='LayerNorm'
  set_default(a.softmax_type, "vanilla");       // Megatron-LM's default: --softmax-type default='vanilla'
  set_default(a.num_residual_streams, 4);       // Megatron-LM's default: TransformerConfig.num_residual_streams
  for_each_megatron_arg(a, [](std::string_view, auto& member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::optional<bool>>) {
      if (!member) member = false;  // every other switch is store_true
    }
  });
  set_default(a.num_query_groups, 1);         // Megatron-LM's default: --num-query-groups default=1
  set_default(a.moe_layer_freq, int64_t{1});  // Megatron-LM's default: --moe-layer-freq default=1
  set_default(a.moe_router_topk, 2);          // Megatron-LM's default: --moe-router-topk default=2
  set_default(a.kv_lora_rank, 32);            // Megatron-LM's default: --kv-lora-rank default=32
  set_default(a.qk_head_dim, 128);            // Megatron-LM's default: --qk-head-dim default=128
  set_default(a.qk_pos_emb_head_dim, 64);     // Megatron-LM's default: --qk-pos-emb-head-dim default=64
  set_default(a.v_head_dim, 128);             // Megatron-LM's default: --v-head-dim default=128
  set_default(a.linear_key_head_dim, 128);    // Megatron-LM's default: TransformerConfig.linear_key_head_dim
  set_default(a.linear_value_head_dim, 128);  // Megatron-LM's default: TransformerConfig.linear_value_head_dim
  set_default(a.linear_num_key_heads, 16);    // Megatron-LM's default: TransformerConfig.linear_num_key_heads
  set_default(a.linear_num_value_heads, 32);  // Megatron-LM's default: TransformerConfig.linear_num_value_heads
  set_default(a.linear_conv_kernel_dim, 4);   // Megatron-LM's default: TransformerConfig.linear_conv_kernel_dim
  set_default(a.mamba_state_dim, 128);        // Megatron-LM's default: --mamba-state-dim default=128
  set_default(a.mamba_head_dim, 64);          // Megatron-LM's default: --mamba-head-dim default=64
  set_default(a.mamba_num_groups, 8);         // Megatron-LM's default: --mamba-num-groups default=8
  set_default(a.gdp_num_householder, 3);      // the gated-delta-product fork's TransformerConfig default
}

// validate_args lets --encoder-num-layers and --encoder-seq-length stand in
// for --num-layers and --seq-length, and asserts that not both are given.
Status take_encoder_alias(const std::optional<int64_t>& alias, std::string_view alias_flag,
                          std::optional<int64_t>& member, std::string_view member_flag) {
  if (!alias) return Ok{};
  if (member) {
    return Error(std::string(alias_flag) + " = " + std::to_string(*alias) + ": cannot be given together with " +
                 std::string(member_flag));
  }
  member = alias;
  return Ok{};
}

Status derive_ffn_hidden_size(MegatronArgs& a) {
  if (a.ffn_hidden_size || !a.hidden_size) return Ok{};
  // With SwiGLU's two input projections, Megatron-LM keeps the parameters near
  // those of 4h: int((4 * h * 2 / 3) / 64) * 64, which is (h / 24) * 64.
  int64_t ffn = 0;
  if (__builtin_mul_overflow(*a.hidden_size, 4, &ffn)) {
    return Error("--hidden-size = " + std::to_string(*a.hidden_size) + ": too large for 4 * hidden_size");
  }
  a.ffn_hidden_size = *a.swiglu ? *a.hidden_size / 24 * 64 : ffn;
  return Ok{};
}

Status derive_kv_channels(MegatronArgs& a) {
  if (a.kv_channels || !a.hidden_size || !a.num_attention_heads) return Ok{};
  const int64_t hidden = *a.hidden_size, heads = *a.num_attention_heads;
  if (hidden <= 0 || heads <= 0) return Ok{};  // the model builder names the bad size
  if (hidden % heads != 0) {
    return Error("--hidden-size = " + std::to_string(hidden) + ": must be divisible by --num-attention-heads = " +
                 std::to_string(heads) + " when --kv-channels is not given (kv_channels = hidden_size / heads)");
  }
  a.kv_channels = hidden / heads;
  return Ok{};
}

Status derive_moe(MegatronArgs& a) {
  if (a.num_experts == 0) a.num_experts.reset();  // validate_args: 0 experts means a dense model
  if (a.num_experts && !a.moe_ffn_hidden_size) a.moe_ffn_hidden_size = a.ffn_hidden_size;
  if (!a.moe_latent_size) return Ok{};
  const std::string latent = "--moe-latent-size = " + std::to_string(*a.moe_latent_size);
  if (*a.moe_latent_size <= 0) return Error(latent + ": must be a positive integer");
  if (!a.num_experts) return Error(latent + ": needs --num-experts (MoE latent projections apply only to MoE layers)");
  return Ok{};
}

Error not_positive(std::string_view flag, int64_t value) {
  return Error(std::string(flag) + " = " + std::to_string(value) + ": must be a positive integer");
}

// Megatron-LM's _vocab_size_with_padding: the vocabulary rounded up to a
// multiple of make_vocab_size_divisible_by * tensor_model_parallel_size.
// Since April 2026 Megatron-LM's NullTokenizer adds no end-of-document token:
// --vocab-size is the vocabulary it pads. Another tokenizer's vocabulary is
// in its model file, which trainflops cannot read.
Status derive_padded_vocab_size(const Extras& e, MegatronArgs& a) {
  if (a.padded_vocab_size || !e.vocab_size) return Ok{};
  if (*e.vocab_size <= 0) return not_positive("--vocab-size", *e.vocab_size);
  const int64_t vocab = *e.vocab_size;
  const int64_t divisible_by = e.make_vocab_size_divisible_by.value_or(128);  // Megatron-LM's default
  const int64_t tp = e.tensor_model_parallel_size.value_or(1);                // Megatron-LM's default
  if (divisible_by <= 0) return not_positive("--make-vocab-size-divisible-by", divisible_by);
  if (tp <= 0) return not_positive("--tensor-model-parallel-size", tp);
  int64_t multiple = 0, padded = 0;
  if (__builtin_mul_overflow(divisible_by, tp, &multiple) ||
      __builtin_mul_overflow(vocab / multiple + (vocab % multiple != 0 ? 1 : 0), multiple, &padded)) {
    return Error("--vocab-size = " + std::to_string(vocab) + ": padding it to a multiple of " +
                 std::to_string(divisible_by) + " * " + std::to_string(tp) + " overflows 64 bits");
  }
  a.padded_vocab_size = padded;
  return Ok{};
}

Status apply_megatron_defaults(const Extras& extras, MegatronArgs& a) {
  apply_parser_defaults(a);
  TRAINFLOPS_RETURN_IF_ERROR(
      take_encoder_alias(extras.encoder_num_layers, "--encoder-num-layers", a.num_layers, "--num-layers"));
  TRAINFLOPS_RETURN_IF_ERROR(derive_ffn_hidden_size(a));
  TRAINFLOPS_RETURN_IF_ERROR(derive_kv_channels(a));
  TRAINFLOPS_RETURN_IF_ERROR(
      take_encoder_alias(extras.encoder_seq_length, "--encoder-seq-length", a.seq_length, "--seq-length"));
  TRAINFLOPS_RETURN_IF_ERROR(derive_moe(a));
  return derive_padded_vocab_size(extras, a);
}

// The modules selective recomputation may name (TransformerConfig), and those
// of them that re-run no product: activations and norms.
constexpr std::array<std::string_view, 11> kRecomputeModules = {
    "core_attn",      "moe_act",      "layernorm",   "mla_up_proj", "mlp", "moe",
    "shared_experts", "gdn_norm_out", "gdp_in_proj", "gdp_qkv",     "mhc"};
constexpr std::array<std::string_view, 3> kRecomputeModulesWithoutProducts = {"moe_act", "layernorm", "gdn_norm_out"};

// What Megatron-LM recomputes, as executed mode counts it: "full" (uniform:
// every layer), "selective" (core attention, its default module), or nothing
// (selective modules that re-run no product). --recompute-activations means
// selective. Recomputing only some layers (block) or other modules is not
// counted: an error rather than a count that leaves them out.
Result<std::optional<std::string>> recompute_to_count(const Extras& e) {
  std::optional<std::string> granularity = e.recompute_granularity;
  if (e.recompute_activations) granularity = "selective";
  if (!granularity) return std::optional<std::string>();
  if (granularity != "full" && granularity != "selective") {
    return Error("--recompute-granularity = \"" + *granularity + "\": must be full or selective");
  }
  if (granularity == "full") {
    if (e.recompute_method == "block") {
      return Error(ErrorCode::kUnsupported,
                   "--recompute-method = \"block\": recomputing only some layers of a stage is not counted; "
                   "uniform (every layer) is");
    }
    return granularity;
  }
  const std::vector<std::string> modules = e.recompute_modules.value_or(std::vector<std::string>{"core_attn"});
  bool core_attention = false;
  for (const std::string& module : modules) {
    if (std::find(kRecomputeModules.begin(), kRecomputeModules.end(), module) == kRecomputeModules.end()) {
      std::string allowed;
      for (const std::string_view name : kRecomputeModules)
        allowed += (allowed.empty() ? "" : ", ") + std::string(name);
      return Error("--recompute-modules: \"" + module + "\" is not a module (" + allowed + ")");
    }
    if (module == "core_attn") {
      core_attention = true;
    } else if (std::find(kRecomputeModulesWithoutProducts.begin(), kRecomputeModulesWithoutProducts.end(), module) ==
               kRecomputeModulesWithoutProducts.end()) {
      return Error(ErrorCode::kUnsupported, "--recompute-modules: recomputing \"" + module +
                                                "\" is not counted; core_attn is, and the activations and norms "
                                                "(moe_act, layernorm, gdn_norm_out) re-run no product");
    }
  }
  if (!core_attention) return std::optional<std::string>();
  return granularity;
}

// --account-for-embedding/loss-in-pipeline-split: Megatron-LM splits the
// decoder layers as if the embedding and the loss were layers too, so the
// first chunk holds one decoder layer fewer, and the last one fewer. Said as
// the pipeline layout that places the same layers.
Result<std::string> layout_with_embedding_and_loss(const Extras& e, const MegatronArgs& a, int64_t virtual_stages) {
  const std::string flags = e.embedding_in_split ? std::string(kEmbeddingInSplit) : std::string(kLossInSplit);
  if (e.first_stage_layers || e.last_stage_layers || e.pipeline_layout) {
    return Error(flags + ": Megatron-LM does not combine it with an uneven first or last stage or a layout");
  }
  const int64_t stages = e.pipeline_stages.value_or(1), layers = a.num_layers.value_or(0);
  if (stages <= 0) return not_positive("--pipeline-model-parallel-size", stages);
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("--num-layers", layers));
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("--mtp-num-layers", a.mtp_num_layers.value_or(0)));
  const int64_t units = layers + (e.embedding_in_split ? 1 : 0) + (e.loss_in_split ? 1 : 0);
  int64_t chunks = 0;
  if (__builtin_mul_overflow(stages, virtual_stages, &chunks) || chunks > units) {
    return Error(flags + ": " + std::to_string(stages) + " stages x " + std::to_string(virtual_stages) +
                 " chunks are more than the " + std::to_string(units) + " layers with the embedding or loss");
  }
  if (units % chunks != 0) {
    return Error(flags + ": the " + std::to_string(layers) + " decoder layers with the embedding or loss (" +
                 std::to_string(units) + ") must divide evenly over " + std::to_string(chunks) + " chunks");
  }
  const int64_t per_chunk = units / chunks;
  std::string layout;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t decoder = per_chunk;
    if (c > 0) layout += '|';
    if (c == 0) layout += 'E';
    if (c == 0 && e.embedding_in_split) --decoder;
    if (c == chunks - 1 && e.loss_in_split) --decoder;
    if (decoder < 0) return Error(flags + ": a chunk of " + std::to_string(per_chunk) + " layers has no room for them");
    layout += std::string(static_cast<std::size_t>(decoder), 't');
  }
  layout += std::string(static_cast<std::size_t>(a.mtp_num_layers.value_or(0)), 'm') + "L";
  return layout;
}

// Megatron-LM's pipeline arguments, with its validate_args rules for the
// virtual pipeline: at most one of the three ways to give it; layers per
// virtual stage divide each stage's layers; one chunk per stage is none.
Result<PipelineSplit> pipeline_split(const Extras& e, const MegatronArgs& a) {
  PipelineSplit split{e.pipeline_stages, e.first_stage_layers, e.last_stage_layers, e.virtual_stages,
                      e.pipeline_layout};
  const int ways =
      e.virtual_stages.has_value() + e.layers_per_virtual_stage.has_value() + e.pipeline_layout.has_value();
  if (ways > 1) {
    return Error(
        "--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank and "
        "--pipeline-model-parallel-layout: give at most one");
  }
  if (e.layers_per_virtual_stage) {
    const int64_t per_chunk = *e.layers_per_virtual_stage, stages = e.pipeline_stages.value_or(1);
    if (per_chunk <= 0) return not_positive("--num-layers-per-virtual-pipeline-stage", per_chunk);
    if (stages <= 0) return not_positive("--pipeline-model-parallel-size", stages);
    if (e.first_stage_layers || e.last_stage_layers) {
      return Error(
          "--num-layers-per-virtual-pipeline-stage: with an uneven first or last stage, give "
          "--num-virtual-stages-per-pipeline-rank");
    }
    const int64_t layers = a.num_layers.value_or(0);
    if (layers % stages != 0 || (layers / stages) % per_chunk != 0) {
      return Error("--num-layers-per-virtual-pipeline-stage = " + std::to_string(per_chunk) +
                   ": must divide the layers of each stage (--num-layers " + std::to_string(layers) +
                   " over --pipeline-model-parallel-size " + std::to_string(stages) + ")");
    }
    split.virtual_stages = layers / stages / per_chunk;
  }
  if (split.virtual_stages == 1) split.virtual_stages.reset();
  if ((e.embedding_in_split || e.loss_in_split) && e.pipeline_stages) {
    TRAINFLOPS_ASSIGN_OR_RETURN(split.layout, layout_with_embedding_and_loss(e, a, split.virtual_stages.value_or(1)));
    split.virtual_stages.reset();
  }
  return split;
}

}  // namespace

Result<ParsedMegatronFlags> parse_megatron_flags(const std::vector<std::string>& words, UnknownFlags unknown_flags) {
  ParsedMegatronFlags parsed;
  Extras extras;
  Tokens tokens(words);
  while (!tokens.done()) {
    TRAINFLOPS_RETURN_IF_ERROR(tokens.expand_flags_file());
    if (tokens.done()) break;  // an empty flags file ends the words
    const std::string& token = tokens.take();
    const FlagUse use = split_flag(token);
    if (!is_flag(token) || use.name.size() == 2) {
      return Error("unexpected argument \"" + token + "\" (flags start with --)");
    }
    if (std::optional<Status> status = read_relevant(use, tokens, parsed.args, extras)) {
      TRAINFLOPS_RETURN_IF_ERROR(*status);
      continue;
    }
    if (use.name == "--use-checkpoint-args") {
      return Error(
          "--use-checkpoint-args: the model comes from the checkpoint, which trainflops cannot read; remove the flag "
          "to count the model the other flags describe");
    }
    for (const RetiredFlag& retired : kRetiredFlags) {
      if (use.name == retired.flag) {
        return Error(std::string(use.name) + ": no longer valid in Megatron-LM, which stops at it; use " +
                     std::string(retired.replacement));
      }
    }
    const MegatronFlagShape* shape = find_megatron_known_flag(use.name);
    TRAINFLOPS_ASSIGN_OR_RETURN(std::string entry, ignored_entry(use, shape, tokens));
    if (shape) {
      parsed.ignored.push_back(std::move(entry));
      continue;
    }
    std::string problem = "unknown flag " + std::string(use.name) + ": Megatron-LM's parser has no such option";
    if (std::optional<std::string> intended = likely_intended(use.name)) problem += "; did you mean " + *intended + "?";
    if (unknown_flags == UnknownFlags::kRejected) {
      return Error(problem + " (allow unknown flags to count the model without it)");
    }
    parsed.unknown.push_back(problem + " (counted without it: " + entry + ")");
  }
  parsed.global_batch_size = extras.global_batch_size;
  parsed.tokenizer_type = extras.tokenizer_type;
  TRAINFLOPS_ASSIGN_OR_RETURN(parsed.pipeline, pipeline_split(extras, parsed.args));
  TRAINFLOPS_ASSIGN_OR_RETURN(parsed.recompute, recompute_to_count(extras));
  TRAINFLOPS_RETURN_IF_ERROR(apply_megatron_defaults(extras, parsed.args));
  return parsed;
}

Result<Model> model_from_megatron_flags(const ParsedMegatronFlags& flags, MegatronBranch branch) {
  if (!flags.args.padded_vocab_size) {
    const std::string source =
        flags.tokenizer_type ? "the tokenizer (--tokenizer-type " + *flags.tokenizer_type + ")" : "the tokenizer";
    return Error("--vocab-size is missing: Megatron-LM takes the vocabulary from " + source +
                 ", which trainflops cannot read; give --vocab-size (the tokenizer's vocabulary, padded as "
                 "Megatron-LM pads it) or --padded-vocab-size");
  }
  return model_from_megatron_args(flags.args, branch);
}

}  // namespace trainflops
