// Pictures of trainflops' JSON output: the command line hands the JSON to the
// Python module trainflops.plot (python/trainflops/plot.py, matplotlib), run as
// a subprocess, rather than drawing itself.
#ifndef TRAINFLOPS_TOOLS_PLOT_RUNNER_H_
#define TRAINFLOPS_TOOLS_PLOT_RUNNER_H_

#include <string>

#include "trainflops/result.h"

namespace trainflops::cli {

// Runs `/usr/bin/python3 -m trainflops.plot <kind> - -o <file>` with `json` on
// its stdin. kind: "sweep" (the JSON of `trainflops sweep --format json`) or
// "layers" (of `trainflops count --format json`); file: a .png or .svg path.
// The module is taken from the directory python/ beside this executable, where
// CMake builds the package, else from the first PYTHONPATH entry holding it.
// Python's messages pass through to stderr; the error says why no picture was
// written.
Status draw_plot(const std::string& kind, const std::string& json, const std::string& file);

}  // namespace trainflops::cli

#endif  // TRAINFLOPS_TOOLS_PLOT_RUNNER_H_
