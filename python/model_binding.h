// trainflops.Model: a validated model with what its source says about the
// workload, and its counters, built once per mode and reused.
#ifndef TRAINFLOPS_PYTHON_MODEL_BINDING_H_
#define TRAINFLOPS_PYTHON_MODEL_BINDING_H_

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainflops/count.h"
#include "trainflops/megatron_args.h"
#include "trainflops/model.h"
#include "trainflops/parameters.h"

namespace trainflops::python {

namespace py = pybind11;

struct PyModel {
  Model model;
  // What megatron mode counts instead, or why it cannot (ResolvedModel::megatron_model).
  std::optional<Result<Model>> megatron_model;
  std::optional<std::int64_t> seq_length, global_batch_size;  // from Megatron-LM args or flags
  std::vector<std::string> ignored;                           // inputs that do not change FLOPs
  std::vector<std::string> assumed;                           // values a Hugging Face config leaves out, filled in
  mutable std::map<Mode, FlopsCounter> counters;
  mutable std::optional<Result<ModelParameters>> parameters;

  // The counter for `mode`, created on first use: of megatron_model in
  // megatron mode when it is set (its error raised), else of model.
  const FlopsCounter& counter(Mode mode) const;
  // count_parameter_totals(model), counted on first use: what every report's
  // parameter summary reads.
  const Result<ModelParameters>& parameter_totals() const;
};

// The model of Megatron-LM arguments, resolved as every front end resolves
// them (resolve_model); the models of the last few distinct argument sets are
// kept, with their counters.
std::shared_ptr<PyModel> model_of_megatron_args(const MegatronArgs& args,
                                                MegatronBranch branch = MegatronBranch::kMain);

// Whether `spec` is a trainflops.Model (or a subclass).
bool is_model(py::handle spec);

// The names of the Megatron-LM arguments trainflops reads, as Python strings,
// in for_each_megatron_arg()'s order.
const std::vector<py::str>& python_arg_names();

// A model from any of the forms the module accepts:
//  - a trainflops.Model (returned as is, with its counters);
//  - a path (str or os.PathLike) to a JSON file: a trainflops config when the
//    object has a "layers" key, else Megatron-LM arguments (as for --args);
//  - a dict: a trainflops config when it has a "layers" key, else
//    Megatron-LM arguments by name (only the names trainflops reads are
//    looked at; a missing name is None);
//  - a list of strings: Megatron-LM command-line flags;
//  - any other object, e.g. an argparse.Namespace: Megatron-LM arguments read
//    as attributes (getattr only; a missing attribute is None).
// With `allow_unknown_flags`, a flag Megatron-LM's parser does not accept is a
// UserWarning, and the model is counted without it (else an error).
std::shared_ptr<PyModel> load_model(py::handle spec, bool allow_unknown_flags = false);

// `model` as it is when `grad_mode` is None, else a copy whose DSA indexers
// all train that way ("off", "detached", "sparse", "full").
std::shared_ptr<PyModel> with_dsa_indexer_grad_mode(std::shared_ptr<PyModel> model, py::handle grad_mode);

// The model of count()'s and Model()'s arguments: exactly one of `spec` (any
// form load_model() takes), `preset` (a built-in model's name) and `hf` (a
// Hugging Face config.json or its directory), resolved as the command line
// resolves --preset and --hf (model_input.h); its DSA indexers trained as
// `grad_mode` says unless it is None; with `strict`, a Hugging Face field
// trainflops does not know is an error (else a UserWarning);
// `allow_unknown_flags` as for load_model(); both True or False.
std::shared_ptr<PyModel> model_from(py::handle spec, py::handle preset, py::handle hf, py::handle grad_mode,
                                    py::handle strict, py::handle allow_unknown_flags);

void bind_model(py::module_& module);

}  // namespace trainflops::python

#endif  // TRAINFLOPS_PYTHON_MODEL_BINDING_H_
