// Text forms of a report: a table for people, JSON and CSV for programs.
// docs/output.md documents the JSON schema and the CSV columns.
#ifndef TRAINFLOPS_RENDER_H_
#define TRAINFLOPS_RENDER_H_

#include <string>
#include <string_view>

#include "trainflops/count.h"
#include "trainflops/pipeline.h"
#include "trainflops/result.h"
#include "trainflops/sweep.h"

namespace trainflops {

enum class Format { kTable, kJson, kCsv };

Result<Format> parse_format(std::string_view text);

// The whole output, ending in a newline. The table collapses runs of
// identical consecutive layers into one line ("decoder.4-78  75 x ...").
std::string render(const Report& report, Format format);

// The same with the pipeline-stage section after it: a table of stages, a
// "pipeline" object in JSON, "stage" and "imbalance" rows in CSV
// (docs/output.md).
std::string render(const Report& report, const PipelineReport& pipeline, Format format);

// "1.2346e+18" style: 5 significant digits.
std::string format_flops(double flops);

// Table (GFLOPs per token, grouped components), JSON or CSV (every component).
std::string render_sweep(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode,
                         Format format);

}  // namespace trainflops

#endif  // TRAINFLOPS_RENDER_H_
