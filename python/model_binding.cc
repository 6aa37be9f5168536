#include "model_binding.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "accounting/megatron_total.h"
#include "base/json_text.h"
#include "convert.h"
#include "inputs/megatron_args_json.h"
#include "trainflops/input_file.h"
#include "trainflops/megatron_args.h"
#include "trainflops/model_input.h"

namespace trainflops::python {
namespace {

// The number of arguments trainflops reads.
constexpr std::size_t kArgCount = 0
#define TRAINFLOPS_COUNT_ARG(type, name) +1
    TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_COUNT_ARG)
#undef TRAINFLOPS_COUNT_ARG
    ;
// One flag per argument, in megatron_arg_names()'s order.
using ArgFlags = std::array<bool, kArgCount>;

const std::vector<std::string>& megatron_arg_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    MegatronArgs args;
    for_each_megatron_arg(args, [&](std::string_view name, auto&) { all.emplace_back(name); });
    return all;
  }();
  return names;
}

// A model the library resolved (model_input.h); its warnings go to Python's.
std::shared_ptr<PyModel> from_input(const ModelInput& input) {
  ResolvedModel resolved = value_or_throw(resolve_model(input));
  for (const std::string& warning : resolved.warnings) {
    if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
  }
  auto result = std::make_shared<PyModel>();
  result->model = std::move(resolved.model);
  result->seq_length = resolved.seq_length;
  result->global_batch_size = resolved.global_batch_size;
  result->ignored = std::move(resolved.ignored);
  result->assumed = std::move(resolved.assumed);
  return result;
}

// Megatron-LM arguments as its training loop passes them to its FLOPs
// function: taken as that function takes them (the drop-in's parity).
std::shared_ptr<PyModel> from_megatron_args(const MegatronArgs& args) {
  ModelInput input;
  input.megatron_args = args;
  input.megatron_parity = true;
  return from_input(input);
}

// A hash of the scalar arguments: equal arguments have equal fingerprints,
// and arguments of one model family differ in their scalars. Each argument's
// product is added on its own, so that the products overlap where a chain of
// them would wait on one another.
std::uint64_t fingerprint(const MegatronArgs& args) {
  std::uint64_t hash = 0, position = 0;
  for_each_megatron_arg(args, [&](std::string_view, const auto& member) {
    using Value = typename std::remove_cvref_t<decltype(member)>::value_type;
    std::uint64_t value = member.has_value();
    if constexpr (std::is_same_v<Value, double>) {
      if (member) value += std::bit_cast<std::uint64_t>(*member);
    } else if constexpr (std::is_integral_v<Value>) {
      if (member) value += static_cast<std::uint64_t>(*member);
    }
    position += 0x632BE59BD9B4E019u;
    hash += std::rotl((value ^ position) * 0x9E3779B97F4A7C15u, 29);
  });
  return hash;
}

// The models of the last few distinct argument sets: a training loop passes
// the same args namespace every iteration, and building the model and its
// counter costs far more than reading the arguments.
std::shared_ptr<PyModel> from_recent_args(const std::shared_ptr<const MegatronArgs>& args) {
  constexpr std::size_t kRecent = 8;
  struct Entry {
    std::uint64_t fingerprint;  // compared before the arguments
    std::shared_ptr<const MegatronArgs> args;
    std::shared_ptr<PyModel> model;
  };
  // A ring: a new entry replaces the oldest in place, so that no entry moves.
  static std::vector<Entry> recent;
  static std::size_t oldest = 0;
  const std::uint64_t print = fingerprint(*args);
  for (const Entry& entry : recent) {
    if (entry.fingerprint == print && *entry.args == *args) return entry.model;
  }
  std::shared_ptr<PyModel> model = from_megatron_args(*args);
  if (recent.size() < kRecent) {
    recent.push_back({print, args, model});
  } else {
    recent[oldest] = {print, args, model};
    oldest = (oldest + 1) % kRecent;
  }
  return model;
}

// Plain Python values (exact ints, floats, bools, strs and lists of them) read
// straight into an argument, as the JSON path would read them; false for
// anything else, which the JSON path then reads and names in its error.
bool read_plain_value(PyObject* value, std::int64_t& out) {
  if (!PyLong_CheckExact(value)) return false;
  int overflow = 0;
  out = PyLong_AsLongLongAndOverflow(value, &overflow);
  return !overflow;
}

bool read_plain_value(PyObject* value, std::string& out) {
  if (!PyUnicode_CheckExact(value)) return false;
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(value, &size);
  if (!text) {
    PyErr_Clear();
    return false;
  }
  out.assign(text, static_cast<std::size_t>(size));
  return true;
}

bool read_plain(PyObject* value, std::optional<std::int64_t>& out) {
  std::int64_t integer = 0;
  if (!read_plain_value(value, integer)) return false;
  out = integer;
  return true;
}

bool read_plain(PyObject* value, std::optional<double>& out) {
  if (PyFloat_CheckExact(value)) {
    out = PyFloat_AS_DOUBLE(value);
    return true;
  }
  std::optional<std::int64_t> integer;
  if (!read_plain(value, integer)) return false;
  out = static_cast<double>(*integer);
  return true;
}

bool read_plain(PyObject* value, std::optional<bool>& out) {
  if (value != Py_True && value != Py_False) return false;
  out = value == Py_True;
  return true;
}

bool read_plain(PyObject* value, std::optional<std::string>& out) {
  std::string text;
  if (!read_plain_value(value, text)) return false;
  out = std::move(text);
  return true;
}

// The items of a list or tuple, each read as `Item`.
template <typename Item>
bool read_plain_items(PyObject* value, std::vector<Item>& out) {
  if (!PyList_CheckExact(value) && !PyTuple_CheckExact(value)) return false;
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(value);
  out.resize(static_cast<std::size_t>(size));
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (!read_plain_value(PySequence_Fast_GET_ITEM(value, i), out[static_cast<std::size_t>(i)])) return false;
  }
  return true;
}

bool read_plain(PyObject* value, std::optional<std::vector<std::int64_t>>& out) {
  std::vector<std::int64_t> items;
  if (!read_plain_items(value, items)) return false;
  out = std::move(items);
  return true;
}

bool read_plain(PyObject* value, std::optional<std::vector<std::string>>& out) {
  std::optional<std::string> one;
  if (read_plain(value, one)) {
    out = std::vector<std::string>{std::move(*one)};
    return true;
  }
  std::vector<std::string> items;
  if (!read_plain_items(value, items)) return false;
  out = std::move(items);
  return true;
}

bool read_plain(PyObject* value, std::optional<LayerFrequency>& out) {
  std::optional<std::int64_t> every;
  if (read_plain(value, every)) {
    out = *every;
    return true;
  }
  std::vector<std::int64_t> flags;
  if (!read_plain_items(value, flags)) return false;
  out = std::move(flags);
  return true;
}

// Reads a plain value into one argument; a null object or None unsets it.
template <auto kMember>
bool read_plain_arg(PyObject* value, MegatronArgs& args) {
  auto& member = args.*kMember;
  if (!value || value == Py_None) {
    member = {};
    return true;
  }
  return read_plain(value, member);
}

// The reader of each argument, in megatron_arg_names()'s order.
constexpr std::array<bool (*)(PyObject*, MegatronArgs&), kArgCount> kPlainArgReaders = {
#define TRAINFLOPS_PLAIN_ARG_READER(type, name) &read_plain_arg<&MegatronArgs::name>,
    TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_PLAIN_ARG_READER)
#undef TRAINFLOPS_PLAIN_ARG_READER
};

// Some of the indices of megatron_arg_names(), in order.
class ArgIndices {
 public:
  void push_back(std::size_t index) { indices_[size_++] = static_cast<std::uint8_t>(index); }
  bool empty() const { return size_ == 0; }
  std::span<const std::uint8_t> all() const { return std::span(indices_).first(size_); }

 private:
  static_assert(kArgCount <= UINT8_MAX);
  std::array<std::uint8_t, kArgCount> indices_;  // the first size_ are set
  std::size_t size_ = 0;
};

// Reads the `changed` of `values` (one per megatron_arg_names(), null when
// absent) into `args`: false when one of them is not plain.
bool read_plain_args(std::span<const py::object, kArgCount> values, const ArgIndices& changed, MegatronArgs& args) {
  for (const std::size_t i : changed.all()) {
    if (!kPlainArgReaders[i](values[i].ptr(), args)) return false;
  }
  return true;
}

// The names of megatron_arg_names() as interned Python strings, made once: a
// lookup by a ready string skips creating and hashing one per name and call,
// and a key that is the same interned string is found by its address.
const std::vector<py::str>& python_arg_names() {
  static const std::vector<py::str>* names = [] {
    auto* all = new std::vector<py::str>();  // never freed: destroying it after the interpreter is unsafe
    for (const std::string& name : megatron_arg_names()) {
      PyObject* interned = PyUnicode_InternFromString(name.c_str());
      if (!interned) throw py::error_already_set();
      all->push_back(py::reinterpret_steal<py::str>(interned));
    }
    return all;
  }();
  return *names;
}

// The index of each of python_arg_names() by its address, open addressing.
class ArgNameIndex {
 public:
  ArgNameIndex() {
    const std::vector<py::str>& names = python_arg_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::size_t slot = first_slot(names[i].ptr());
      while (slots_[slot].name) slot = (slot + 1) % kSlots;
      slots_[slot] = {names[i].ptr(), i};
    }
  }
  // The index of the name that is `key`, or kArgCount for an object that is none of them.
  std::size_t find(PyObject* key) const {
    for (std::size_t slot = first_slot(key);; slot = (slot + 1) % kSlots) {
      if (slots_[slot].name == key) return slots_[slot].index;
      if (!slots_[slot].name) return kArgCount;
    }
  }

 private:
  static constexpr std::size_t kSlots = 4 * std::bit_ceil(kArgCount);  // a quarter full: short probes
  static std::size_t first_slot(PyObject* key) {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(key) * 0x9E3779B97F4A7C15u) >>
                                    (64 - std::countr_zero(kSlots)));
  }
  struct Slot {
    PyObject* name = nullptr;
    std::size_t index = 0;
  };
  std::array<Slot, kSlots> slots_{};
};

// The values of python_arg_names() in `dict`, by one pass over its items:
// CPython interns attribute names, so each key that is one of the names is
// the same object, and an interned key that is not one of them equals none
// of them. False when a key is not an interned str (a dict of JSON's keys):
// such a dict is read by looking each name up.
bool read_interned_items(py::handle dict, std::span<py::object, kArgCount> values) {
  static const ArgNameIndex index;
  Py_ssize_t position = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  while (PyDict_Next(dict.ptr(), &position, &key, &value)) {
    if (!PyUnicode_CheckExact(key) || !PyUnicode_CHECK_INTERNED(key)) return false;
    const std::size_t i = index.find(key);
    if (i < kArgCount) values[i] = py::reinterpret_borrow<py::object>(value);
  }
  return true;
}

// A value as last seen, for the identity check of from_named_values(): lists
// are kept as tuples, which a caller cannot change in place.
py::object snapshot(const py::object& value) {
  if (value && PyList_Check(value.ptr())) return py::reinterpret_steal<py::object>(PySequence_Tuple(value.ptr()));
  return value;
}

// PEP 509's version of a dict, where CPython has one (before 3.12): it
// changes whenever the dict does.
std::optional<std::uint64_t> dict_version(py::handle dict) {
#if PY_VERSION_HEX < 0x030C0000
  return reinterpret_cast<PyDictObject*>(dict.ptr())->ma_version_tag;
#else
  return std::nullopt;
#endif
}

bool unchanged(const py::object& now, const py::object& then) {
  if (now.ptr() == then.ptr()) return true;
  if (!now || !then || !PyList_Check(now.ptr())) return false;
  // The same items (a list's small ints are shared objects): no tuple to
  // build. Both hold their items' addresses in one array.
  const Py_ssize_t size = PyList_GET_SIZE(now.ptr());
  if (PyTuple_Check(then.ptr()) && PyTuple_GET_SIZE(then.ptr()) == size &&
      (size == 0 || std::memcmp(reinterpret_cast<PyListObject*>(now.ptr())->ob_item,
                                reinterpret_cast<PyTupleObject*>(then.ptr())->ob_item,
                                static_cast<std::size_t>(size) * sizeof(PyObject*)) == 0)) {
    return true;
  }
  const py::object items = snapshot(now);
  return PyObject_RichCompareBool(items.ptr(), then.ptr(), Py_EQ) == 1;
}

// The model of Megatron-LM arguments, reading each name trainflops reads;
// `lookup` returns the value or a null object when the name is absent.
// The drop-in runs every iteration with the same args: when every value is
// the object of the previous call (or an equal list), the previous model is
// returned without converting anything; otherwise only the values that
// changed are converted. A lookup may run Python code (a property,
// __getattr__) and so let another thread run and record its own call: the
// values are compared with one record of the previous call, taken before
// the first lookup, never with a mix of two calls. A record is changed in
// place only when no other call holds it, and only by steps that run no
// Python code; what it held is released after.
//
// `dict`, when the values come from one: CPython before 3.12 versions every
// dict (PEP 509), and the same dict at the same version holds the same
// objects, so only the lists among them, which may change in place, are read.
// A dict of at most two items per name is read in one pass over its items
// (a step costs a fraction of a lookup).
template <typename Lookup>
std::shared_ptr<PyModel> from_named_values(Lookup lookup, py::handle dict = py::handle()) {
  struct Record {
    std::array<py::object, kArgCount> values;  // per name, lists as tuples
    std::shared_ptr<const MegatronArgs> args;  // converted from them
    std::shared_ptr<PyModel> model;
    py::object dict;  // kept alive, so that its identity means something
    std::optional<std::uint64_t> dict_version;
    ArgFlags lists{};  // the names whose values were lists
  };
  // Leaked at exit like the names: destroying Python objects after the interpreter is unsafe.
  static std::shared_ptr<Record>& latest = *new std::shared_ptr<Record>();
  const std::shared_ptr<Record> previous = latest;
  const std::vector<py::str>& names = python_arg_names();
  const std::optional<std::uint64_t> version = dict ? dict_version(dict) : std::nullopt;
  if (previous && version && previous->dict.is(dict) && previous->dict_version == version) {
    std::size_t i = 0;
    while (i < kArgCount && (!previous->lists[i] || unchanged(lookup(names[i]), previous->values[i]))) ++i;
    if (i == kArgCount) return previous->model;
  }
  std::array<py::object, kArgCount> values;  // this call's
  constexpr Py_ssize_t kItemsPerName = 2;
  if (!dict || PyDict_GET_SIZE(dict.ptr()) > kItemsPerName * static_cast<Py_ssize_t>(names.size()) ||
      !read_interned_items(dict, values)) {
    for (std::size_t i = 0; i < names.size(); ++i) values[i] = lookup(names[i]);
  }
  ArgIndices changed;
  for (std::size_t i = 0; i < kArgCount; ++i) {
    if (!previous || (values[i].ptr() != previous->values[i].ptr() && !unchanged(values[i], previous->values[i]))) {
      changed.push_back(i);
    }
  }
  if (changed.empty()) return previous->model;
  if (std::none_of(values.begin(), values.end(), [](const py::object& value) { return bool(value); })) return nullptr;

  // The arguments of unchanged values are the previous call's.
  static const MegatronArgs kUnset;
  auto args = std::make_shared<MegatronArgs>(previous ? *previous->args : kUnset);
  if (!read_plain_args(values, changed, *args)) {
    static const std::vector<std::string> fields = [] {
      std::vector<std::string> all;
      for (const std::string& name : megatron_arg_names()) all.push_back("args." + name);
      return all;
    }();
    std::vector<nlohmann::json> converted(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (values[i]) converted[i] = json_from(values[i], fields[i]);
    }
    *args = value_or_throw(megatron_args_from_values(converted));
  }
  std::shared_ptr<const MegatronArgs> converted = std::move(args);
  std::shared_ptr<PyModel> model = from_recent_args(converted);
  ArgFlags lists{};
  for (const std::size_t i : changed.all()) {
    lists[i] = values[i] && PyList_Check(values[i].ptr());
    values[i] = snapshot(values[i]);  // may run Python code: before the record changes
  }

  // This call's record: the previous one changed in place, or a copy of it.
  // Unchanged values keep the previous call's objects, lists their tuples.
  std::shared_ptr<Record> replaced;  // released on return, as are the values and model replaced
  if (!previous || latest != previous || previous.use_count() != 2) {  // held by another call (or none yet)
    auto copy = std::make_shared<Record>();
    if (previous) {
      copy->values = previous->values;
      copy->lists = previous->lists;
    }
    replaced = std::exchange(latest, std::move(copy));
  }
  Record& record = *latest;
  for (const std::size_t i : changed.all()) {
    std::swap(record.values[i], values[i]);
    record.lists[i] = lists[i];
  }
  record.args.swap(converted);
  record.model.swap(model);
  py::object dict_now = py::reinterpret_borrow<py::object>(dict);
  std::swap(record.dict, dict_now);
  record.dict_version = version;
  return record.model;
}

// A JSON file of Megatron-LM arguments or a trainflops config (an object with "layers").
std::shared_ptr<PyModel> from_file(const std::string& path) {
  const std::string text = value_or_throw(read_input_file(path, kMaxConfigFileBytes));
  const Result<nlohmann::json> object = parse_json<nlohmann::json>(text, JsonComments::kAllowed);
  ModelInput input;
  if (!object.ok() || !object.value().is_object() || object.value().contains("layers")) {
    input.config_file = path;  // its errors name the path and the field
  } else {
    input.args_file = path;
  }
  return from_input(input);
}

std::shared_ptr<PyModel> from_flags(py::handle words, bool allow_unknown_flags) {
  ModelInput input;
  input.allow_unknown_flags = allow_unknown_flags;
  input.megatron_flags.emplace();
  for (py::handle word : words) input.megatron_flags->push_back(word.cast<std::string>());
  return from_input(input);
}

bool all_strings(py::handle sequence) {
  for (py::handle item : sequence) {
    if (!PyUnicode_Check(item.ptr())) return false;
  }
  return true;
}

// An argparse.Namespace or types.SimpleNamespace (not a subclass, which could
// define attributes outside __dict__).
bool is_plain_namespace(py::handle spec) {
  static const py::handle argparse_namespace = py::object(py::module_::import("argparse").attr("Namespace")).release();
  static const py::handle simple_namespace = py::object(py::module_::import("types").attr("SimpleNamespace")).release();
  const py::handle type = py::type::handle_of(spec);
  return type.is(argparse_namespace) || type.is(simple_namespace);
}

const char kAcceptedModels[] =
    ": give Megatron-LM arguments (an argparse.Namespace or a dict), Megatron-LM flags (a list of strings), a "
    "trainflops config (a dict with \"layers\"), the path of a JSON file holding either, or a trainflops.Model";

// A trainflops.Model (or a subclass), seen from its type's bases alone: the
// drop-in asks on every call.
bool is_model(py::handle spec) {
  static PyTypeObject* const model_type = reinterpret_cast<PyTypeObject*>(py::type::of<PyModel>().ptr());
  return PyType_IsSubtype(Py_TYPE(spec.ptr()), model_type);
}

}  // namespace

const FlopsCounter& PyModel::counter(Mode mode) const {
  auto found = counters.find(mode);
  if (found == counters.end()) {
    found = counters.emplace(mode, value_or_throw(FlopsCounter::create(model, mode))).first;
  }
  return found->second;
}

const Result<ModelParameters>& PyModel::parameter_totals() const {
  if (!parameters) parameters = count_parameter_totals(model);
  return *parameters;
}

double PyModel::megatron_total(const Workload& workload) const {
  if (counters.contains(Mode::kMegatron) || std::exchange(counted_in_megatron_mode, true)) {
    return value_or_throw(counter(Mode::kMegatron).total(workload)).value;
  }
  return value_or_throw(megatron_total_of_valid_model(model, workload)).value;  // every PyModel's is validated
}

std::shared_ptr<PyModel> load_model(py::handle spec, bool allow_unknown_flags) {
  if (is_model(spec)) return spec.cast<std::shared_ptr<PyModel>>();
  // A namespace first: it is what the drop-in gets on every call, and asking it for
  // __fspath__ costs an AttributeError.
  if (!is_plain_namespace(spec) && (PyUnicode_Check(spec.ptr()) || py::hasattr(spec, "__fspath__"))) {
    return from_file(py::module_::import("os").attr("fspath")(spec).cast<std::string>());
  }
  if (PyDict_Check(spec.ptr())) {
    const py::dict dict = py::reinterpret_borrow<py::dict>(spec);
    if (dict.contains("layers")) {
      ModelInput input;
      input.config_json = json_from(dict, "config").dump();
      return from_input(input);
    }
    auto result = from_named_values(
        [&](const py::str& name) {
          return py::reinterpret_borrow<py::object>(PyDict_GetItemWithError(dict.ptr(), name.ptr()));
        },
        dict);
    if (result) return result;
  } else if (PyList_Check(spec.ptr()) || PyTuple_Check(spec.ptr())) {
    if (py::len(spec) > 0 && all_strings(spec)) return from_flags(spec, allow_unknown_flags);
  } else if (is_plain_namespace(spec)) {
    // Every attribute is in __dict__: reading it spares an AttributeError per
    // absent name. Taken from the instance, without asking the type for __dict__.
    PyObject* const dict = PyObject_GenericGetDict(spec.ptr(), nullptr);
    if (!dict) throw py::error_already_set();
    const py::dict attributes = py::reinterpret_steal<py::dict>(dict);
    auto result = from_named_values(
        [&](const py::str& name) {
          return py::reinterpret_borrow<py::object>(PyDict_GetItemWithError(attributes.ptr(), name.ptr()));
        },
        attributes);
    if (result) return result;
  } else if (!PyLong_Check(spec.ptr()) && !PyFloat_Check(spec.ptr()) && spec.ptr() != Py_None) {
    auto result = from_named_values([&](const py::str& name) {
      PyObject* value = PyObject_GetAttr(spec.ptr(), name.ptr());
      if (!value) PyErr_Clear();  // absent: None, as in a namespace from before the argument existed
      return py::reinterpret_steal<py::object>(value);
    });
    if (result) return result;
  }
  throw ErrorException("model = " + python_repr(spec) + kAcceptedModels);
}

std::shared_ptr<PyModel> with_dsa_indexer_grad_mode(std::shared_ptr<PyModel> model, py::handle grad_mode) {
  if (grad_mode.is_none()) return model;
  if (!py::isinstance<py::str>(grad_mode)) {
    throw ErrorException("dsa_indexer_grad_mode = " + python_repr(grad_mode) + ": must be a str or None");
  }
  auto copy = std::make_shared<PyModel>();
  copy->model = model->model;
  copy->seq_length = model->seq_length;
  copy->global_batch_size = model->global_batch_size;
  copy->ignored = model->ignored;
  copy->assumed = model->assumed;
  throw_if_error(apply_dsa_indexer_grad_mode(copy->model, grad_mode.cast<std::string>()));
  return copy;
}

std::shared_ptr<PyModel> model_from(py::handle spec, py::handle preset, py::handle hf, py::handle grad_mode,
                                    bool strict, bool allow_unknown_flags) {
  const int given = !spec.is_none() + !preset.is_none() + !hf.is_none();
  if (given != 1) {
    ModelInput none_or_several;  // the library words this error as for every front end
    if (given > 1) none_or_several.preset = none_or_several.hf_config = "";
    value_or_throw(resolve_model(none_or_several));
  }
  if (!spec.is_none()) return with_dsa_indexer_grad_mode(load_model(spec, allow_unknown_flags), grad_mode);
  ModelInput input;
  if (!preset.is_none()) {
    if (!PyUnicode_Check(preset.ptr())) throw ErrorException("preset = " + python_repr(preset) + ": must be a str");
    input.preset = preset.cast<std::string>();
  } else {
    input.hf_config = py::module_::import("os").attr("fspath")(hf).cast<std::string>();
  }
  if (!grad_mode.is_none()) {
    if (!PyUnicode_Check(grad_mode.ptr())) {
      throw ErrorException("dsa_indexer_grad_mode = " + python_repr(grad_mode) + ": must be a str or None");
    }
    input.dsa_indexer_grad_mode = grad_mode.cast<std::string>();
  }
  input.strict = strict;
  return from_input(input);
}

void bind_model(py::module_& module) {
  py::class_<PyModel, std::shared_ptr<PyModel>>(module, "Model", R"(A validated model description.

Model(spec) reads any form count() accepts: Megatron-LM arguments (an
argparse.Namespace or a dict), Megatron-LM flags (a list of strings), a
trainflops config (a dict with "layers"), or the path of a JSON file holding
arguments or a config. Passing a Model to count(), SeqStats() or
megatron.num_floating_point_operations() skips parsing and reuses the
counters it has built.

Model(preset="glm-5") is a built-in model (trainflops presets lists them),
Model(hf="config.json") a Hugging Face config.json or the directory that
holds it; exactly one of spec, preset and hf. A field of the config that
trainflops does not know is a UserWarning, or with strict=True an error.
A Megatron-LM flag its parser does not accept is an error, or with
allow_unknown_flags=True a UserWarning (the model is counted without it).

dsa_indexer_grad_mode ("off", "detached", "sparse" or "full") sets how every
DSA indexer trains, overriding what the source says.)")
      .def(py::init(&model_from), py::arg("spec") = py::none(), py::kw_only(), py::arg("preset") = py::none(),
           py::arg("hf") = py::none(), py::arg("dsa_indexer_grad_mode") = py::none(), py::arg("strict") = false,
           py::arg("allow_unknown_flags") = false)
      .def_property_readonly(
          "summary", [](const PyModel& self) { return summarize(self.model); },
          "One line: layers by kind, hidden size, vocabulary.")
      .def_property_readonly(
          "seq_length", [](const PyModel& self) { return self.seq_length; },
          "seq_length of the Megatron-LM arguments or flags or of the preset, else None.")
      .def_property_readonly(
          "global_batch_size", [](const PyModel& self) { return self.global_batch_size; },
          "--global-batch-size of Megatron-LM flags, else None.")
      .def_property_readonly(
          "ignored", [](const PyModel& self) { return self.ignored; },
          "Inputs read from a file or flags that do not change FLOPs.")
      .def_property_readonly(
          "assumed", [](const PyModel& self) { return self.assumed; },
          "Values a Hugging Face config leaves out that the import filled in, one sentence each.")
      .def("__repr__", [](const PyModel& self) { return "<trainflops.Model " + summarize(self.model) + ">"; });
  module.def("megatron_arg_names", &megatron_arg_names,
             "The names of the Megatron-LM arguments trainflops reads, in order.");
}

}  // namespace trainflops::python
