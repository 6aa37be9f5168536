// trainflops._core: the library's counting, packed statistics and MFU for
// Python. The package trainflops (python/trainflops/) is the public face;
// library errors become trainflops.TrainflopsError, a ValueError, or its
// subclass for the error's code.
#include "bindings.h"

#include <array>

#include "convert.h"
#include "model_binding.h"

namespace trainflops::python {
namespace {

// The exception class of each ErrorCode, indexed by it; each also derives from
// the Python exception that fits (OSError for I/O, OverflowError, ...).
std::array<PyObject*, 5> exception_classes;

PyObject* new_exception(py::module_& module, const char* name, py::tuple bases, const char* doc) {
  PyObject* type = PyErr_NewExceptionWithDoc((std::string("trainflops.") + name).c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  module.attr(name) = py::handle(type);
  return type;
}

void bind_errors(py::module_& module) {
  PyObject* base = new_exception(module, "TrainflopsError", py::make_tuple(py::handle(PyExc_ValueError)),
                                 "Any trainflops error: the message names the field, the value and the rule.");
  const auto with = [&](PyObject* also) { return py::make_tuple(py::handle(base), py::handle(also)); };
  exception_classes[static_cast<int>(ErrorCode::kInvalidInput)] =
      new_exception(module, "InvalidInputError", py::make_tuple(py::handle(base)), "The input breaks a rule.");
  exception_classes[static_cast<int>(ErrorCode::kIo)] =
      new_exception(module, "InputFileError", with(PyExc_OSError), "A file cannot be read (also an OSError).");
  exception_classes[static_cast<int>(ErrorCode::kOverflow)] = new_exception(
      module, "CountOverflowError", with(PyExc_OverflowError), "A count does not fit (also an OverflowError).");
  exception_classes[static_cast<int>(ErrorCode::kUnsupported)] =
      new_exception(module, "UnsupportedError", with(PyExc_NotImplementedError),
                    "Valid input that trainflops does not count (also a NotImplementedError).");
  exception_classes[static_cast<int>(ErrorCode::kFailedAssertion)] = new_exception(
      module, "FailedAssertionError", py::make_tuple(py::handle(exception_classes[static_cast<int>(ErrorCode::kInvalidInput)]),
                     py::handle(PyExc_AssertionError)),
      "Invalid input that Megatron-LM's function refuses with an assert (also an InvalidInputError and an "
      "AssertionError).");
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ErrorException& error) {
      PyErr_SetString(exception_classes[static_cast<int>(error.code())], error.what());
    }
  });
}

}  // namespace
}  // namespace trainflops::python

PYBIND11_MODULE(_core, module) {
  using namespace trainflops::python;
  module.doc() = "trainflops' C++ core; use the trainflops package.";
  bind_errors(module);
  bind_model(module);
  bind_count(module);
  bind_seq_stats(module);
  bind_mfu(module);
  bind_compare(module);
  bind_megatron(module);
}
