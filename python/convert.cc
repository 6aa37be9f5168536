#include "convert.h"

#include <cstring>

#include "base/json_text.h"

namespace trainflops::python {
namespace {

// NumPy's bool has __index__ (deprecated), yet is no integer where bools are refused.
bool is_numpy_bool(py::handle value) {
  const std::string_view type = Py_TYPE(value.ptr())->tp_name;
  return type == "numpy.bool_" || type == "numpy.bool";
}

bool is_integer(py::handle value) {
  return !PyBool_Check(value.ptr()) && !PyFloat_Check(value.ptr()) && !is_numpy_bool(value) &&
         (PyLong_Check(value.ptr()) || PyIndex_Check(value.ptr()));
}

// An element of a buffer of integers, by its struct format character.
template <typename T>
Int128 element(const char* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return Int128{value};
}

std::vector<std::int64_t> from_buffer(py::handle values, const std::string& what) {
  const py::buffer_info info = py::reinterpret_borrow<py::buffer>(values).request();
  if (info.ndim != 1) {
    throw ErrorException(what + " has " + std::to_string(info.ndim) + " dimensions: must be one-dimensional");
  }
  std::string format = info.format;
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.erase(0, 1);
  Int128 (*read)(const char*) = nullptr;
  if (format.size() == 1) {
    switch (format[0]) {
      case 'b': read = element<std::int8_t>; break;
      case 'B': read = element<std::uint8_t>; break;
      case 'h': read = element<std::int16_t>; break;
      case 'H': read = element<std::uint16_t>; break;
      case 'i': read = element<std::int32_t>; break;
      case 'I': read = element<std::uint32_t>; break;
      case 'l': read = info.itemsize == 8 ? element<std::int64_t> : element<std::int32_t>; break;
      case 'L': read = info.itemsize == 8 ? element<std::uint64_t> : element<std::uint32_t>; break;
      case 'q': read = element<std::int64_t>; break;
      case 'Q': read = element<std::uint64_t>; break;
    }
  }
  if (!read) {
    throw ErrorException(what + " holds elements of buffer format '" + info.format +
                         "', not integers: give int32 or int64 values");
  }
  std::vector<std::int64_t> result(static_cast<std::size_t>(info.shape[0]));
  const char* base = static_cast<const char*>(info.ptr);
  for (std::size_t i = 0; i < result.size(); ++i) {
    const Int128 value = read(base + static_cast<py::ssize_t>(i) * info.strides[0]);
    if (value > INT64_MAX) {
      throw ErrorException(what + "[" + std::to_string(i) + "] = " + to_decimal(value) + ": does not fit in 64 bits");
    }
    result[i] = static_cast<std::int64_t>(value);
  }
  return result;
}

}  // namespace

void throw_if_error(const Status& status) {
  if (!status.ok()) throw ErrorException(status.error());
}

py::int_ to_python(Int128 value) {
  return py::reinterpret_steal<py::int_>(PyLong_FromString(to_decimal(value).c_str(), nullptr, 10));
}

py::object to_python(const Flops& flops) {
  if (flops.exact) return to_python(*flops.exact);
  return py::float_(flops.value);
}

std::string python_repr(py::handle value) { return py::repr(value).cast<std::string>(); }

Int128 int128_from(py::handle value, std::string_view what) {
  if (!is_integer(value)) throw ErrorException(std::string(what) + " = " + python_repr(value) + ": must be an integer");
  const py::int_ integer = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!integer) throw py::error_already_set();
  int overflow = 0;
  const long long narrow = PyLong_AsLongLongAndOverflow(integer.ptr(), &overflow);
  if (!overflow) return narrow;  // the common case, without text
  const std::string text = py::reinterpret_steal<py::str>(PyObject_Str(integer.ptr())).cast<std::string>();
  const std::optional<Int128> parsed = parse_decimal(text);
  if (!parsed) {
    throw ErrorException(std::string(what) + " = " + text + ": does not fit in 128 bits", ErrorCode::kOverflow);
  }
  return *parsed;
}

std::int64_t int64_from(py::handle value, std::string_view what) {
  const Int128 wide = int128_from(value, what);
  if (wide < INT64_MIN || wide > INT64_MAX) {
    throw ErrorException(std::string(what) + " = " + to_decimal(wide) + ": does not fit in 64 bits",
                         ErrorCode::kOverflow);
  }
  return static_cast<std::int64_t>(wide);
}

bool bool_from(py::handle value, std::string_view what) {
  if (!PyBool_Check(value.ptr()))
    throw ErrorException(std::string(what) + " = " + python_repr(value) + ": must be True or False");
  return value.ptr() == Py_True;
}

std::string text_from(py::handle value, std::string_view what) {
  if (!PyUnicode_Check(value.ptr()))
    throw ErrorException(std::string(what) + " = " + python_repr(value) + ": must be a str");
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (!utf8) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) throw py::error_already_set();
    PyErr_Clear();
    throw ErrorException(std::string(what) + " = " + python_repr(value) +
                         ": must be text UTF-8 can hold (a lone surrogate cannot be encoded)");
  }
  return std::string(utf8, static_cast<std::size_t>(size));
}

std::string path_from(py::handle value, std::string_view what) {
  if (!PyUnicode_Check(value.ptr()) && !PyBytes_Check(value.ptr()) && !py::hasattr(value, "__fspath__")) {
    throw ErrorException(std::string(what) + " = " + python_repr(value) + ": must be a path (a str or os.PathLike)");
  }
  const py::object path = py::module_::import("os").attr("fspath")(value);
  return PyBytes_Check(path.ptr()) ? path.cast<std::string>() : text_from(path, what);
}

py::object without_tensor(py::handle values, const std::string& what) {
  py::object source = py::reinterpret_borrow<py::object>(values);
  // An array with a buffer is no tensor (a tensor has none), and asking it for
  // a device it lacks would raise and catch an AttributeError.
  if (PyObject_CheckBuffer(values.ptr())) return source;
  if (!py::hasattr(source, "device") || !py::hasattr(source, "numpy")) return source;  // not a torch tensor
  // Flags, read before anything that would build an object: a training loop passes a tensor on every call.
  if (!source.attr("is_cpu").cast<bool>()) {
    throw ErrorException(what + " is a tensor on " + py::str(source.attr("device")).cast<std::string>() +
                         ": copy it to the CPU first (" + what + ".cpu())");
  }
  if (source.attr("requires_grad").cast<bool>()) source = source.attr("detach")();
  return source.attr("numpy")();
}

std::optional<IntegerView> contiguous_integers(py::handle values) {
  if (!PyObject_CheckBuffer(values.ptr())) return std::nullopt;
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(values).request();
  std::string format = info.format;
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.erase(0, 1);
  const bool signed_integer = format == "i" || format == "l" || format == "q";
  if (info.ndim != 1 || !signed_integer || info.strides[0] != info.itemsize) return std::nullopt;
  const auto size = static_cast<std::size_t>(info.shape[0]);
  if (info.itemsize == 4) {
    const std::span<const std::int32_t> values32(static_cast<const std::int32_t*>(info.ptr), size);
    return IntegerView{std::move(info), values32};
  }
  if (info.itemsize == 8) {
    const std::span<const std::int64_t> values64(static_cast<const std::int64_t*>(info.ptr), size);
    return IntegerView{std::move(info), values64};
  }
  return std::nullopt;
}

std::vector<std::int64_t> int64_vector_from(py::handle values, const std::string& what) {
  const py::object source = without_tensor(values, what);
  if (PyUnicode_Check(source.ptr()) || PyBytes_Check(source.ptr())) {
    throw ErrorException(what + " = " + python_repr(source) +
                         ": must be a list, a NumPy array or a CPU torch tensor of integers");
  }
  if (const std::optional<IntegerView> view = contiguous_integers(source)) {
    return std::visit([](auto values) { return std::vector<std::int64_t>(values.begin(), values.end()); },
                      view->values);
  }
  if (PyObject_CheckBuffer(source.ptr())) return from_buffer(source, what);
  if (!py::isinstance<py::iterable>(source)) {
    throw ErrorException(what + " = " + python_repr(source) +
                         ": must be a list, a NumPy array or a CPU torch tensor of integers");
  }
  std::vector<std::int64_t> result;
  if (PyList_CheckExact(source.ptr())) {
    // Lists of small ints, the common case, are read without a string per element.
    const Py_ssize_t size = PyList_GET_SIZE(source.ptr());
    result.reserve(static_cast<std::size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyObject* item = PyList_GET_ITEM(source.ptr(), i);
      int overflow = 1;
      const long long value = PyLong_CheckExact(item) ? PyLong_AsLongLongAndOverflow(item, &overflow) : 0;
      result.push_back(overflow ? int64_from(item, what + "[" + std::to_string(i) + "]") : value);
    }
    return result;
  }
  if (py::hasattr(source, "__len__")) result.reserve(py::len(source));
  for (py::handle item : source) {
    result.push_back(int64_from(item, what + "[" + std::to_string(result.size()) + "]"));
  }
  return result;
}

namespace {

// Where a value sits ("args.moe_layer_freq[3]"): rendered only for an error,
// since a training loop converts every argument on every new namespace.
struct JsonPath {
  const std::string* root = nullptr;  // set on the outermost value only
  const JsonPath* parent = nullptr;
  const std::string* member = nullptr;  // a dict's key, or else
  std::size_t index = 0;                // a list's position

  std::string text() const {
    if (root) return *root;
    return parent->text() + (member ? "." + *member : "[" + std::to_string(index) + "]");
  }
};

nlohmann::json json_at(py::handle value, const JsonPath& path, int depth) {
  if (depth > kMaxJsonDepth) {
    throw ErrorException(path.text() + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels (a list or dict that contains itself?)");
  }
  PyObject* object = value.ptr();
  if (object == Py_None) return nullptr;
  if (PyBool_Check(object)) return object == Py_True;
  if (is_numpy_bool(value)) return PyObject_IsTrue(object) == 1;
  if (PyLong_CheckExact(object)) {
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (!overflow) return static_cast<std::int64_t>(integer);
  }
  if (is_integer(value)) {
    const std::string what = path.text();
    const Int128 integer = int128_from(value, what);
    if (integer >= INT64_MIN && integer <= INT64_MAX) return static_cast<std::int64_t>(integer);
    if (integer > 0 && integer <= UINT64_MAX) return static_cast<std::uint64_t>(integer);
    throw ErrorException(what + " = " + to_decimal(integer) + ": does not fit in 64 bits");
  }
  if (PyFloat_Check(object)) return PyFloat_AsDouble(object);
  if (PyUnicode_Check(object)) return text_from(value, path.text());
  if (PyList_Check(object) || PyTuple_Check(object)) {
    nlohmann::json array = nlohmann::json::array();
    for (py::handle item : value) {
      array.push_back(json_at(item, JsonPath{nullptr, &path, nullptr, array.size()}, depth + 1));
    }
    return array;
  }
  if (PyDict_Check(object)) {
    nlohmann::json members = nlohmann::json::object();
    for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!PyUnicode_Check(key.ptr()))
        throw ErrorException(path.text() + " has a key " + python_repr(key) + ": keys must be strings");
      const std::string name = text_from(key, path.text() + " key");
      members[name] = json_at(item, JsonPath{nullptr, &path, &name, 0}, depth + 1);
    }
    return members;
  }
  throw ErrorException(path.text() + " = " + python_repr(value) +
                       ": must be None, a bool, a number, a string, a list or a dict");
}

}  // namespace

nlohmann::json json_from(py::handle value, const std::string& what, int depth) {
  return json_at(value, JsonPath{&what}, depth);
}

}  // namespace trainflops::python
