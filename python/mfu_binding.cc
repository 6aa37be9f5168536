// The peak table and the utilization arithmetic behind trainflops.mfu().
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "trainflops/mfu.h"

namespace trainflops::python {
namespace {

py::dict peak_dict(const PeakThroughput& peak) {
  return py::dict(py::arg("gpu") = std::string(peak.gpu), py::arg("product") = std::string(peak.product),
                  py::arg("dtype") = std::string(dtype_name(peak.dtype)), py::arg("dense_tflops") = peak.dense_tflops,
                  py::arg("source") = std::string(peak.source));
}

}  // namespace

void bind_mfu(py::module_& module) {
  module.def(
      "peak_table",
      [] {
        py::list entries;
        for (const PeakThroughput& peak : peak_table()) entries.append(peak_dict(peak));
        return entries;
      },
      "Every dense peak: dicts of gpu, product, dtype, dense_tflops (per GPU) and source.");
  module.def(
      "find_peak",
      [](py::handle gpu, py::handle dtype) {
        const FoundPeak found =
            value_or_throw(find_peak(text_from(gpu, "gpu"), value_or_throw(parse_dtype(text_from(dtype, "dtype")))));
        py::dict peak = peak_dict(found.peak);
        peak["assumed"] = std::string(found.assumed);
        return peak;
      },
      py::arg("gpu"), py::arg("dtype"));
  module.def(
      "utilization",
      [](double model_flops, double step_time_s, py::handle num_gpus, double peak_tflops,
         std::optional<double> executed_flops) {
        const StepMeasurement step{model_flops, executed_flops, step_time_s, int64_from(num_gpus, "num_gpus"),
                                   peak_tflops};
        const Utilization use = value_or_throw(utilization(step));
        return py::dict(py::arg("tflops_per_gpu") = use.tflops_per_gpu, py::arg("mfu") = use.mfu,
                        py::arg("executed_tflops_per_gpu") = use.executed_tflops_per_gpu, py::arg("hfu") = use.hfu);
      },
      py::arg("model_flops"), py::arg("step_time_s"), py::arg("num_gpus"), py::arg("peak_tflops"),
      py::arg("executed_flops"));
}

}  // namespace trainflops::python
