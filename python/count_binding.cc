// trainflops.count() and its Report.
#include <pybind11/stl.h>


#include "bindings.h"
#include "convert.h"
#include "model_binding.h"
#include "trainflops/render.h"
#include "trainflops/workload_input.h"

namespace trainflops::python {
namespace {

Workload workload_from(const PyModel& model, py::handle batch_size, py::handle seq_length, py::handle docs,
                       py::handle cu_seqlens, py::handle total_real_tokens, py::handle seqlen_squared_sum) {
  WorkloadInput input;
  if (!batch_size.is_none()) input.batch_size = int64_from(batch_size, "batch_size");
  if (!seq_length.is_none()) input.seq_length = int64_from(seq_length, "seq_length");
  if (!docs.is_none()) input.docs = int64_vector_from(docs, "docs");
  if (!cu_seqlens.is_none()) input.cu_seqlens = int64_vector_from(cu_seqlens, "cu_seqlens");
  if (!total_real_tokens.is_none()) input.total_real_tokens = int128_from(total_real_tokens, "total_real_tokens");
  if (!seqlen_squared_sum.is_none()) input.seqlen_squared_sum = int128_from(seqlen_squared_sum, "seqlen_squared_sum");
  ResolvedModel source;  // only what the source says about the workload is read
  source.global_batch_size = model.global_batch_size;
  source.seq_length = model.seq_length;
  return value_or_throw(resolve_workload(input, source));
}

Report count(py::handle model_spec, py::handle preset, py::handle hf, py::handle mode_text, py::handle recompute_text,
             py::handle batch_size, py::handle seq_length, py::handle docs, py::handle cu_seqlens,
             py::handle total_real_tokens, py::handle seqlen_squared_sum, py::handle grad_mode, py::handle strict,
             py::handle allow_unknown_flags) {
  const Mode mode = value_or_throw(parse_mode(text_from(mode_text, "mode")));
  const Recompute recompute = value_or_throw(parse_recompute(text_from(recompute_text, "recompute")));
  const std::shared_ptr<PyModel> model = model_from(model_spec, preset, hf, grad_mode, strict, allow_unknown_flags);
  // An array of offsets alone is counted in place, in one pass: a training loop may pass millions.
  const bool offsets_alone = !cu_seqlens.is_none() && batch_size.is_none() && seq_length.is_none() && docs.is_none() &&
                             total_real_tokens.is_none() && seqlen_squared_sum.is_none();
  // Read before the counter is prepared, so that a bad workload is named first, as trainflops::count() names it.
  const py::object offsets = offsets_alone ? without_tensor(cu_seqlens, "cu_seqlens") : py::object();
  std::optional<Workload> workload;
  if (!offsets_alone) {
    workload = workload_from(*model, batch_size, seq_length, docs, cu_seqlens, total_real_tokens, seqlen_squared_sum);
  }
  // The model's own counter unless recomputation is asked for: a loop counts many batches of one model.
  std::optional<FlopsCounter> own;
  if (recompute != Recompute::kNone) own = value_or_throw(FlopsCounter::create(model->model, mode, recompute));
  const FlopsCounter& counter = own ? *own : model->counter(mode);
  // Megatron mode lists what it leaves out, counted per distinct document length.
  DocumentsByLength documents;
  const auto add_documents = [&](auto offsets_span) {
    if (mode != Mode::kMegatron) return;
    for (std::size_t i = 1; i < offsets_span.size(); ++i) ++documents[offsets_span[i] - offsets_span[i - 1]];
  };
  const auto counted = [&]() -> Result<Report> {
    if (workload) return counter.report(*workload);
    if (const std::optional<IntegerView> view = contiguous_integers(offsets)) {
      return std::visit(
          [&](auto values) {
            Result<Report> report = counter.report_cu_seqlens(values);
            if (report.ok()) add_documents(values);
            return report;
          },
          view->values);
    }
    // Anything else (a list) is converted once: the only copy the count makes.
    const std::vector<std::int64_t> converted = int64_vector_from(offsets, "cu_seqlens");
    Result<Report> report = counter.report_cu_seqlens(std::span<const std::int64_t>(converted));
    if (report.ok()) add_documents(std::span<const std::int64_t>(converted));
    return report;
  };
  Report report = value_or_throw(counted());
  add_parameter_summary(model->parameter_totals(), report);
  if (workload) {
    throw_if_error(add_megatron_omissions(model->model, *workload, report));
  } else {
    throw_if_error(add_megatron_omissions(model->model, documents, report));
  }
  return report;
}

py::dict breakdown(const std::vector<ComponentFlops>& components) {
  py::dict parts;
  for (const ComponentFlops& part : components) parts[py::str(component_name(part.component))] = to_python(part.flops);
  return parts;
}

}  // namespace

void bind_count(py::module_& module) {
  py::class_<LayerFlops>(module, "Layer", "One row of the per-layer breakdown.")
      .def_readonly("name", &LayerFlops::name, "\"decoder.1\" (1-based), \"mtp1.1\", \"mtp1.projection\", \"logits\".")
      .def_readonly("kind", &LayerFlops::kind, "\"mla+moe\", \"gqa+mlp\", \"projection\", \"logits\", ...")
      .def_property_readonly(
          "flops", [](const LayerFlops& self) { return to_python(self.flops); },
          "FLOPs of the layer: an int in exact modes, else a float.")
      .def_property_readonly(
          "breakdown", [](const LayerFlops& self) { return breakdown(self.components); },
          "{component: FLOPs}, non-zero components only.")
      .def("__repr__", [](const LayerFlops& self) {
        return "<trainflops.Layer " + self.name + " " + self.kind + ": " + format_flops(self.flops.value) + " FLOPs>";
      });

  py::class_<Report>(module, "Report", R"(The FLOPs of one training iteration with their breakdown.

total, breakdown and the layers' flops are ints (exact) in the exact modes
and floats in megatron mode; the parts sum to the total (exactly in the exact
modes). str(report) is the table `trainflops count` prints.)")
      .def_property_readonly("mode", [](const Report& self) { return std::string(mode_name(self.mode)); })
      .def_property_readonly(
          "recompute", [](const Report& self) { return std::string(recompute_name(self.recompute)); },
          "Executed mode: the recomputation counted (none, selective, full).")
      .def_readonly("model", &Report::model, "One-line summary of the model.")
      .def_readonly("workload", &Report::workload, "One-line description of the workload.")
      .def_property_readonly(
          "total", [](const Report& self) { return to_python(self.total); },
          "FLOPs of one iteration (forward and backward over the global batch).")
      .def_property_readonly(
          "model_total",
          [](const Report& self) { return self.model_total ? to_python(*self.model_total) : py::none(); },
          "Executed mode: the model-mode total beside the executed one (MFU's numerator; total is HFU's); else None.")
      .def_property_readonly(
          "tokens", [](const Report& self) { return to_python(self.tokens); }, "Tokens in the global batch.")
      .def_readonly("per_token", &Report::per_token, "total / tokens, a float.")
      .def_property_readonly(
          "parameters",
          [](const Report& self) -> py::object {
            if (!self.parameters) return py::none();
            py::dict parameters;
            parameters["total"] = to_python(self.parameters->total);
            parameters["active"] = to_python(self.parameters->active);
            parameters["embedding"] = to_python(self.parameters->embedding);
            parameters["costing_flops"] = to_python(self.parameters->costing_flops);
            parameters["not_costing_flops"] = to_python(self.parameters->not_costing_flops);
            parameters["six_n_d"] = to_python(self.parameters->six_n_d);
            return parameters;
          },
          "{total, active, embedding, costing_flops, not_costing_flops, six_n_d} as ints: every parameter, those one "
          "token uses (N), the embedding table, the parameters of products model mode counts and the rest (tables, "
          "routers, norms, biases), and 6 x N x tokens; None when an MoE layer lacks num_experts.")
      .def_property_readonly(
          "breakdown", [](const Report& self) { return breakdown(self.components); },
          "{component: FLOPs}, non-zero components only, in a fixed order.")
      .def_readonly("layers", &Report::layers, "The per-layer breakdown, a list of Layer.")
      .def_property_readonly(
          "megatron_omissions",
          [](const Report& self) {
            py::list out;
            for (const MegatronOmission& omission : self.megatron_omissions) {
              py::dict row;
              row["convention"] = std::string(convention_name(omission.kind));
              row["title"] = std::string(convention_title(omission.kind));
              row["choice"] = omission.choice;
              row["flops"] = omission.flops ? py::object(to_python(*omission.flops)) : py::object(py::none());
              out.append(row);
            }
            return out;
          },
          "Megatron mode: what it leaves out of the model, or charges otherwise, as Megatron-LM's function does; "
          "each a dict {convention, title, choice, flops}: compare's convention, megatron mode's choice, and model "
          "mode's count with that choice alone minus its own, an int (None when the batch gives only "
          "total_real_tokens and seqlen_squared_sum). Empty in the exact modes.")
      .def(
          "render",
          [](const Report& self, py::handle format, py::handle layers) {
            return render(self, value_or_throw(parse_format(text_from(format, "format"))),
                          value_or_throw(parse_layer_rows(text_from(layers, "layers"))));
          },
          py::arg("format") = "table", py::arg("layers") = "kinds",
          "The report as `trainflops count --format --layers` prints it: table, json or csv; the table's layer "
          "lines by kind (kinds), per layer (all) or none.")
      .def("__str__", [](const Report& self) { return render(self, Format::kTable); })
      .def("__repr__", [](const Report& self) {
        return "<trainflops.Report " + std::string(mode_name(self.mode)) + " mode: " + format_flops(self.total.value) +
               " FLOPs, " + self.workload + ">";
      });

  module.def("count", &count, py::arg("model"), py::arg("preset"), py::arg("hf"), py::arg("mode"), py::arg("recompute"),
             py::arg("batch_size"), py::arg("seq_length"), py::arg("docs"), py::arg("cu_seqlens"),
             py::arg("total_real_tokens"), py::arg("seqlen_squared_sum"), py::arg("dsa_indexer_grad_mode"),
             py::arg("strict"), py::arg("allow_unknown_flags"), "See trainflops.count.");
}

}  // namespace trainflops::python
