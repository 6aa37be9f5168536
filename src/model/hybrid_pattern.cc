#include "trainflops/hybrid_pattern.h"

#include <string>

namespace trainflops {
namespace {

constexpr std::string_view kLayerSymbols = "MGK*+DWCH-E";

Error pattern_error(std::string_view pattern, const std::string& rule) {
  return Error("hybrid_layer_pattern = \"" + std::string(pattern) + "\": " + rule);
}

}  // namespace

Result<HybridPattern> parse_hybrid_pattern(std::string_view pattern) {
  HybridPattern parsed;
  parsed.main_stage_layers = {0};
  std::vector<LayerSymbol>* current = &parsed.main;
  int bracket_depth = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    const std::string position = " at position " + std::to_string(i + 1);
    if (c == '|') {
      if (current == &parsed.main) parsed.main_stage_layers.push_back(0);
      continue;
    }
    if (c == '[') {
      ++bracket_depth;
    } else if (c == ']') {
      if (--bracket_depth < 0) return pattern_error(pattern, "']'" + position + " closes no '['");
    } else if (c == '/') {
      if (bracket_depth != 0) return pattern_error(pattern, "'/'" + position + " inside '[ ]'");
      if (current->empty()) {
        return pattern_error(pattern, current == &parsed.main
                                          ? "the main pattern before '/' is empty"
                                          : "MTP depth " + std::to_string(parsed.mtp_depths.size()) + " is empty");
      }
      current = &parsed.mtp_depths.emplace_back();
    } else if (kLayerSymbols.find(c) != std::string_view::npos) {
      current->push_back(static_cast<LayerSymbol>(c));
      if (current == &parsed.main) ++parsed.main_stage_layers.back();
    } else {
      return pattern_error(pattern, "'" + std::string(1, c) + "'" + position +
                                        " is not a layer symbol (M G K * + D W C H - E, with | [ ] /)");
    }
  }
  if (bracket_depth != 0) return pattern_error(pattern, "a '[' is never closed");
  if (parsed.main.empty()) return pattern_error(pattern, "the main pattern has no layers");
  if (current->empty()) {
    return pattern_error(pattern, "MTP depth " + std::to_string(parsed.mtp_depths.size()) + " is empty");
  }
  for (std::size_t d = 1; d < parsed.mtp_depths.size(); ++d) {
    if (parsed.mtp_depths[d] != parsed.mtp_depths[0]) {
      return pattern_error(
          pattern, "MTP depth " + std::to_string(d + 1) + " differs from depth 1 (all MTP depths must be equal)");
    }
  }
  std::vector<LayerSymbol> every_layer = parsed.main;
  for (const auto& depth : parsed.mtp_depths) every_layer.insert(every_layer.end(), depth.begin(), depth.end());
  bool has_attention = false, has_mla = false;
  for (LayerSymbol s : every_layer) {
    has_attention |= s == LayerSymbol::kAttention;
    has_mla |= s == LayerSymbol::kMla || s == LayerSymbol::kDsa;
  }
  if (has_attention && has_mla) {
    return pattern_error(pattern, "'*' (MHA/GQA) cannot be mixed with MLA-based attention ('+' or 'D') in one model");
  }
  return parsed;
}

}  // namespace trainflops
