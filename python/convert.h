// Values between Python and the library, for the bindings of the trainflops
// Python module. Every conversion error, like every library Error, is thrown
// as ErrorException, which the module translates to trainflops.TrainflopsError
// (a ValueError) or its subclass for the error's code, carrying the same
// message.
#ifndef TRAINFLOPS_PYTHON_CONVERT_H_
#define TRAINFLOPS_PYTHON_CONVERT_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/int128.h"
#include "trainflops/result.h"

namespace trainflops::python {

namespace py = pybind11;

// A library Error on its way to Python: its message is bounded and
// printable as every Error's is, whatever Python object it shows.
class ErrorException : public std::runtime_error {
 public:
  explicit ErrorException(const Error& error) : std::runtime_error(error.message()), code_(error.code()) {}
  explicit ErrorException(std::string message, ErrorCode code = ErrorCode::kInvalidInput)
      : ErrorException(Error(code, std::move(message))) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// The value of `result`, or ErrorException with its error.
template <typename T>
T value_or_throw(Result<T> result) {
  if (!result.ok()) throw ErrorException(result.error());
  return std::move(result).value();
}
void throw_if_error(const Status& status);

// A Python int of any size.
py::int_ to_python(Int128 value);
// An int in exact modes, else a float.
py::object to_python(const Flops& flops);

// An integer: a Python int or anything with __index__ (NumPy integers), not a
// bool (Python's or NumPy's) or a float. Errors: "<what> = <repr>: must be an integer" and
// "<what> = <value>: does not fit in 128 bits" (64 bits for the int64 form).
Int128 int128_from(py::handle value, std::string_view what);
std::int64_t int64_from(py::handle value, std::string_view what);
// A flag: True or False. Error: "<what> = <repr>: must be True or False".
bool bool_from(py::handle value, std::string_view what);
// A str, as UTF-8. Errors: "<what> = <repr>: must be a str", and a str that
// UTF-8 cannot hold (a lone surrogate).
std::string text_from(py::handle value, std::string_view what);
// A path: a str or an os.PathLike, as os.fspath() gives it. Errors: another
// type ("<what> = <repr>: must be a path (a str or os.PathLike)"), text_from()'s.
std::string path_from(py::handle value, std::string_view what);

// A torch tensor as the NumPy array that shares its memory (an error for a
// tensor on another device, which says to call .cpu(): copying it here would
// synchronize the device without the caller knowing); anything else as is.
py::object without_tensor(py::handle values, const std::string& what);

// The elements of a one-dimensional, contiguous buffer of int32 or int64 (a
// NumPy array), viewed in place; nullopt for anything else. The view lives as
// long as `buffer`.
struct IntegerView {
  py::buffer_info buffer;
  std::variant<std::span<const std::int32_t>, std::span<const std::int64_t>> values;
};
std::optional<IntegerView> contiguous_integers(py::handle values);

// A one-dimensional sequence of integers: a list or tuple (or any iterable) of
// integers, an integer NumPy array (or any one-dimensional buffer of
// integers), or a torch tensor on the CPU (as without_tensor()).
std::vector<std::int64_t> int64_vector_from(py::handle values, const std::string& what);

// JSON-like Python values (None, bool, int, float, str, list, tuple, dict
// with str keys) as JSON; `what` names the value in errors. Values nested
// deeper than JSON input may be (kMaxJsonDepth: a list that contains itself,
// say) are an error.
nlohmann::json json_from(py::handle value, const std::string& what, int depth = 0);

// python_repr(value), for messages.
std::string python_repr(py::handle value);

}  // namespace trainflops::python

#endif  // TRAINFLOPS_PYTHON_CONVERT_H_
