// trainflops.compare(): every framework's FLOPs beside trainflops' (compare.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "model_binding.h"
#include "trainflops/render.h"

namespace trainflops::python {
namespace {

Comparison compare(py::handle model_spec, py::handle preset, py::handle hf, py::handle seq_length,
                   py::handle batch_size, py::handle grad_mode, py::handle strict, py::handle allow_unknown_flags) {
  const std::shared_ptr<PyModel> model = model_from(model_spec, preset, hf, grad_mode, strict, allow_unknown_flags);
  std::optional<std::int64_t> length = model->seq_length;
  if (!seq_length.is_none()) length = int64_from(seq_length, "seq_length");
  if (!length) throw ErrorException("seq_length is missing: give seq_length= (the model source has none)");
  // One sequence unless a batch is given, as the command line does.
  std::int64_t sequences = model->global_batch_size.value_or(1);
  if (!batch_size.is_none()) sequences = int64_from(batch_size, "batch_size");
  return value_or_throw(compare_frameworks(model->model, *length, sequences));
}

py::object differences(const FrameworkCount& self) {
  py::list out;
  for (const ConventionDifference& d : self.differences) {
    out.append(py::make_tuple(std::string(convention_name(d.kind)), d.choice, to_python(d.flops)));
  }
  return out;
}

}  // namespace

void bind_compare(py::module_& module) {
  py::class_<FrameworkCount>(module, "FrameworkCount", "One framework's FLOPs and its differences from model mode.")
      .def_property_readonly(
          "name", [](const FrameworkCount& self) { return std::string(framework_name(self.framework)); },
          "\"trainflops-model\", \"megatron-lm\", \"megatron-bridge\", \"maxtext\", \"torchtitan\", \"nemo-rl\", "
          "\"nemo-automodel\", ...")
      .def_property_readonly("title",
                             [](const FrameworkCount& self) { return std::string(framework_title(self.framework)); })
      .def_property_readonly(
          "flops",
          [](const FrameworkCount& self) { return self.flops ? to_python(*self.flops) : py::object(py::none()); },
          "The FLOPs the framework's own function gives (an int), or None when it cannot express the model.")
      .def_readonly("reason", &FrameworkCount::reason, "Why the framework cannot express the model; else empty.")
      .def_property_readonly("differences", &differences,
                             "[(convention, choice, FLOPs)]: the framework minus model mode, one convention at a "
                             "time; they sum exactly to flops - Comparison.model_flops.");

  py::class_<Comparison>(module, "Comparison", R"(Every framework's FLOPs for one model and sequence length.

str(comparison) is the table `trainflops compare` prints.)")
      .def_readonly("model", &Comparison::model)
      .def_readonly("seq_length", &Comparison::seq_length)
      .def_readonly("sequences", &Comparison::sequences, "Sequences per iteration.")
      .def_property_readonly(
          "model_flops", [](const Comparison& self) { return to_python(self.model_flops); },
          "trainflops' model-mode FLOPs (MFU's numerator), the base of every difference.")
      .def_readonly("frameworks", &Comparison::frameworks, "A FrameworkCount per framework, trainflops' first.")
      .def(
          "render",
          [](const Comparison& self, py::handle format) {
            return render_comparison(self, value_or_throw(parse_format(text_from(format, "format"))));
          },
          py::arg("format") = "table", "As `trainflops compare --format` prints it: table, json or csv.")
      .def("__str__", [](const Comparison& self) { return render_comparison(self, Format::kTable); })
      .def("__repr__", [](const Comparison& self) {
        return "<trainflops.Comparison " + self.model + ", " + std::to_string(self.sequences) + " x " +
               std::to_string(self.seq_length) + " tokens>";
      });

  module.def("compare", &compare, py::arg("model"), py::arg("preset"), py::arg("hf"), py::arg("seq_length"),
             py::arg("batch_size"), py::arg("dsa_indexer_grad_mode"), py::arg("strict"), py::arg("allow_unknown_flags"),
             "See trainflops.compare.");
}

}  // namespace trainflops::python
