#include "trainflops/sweep.h"

#include <array>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

namespace trainflops {
namespace {

using nlohmann::ordered_json;

void replace_dsa(std::vector<Layer>& layers) {
  for (Layer& layer : layers) {
    if (layer.mixer) {
      if (const auto* dsa = std::get_if<DsaAttention>(&*layer.mixer)) layer.mixer = dsa->mla;
    }
  }
}

// Table columns: components grouped into what a reader compares.
enum class Group { kCoreAttention, kIndexer, kAttentionProjections, kMlpMoe, kOther };
constexpr std::array kGroups = {Group::kCoreAttention, Group::kIndexer, Group::kAttentionProjections,
                                Group::kMlpMoe, Group::kOther};

constexpr const char* group_title(Group group) {
  switch (group) {
    case Group::kCoreAttention: return "core attn";
    case Group::kIndexer: return "indexer";
    case Group::kAttentionProjections: return "attn proj";
    case Group::kMlpMoe: return "mlp+moe";
    case Group::kOther: return "other";
  }
  return "";
}

// No default: a component added without a group leaves the switch, and the
// static_assert below fails to compile.
constexpr std::optional<Group> group_of(Component component) {
  switch (component) {
    case Component::kCoreAttention:
    case Component::kDsaCoreAttention: return Group::kCoreAttention;
    case Component::kIndexerProjections:
    case Component::kIndexerScoring:
    case Component::kIndexerTeacher:
    case Component::kKpoolGate:
    case Component::kKpoolPooling: return Group::kIndexer;
    case Component::kAttentionProjections:
    case Component::kKvCompressor: return Group::kAttentionProjections;
    case Component::kMlp:
    case Component::kMoeRouted:
    case Component::kMoeShared:
    case Component::kMoeRouter: return Group::kMlpMoe;
    case Component::kMamba:
    case Component::kGatedDeltaNet:
    case Component::kGatedDeltaProduct:
    case Component::kMtp:
    case Component::kLogits: return Group::kOther;
  }
  return std::nullopt;
}

static_assert([] {
  for (Component component : kAllComponents) {
    if (!group_of(component)) return false;
  }
  return true;
}(), "every component belongs to a sweep group");

double group_sum(const SweepPoint& point, Group group) {
  double sum = 0;
  for (const ComponentFlops& part : point.components) sum += group_of(part.component) == group ? part.flops.value : 0;
  return sum;
}

std::string fixed(double value, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string column(std::string text, std::size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

std::string render_table(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode) {
  std::string out = "trainflops sweep: " + std::string(mode_name(mode)) +
                    " mode, GFLOPs per token of one training iteration (forward + backward)\n";
  out += "model  " + model_summary + "\n\n";
  out += column("context", 9) + column("dense attn", 12) + column("this model", 12) + column("dense/this", 12);
  for (Group group : kGroups) out += column(group_title(group), 11);
  out += "\n";
  for (const SweepPoint& point : points) {
    out += column(std::to_string(point.seq_length), 9) + column(fixed(point.dense_per_token / 1e9, "%.1f"), 12) +
           column(fixed(point.per_token / 1e9, "%.1f"), 12) +
           column(fixed(point.dense_per_token / point.per_token, "%.2fx"), 12);
    for (Group group : kGroups) out += column(fixed(group_sum(point, group) / 1e9, "%.1f"), 11);
    out += "\n";
  }
  return out;
}

std::string render_json(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode) {
  ordered_json out = {{"mode", mode_name(mode)}, {"model", model_summary}, {"points", ordered_json::array()}};
  for (const SweepPoint& point : points) {
    ordered_json components = ordered_json::object();
    for (const ComponentFlops& part : point.components) {
      components[std::string(component_name(part.component))] = part.flops.value;
    }
    out["points"].push_back({{"seq_length", point.seq_length},
                             {"per_token", point.per_token},
                             {"dense_per_token", point.dense_per_token},
                             {"dense_over_this", point.dense_per_token / point.per_token},
                             {"components_per_token", components}});
  }
  return out.dump(2) + "\n";
}

std::string render_csv(const std::vector<SweepPoint>& points) {
  std::string out = "seq_length,per_token,dense_per_token,dense_over_this";
  for (Component c : kAllComponents) out += "," + std::string(component_name(c));
  out += "\n";
  for (const SweepPoint& point : points) {
    out += std::to_string(point.seq_length) + "," + fixed(point.per_token, "%.17g") + "," +
           fixed(point.dense_per_token, "%.17g") + "," + fixed(point.dense_per_token / point.per_token, "%.17g");
    for (Component c : kAllComponents) {
      double value = 0;
      for (const ComponentFlops& part : point.components) value += part.component == c ? part.flops.value : 0;
      out += "," + fixed(value, "%.17g");
    }
    out += "\n";
  }
  return out;
}

}  // namespace

Model with_dense_attention(const Model& model) {
  Model dense = model;
  replace_dsa(dense.layers);
  for (auto& depth : dense.mtp_depths) replace_dsa(depth);
  return dense;
}

Result<std::vector<SweepPoint>> sweep(const Model& model, const std::vector<std::int64_t>& seq_lengths, Mode mode) {
  if (seq_lengths.empty()) return Error("seq_lengths: give at least one context length");
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter counter, FlopsCounter::create(model, mode));
  TRAINFLOPS_ASSIGN_OR_RETURN(const FlopsCounter dense, FlopsCounter::create(with_dense_attention(model), mode));
  std::vector<SweepPoint> points;
  for (std::int64_t length : seq_lengths) {
    const Workload one_sequence = Bshd{1, length};
    TRAINFLOPS_ASSIGN_OR_RETURN(const Report report, counter.report(one_sequence));
    TRAINFLOPS_ASSIGN_OR_RETURN(const Flops dense_total, dense.total(one_sequence));
    SweepPoint point{length, report.per_token, dense_total.value / static_cast<double>(length), report.components};
    for (ComponentFlops& part : point.components) {
      part.flops = Flops{part.flops.value / static_cast<double>(length), std::nullopt};
    }
    points.push_back(std::move(point));
  }
  return points;
}

Result<std::vector<std::int64_t>> parse_seq_lengths(std::string_view text) {
  std::vector<std::int64_t> lengths;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const Result<std::int64_t> length = parse_size(item, "length", 1, SizeSuffixes::kAccepted);
    if (!length.ok()) {
      return Error("--seq-lengths: \"" + std::string(item) +
                   "\" is not a context length (a positive integer, optionally with k or m)");
    }
    lengths.push_back(length.value());
    start = end + 1;
  }
  return lengths;
}

std::string render_sweep(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode,
                         Format format) {
  switch (format) {
    case Format::kTable: return render_table(points, model_summary, mode);
    case Format::kJson: return render_json(points, model_summary, mode);
    case Format::kCsv: return render_csv(points);
  }
  return "";
}

}  // namespace trainflops
