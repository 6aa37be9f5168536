// Rendering a comparison: the table, JSON and CSV of `trainflops compare`.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "report/columns.h"
#include "trainflops/render.h"

namespace trainflops {
namespace {

using nlohmann::ordered_json;

// "+12345" / "-12345": a difference reads as one.
std::string signed_decimal(Int128 value) { return (value > 0 ? "+" : "") + to_decimal(value); }

double ratio(Int128 flops, Int128 base) { return base > 0 ? to_double(flops) / to_double(base) : 0; }

std::string ratio_text(Int128 flops, Int128 base) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", ratio(flops, base));
  return buffer;
}

// Which number a team may put over its peak FLOP/s as MFU, and which not.
std::string_view numerator_role(Framework framework) {
  switch (framework) {
    case Framework::kTrainflopsModel: return "MFU numerator: model FLOPs, counted exactly";
    case Framework::kTrainflopsExecuted: return "not MFU's: HFU's numerator (what the kernels execute)";
    default: return "its own MFU numerator";
  }
}

std::string workload_text(const Comparison& c) {
  return std::to_string(c.sequences) + (c.sequences == 1 ? " sequence" : " sequences") + " of " +
         std::to_string(c.seq_length) + " tokens";
}

std::string render_table(const Comparison& c) {
  std::string out = c.model + "\none iteration: " + workload_text(c) + "\n\n";
  out += pad_right("framework", 22) + pad_left("FLOPs", 26) + pad_left("/ model", 9) + "\n";
  for (const FrameworkCount& f : c.frameworks) {
    out += pad_right(std::string(framework_title(f.framework)), 22);
    if (f.flops) {
      out += pad_left(to_decimal(*f.flops), 26) + pad_left(ratio_text(*f.flops, c.model_flops), 9) + "  " +
             std::string(numerator_role(f.framework)) + "\n";
    } else {
      out += pad_left("-", 26) + pad_left("-", 9) + "  cannot express: " + f.reason + "\n";
    }
  }
  out +=
      "\nOnly trainflops model is model FLOPs counted exactly: use it as MFU's numerator. Each framework's number "
      "is its own\nMFU numerator, comparable with another's only after the differences below; trainflops executed "
      "is HFU's.\n";
  out += "\ndifference from trainflops model, by convention (they sum exactly to the difference):\n";
  for (const FrameworkCount& f : c.frameworks) {
    if (!f.flops || f.differences.empty()) continue;
    out += "\n" + std::string(framework_title(f.framework)) + "\n";
    for (const ConventionDifference& d : f.differences) {
      out += "  " + pad_right(std::string(convention_title(d.kind)), 24) + pad_right(d.choice, 46) +
             pad_left(signed_decimal(d.flops), 24) + "\n";
    }
    out += "  " + pad_right("total", 70) + pad_left(signed_decimal(*f.flops - c.model_flops), 24) + "\n";
  }
  bool recipe_heading = false;
  for (const FrameworkCount& f : c.frameworks) {
    for (const std::string& difference : f.recipe_differences) {
      if (!recipe_heading) out += "\nrecipe differences (the numbers above are for this model, the recipe aligned):\n";
      recipe_heading = true;
      out += "  " + std::string(framework_title(f.framework)) + ": " + difference + "\n";
    }
  }
  return out;
}

std::string render_json(const Comparison& c) {
  ordered_json frameworks = ordered_json::array();
  for (const FrameworkCount& f : c.frameworks) {
    ordered_json entry;
    entry["name"] = framework_name(f.framework);
    entry["title"] = framework_title(f.framework);
    if (f.flops) {
      entry["flops"] = to_double(*f.flops);
      entry["exact"] = to_decimal(*f.flops);
      entry["ratio_to_model"] = ratio(*f.flops, c.model_flops);
      entry["mfu_numerator"] = std::string(numerator_role(f.framework));
      ordered_json differences = ordered_json::array();
      for (const ConventionDifference& d : f.differences) {
        differences.push_back(
            {{"convention", convention_name(d.kind)}, {"choice", d.choice}, {"exact", to_decimal(d.flops)}});
      }
      entry["differences"] = differences;
      if (!f.recipe_differences.empty()) entry["recipe_differences"] = f.recipe_differences;
    } else {
      entry["flops"] = nullptr;
      entry["reason"] = f.reason;
    }
    frameworks.push_back(entry);
  }
  ordered_json out;
  out["model"] = c.model;
  out["seq_length"] = c.seq_length;
  out["sequences"] = c.sequences;
  out["model_flops"] = to_decimal(c.model_flops);
  out["frameworks"] = frameworks;
  return out.dump(2) + "\n";
}

// framework,item,choice,flops: a "total" row per framework, then a row per
// convention that differs; a framework that cannot express the model has an
// empty total and its reason as the choice.
std::string render_csv(const Comparison& c) {
  const auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  };
  std::string out = "framework,item,choice,flops\n";
  for (const FrameworkCount& f : c.frameworks) {
    const std::string name(framework_name(f.framework));
    if (!f.flops) {
      out += name + ",total," + quoted("cannot express: " + f.reason) + ",\n";
      continue;
    }
    out += name + ",total,," + to_decimal(*f.flops) + "\n";
    for (const ConventionDifference& d : f.differences) {
      out +=
          name + "," + std::string(convention_name(d.kind)) + "," + quoted(d.choice) + "," + to_decimal(d.flops) + "\n";
    }
  }
  return out;
}

// GFLOPs per token of one framework's count, "-" when it has none.
std::string per_token_text(const FrameworkCount& f, const Comparison& c) {
  if (!f.flops) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", to_double(*f.flops) / (1e9 * c.seq_length * c.sequences));
  return buffer;
}

double per_token(const FrameworkCount& f, const Comparison& c) {
  return to_double(*f.flops) / (static_cast<double>(c.seq_length) * c.sequences);
}

std::string render_sweep_table(const std::vector<Comparison>& comparisons) {
  if (comparisons.empty()) return "";
  std::string out =
      comparisons.front().model + "\nGFLOPs per token, one sequence of each length\n\n" + pad_right("seq len", 10);
  for (const FrameworkCount& f : comparisons.front().frameworks) {
    out += pad_left(std::string(framework_title(f.framework)), 22);
  }
  out += "\n";
  std::vector<std::string> reasons;
  for (const Comparison& c : comparisons) {
    out += pad_right(std::to_string(c.seq_length), 10);
    for (const FrameworkCount& f : c.frameworks) {
      out += pad_left(per_token_text(f, c), 22);
      const std::string reason = std::string(framework_title(f.framework)) + ": cannot express: " + f.reason;
      if (!f.flops && std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
    }
    out += "\n";
  }
  if (!reasons.empty()) out += "\n";
  for (const std::string& reason : reasons) out += reason + "\n";
  return out;
}

std::string render_sweep_json(const std::vector<Comparison>& comparisons) {
  ordered_json points = ordered_json::array();
  for (const Comparison& c : comparisons) {
    ordered_json frameworks = ordered_json::array();
    for (const FrameworkCount& f : c.frameworks) {
      ordered_json entry{{"name", framework_name(f.framework)}};
      if (f.flops) {
        entry["exact"] = to_decimal(*f.flops);
        entry["per_token"] = per_token(f, c);
      } else {
        entry["exact"] = nullptr;
        entry["reason"] = f.reason;
      }
      frameworks.push_back(entry);
    }
    points.push_back({{"seq_length", c.seq_length}, {"frameworks", frameworks}});
  }
  ordered_json out;
  out["model"] = comparisons.empty() ? "" : comparisons.front().model;
  out["points"] = points;
  return out.dump(2) + "\n";
}

// seq_length,framework,flops,per_token; empty values where a framework cannot express the model.
std::string render_sweep_csv(const std::vector<Comparison>& comparisons) {
  std::string out = "seq_length,framework,flops,per_token\n";
  for (const Comparison& c : comparisons) {
    for (const FrameworkCount& f : c.frameworks) {
      out += std::to_string(c.seq_length) + "," + std::string(framework_name(f.framework)) + ",";
      out += f.flops ? to_decimal(*f.flops) + "," + shortest_decimal(per_token(f, c)) : std::string(",");
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string render_comparison_sweep(const std::vector<Comparison>& comparisons, Format format) {
  switch (format) {
    case Format::kTable: return render_sweep_table(comparisons);
    case Format::kJson: return render_sweep_json(comparisons);
    case Format::kCsv: return render_sweep_csv(comparisons);
  }
  return "";
}

std::string render_comparison(const Comparison& comparison, Format format) {
  switch (format) {
    case Format::kTable: return render_table(comparison);
    case Format::kJson: return render_json(comparison);
    case Format::kCsv: return render_csv(comparison);
  }
  return "";
}

}  // namespace trainflops
