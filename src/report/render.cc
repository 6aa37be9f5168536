#include "trainflops/render.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/decimal_text.h"
#include "report/columns.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

using nlohmann::ordered_json;

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string share_of(double part, double total) {
  return total > 0 ? printf_string("%5.1f%%", 100 * part / total) : "  -  ";
}

// "1.23 EFLOP" for the total line.
std::string with_unit(double flops) {
  static constexpr const char* kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP"};
  int unit = 0;
  while (flops >= 1000 && unit < 7) {
    flops /= 1000;
    ++unit;
  }
  return printf_string("%.3g ", flops) + kUnits[unit];
}

bool same_flops(const Flops& a, const Flops& b) { return a.exact ? a.exact == b.exact : a.value == b.value; }

// "decoder.4" -> ("decoder", 4); rows without a number keep index 0.
std::pair<std::string, long> split_name(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {name, 0};
  const std::string tail = name.substr(dot + 1);
  if (tail.empty() || tail.find_first_not_of("0123456789") != std::string::npos) return {name, 0};
  return {name.substr(0, dot), std::stol(tail)};
}

// Rows of the layer table: the indices of report.layers that one line shows.
struct LayerGroup {
  std::vector<std::size_t> rows;
};

// kAll: a line per layer. kKinds: a line per section ("decoder", "mtp1"),
// kind and FLOPs, in order of first appearance: interleaved models get a few
// lines, not one per run.
std::vector<LayerGroup> layer_groups(const Report& report, LayerRows layers) {
  std::vector<LayerGroup> groups;
  for (std::size_t i = 0; i < report.layers.size(); ++i) {
    const LayerFlops& layer = report.layers[i];
    auto same = groups.end();
    if (layers == LayerRows::kKinds) {
      same = std::find_if(groups.begin(), groups.end(), [&](const LayerGroup& g) {
        const LayerFlops& first = report.layers[g.rows.front()];
        return split_name(first.name).first == split_name(layer.name).first && first.kind == layer.kind &&
               same_flops(first.flops, layer.flops);
      });
    }
    if (same == groups.end()) {
      groups.push_back({{i}});
    } else {
      same->rows.push_back(i);
    }
  }
  return groups;
}

// "decoder.4-78", "decoder.1-3,5,9-12", "logits": at most 19 characters, a
// longer list cut after its last range that fits, with ",...".
std::string group_name(const Report& report, const LayerGroup& group) {
  const auto [prefix, first_number] = split_name(report.layers[group.rows.front()].name);
  if (group.rows.size() == 1 || first_number == 0) return report.layers[group.rows.front()].name;
  std::vector<std::string> ranges;
  for (std::size_t i = 0; i < group.rows.size();) {
    const long start = split_name(report.layers[group.rows[i]].name).second;
    std::size_t end = i + 1;
    while (end < group.rows.size() &&
           split_name(report.layers[group.rows[end]].name).second == start + static_cast<long>(end - i)) {
      ++end;
    }
    const long last = start + static_cast<long>(end - i) - 1;
    ranges.push_back(std::to_string(start) + (last > start ? "-" + std::to_string(last) : ""));
    i = end;
  }
  constexpr std::size_t kWidth = 19;
  std::string name = prefix + "." + ranges[0];
  for (std::size_t r = 1; r < ranges.size(); ++r) {
    const bool last = r + 1 == ranges.size();
    if (name.size() + 1 + ranges[r].size() + (last ? 0 : 4) > kWidth) return name + ",...";
    name += "," + ranges[r];
  }
  return name;
}

std::string render_table(const Report& report, LayerRows layers) {
  const double total = report.total.value;
  std::string out = "trainflops: " + std::string(mode_name(report.mode)) + " mode, one training iteration\n";
  out += "model      " + report.model + "\n";
  out += "workload   " + report.workload + "\n\n";
  if (report.model_total) {
    out += "recompute  " + std::string(recompute_name(report.recompute)) + "\n\n";
    out += "executed   " + format_flops(total) + " FLOPs  (" + with_unit(total) + ", HFU's numerator)\n";
    out += "exact      " + to_decimal(*report.total.exact) + "\n";
    const double model = report.model_total->value;
    out += "model      " + format_flops(model) + " FLOPs  (" + with_unit(model) +
           ", MFU's numerator; executed / model = " + printf_string("%.4f", total / model) + ")\n";
    out += "exact      " + to_decimal(*report.model_total->exact) + "\n";
  } else {
    out += "total      " + format_flops(total) + " FLOPs  (" + with_unit(total) + ")\n";
    if (report.total.exact) out += "exact      " + to_decimal(*report.total.exact) + "\n";
  }
  out += "per token  " + format_flops(report.per_token) + " FLOPs\n";
  if (report.parameters) {
    const ParameterSummary& p = *report.parameters;
    const double model = report.model_total ? report.model_total->value : total;
    out += "parameters " + format_parameters(p.total) + " total, " + format_parameters(p.active) +
           " active per token, " + format_parameters(p.embedding) + " embedding; " +
           format_parameters(p.costing_flops) + " in products, " + format_parameters(p.not_costing_flops) +
           " not (tables, routers, norms, biases)\n";
    out += "6 N D      " + format_flops(to_double(p.six_n_d)) + " FLOPs  (6 x active x tokens; " +
           (report.model_total ? "model" : "total") +
           " / 6 N D = " + printf_string("%.4f", model / to_double(p.six_n_d)) + ")\n";
  }
  out += "\n";

  out += pad_right("component", 26) + pad_left("FLOPs", 12) + pad_left("share", 8) + "\n";
  for (const ComponentFlops& part : report.components) {
    out += pad_right(std::string(component_name(part.component)), 26) + pad_left(format_flops(part.flops.value), 12) +
           pad_left(share_of(part.flops.value, total), 8) + "\n";
  }

  if (!report.megatron_omissions.empty()) {
    out += "\n" + pad_right("not in megatron mode's count", 36) + pad_right("megatron mode", 42) +
           pad_left("model mode", 13) + "\n";
    for (const MegatronOmission& omission : report.megatron_omissions) {
      const std::string flops = !omission.flops          ? "-"
                                : *omission.flops > 0 ? "+" + format_flops(to_double(*omission.flops))
                                                      : format_flops(to_double(*omission.flops));
      out += pad_right(std::string(convention_title(omission.kind)), 36) + pad_right(omission.choice, 42) +
             pad_left(flops, 13) + "\n";
    }
    out += "(model mode's count with megatron mode's choice alone, minus its own; `compare` reconciles every "
           "convention)\n";
  }

  if (layers == LayerRows::kNone) return out;
  out += "\n" + pad_right("layers", 20) + pad_right("kind", 14) + pad_left("count", 6) + pad_left("FLOPs each", 13) +
         pad_left("share", 8) + "\n";
  for (const LayerGroup& group : layer_groups(report, layers)) {
    const LayerFlops& first = report.layers[group.rows.front()];
    const double count = static_cast<double>(group.rows.size());
    out += pad_right(group_name(report, group), 20) + pad_right(first.kind, 14) +
           pad_left(std::to_string(group.rows.size()), 6) + pad_left(format_flops(first.flops.value), 13) +
           pad_left(share_of(first.flops.value * count, total), 8) + "\n";
  }
  return out;
}

ordered_json flops_json(const Flops& flops, double total) {
  ordered_json out = {{"flops", flops.value}};
  if (flops.exact) out["exact"] = to_decimal(*flops.exact);
  if (total > 0) out["share"] = flops.value / total;
  return out;
}

ordered_json breakdown_json(const std::vector<ComponentFlops>& parts, double total) {
  ordered_json out = ordered_json::object();
  for (const ComponentFlops& part : parts)
    out[std::string(component_name(part.component))] = flops_json(part.flops, total);
  return out;
}

ordered_json report_json(const Report& report) {
  const double total = report.total.value;
  ordered_json out;
  out["mode"] = mode_name(report.mode);
  out["model"] = report.model;
  out["workload"] = {{"description", report.workload}, {"tokens", to_decimal(report.tokens)}};
  out["total"] = {{"flops", total}};
  if (report.total.exact) out["total"]["exact"] = to_decimal(*report.total.exact);
  if (report.model_total) {
    out["recompute"] = recompute_name(report.recompute);
    out["model_total"] = {{"flops", report.model_total->value}, {"exact", to_decimal(*report.model_total->exact)}};
  }
  out["per_token"] = {{"flops", report.per_token}};
  if (report.parameters) {
    const ParameterSummary& p = *report.parameters;
    out["parameters"] = {{"total", to_decimal(p.total)},
                         {"active", to_decimal(p.active)},
                         {"embedding", to_decimal(p.embedding)},
                         {"costing_flops", to_decimal(p.costing_flops)},
                         {"not_costing_flops", to_decimal(p.not_costing_flops)},
                         {"six_n_d", to_decimal(p.six_n_d)}};
  }
  out["breakdown"] = breakdown_json(report.components, total);
  if (report.mode == Mode::kMegatron) {
    out["megatron_omissions"] = ordered_json::array();
    for (const MegatronOmission& omission : report.megatron_omissions) {
      ordered_json row = {{"convention", convention_name(omission.kind)},
                          {"title", convention_title(omission.kind)},
                          {"choice", omission.choice}};
      row["flops"] = omission.flops ? ordered_json(to_double(*omission.flops)) : ordered_json(nullptr);
      row["exact"] = omission.flops ? ordered_json(to_decimal(*omission.flops)) : ordered_json(nullptr);
      out["megatron_omissions"].push_back(std::move(row));
    }
  }
  out["layers"] = ordered_json::array();
  for (const LayerFlops& layer : report.layers) {
    ordered_json row = {{"name", layer.name}, {"kind", layer.kind}};
    row.update(flops_json(layer.flops, total));
    row["breakdown"] = breakdown_json(layer.components, total);
    out["layers"].push_back(std::move(row));
  }
  return out;
}

std::string csv_row(const std::string& section, const std::string& name, const std::string& kind,
                    std::string_view component, const Flops& flops, double total) {
  return section + "," + name + "," + kind + "," + std::string(component) + "," + shortest_decimal(flops.value) + "," +
         (flops.exact ? to_decimal(*flops.exact) : "") + "," +
         (total > 0 ? shortest_decimal(flops.value / total) : "") + "\n";
}

std::string render_table(const Report& report, const PipelineReport& pipeline, LayerRows layers) {
  const double total = report.total.value;
  std::string out = render_table(report, layers);
  out += "\npipeline   " + std::to_string(pipeline.stages.size()) + " stages (" + pipeline.origin +
         "); slowest stage " + std::to_string(pipeline.slowest + 1) + ", imbalance " +
         printf_string("%.4f", pipeline.imbalance) + " (max stage / mean stage)\n\n";
  std::size_t width = 6;
  for (const PipelineStage& stage : pipeline.stages) width = std::max(width, stage.layers.size() + 2);
  const bool parameters = !pipeline.stages.empty() && pipeline.stages[0].parameters;
  out += pad_right("stage", 7) + pad_right("layers", width) + pad_left("FLOPs", 12) + pad_left("share", 8) +
         (parameters ? pad_left("parameters", 12) : "") + "\n";
  for (std::size_t i = 0; i < pipeline.stages.size(); ++i) {
    const PipelineStage& stage = pipeline.stages[i];
    out += pad_right(std::to_string(i + 1), 7) + pad_right(stage.layers, width) +
           pad_left(format_flops(stage.flops.value), 12) + pad_left(share_of(stage.flops.value, total), 8) +
           (parameters ? pad_left(format_parameters(*stage.parameters), 12) : "") + "\n";
  }
  return out;
}

ordered_json pipeline_json(const PipelineReport& pipeline, double total) {
  ordered_json stages = ordered_json::array();
  for (std::size_t i = 0; i < pipeline.stages.size(); ++i) {
    const PipelineStage& stage = pipeline.stages[i];
    ordered_json row = {{"stage", i + 1}, {"layers", stage.layers}, {"decoder_layers", stage.decoder_layers}};
    row.update(flops_json(stage.flops, total));
    if (stage.parameters) row["parameters"] = to_decimal(*stage.parameters);
    stages.push_back(std::move(row));
  }
  return {{"origin", pipeline.origin},
          {"imbalance", pipeline.imbalance},
          {"slowest_stage", pipeline.slowest + 1},
          {"stages", std::move(stages)}};
}

std::string render_csv(const Report& report) {
  const double total = report.total.value;
  std::string out = "section,name,kind,component,flops,exact,share\n";
  out += csv_row("total", "", "", "total", report.total, total);
  out += csv_row("per_token", "", "", "total", Flops{report.per_token, std::nullopt}, 0);
  if (report.model_total) out += csv_row("model_total", "", "", "total", *report.model_total, total);
  if (report.parameters) {
    const ParameterSummary& p = *report.parameters;
    for (const auto& [name, count] :
         {std::pair{"total", p.total}, std::pair{"active", p.active}, std::pair{"embedding", p.embedding},
          std::pair{"costing_flops", p.costing_flops}, std::pair{"not_costing_flops", p.not_costing_flops}}) {
      out += "parameters,,," + std::string(name) + ",," + to_decimal(count) + ",\n";
    }
    out += csv_row("six_n_d", "", "", "total", Flops{to_double(p.six_n_d), p.six_n_d}, total);
  }
  for (const ComponentFlops& part : report.components) {
    out += csv_row("component", "", "", component_name(part.component), part.flops, total);
  }
  for (const MegatronOmission& omission : report.megatron_omissions) {
    // The choice, which may hold a comma, in quotes.
    out += "megatron_omission," + std::string(convention_name(omission.kind)) + ",\"" + omission.choice + "\",total," +
           (omission.flops ? shortest_decimal(to_double(*omission.flops)) + "," + to_decimal(*omission.flops) : ",") +
           ",\n";
  }
  for (const LayerFlops& layer : report.layers) {
    out += csv_row("layer", layer.name, layer.kind, "total", layer.flops, total);
    for (const ComponentFlops& part : layer.components) {
      out += csv_row("layer", layer.name, layer.kind, component_name(part.component), part.flops, total);
    }
  }
  return out;
}

std::string render_csv(const Report& report, const PipelineReport& pipeline) {
  const double total = report.total.value;
  std::string out = render_csv(report);
  for (std::size_t i = 0; i < pipeline.stages.size(); ++i) {
    const PipelineStage& stage = pipeline.stages[i];
    out += csv_row("stage", std::to_string(i + 1), stage.layers, "total", stage.flops, total);
  }
  out += "imbalance,,,max_over_mean," + shortest_decimal(pipeline.imbalance) + ",,\n";
  return out;
}

}  // namespace

Result<Format> parse_format(std::string_view text) {
  if (text == "table") return Format::kTable;
  if (text == "json") return Format::kJson;
  if (text == "csv") return Format::kCsv;
  return Error("format = \"" + std::string(text) + "\": must be one of table, json, csv");
}

std::string format_flops(double flops) { return printf_string("%.4e", flops); }

std::string shortest_decimal(double value) { return shortest_round_trip(value); }

Result<LayerRows> parse_layer_rows(std::string_view text) {
  if (text == "kinds") return LayerRows::kKinds;
  if (text == "all") return LayerRows::kAll;
  if (text == "none") return LayerRows::kNone;
  return Error("layers = \"" + std::string(text) + "\": must be one of kinds, all, none");
}

std::string render(const Report& report, Format format, LayerRows layers) {
  switch (format) {
    case Format::kTable: return render_table(report, layers);
    case Format::kJson: return report_json(report).dump(2) + "\n";
    case Format::kCsv: return render_csv(report);
  }
  return "";
}

std::string render(const Report& report, const PipelineReport& pipeline, Format format, LayerRows layers) {
  switch (format) {
    case Format::kTable: return render_table(report, pipeline, layers);
    case Format::kJson: {
      ordered_json out = report_json(report);
      out["pipeline"] = pipeline_json(pipeline, report.total.value);
      return out.dump(2) + "\n";
    }
    case Format::kCsv: return render_csv(report, pipeline);
  }
  return "";
}

}  // namespace trainflops
