#include "trainflops/hybrid_pattern.h"

#include <gtest/gtest.h>

namespace trainflops {
namespace {

std::string symbols(const std::vector<LayerSymbol>& layers) {
  std::string text;
  for (LayerSymbol s : layers) text.push_back(static_cast<char>(s));
  return text;
}

TEST(HybridPatternTest, Parses) {
  struct Case {
    const char* pattern;
    const char* main;
    std::vector<std::string> mtp;
  };
  const std::vector<Case> cases = {
      {"M*-E", "M*-E", {}},
      {"MM|**|--", "MM**--", {}},          // stages are ignored
      {"[M*][M*]-", "M*M*-", {}},          // groups are ignored
      {"[M[*]]E", "M*E", {}},              // and may nest
      {"G+E/+E/+E", "G+E", {"+E", "+E"}},  // one MTP depth per '/'
      {"M|*/[*]-", "M*", {"*-"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pattern);
    const Result<HybridPattern> parsed = parse_hybrid_pattern(c.pattern);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(symbols(parsed.value().main), c.main);
    std::vector<std::string> mtp;
    for (const auto& depth : parsed.value().mtp_depths) mtp.push_back(symbols(depth));
    EXPECT_EQ(mtp, c.mtp);
  }
}

TEST(HybridPatternTest, KeepsTheMainPatternsPipelineStages) {
  struct Case {
    const char* pattern;
    std::vector<std::size_t> stage_layers;
  };
  const std::vector<Case> cases = {
      {"M*-E", {4}},
      {"MM|**|--", {2, 2, 2}},
      {"[M|*][M*]|-", {1, 3, 1}},  // '|' counts inside '[ ]'
      {"|MM", {0, 2}},             // an empty stage: only the embedding
      {"MM|", {2, 0}},             // only the output layer
      {"M|*/[*|]-/*-", {1, 1}},    // '|' in MTP depths is ignored
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pattern);
    EXPECT_EQ(parse_hybrid_pattern(c.pattern).value().main_stage_layers, c.stage_layers);
  }
}

TEST(HybridPatternTest, Errors) {
  struct Case {
    const char* pattern;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"M*x-",
       "hybrid_layer_pattern = \"M*x-\": 'x' at position 3 is not a layer symbol (M G K * + D W C H - E, with | [ ] /)"},
      {"", "hybrid_layer_pattern = \"\": the main pattern has no layers"},
      {"||", "hybrid_layer_pattern = \"||\": the main pattern has no layers"},
      {"/M", "hybrid_layer_pattern = \"/M\": the main pattern before '/' is empty"},
      {"M*/", "hybrid_layer_pattern = \"M*/\": MTP depth 1 is empty"},
      {"M*//*", "hybrid_layer_pattern = \"M*//*\": MTP depth 1 is empty"},
      {"M*/*-/*E",
       "hybrid_layer_pattern = \"M*/*-/*E\": MTP depth 2 differs from depth 1 (all MTP depths must be equal)"},
      {"M*+",
       "hybrid_layer_pattern = \"M*+\": '*' (MHA/GQA) cannot be mixed with MLA-based attention ('+' or 'D') in "
       "one model"},
      {"*/D",
       "hybrid_layer_pattern = \"*/D\": '*' (MHA/GQA) cannot be mixed with MLA-based attention ('+' or 'D') in "
       "one model"},
      {"[M*", "hybrid_layer_pattern = \"[M*\": a '[' is never closed"},
      {"M]*", "hybrid_layer_pattern = \"M]*\": ']' at position 2 closes no '['"},
      {"[M/*]", "hybrid_layer_pattern = \"[M/*]\": '/' at position 3 inside '[ ]'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pattern);
    const Result<HybridPattern> parsed = parse_hybrid_pattern(c.pattern);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message(), c.message);
  }
}

}  // namespace
}  // namespace trainflops
