// The parts of the trainflops._core Python module, each bound by its own file.
#ifndef TRAINFLOPS_PYTHON_BINDINGS_H_
#define TRAINFLOPS_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace trainflops::python {

void bind_count(pybind11::module_& module);      // count_binding.cc
void bind_seq_stats(pybind11::module_& module);  // seq_stats_binding.cc
void bind_mfu(pybind11::module_& module);        // mfu_binding.cc
void bind_compare(pybind11::module_& module);    // compare_binding.cc
void bind_megatron(pybind11::module_& module);   // megatron_binding.cc

}  // namespace trainflops::python

#endif  // TRAINFLOPS_PYTHON_BINDINGS_H_
