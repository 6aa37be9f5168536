// Text forms of a report: a table for people, JSON and CSV for programs.
// docs/output.md documents the JSON schema and the CSV columns.
#ifndef TRAINFLOPS_RENDER_H_
#define TRAINFLOPS_RENDER_H_

#include <string>
#include <string_view>

#include "trainflops/compare.h"
#include "trainflops/count.h"
#include "trainflops/megatron_log.h"
#include "trainflops/mfu.h"
#include "trainflops/pipeline.h"
#include "trainflops/plan.h"
#include "trainflops/result.h"
#include "trainflops/sweep.h"

namespace trainflops {

enum class Format { kTable, kJson, kCsv };

Result<Format> parse_format(std::string_view text);

// Which layers the table lists: a line per section, kind and FLOPs each
// (kKinds: "decoder.4-78  dsa+moe  75 ..."; a few lines for interleaved
// models), a line per layer (kAll), or no layer table (kNone). JSON and CSV
// list every layer whatever it says.
enum class LayerRows { kKinds, kAll, kNone };

// "kinds", "all", "none"; else "layers = \"x\": must be one of kinds, all, none".
Result<LayerRows> parse_layer_rows(std::string_view text);

// The whole output, ending in a newline.
std::string render(const Report& report, Format format, LayerRows layers = LayerRows::kKinds);

// The same with the pipeline-stage section after it: a table of stages, a
// "pipeline" object in JSON, "stage" and "imbalance" rows in CSV
// (docs/output.md).
std::string render(const Report& report, const PipelineReport& pipeline, Format format,
                   LayerRows layers = LayerRows::kKinds);

// "1.2346e+18" style: 5 significant digits.
std::string format_flops(double flops);

// The shortest decimal that reads back as exactly `value`, as the JSON and
// CSV outputs write numbers: "302592963584", "0.9283093991907119", "1e+20".
std::string shortest_decimal(double value);

// Table (GFLOPs per token, grouped components), JSON or CSV (every component).
std::string render_sweep(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode,
                         Format format);

// The same table in parts, for a sweep written as it is counted: the header
// (with the dense-attention columns if `dense`), then one row per point.
std::string sweep_table_header(const std::string& model_summary, Mode mode, bool dense);
void append_sweep_row(std::string& out, const SweepPoint& point, bool dense);

// `trainflops compare`: every framework's number beside model mode's, with
// each difference split by convention (docs/compare.md). The table and CSV
// print exact integers; JSON writes them as decimal strings.
std::string render_comparison(const Comparison& comparison, Format format);

// `trainflops sweep --compare`: per-token GFLOPs of every framework at each
// length (one sequence of that length each); JSON and CSV give exact FLOPs too.
std::string render_comparison_sweep(const std::vector<Comparison>& comparisons, Format format);

// `trainflops plan --format json`: the run plan of `model_summary` in `mode`
// on `cluster`, whose peak is `peak` (docs/output.md).
std::string render_plan_json(const RunPlan& plan, const Cluster& cluster, const ChosenPeak& peak, Mode mode,
                             const std::string& model_summary);

// Where a step time was read from, for the MFU report.
struct LogSource {
  std::string file;
  MegatronLogIteration iteration;
};

// `trainflops mfu --format json`: the utilization `use` of the step `step`
// whose FLOPs `report` counted, with the Megatron-LM log it was read from
// when there is one (docs/output.md).
std::string render_mfu_json(const Report& report, const StepMeasurement& step, const Utilization& use,
                            const ChosenPeak& peak, const std::optional<LogSource>& log);

}  // namespace trainflops

#endif  // TRAINFLOPS_RENDER_H_
