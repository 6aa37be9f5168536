// Rendering a sweep: the table, JSON and CSV of `trainflops sweep`.
#include <algorithm>
#include <array>
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
    case Component::kKimiDeltaAttention:
    case Component::kHyperConnections:
    case Component::kNgramMemory:
    case Component::kPerLayerEmbedding:
    case Component::kAttentionResiduals:
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

// A row's columns, written from the right end of a buffer that holds the
// widest: each number in place, its column starting `width` to the left of
// its end or where a wider number starts. The spaces of a row of numbers as
// wide as their columns are laid down at once.
class RowFromTheRight {
 public:
  RowFromTheRight(char* end, std::size_t usual_width) : start_(end), blank_(end - usual_width) {
    std::fill(blank_, end, ' ');
  }
  void fixed(double value, int decimals, std::size_t width, bool times = false) {
    char* end = start_;
    if (times) *--start_ = 'x';
    column(write_fixed_before(start_, value, decimals), end, width);
  }
  void integer(std::int64_t value, std::size_t width) {
    char* end = start_;
    column(write_integer_before(end, static_cast<std::uint64_t>(value)), end, width);
  }
  void newline() { *--start_ = '\n'; }
  const char* start() const { return start_; }

 private:
  // Spaces from the column's start up to its text: those left of blank_
  // (after a wider number) written here.
  void column(char* text, char* end, std::size_t width) {
    start_ = std::min(text, end - width);
    if (start_ < blank_) {
      std::fill(start_, std::min(text, blank_), ' ');
      blank_ = start_;
    }
  }
  char* start_;
  char* blank_;  // [blank_, start_) holds spaces
};
constexpr std::size_t kSweepColumns = 3 + kGroups.size() + 1;

// A row's width with every column (wider numbers only widen it).
constexpr std::size_t kSweepRowChars = 9 + 3 * 12 + kGroups.size() * 11 + 1;

std::string render_table(const std::vector<SweepPoint>& points, const std::string& model_summary, Mode mode) {
  // Dense-attention accounting means something only where it differs: a DSA
  // model, or windows the mode counts.
  const bool dense =
      std::any_of(points.begin(), points.end(), [](const SweepPoint& p) { return p.dense_per_token != p.per_token; });
  std::string out = sweep_table_header(model_summary, mode, dense);
  out.reserve(out.size() + points.size() * kSweepRowChars);
  for (const SweepPoint& point : points) append_sweep_row(out, point, dense);
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

std::string sweep_table_header(const std::string& model_summary, Mode mode, bool dense) {
  std::string out = "trainflops sweep: " + std::string(mode_name(mode)) +
                    " mode, GFLOPs per token of one training iteration (forward + backward)\n";
  out += "model  " + model_summary + "\n";
  if (dense) {
    out +=
        "dense  \"dense attn\": the same model with every DSA layer as dense MLA (or grouped-query) attention (no "
        "indexer) and every sliding window as full causal attention\n";
  }
  out += "\n" + pad_left("context", 9) + (dense ? pad_left("dense attn", 12) : "") + pad_left("this model", 12) +
         (dense ? pad_left("dense/this", 12) : "");
  for (Group group : kGroups) out += pad_left(group_title(group), 11);
  out += "\n";
  return out;
}

void append_sweep_row(std::string& out, const SweepPoint& point, bool dense) {
  char text[kSweepColumns * (kFixedDecimalCapacity + 16)];
  RowFromTheRight row(text + sizeof text, kSweepRowChars);
  row.newline();
  const std::array<double, kGroups.size()> sums = group_sums(point);
  for (auto sum = sums.rbegin(); sum != sums.rend(); ++sum) row.fixed(*sum / 1e9, 1, 11);
  if (dense) row.fixed(point.dense_per_token / point.per_token, 2, 12, true);
  row.fixed(point.per_token / 1e9, 1, 12);
  if (dense) row.fixed(point.dense_per_token / 1e9, 1, 12);
  row.integer(point.seq_length, 9);
  out.append(row.start(), static_cast<std::size_t>(text + sizeof text - row.start()));
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
