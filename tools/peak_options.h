// The peak options of the subcommands that turn FLOPs into time (mfu, plan):
// --gpu (a GPU of the peak table, by name or alias), --dtype and
// --peak-tflops, resolved to one dense peak per GPU.
#ifndef TRAINFLOPS_TOOLS_PEAK_OPTIONS_H_
#define TRAINFLOPS_TOOLS_PEAK_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "trainflops/mfu.h"
#include "trainflops/result.h"

namespace trainflops::cli {

struct PeakOptions {
  std::string gpu, dtype = "bf16";
  std::optional<double> peak_tflops;
};

void add_peak_options(CLI::App& command, PeakOptions& options);

// --peak-tflops when given, else the table's entry for --gpu and --dtype.
Result<ChosenPeak> peak_from_options(const PeakOptions& options);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_PEAK_OPTIONS_H_
