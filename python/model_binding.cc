#include "model_binding.h"

#include <pybind11/stl.h>

#include <utility>

#include "base/input_file.h"
#include "base/json_text.h"
#include "convert.h"
#include "inputs/megatron_args_json.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"
#include "trainflops/model_input.h"

namespace trainflops::python {
namespace {

// A model the library resolved (model_input.h); its warnings go to Python's.
std::shared_ptr<PyModel> from_input(const ModelInput& input) {
  ResolvedModel resolved = value_or_throw(resolve_model(input));
  for (const std::string& warning : resolved.warnings) {
    if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
  }
  auto result = std::make_shared<PyModel>();
  result->model = std::move(resolved.model);
  result->megatron_model = std::move(resolved.megatron_model);
  result->seq_length = resolved.seq_length;
  result->global_batch_size = resolved.global_batch_size;
  result->ignored = std::move(resolved.ignored);
  result->assumed = std::move(resolved.assumed);
  return result;
}

// Megatron-LM arguments by name, as trainflops.count() reads them: each value
// as JSON, by the rules of an arguments file. `lookup` returns the value of a
// name, or a null object when it is absent (None).
template <typename Lookup>
std::shared_ptr<PyModel> from_named_values(Lookup lookup) {
  std::vector<nlohmann::json> values;
  bool any = false;
  MegatronArgs names;
  std::size_t i = 0;
  for_each_megatron_arg(names, [&](std::string_view name, auto&) {
    const py::object value = lookup(python_arg_names()[i++]);
    any |= bool(value);
    values.push_back(value ? json_from(value, "args." + std::string(name)) : nlohmann::json());
  });
  if (!any) return nullptr;
  return model_of_megatron_args(value_or_throw(megatron_args_from_values(values)));
}

std::shared_ptr<PyModel> from_file(const std::string& path) {
  const std::string text = value_or_throw(read_input_file(path, kMaxConfigFileBytes));
  const Result<nlohmann::json> object = parse_json<nlohmann::json>(text, JsonComments::kAllowed);
  if (!object.ok() || !object.value().is_object() || object.value().contains("layers")) {
    ModelInput config;
    config.config_file = path;  // its errors name the path and the field
    return from_input(config);
  }
  Result<ParsedMegatronArgs> parsed = megatron_args_from_json(object.value());
  if (!parsed.ok()) throw ErrorException(parsed.error().context(path).message());
  ModelInput input;
  input.megatron_args = std::move(parsed.value().args);
  std::shared_ptr<PyModel> model = from_input(input);
  model->ignored = std::move(parsed.value().ignored);
  return model;
}

std::shared_ptr<PyModel> from_flags(py::handle words, bool allow_unknown_flags) {
  ModelInput input;
  input.allow_unknown_flags = allow_unknown_flags;
  input.megatron_flags.emplace();
  for (py::handle word : words) {
    input.megatron_flags->push_back(text_from(word, "model[" + std::to_string(input.megatron_flags->size()) + "]"));
  }
  return from_input(input);
}

bool all_strings(py::handle sequence) {
  for (py::handle item : sequence) {
    if (!PyUnicode_Check(item.ptr())) return false;
  }
  return true;
}

const char kAcceptedModels[] =
    ": give Megatron-LM arguments (an argparse.Namespace or a dict), Megatron-LM flags (a list of strings), a "
    "trainflops config (a dict with \"layers\"), the path of a JSON file holding either, or a trainflops.Model";

}  // namespace

const std::vector<py::str>& python_arg_names() {
  static const auto* names = [] {
    auto* all = new std::vector<py::str>();  // never freed: destroying it after the interpreter is unsafe
    MegatronArgs args;
    for_each_megatron_arg(args, [&](std::string_view name, auto&) { all->emplace_back(std::string(name)); });
    return all;
  }();
  return *names;
}

const FlopsCounter& PyModel::counter(Mode mode) const {
  auto found = counters.find(mode);
  if (found == counters.end()) {
    const Model* counted = &model;
    if (mode == Mode::kMegatron && megatron_model) {
      if (!megatron_model->ok()) throw ErrorException(megatron_model->error());
      counted = &megatron_model->value();
    }
    found = counters.emplace(mode, value_or_throw(FlopsCounter::create(*counted, mode))).first;
  }
  return found->second;
}

const Result<ModelParameters>& PyModel::parameter_totals() const {
  if (!parameters) parameters = count_parameter_totals(model);
  return *parameters;
}

std::shared_ptr<PyModel> model_of_megatron_args(const MegatronArgs& args, MegatronBranch branch) {
  // The last few distinct argument sets: building a model and its counter
  // costs far more than reading the arguments.
  constexpr std::size_t kRecent = 8;
  struct Entry {
    MegatronArgs args;
    MegatronBranch branch;
    std::shared_ptr<PyModel> model;
  };
  static auto* recent = new std::vector<Entry>();  // never freed, as python_arg_names()
  for (const Entry& entry : *recent) {
    if (entry.branch == branch && entry.args == args) return entry.model;
  }
  ModelInput input;
  input.megatron_args = args;
  input.megatron_parity = true;  // as Megatron-LM's training loop passes them to its function
  input.megatron_branch = std::string(megatron_branch_name(branch));
  std::shared_ptr<PyModel> model = from_input(input);
  if (recent->size() == kRecent) recent->erase(recent->begin());
  recent->push_back({args, branch, model});
  return model;
}

bool is_model(py::handle spec) {
  static PyTypeObject* const model_type = reinterpret_cast<PyTypeObject*>(py::type::of<PyModel>().ptr());
  return PyType_IsSubtype(Py_TYPE(spec.ptr()), model_type);
}

std::shared_ptr<PyModel> load_model(py::handle spec, bool allow_unknown_flags) {
  if (is_model(spec)) return spec.cast<std::shared_ptr<PyModel>>();
  if (PyUnicode_Check(spec.ptr()) || py::hasattr(spec, "__fspath__")) {
    return from_file(path_from(spec, "model"));
  }
  if (PyDict_Check(spec.ptr())) {
    const py::dict dict = py::reinterpret_borrow<py::dict>(spec);
    if (dict.contains("layers")) {
      ModelInput config;
      config.config_json = json_from(dict, "config").dump();
      return from_input(config);
    }
    auto result = from_named_values([&](const py::str& name) {
      PyObject* value = PyDict_GetItemWithError(dict.ptr(), name.ptr());
      if (!value && PyErr_Occurred()) throw py::error_already_set();
      return py::reinterpret_borrow<py::object>(value);
    });
    if (result) return result;
  } else if (PyList_Check(spec.ptr()) || PyTuple_Check(spec.ptr())) {
    if (py::len(spec) > 0 && all_strings(spec)) return from_flags(spec, allow_unknown_flags);
  } else if (!PyLong_Check(spec.ptr()) && !PyFloat_Check(spec.ptr()) && spec.ptr() != Py_None) {
    auto result = from_named_values([&](const py::str& name) {
      PyObject* value = PyObject_GetAttr(spec.ptr(), name.ptr());
      if (!value) {  // absent: None, as in a namespace from before the argument existed
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
        PyErr_Clear();
      }
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
  copy->megatron_model = model->megatron_model;
  copy->seq_length = model->seq_length;
  copy->global_batch_size = model->global_batch_size;
  copy->ignored = model->ignored;
  copy->assumed = model->assumed;
  const std::string mode = text_from(grad_mode, "dsa_indexer_grad_mode");
  throw_if_error(apply_dsa_indexer_grad_mode(copy->model, mode));
  if (copy->megatron_model && copy->megatron_model->ok()) {
    const Status applied = apply_dsa_indexer_grad_mode(copy->megatron_model->value(), mode);
    if (!applied.ok()) copy->megatron_model = applied.error();
  }
  return copy;
}

std::shared_ptr<PyModel> model_from(py::handle spec, py::handle preset, py::handle hf, py::handle grad_mode,
                                    py::handle strict_flag, py::handle allow_unknown_flags_flag) {
  const bool strict = bool_from(strict_flag, "strict");
  const bool allow_unknown_flags = bool_from(allow_unknown_flags_flag, "allow_unknown_flags");
  const int given = !spec.is_none() + !preset.is_none() + !hf.is_none();
  if (given != 1) {
    ModelInput none_or_several;  // the library words this error as for every front end
    if (given > 1) none_or_several.preset = none_or_several.hf_config = "";
    value_or_throw(resolve_model(none_or_several));
  }
  if (!spec.is_none()) return with_dsa_indexer_grad_mode(load_model(spec, allow_unknown_flags), grad_mode);
  ModelInput input;
  if (!preset.is_none()) {
    input.preset = text_from(preset, "preset");
  } else {
    input.hf_config = path_from(hf, "hf");
  }
  if (!grad_mode.is_none()) {
    if (!PyUnicode_Check(grad_mode.ptr())) {
      throw ErrorException("dsa_indexer_grad_mode = " + python_repr(grad_mode) + ": must be a str or None");
    }
    input.dsa_indexer_grad_mode = text_from(grad_mode, "dsa_indexer_grad_mode");
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
}

}  // namespace trainflops::python
