// trainflops.megatron.num_floating_point_operations: Megatron-LM's function,
// for the arguments in every form Megatron-LM's function accepts.
//
// Megatron-LM computes with whatever its training loop hands it: Python ints
// or floats (its packed-sequence aggregates are floats, divided by the
// data-parallel dedup factor), numpy scalars, 0-d tensors, None; bools count
// as ints and any value as a flag's truth. The drop-in reads each argument as
// Megatron-LM's arithmetic would use it, counts with the library's megatron
// mode, and raises a TrainflopsError where Megatron-LM's function raises
// (a tuple moe_layer_freq, range() over a float layer count, None where it
// multiplies). Validation of the workload (T > 0, S2 >= T) is not the
// drop-in's: Megatron-LM counts zero tokens as 0 FLOPs.
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "accounting/counter_internals.h"
#include "bindings.h"
#include "convert.h"
#include "model_binding.h"
#include "trainflops/megatron_args.h"

namespace trainflops::python {
namespace {

std::string arg_name(std::string_view name) { return "args." + std::string(name); }

// The integer of a value that has one (__index__: Python ints and bools, numpy
// integers, integer 0-d tensors); nullopt for the others, floats and float
// tensors (whose __index__ refuses) included.
std::optional<py::int_> integer_of(py::handle value) {
  if (PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr())) return std::nullopt;
  PyObject* index = PyNumber_Index(value.ptr());
  if (!index) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
    return std::nullopt;
  }
  return py::reinterpret_steal<py::int_>(index);
}

// A float-like value (a float, a numpy float, a float 0-d tensor) as a double;
// nullopt for anything else, a str included (which float() would parse).
std::optional<double> double_of(py::handle value) {
  if (!PyNumber_Check(value.ptr())) return std::nullopt;
  PyObject* number = PyNumber_Float(value.ptr());
  if (!number) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) {
      throw py::error_already_set();
    }
    PyErr_Clear();
    return std::nullopt;
  }
  return py::reinterpret_steal<py::float_>(number).cast<double>();
}

// A whole number, as Megatron-LM's sizes are: an integer (integer_of()) or a
// float-like value that holds a whole number (1024.0, numpy float64, a float
// 0-d tensor).
std::int64_t whole_number(py::handle value, std::string_view name) {
  if (const std::optional<py::int_> integer = integer_of(value)) {
    int overflow = 0;
    const long long whole = PyLong_AsLongLongAndOverflow(integer->ptr(), &overflow);
    if (!overflow) return whole;
  } else if (const std::optional<double> number = double_of(value)) {
    if (*number == std::floor(*number) && std::abs(*number) < 0x1p63) return static_cast<std::int64_t>(*number);
  }
  throw ErrorException(arg_name(name) + " = " + python_repr(value) + ": must be a whole number");
}

void read_arg(py::handle value, std::string_view name, std::optional<std::int64_t>& out) {
  out = whole_number(value, name);
}

// A flag: Megatron-LM tests its truth (`if args.swiglu`), so 1 and 0 are flags too.
void read_arg(py::handle value, std::string_view, std::optional<bool>& out) {
  const int truth = PyObject_IsTrue(value.ptr());
  if (truth < 0) throw py::error_already_set();
  out = truth == 1;
}

void read_arg(py::handle value, std::string_view name, std::optional<double>& out) {
  out = double_of(value);
  if (!out) throw ErrorException(arg_name(name) + " = " + python_repr(value) + ": must be a number");
}

void read_arg(py::handle value, std::string_view name, std::optional<std::string>& out) {
  if (!PyUnicode_Check(value.ptr())) {
    throw ErrorException(arg_name(name) + " = " + python_repr(value) + ": must be a str");
  }
  out = value.cast<std::string>();
}

std::vector<std::int64_t> whole_numbers(py::handle value, std::string_view name) {
  if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr())) {
    throw ErrorException(arg_name(name) + " = " + python_repr(value) + ": must be a list of whole numbers");
  }
  std::vector<std::int64_t> numbers;
  for (py::handle item : value) numbers.push_back(whole_number(item, name));
  return numbers;
}

void read_arg(py::handle value, std::string_view name, std::optional<std::vector<std::int64_t>>& out) {
  out = whole_numbers(value, name);
}

void read_arg(py::handle value, std::string_view name, std::optional<std::vector<std::string>>& out) {
  if (PyUnicode_Check(value.ptr())) {
    out = std::vector<std::string>{value.cast<std::string>()};
    return;
  }
  if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr())) {
    throw ErrorException(arg_name(name) + " = " + python_repr(value) + ": must be a str or a list of str");
  }
  std::vector<std::string> words;
  for (py::handle item : value) words.push_back(py::str(item));
  out = std::move(words);
}

// An every-n-th-layer frequency: Megatron-LM takes an int (a bool is one) or
// a list, and raises for anything else, a tuple or a numpy integer included,
// but only where it reads the argument; check_frequencies() says where.
void read_arg(py::handle value, std::string_view name, std::optional<LayerFrequency>& out) {
  if (PyLong_Check(value.ptr())) {
    out = whole_number(value, name);
  } else if (PyList_Check(value.ptr())) {
    out = whole_numbers(value, name);
  }
}

// What read_megatron_args() needs beyond the values: which frequencies were
// of a type Megatron-LM refuses, and whether a layer count was not an int.
struct ArgTypes {
  py::object moe_layer_freq, linear_attention_freq;  // set when refused
  bool float_layer_count = false;
};

// Megatron-LM raises where its function reads a refused frequency, and where
// it runs range() over a layer count that is not an int: the MoE pattern of
// an int moe_layer_freq, the linear-attention pattern of an int
// linear_attention_freq, DSA's indexer layers (standard path only).
void check_types(const MegatronArgs& args, const ArgTypes& types) {
  if (args.hybrid_layer_pattern) return;
  const bool moe = args.num_experts.has_value();
  const bool linear = has_linear_attention_variant(args);
  if (moe && types.moe_layer_freq) {
    throw ErrorException("args.moe_layer_freq = " + python_repr(types.moe_layer_freq) +
                         ": Megatron-LM takes an int or a list (its function raises for anything else)");
  }
  if (linear && types.linear_attention_freq) {
    throw ErrorException("args.linear_attention_freq = " + python_repr(types.linear_attention_freq) +
                         ": Megatron-LM takes an int or a list (its function raises for anything else)");
  }
  const auto int_frequency = [](const std::optional<LayerFrequency>& frequency) {
    return frequency && std::holds_alternative<std::int64_t>(*frequency);
  };
  if (types.float_layer_count && ((moe && int_frequency(args.moe_layer_freq)) ||
                                  (linear && int_frequency(args.linear_attention_freq)) || args.experimental_attention_variant == "dsa")) {
    throw ErrorException(
        "args.num_layers and args.mtp_num_layers: must be ints here (Megatron-LM's function runs range() over "
        "the layers)");
  }
}

// An argparse.Namespace or a types.SimpleNamespace (not a subclass, which may
// define properties): every attribute is in its __dict__.
bool is_plain_namespace(py::handle args) {
  static const py::handle argparse_namespace = py::object(py::module_::import("argparse").attr("Namespace")).release();
  static const py::handle simple_namespace = py::object(py::module_::import("types").attr("SimpleNamespace")).release();
  const py::handle type = py::type::handle_of(args);
  return type.is(argparse_namespace) || type.is(simple_namespace);
}

// The value of every argument name on `args` (None when absent), in
// for_each_megatron_arg()'s order. A namespace's are looked up in its
// __dict__: getattr would raise and catch an AttributeError for each absent
// name, most of the time of a call.
std::vector<py::object> attribute_values(py::handle args) {
  std::vector<py::object> values;
  values.reserve(python_arg_names().size());
  if (is_plain_namespace(args)) {
    const py::dict attributes = args.attr("__dict__");
    for (const py::str& name : python_arg_names()) {
      PyObject* value = PyDict_GetItemWithError(attributes.ptr(), name.ptr());
      if (!value && PyErr_Occurred()) throw py::error_already_set();
      values.push_back(value ? py::reinterpret_borrow<py::object>(value) : py::none());
    }
    return values;
  }
  for (const py::str& name : python_arg_names()) {
    PyObject* value = PyObject_GetAttr(args.ptr(), name.ptr());
    if (!value) {
      if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
      PyErr_Clear();
      values.push_back(py::none());
    } else {
      values.push_back(py::reinterpret_steal<py::object>(value));
    }
  }
  return values;
}

MegatronArgs read_megatron_args(const std::vector<py::object>& values) {
  MegatronArgs args;
  ArgTypes types;
  std::size_t i = 0;
  for_each_megatron_arg(args, [&](std::string_view name, auto& member) {
    const py::object& value = values[i++];
    if (value.is_none()) return;
    read_arg(value, name, member);
    using Member = std::remove_cvref_t<decltype(member)>;
    if constexpr (std::is_same_v<Member, std::optional<LayerFrequency>>) {
      if (!member) (name == "moe_layer_freq" ? types.moe_layer_freq : types.linear_attention_freq) = value;
    }
    if (name == "num_layers" || name == "mtp_num_layers") {
      types.float_layer_count |= !integer_of(value);
    }
  });
  check_types(args, types);
  return args;
}

// The same objects as at the last call: a training loop passes one args
// namespace every iteration, unchanged. Lists are kept as copies, since a
// list may change in place.
struct LastCall {
  std::vector<py::object> values;
  std::shared_ptr<PyModel> model;

  bool same(const std::vector<py::object>& now) const {
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (now[i].is(values[i])) continue;
      if (!PyList_Check(now[i].ptr()) || !PyList_Check(values[i].ptr())) return false;
      const int equal = PyObject_RichCompareBool(now[i].ptr(), values[i].ptr(), Py_EQ);
      if (equal < 0) throw py::error_already_set();
      if (!equal) return false;
    }
    return true;
  }
};

std::shared_ptr<PyModel> model_of_args(py::handle args, MegatronBranch branch) {
  if (is_model(args)) return args.cast<std::shared_ptr<PyModel>>();
  if (PyDict_Check(args.ptr())) {
    throw ErrorException(
        "args = a dict: Megatron-LM reads its arguments as attributes (args.seq_length); give the "
        "argparse.Namespace, or argparse.Namespace(**the_dict)");
  }
  // One per branch: a process may count with both. Never freed, as python_arg_names().
  static auto* last_calls = new std::array<std::shared_ptr<const LastCall>, 2>();
  std::shared_ptr<const LastCall>* last = &(*last_calls)[branch == MegatronBranch::kDev ? 1 : 0];
  std::vector<py::object> values = attribute_values(args);
  const std::shared_ptr<const LastCall> previous = *last;
  if (previous && previous->same(values)) return previous->model;
  std::shared_ptr<PyModel> model = model_of_megatron_args(read_megatron_args(values), branch);
  for (py::object& value : values) {
    if (PyList_Check(value.ptr())) value = py::reinterpret_steal<py::object>(PySequence_List(value.ptr()));
  }
  *last = std::make_shared<const LastCall>(LastCall{std::move(values), model});
  return model;
}

// A token aggregate or the batch size as Megatron-LM multiplies it: an
// integer exactly (Python ints, numpy integers, integer 0-d tensors), any
// other real number as a double.
struct Number {
  double value = 0;
  std::optional<Int128> exact;
};

Number number_from(py::handle value, std::string_view what) {
  if (const std::optional<py::int_> integer = integer_of(value)) {
    const Int128 exact = int128_from(*integer, what);
    return {to_double(exact), exact};
  }
  const std::optional<double> number = double_of(value);
  if (!number) throw ErrorException(std::string(what) + " = " + python_repr(value) + ": must be a number");
  return {*number, std::nullopt};
}

// a * b as Python multiplies them: exactly for two integers, else in doubles.
Number times(const Number& a, const Number& b, std::string_view what) {
  if (a.exact && b.exact) {
    const std::optional<Int128> product = checked_mul(*a.exact, *b.exact);
    if (!product) throw ErrorException(std::string(what) + " does not fit in 128 bits", ErrorCode::kOverflow);
    return {to_double(*product), *product};
  }
  return {a.value * b.value, std::nullopt};
}

double num_floating_point_operations(py::handle args, py::handle batch_size, py::handle seqlen_squared_sum,
                                     py::handle total_real_tokens, const std::string& branch) {
  const std::shared_ptr<PyModel> model = model_of_args(args, value_or_throw(parse_megatron_branch(branch)));
  std::optional<Number> squares, tokens;
  if (!seqlen_squared_sum.is_none()) squares = number_from(seqlen_squared_sum, "seqlen_squared_sum_in_batch");
  if (!total_real_tokens.is_none()) tokens = number_from(total_real_tokens, "total_real_tokens_in_batch");
  if (!squares || !tokens) {
    // An aggregate left None takes its BSHD value, batch_size * seq_length (^2).
    if (batch_size.is_none()) {
      throw ErrorException(
          "batch_size = None: give the batch size, or both seqlen_squared_sum_in_batch and "
          "total_real_tokens_in_batch");
    }
    const Number batch = number_from(batch_size, "batch_size");
    if (!model->model.megatron_seq_length) {
      throw ErrorException("args.seq_length is missing: Megatron-LM counts batch_size x seq_length");
    }
    const Int128 length_value = *model->model.megatron_seq_length;
    const Number length{to_double(length_value), length_value};
    const Number bshd_tokens = times(batch, length, "batch_size x seq_length");
    if (!squares) squares = times(bshd_tokens, length, "batch_size x seq_length^2");
    if (!tokens) tokens = bshd_tokens;
  }
  const FlopsCounter& counter = model->counter(Mode::kMegatron);
  const MegatronAggregates aggregates{tokens->value, squares->value, model->model.megatron_seq_length};
  return value_or_throw(CounterInternals::megatron_total(counter, aggregates)).value;
}

}  // namespace

void bind_megatron(py::module_& module) {
  // trainflops.megatron wraps it in a function of Megatron-LM's signature.
  module.def("megatron_num_floating_point_operations", &num_floating_point_operations, py::arg("args"),
             py::arg("batch_size"), py::arg("seqlen_squared_sum_in_batch"), py::arg("total_real_tokens_in_batch"),
             py::arg("branch") = "main",
             "See trainflops.megatron.num_floating_point_operations (branch main) and "
             "trainflops.megatron_dev's (branch dev).");
  module.def(
      "megatron_arg_names",
      [] {
        std::vector<std::string> names;
        for (const py::str& name : python_arg_names()) names.push_back(name);
        return names;
      },
      "The names of the Megatron-LM arguments trainflops reads, in order.");
}

}  // namespace trainflops::python
