// trainflops compare: every framework's FLOPs for one model and sequence
// length beside trainflops' model and executed counts, each difference split
// by convention (compare.h).
#include "command.h"
#include "model_source.h"
#include "trainflops/compare.h"
#include "trainflops/render.h"
#include "trainflops/workload_text.h"

namespace trainflops::cli {
namespace {

struct CompareOptions {
  ModelOptions model;
  std::optional<std::string> seq_length, global_batch_size;
  std::string format = "table";
};

Result<std::string> run_compare(const CompareOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  // Every framework's convention, counted on the model as its source describes it.
  TRAINFLOPS_ASSIGN_OR_RETURN(const ModelSource source, load_model(o.model, Mode::kModel));
  std::int64_t seq_length = 0;
  if (o.seq_length) {
    TRAINFLOPS_ASSIGN_OR_RETURN(seq_length, parse_size(*o.seq_length, "--seq-length", 1, SizeSuffixes::kAccepted));
  } else if (source.seq_length) {
    seq_length = *source.seq_length;
  } else {
    return Error("the sequence length is missing: give --seq-length (e.g. 4096 or 4k)");
  }
  // One sequence unless a batch is given: the header says which.
  std::int64_t sequences = source.global_batch_size.value_or(1);
  if (o.global_batch_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(sequences,
                                parse_size(*o.global_batch_size, "--global-batch-size", 1, SizeSuffixes::kRejected));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const Comparison comparison, compare_frameworks(source.model, seq_length, sequences));
  return render_comparison(comparison, format);
}

}  // namespace

Runner add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand(
      "compare", "Every framework's FLOPs for the model beside trainflops', each difference split by convention");
  add_model_options(*command, options->model);
  command->add_option("--seq-length", options->seq_length,
                      "Tokens per sequence (e.g. 4096 or 4k); default: the model source's seq_length");
  command->add_option("--global-batch-size", options->global_batch_size,
                      "Sequences per iteration; default: the model source's, else 1 (the header says which)");
  command->add_option("--format", options->format, "table (default), json or csv");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return print_result(run_compare(*options));
  };
}

}  // namespace trainflops::cli
