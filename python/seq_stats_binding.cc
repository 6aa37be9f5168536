// trainflops.SeqStats: exact packed-sequence statistics that merge across
// data-parallel ranks by summing one small int64 vector (all_reduce(SUM)).
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert.h"
#include "model_binding.h"
#include "trainflops/seq_stats.h"

namespace trainflops::python {

void bind_seq_stats(py::module_& module) {
  py::class_<SeqStats>(module, "SeqStats", R"(Exact per-document statistics of a packed global batch.

Each data-parallel rank adds the documents it trains on; vector() is a small
fixed-size list of int64 whose elementwise sum over the ranks (one
all_reduce(SUM)) is the state of the whole global batch. set_vector() loads
the sum, and flops() gives the exact model-mode FLOPs of the iteration.)")
      .def(py::init([](py::handle model, py::handle preset, py::handle hf, py::handle grad_mode, py::handle strict,
                       py::handle allow_unknown_flags) {
             return value_or_throw(
                 SeqStats::create(model_from(model, preset, hf, grad_mode, strict, allow_unknown_flags)->model));
           }),
           py::arg("model") = py::none(), py::kw_only(), py::arg("preset") = py::none(), py::arg("hf") = py::none(),
           py::arg("dsa_indexer_grad_mode") = py::none(), py::arg("strict") = false,
           py::arg("allow_unknown_flags") = false,
           "The model as count() takes it: model, or preset or hf, with the same options.")
      .def(
          "add_cu_seqlens",
          [](SeqStats& self, py::handle cu_seqlens) {
            // Arrays of int32 or int64 are read in place: this runs every
            // iteration, over up to millions of documents.
            const py::object source = without_tensor(cu_seqlens, "cu_seqlens");
            if (const std::optional<IntegerView> view = contiguous_integers(source)) {
              throw_if_error(std::visit([&](auto values) { return self.add_cu_seqlens(values); }, view->values));
              return;
            }
            throw_if_error(self.add_cu_seqlens(int64_vector_from(source, "cu_seqlens")));
          },
          py::arg("cu_seqlens"),
          "Adds the documents of cumulative offsets (0 first, non-decreasing): a list, a NumPy array or a CPU "
          "torch tensor of integers. On error nothing is added.")
      .def(
          "_moment_spec",
          [](const SeqStats& self) {
            const SeqStats::MomentSpec spec = self.moment_spec();
            return py::make_tuple(spec.thresholds, spec.pools);
          },
          "(thresholds, pools): what add_moments() sums per document (trainflops/seq_stats.h).")
      .def(
          "_add_moments",
          [](SeqStats& self, const py::list& moments) {
            std::vector<Int128> values;
            for (const py::handle moment : moments) values.push_back(int128_from(moment, "moments"));
            throw_if_error(self.add_moments(values));
          },
          py::arg("moments"), "Adds documents by their moments summed elsewhere (trainflops/seq_stats.h).")
      .def(
          "add_lengths",
          [](SeqStats& self, py::handle lengths) {
            throw_if_error(self.add_lengths(int64_vector_from(lengths, "lengths")));
          },
          py::arg("lengths"), "Adds documents by their lengths (>= 0). On error nothing is added.")
      .def("vector", &SeqStats::vector,
           "The state: a list of int64, the ranks summed, the sum of their model fingerprints, then three lanes per "
           "statistic; sum it over ranks with all_reduce(SUM).")
      .def(
          "set_vector",
          [](SeqStats& self, py::handle summed) {
            throw_if_error(self.set_vector(int64_vector_from(summed, "vector")));
          },
          py::arg("summed"), "Replaces the state with a summed vector (a list, NumPy array or CPU tensor).")
      .def(
          "reset",
          [](SeqStats& self) { throw_if_error(self.set_vector(std::vector<std::int64_t>(self.vector().size()))); },
          "Forgets every document, e.g. at the start of an iteration.")
      .def(
          "flops", [](const SeqStats& self) { return to_python(*value_or_throw(self.flops()).exact); },
          "Exact model-mode FLOPs of one iteration over the documents added or merged (an int).")
      .def(
          "tokens", [](const SeqStats& self) { return to_python(self.tokens()); }, "Tokens added or merged.")
      .def_property_readonly(
          "statistics",
          [](const SeqStats& self) {
            std::vector<std::string> names;
            for (const Statistic& statistic : self.counter().statistics()) names.push_back(statistic_name(statistic));
            return names;
          },
          "The statistics the vector holds, three lanes each, in order.")
      .def("__repr__", [](const SeqStats& self) {
        return "<trainflops.SeqStats " + to_decimal(self.tokens()) + " tokens, " +
               std::to_string(self.counter().statistics().size()) + " statistics>";
      });
}

}  // namespace trainflops::python
