// Rendering a sweep: the table, JSON and CSV of `trainflops sweep`.
#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "report/columns.h"
#include "report/fixed_decimal.h"
#include "trainflops/render.h"

namespace trainflops {
namespace {

using nlohmann::ordered_json;

// Table columns: components grouped into what a reader compares.
enum class Group { kCoreAttention, kIndexer, kAttentionProjections, kMlpMoe, kOther };
constexpr std::array kGroups = {Group::kCoreAttention, Group::kIndexer, Group::kAttentionProjections, Group::kMlpMoe,
                                Group::kOther};

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

static_assert(
    [] {
      for (Component component : kAllComponents) {
        if (!group_of(component)) return false;
      }
      return true;
    }(),
    "every component belongs to a sweep group");

// Each group's sum of a point's components, added in Component order.
std::array<double, kGroups.size()> group_sums(const SweepPoint& point) {
  static constexpr auto kGroupOf = [] {
    std::array<std::size_t, kAllComponents.size()> group_of_component{};
    for (Component c : kAllComponents)
      group_of_component[static_cast<std::size_t>(c)] = static_cast<std::size_t>(*group_of(c));
    return group_of_component;
  }();
  std::array<double, kGroups.size()> sums{};
  for (Component c : kAllComponents) {
    const auto i = static_cast<std::size_t>(c);
    sums[kGroupOf[i]] += point.components[i];
  }
  return sums;
}

// Appends `text` right-aligned in `width` columns.
void append_column(std::string& out, std::string_view text, std::size_t width) {
  if (text.size() < width) out.append(width - text.size(), ' ');
  out.append(text);
}

// Appends `value` with `digits` decimals (as printf's %.<digits>f writes it)
// and `suffix`, right-aligned in `width` columns: thousands of rows, no
// temporary strings.
void append_fixed(std::string& out, double value, int digits, std::size_t width, std::string_view suffix = "") {
  char buffer[kFixedDecimalCapacity + 8];
  char* end = std::copy(suffix.begin(), suffix.end(), write_fixed(buffer, value, digits));
  append_column(out, std::string_view(buffer, static_cast<std::size_t>(end - buffer)), width);
}

std::string render_table(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode) {
  // Dense-attention accounting means something only where it differs: a DSA
  // model, or windows the mode counts.
  const bool dense =
      std::any_of(points.begin(), points.end(), [](const SweepPoint& p) { return p.dense_per_token != p.per_token; });
  std::string out = "trainflops sweep: " + std::string(mode_name(mode)) +
                    " mode, GFLOPs per token of one training iteration (forward + backward)\n";
  out += "model  " + model_summary + "\n";
  if (dense) {
    out +=
        "dense  \"dense attn\": the same model with every DSA layer as dense MLA attention (no indexer) and every "
        "sliding window as full causal attention\n";
  }
  out += "\n" + pad_left("context", 9) + (dense ? pad_left("dense attn", 12) : "") + pad_left("this model", 12) +
         (dense ? pad_left("dense/this", 12) : "");
  for (Group group : kGroups) out += pad_left(group_title(group), 11);
  out += "\n";
  out.reserve(out.size() + points.size() * (9 + 3 * 12 + kGroups.size() * 11 + 1));
  for (const SweepPoint& point : points) {
    char length[24];
    append_column(
        out, std::string_view(length, std::to_chars(length, length + sizeof length, point.seq_length).ptr - length), 9);
    if (dense) append_fixed(out, point.dense_per_token / 1e9, 1, 12);
    append_fixed(out, point.per_token / 1e9, 1, 12);
    if (dense) append_fixed(out, point.dense_per_token / point.per_token, 2, 12, "x");
    for (double sum : group_sums(point)) append_fixed(out, sum / 1e9, 1, 11);
    out += '\n';
  }
  return out;
}

std::string render_json(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode) {
  ordered_json out = {{"mode", mode_name(mode)}, {"model", model_summary}, {"points", ordered_json::array()}};
  for (const SweepPoint& point : points) {
    ordered_json components = ordered_json::object();
    for (Component c : kAllComponents) {
      const double value = point.components[static_cast<std::size_t>(c)];
      if (value != 0) components[std::string(component_name(c))] = value;
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
    out += std::to_string(point.seq_length) + "," + shortest_decimal(point.per_token) + "," +
           shortest_decimal(point.dense_per_token) + "," + shortest_decimal(point.dense_per_token / point.per_token);
    for (double value : point.components) out += "," + shortest_decimal(value);
    out += "\n";
  }
  return out;
}

}  // namespace

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
