// trainflops._core: the library's counting, packed statistics and MFU for
// Python. The package trainflops (python/trainflops/) is the public face;
// library errors become trainflops.TrainflopsError, a ValueError.
#include "bindings.h"

#include "convert.h"
#include "model_binding.h"

PYBIND11_MODULE(_core, module) {
  using namespace trainflops::python;
  module.doc() = "trainflops' C++ core; use the trainflops package.";
  py::register_exception<ErrorException>(module, "TrainflopsError", PyExc_ValueError);
  bind_model(module);
  bind_count(module);
  bind_seq_stats(module);
  bind_mfu(module);
}
