// trainflops gpus: the GPU types `mfu --gpu` knows, with their dense peaks,
// the other names they go by and where each peak comes from.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.h"
#include "trainflops/mfu.h"
#include "trainflops/render.h"

namespace trainflops::cli {
namespace {

constexpr Dtype kColumns[] = {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8, Dtype::kFp4};

struct Gpu {
  std::string_view key, product, source;
  std::optional<double> peaks[std::size(kColumns)];
  std::vector<std::string_view> aliases;
};

// peak_table() grouped by GPU, in its order.
std::vector<Gpu> gpus() {
  std::vector<Gpu> out;
  for (const PeakThroughput& peak : peak_table()) {
    if (out.empty() || out.back().key != peak.gpu) out.push_back(Gpu{peak.gpu, peak.product, peak.source, {}, {}});
    for (std::size_t i = 0; i < std::size(kColumns); ++i) {
      if (kColumns[i] == peak.dtype) out.back().peaks[i] = peak.dense_tflops;
    }
  }
  for (const GpuAlias& alias : gpu_aliases()) {
    for (Gpu& gpu : out) {
      if (gpu.key == alias.gpu) gpu.aliases.push_back(alias.alias);
    }
  }
  return out;
}

std::string cell(std::string text, std::size_t width, bool right = false) {
  if (text.size() < width) text.insert(right ? 0 : text.size(), width - text.size(), ' ');
  return text;
}

Result<std::string> list_gpus(const std::string& format_text) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Format format, parse_format(format_text));
  if (format == Format::kCsv) return Error("--format = \"csv\": gpus prints table or json");
  const std::vector<Gpu> all = gpus();
  if (format == Format::kJson) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Gpu& gpu : all) {
      nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < std::size(kColumns); ++i) {
        if (gpu.peaks[i]) peaks[std::string(dtype_name(kColumns[i]))] = *gpu.peaks[i];
      }
      out.push_back({{"gpu", gpu.key},
                     {"product", gpu.product},
                     {"dense_tflops", peaks},
                     {"aliases", gpu.aliases},
                     {"source", gpu.source}});
    }
    return out.dump(2) + "\n";
  }
  std::string out =
      "Dense tensor-core peaks per GPU, TFLOP/s (no structured sparsity); mfu --gpu takes the name\n"
      "or an alias, in any case\n\n";
  out += cell("gpu", 11) + cell("product", 48) + cell("bf16", 9, true) + cell("fp16", 9, true) + cell("fp8", 9, true) +
         cell("fp4", 9, true) + "  aliases\n";
  for (const Gpu& gpu : all) {
    out += cell(std::string(gpu.key), 11) + cell(std::string(gpu.product), 48);
    for (const auto& peak : gpu.peaks) {
      char text[32] = "-";
      if (peak) std::snprintf(text, sizeof text, "%g", *peak);
      out += cell(text, 9, true);
    }
    std::string aliases;
    for (std::string_view alias : gpu.aliases) aliases += (aliases.empty() ? "" : ", ") + std::string(alias);
    out += "  " + aliases + "\n";
  }
  out += "\nSources:\n";
  for (const Gpu& gpu : all) out += "  " + std::string(gpu.key) + ": " + std::string(gpu.source) + "\n";
  for (const GpuAlias& alias : gpu_aliases()) {
    if (!alias.assumed.empty()) out += "\nNote: " + std::string(alias.assumed) + ".\n";
  }
  return out;
}

}  // namespace

Runner add_gpus_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* command = app.add_subcommand("gpus", "List the GPU types mfu knows, with their dense peaks and sources");
  command->add_option("--format", *format, "table (default) or json");
  return [format](const std::vector<std::string>& after_dashes) {
    if (const int status = reject_words_after_dashes(after_dashes)) return status;
    return print_result(list_gpus(*format));
  };
}

}  // namespace trainflops::cli
