// trainflops sweep: per-token GFLOPs over context lengths, beside dense
// attention accounting.
#include <algorithm>
#include <iostream>
#include <optional>

#include "command.h"
#include "model_source.h"
#include "plot_runner.h"
#include "trainflops/compare.h"
#include "trainflops/render.h"
#include "trainflops/sweep.h"
#include "trainflops/workload_text.h"

namespace trainflops::cli {
namespace {

struct SweepOptions {
  ModelOptions model;
  std::string seq_lengths = "4k,32k,128k,256k";
  std::string mode = "megatron", format = "table";
  std::optional<std::string> plot_file;
  bool compare = false;
};

// --compare: every framework's per-token FLOPs at each length.
Result<std::string> run_compare_sweep(const SweepOptions& o, const ModelSource& source,
                                      const std::vector<std::int64_t>& lengths, Format format) {
  if (o.plot_file) return Error("--plot draws the modes' sweep; it does not draw --compare");
  if (o.mode != "megatron") {
    return Error("--mode " + o.mode + ": --compare shows every framework (trainflops' modes among them) at once");
  }
  std::vector<Comparison> comparisons;
  for (std::int64_t length : lengths) {
    TRAINFLOPS_ASSIGN_OR_RETURN(Comparison comparison, compare_frameworks(source.model, length, 1));
    comparisons.push_back(std::move(comparison));
  }
  return render_comparison_sweep(comparisons, format);
}

struct SweepInputs {
  Mode mode;
  Format format;
  std::vector<std::int64_t> lengths;
  ModelSource source;
};

Result<SweepInputs> read_inputs(const SweepOptions& o) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Mode mode, parse_mode(o.mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(o.format));
  TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<std::int64_t> lengths, parse_seq_lengths(o.seq_lengths));
  // --compare counts every framework's convention on the model as its source describes it.
  TRAINFLOPS_ASSIGN_OR_RETURN(ModelSource source, load_model(o.model, o.compare ? Mode::kModel : mode));
  return SweepInputs{mode, format, std::move(lengths), std::move(source)};
}

// The outputs made whole before they are printed: JSON, CSV, --plot, --compare.
Result<std::string> render_whole_sweep(const SweepOptions& o, const SweepInputs& in) {
  if (o.compare) return run_compare_sweep(o, in.source, in.lengths, in.format);
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<SweepPoint> points, sweep(in.source.model, in.lengths, in.mode));
  const std::string summary = summarize(in.source.model);
  // The picture first: when it fails, nothing goes to stdout, as for any error.
  if (o.plot_file) {
    const Status drawn = draw_plot("sweep", render_sweep(points, summary, in.mode, Format::kJson), *o.plot_file);
    if (!drawn.ok()) return drawn.error().context("--plot " + *o.plot_file);
    std::cerr << "wrote " << *o.plot_file << "\n";
  }
  return render_sweep(points, summary, in.mode, in.format);
}

// The table, printed a few hundred rows at a time as they are counted: a
// sweep of many lengths holds neither its points nor its whole text. Every
// count grows with the length, so the longest is counted first: when it
// fits, so does every other, and an error leaves stdout empty.
int print_table(const SweepInputs& in) {
  const Result<Sweeper> sweeper = Sweeper::create(in.source.model, in.mode);
  if (!sweeper.ok()) return report_error(sweeper.error());
  const Result<SweepPoint> longest = sweeper.value().point(*std::max_element(in.lengths.begin(), in.lengths.end()));
  if (!longest.ok()) return report_error(longest.error());
  const Result<bool> dense = sweeper.value().dense_differs(in.lengths);
  if (!dense.ok()) return report_error(dense.error());
  constexpr std::size_t kPrintedChars = std::size_t{1} << 16;
  std::string out = sweep_table_header(summarize(in.source.model), in.mode, dense.value());
  out.reserve(kPrintedChars + 1024);
  for (std::int64_t length : in.lengths) {
    const Result<SweepPoint> point = sweeper.value().point(length);
    if (!point.ok()) {
      std::cout << out;
      return report_error(point.error());
    }
    append_sweep_row(out, point.value(), dense.value());
    if (out.size() >= kPrintedChars) {
      std::cout << out;
      out.clear();
    }
  }
  std::cout << out;
  return finish_output(0);
}

int run_sweep(const SweepOptions& o) {
  const Result<SweepInputs> in = read_inputs(o);
  if (!in.ok()) return report_error(in.error());
  if (o.compare || o.plot_file || in.value().format != Format::kTable) {
    return print_result(render_whole_sweep(o, in.value()));
  }
  return print_table(in.value());
}

}  // namespace

Runner add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* command =
      app.add_subcommand("sweep", "Per-token FLOPs over context lengths, beside dense attention accounting");
  add_model_options(*command, options->model);
  command->add_option("--seq-lengths", options->seq_lengths, "Context lengths, e.g. 4k,32k,128k,256k (the default)");
  command->add_option("--mode", options->mode, "megatron (default) or model");
  command->add_option("--format", options->format, "table (default), json or csv");
  command->add_flag("--compare", options->compare,
                    "Every framework's per-token FLOPs at each length instead (as trainflops compare counts them)");
  command
      ->add_option("--plot", options->plot_file,
                   "Also draw the sweep into FILE (.png or .svg), with python3 -m trainflops.plot")
      ->option_text("FILE");
  return [options](std::vector<std::string> after_dashes) {
    options->model.megatron_flags = std::move(after_dashes);
    return run_sweep(*options);
  };
}

}  // namespace trainflops::cli
