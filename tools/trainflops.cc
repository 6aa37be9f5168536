// The trainflops command line: parses arguments, calls the library, prints.
// Exit status: 0 success, 2 invalid input (nothing is printed on stdout then).
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "trainflops/batch.h"
#include "trainflops/count.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/native_config.h"
#include "trainflops/render.h"

namespace {

using namespace trainflops;

constexpr int kBadInput = 2;

struct CountOptions {
  std::string args_file, config_file;
  bool megatron = false;
  std::vector<std::string> megatron_flags;
  std::optional<std::int64_t> global_batch_size, seq_length;
  std::string docs, cu_seqlens_file;
  std::optional<std::string> total_real_tokens, seqlen_squared_sum;
  std::string mode = "megatron", format = "table";
  bool verbose = false;
};

// The model and what the model source says about the workload.
struct ModelSource {
  Model model;
  std::optional<std::int64_t> global_batch_size, seq_length;
  std::vector<std::string> ignored;
};

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<ModelSource> load_model(const CountOptions& o) {
  if (!o.megatron && !o.megatron_flags.empty()) {
    return Error("unexpected argument \"" + o.megatron_flags.front() + "\": Megatron-LM flags go after --megatron --");
  }
  const int sources = !o.args_file.empty() + !o.config_file.empty() + o.megatron;
  if (sources != 1) {
    return Error(
        "give exactly one model: --args FILE (Megatron-LM args JSON), --config FILE (trainflops config) "
        "or --megatron -- <Megatron-LM flags>");
  }
  ModelSource source;
  if (!o.config_file.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(source.model, read_native_config(o.config_file));
    return source;
  }
  MegatronArgs args;
  if (o.megatron) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ParsedMegatronFlags flags, parse_megatron_flags(o.megatron_flags));
    args = std::move(flags.args);
    source.global_batch_size = flags.global_batch_size;
    source.ignored = std::move(flags.ignored);
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_file(o.args_file));
    Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(text);
    if (!parsed.ok()) return parsed.error().context(o.args_file);
    args = std::move(parsed.value().args);
    source.ignored = std::move(parsed.value().ignored);
  }
  source.seq_length = args.seq_length;
  TRAINFLOPS_ASSIGN_OR_RETURN(source.model, model_from_megatron_args(args));
  return source;
}

Result<std::vector<std::int64_t>> parse_length_list(const std::string& text) {
  std::vector<std::int64_t> lengths;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    auto value = parse_decimal(item);
    if (!value || *value < 0 || *value > INT64_MAX) {
      return Error("--docs: \"" + item + "\" is not a document length (a non-negative integer)");
    }
    lengths.push_back(static_cast<std::int64_t>(*value));
  }
  return lengths;
}

Result<Workload> load_workload(const CountOptions& o, const ModelSource& source) {
  const bool aggregates = o.total_real_tokens || o.seqlen_squared_sum;
  const int given = !o.docs.empty() + !o.cu_seqlens_file.empty() + aggregates;
  if (given > 1 || (given == 1 && o.global_batch_size)) {
    return Error(
        "give one workload: --global-batch-size (with --seq-length), --docs, --cu-seqlens, or "
        "--total-real-tokens with --seqlen-squared-sum");
  }
  if (!o.docs.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<std::int64_t> lengths, parse_length_list(o.docs));
    return Workload{PackedDocuments{std::move(lengths)}};
  }
  if (!o.cu_seqlens_file.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> offsets, read_cu_seqlens_file(o.cu_seqlens_file));
    Result<std::vector<std::int64_t>> lengths = lengths_from_cu_seqlens(offsets);
    if (!lengths.ok()) return lengths.error().context(o.cu_seqlens_file);
    return Workload{PackedDocuments{std::move(lengths).value()}};
  }
  if (aggregates) {
    if (!o.total_real_tokens || !o.seqlen_squared_sum) {
      return Error("--total-real-tokens and --seqlen-squared-sum come together");
    }
    auto tokens = parse_decimal(*o.total_real_tokens);
    auto squares = parse_decimal(*o.seqlen_squared_sum);
    if (!tokens) return Error("--total-real-tokens = \"" + *o.total_real_tokens + "\": must be an integer");
    if (!squares) return Error("--seqlen-squared-sum = \"" + *o.seqlen_squared_sum + "\": must be an integer");
    return Workload{SequenceAggregates{*tokens, *squares}};
  }
  const auto batch = o.global_batch_size ? o.global_batch_size : source.global_batch_size;
  const auto length = o.seq_length ? o.seq_length : source.seq_length;
  if (!batch) {
    return Error(
        "no workload: give --global-batch-size with --seq-length (BSHD), --docs, --cu-seqlens FILE, or "
        "--total-real-tokens with --seqlen-squared-sum");
  }
  if (!length) return Error("--seq-length is missing: required with --global-batch-size (BSHD)");
  return Workload{Bshd{*batch, *length}};
}

Result<std::string> run_count(const CountOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o));
  if (o.verbose) {
    for (const std::string& ignored : source.ignored)
      std::cerr << "ignored (does not change FLOPs): " << ignored << "\n";
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const Workload workload, load_workload(o, source));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, count(source.model, workload, mode));
  return render(report, format);
}

int run_batch() {
  std::ios::sync_with_stdio(false);
  std::string line, out;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out += batch_result_line(line);
    out += '\n';
    if (out.size() > (1 << 16)) {
      std::cout << out;
      out.clear();
    }
  }
  std::cout << out << std::flush;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trainflops: FLOPs of one training iteration, with Megatron-LM parity and exact per-document counts"};
  app.require_subcommand(1);

  CountOptions count_options;
  CLI::App* count_command = app.add_subcommand("count", "Count the FLOPs of one training iteration");
  count_command->add_option("--args", count_options.args_file, "Megatron-LM arguments as a JSON object (file)");
  count_command->add_option("--config", count_options.config_file,
                            "trainflops model config (JSON, docs/config-format.md)");
  count_command->add_flag("--megatron", count_options.megatron, "Read the model from Megatron-LM flags given after --");
  count_command->add_option("megatron_flags", count_options.megatron_flags, "Megatron-LM flags (after --)");
  count_command->add_option("--global-batch-size", count_options.global_batch_size, "BSHD: sequences per iteration");
  count_command->add_option("--seq-length", count_options.seq_length, "BSHD: tokens per sequence");
  count_command->add_option("--docs", count_options.docs, "THD: packed document lengths, comma-separated");
  count_command->add_option("--cu-seqlens", count_options.cu_seqlens_file, "THD: cu_seqlens file (.npy or text)");
  count_command->add_option("--total-real-tokens", count_options.total_real_tokens, "Aggregates: T = sum of lengths");
  count_command->add_option("--seqlen-squared-sum", count_options.seqlen_squared_sum,
                            "Aggregates: S2 = sum of squared lengths");
  count_command->add_option("--mode", count_options.mode, "megatron (default) or model");
  count_command->add_option("--format", count_options.format, "table (default), json or csv");
  count_command->add_flag("--verbose", count_options.verbose, "List inputs that do not change FLOPs (on stderr)");

  app.add_subcommand("batch", "Count JSON Lines records from stdin, one JSON result line each");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kBadInput;  // --help exits 0
  }

  if (app.got_subcommand("batch")) return run_batch();
  const Result<std::string> output = run_count(count_options);
  if (!output.ok()) {
    std::cerr << "trainflops: " << output.error().message() << "\n";
    return kBadInput;
  }
  std::cout << output.value();
  return 0;
}
