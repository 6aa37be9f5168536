// The model zoo: every preset file parses, expresses its model in Megatron-LM
// arguments or a Hugging Face config that trainflops reads whole, and counts
// the parameters its authors publish; its model mode FLOPs are 6 per token per
// active parameter, up to the terms that are not products of a weight.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "inputs/presets_data.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/megatron_args.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

TEST(PresetFilesTest, EveryFileParsesWithOnlyArgumentsTrainflopsReads) {
  std::map<std::string, int> names;
  for (std::string_view text : preset_files()) {
    const Result<Preset> preset = parse_preset(text);
    ASSERT_TRUE(preset.ok()) << preset.error().message();
    SCOPED_TRACE(preset.value().name);
    ++names[preset.value().name];
    EXPECT_TRUE(preset.value().published_parameters.has_value());
    EXPECT_TRUE(preset.value().seq_length.has_value());
    const nlohmann::json file = nlohmann::json::parse(text);
    if (file.contains("args")) {
      EXPECT_EQ(parse_megatron_args_json(file["args"].dump()).value().ignored, std::vector<std::string>{});
    } else {
      EXPECT_TRUE(import_hf_config(file["hf_config"].dump(), UnknownFields::kRejected).ok());
    }
  }
  EXPECT_EQ(names.size(), preset_files().size());  // names are unique
  EXPECT_EQ(presets().size(), preset_files().size());
}

TEST(PresetFilesTest, MalformedFilesAreErrorsNamingTheKey) {
  const std::string head = R"({"name": "x", "title": "X", "description": "d", "source": "s", "args": {}, )";
  const std::pair<std::string, std::string> cases[] = {
      {"[1]", "preset: not a JSON object"},
      {R"({"name": "x"})", "preset: \"title\" is missing: a non-empty string is required"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s"})",
       "preset x: give the model as exactly one of \"args\" (Megatron-LM arguments) or \"hf_config\" (a Hugging "
       "Face config.json)"},
      {head + R"("hf_config": {}})",
       "preset x: give the model as exactly one of \"args\" (Megatron-LM arguments) or \"hf_config\" (a Hugging "
       "Face config.json)"},
      {head + R"("seq_length": 4096})", "preset x: \"seq_length\" belongs in \"args\" when the model is given as args"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s", "hf_config": []})",
       "preset x: \"hf_config\" must be a JSON object"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s", "hf_config": {}})",
       "preset x: \"seq_length\" (the default context) must be a positive integer"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s", "hf_config": {}, "seq_length": 0})",
       "preset x: \"seq_length\" (the default context) must be a positive integer"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s", "args": {"num_layers": "2"}})",
       "preset x: num_layers = \"2\": must be an integer or null"},
      {head + R"("published_parameters": {"active": 1}})", "preset x: published_parameters.total is missing"},
      {head + R"("published_parameters": {"total": 0, "active": 1}})",
       "preset x: published_parameters.total = 0: must be a positive integer"},
      {head + R"("published_parameters": {"total": 2, "active": 1, "total_counts": ["embedding", "logits"]}})",
       "preset x: published_parameters.total_counts: parameter part \"logits\": must be one of embedding, "
       "output_layer, decoder, mtp"},
      {head + R"("published_parameters": {"total": 2, "active": 1, "total_counts": "decoder", "active_counts": []}})",
       "preset x: published_parameters.active_counts: must name at least one part"},
      {head + R"("published_parameters": {"total": 2, "active": 1, "total_counts": "decoder",)"
              R"( "active_counts": "decoder"}})",
       "preset x: published_parameters.source is missing: a non-empty string that says where the figures come "
       "from"},
      {head + R"("parameter_layout": {"qk_norm": "per_layer"}})",
       "preset x: parameter_layout.qk_norm = \"per_layer\": must be per_head (a norm of head_dim shared by the "
       "heads) or all_heads (one norm over every query head together, one over every key head)"},
      {head + R"("parameter_layout": {"qk_norm": true}})",
       "preset x: parameter_layout.qk_norm = true: must be per_head (a norm of head_dim shared by the heads) or "
       "all_heads (one norm over every query head together, one over every key head)"},
      {head + R"("parameter_layout": {}})", "preset x: parameter_layout.qk_norm is missing: per_head or all_heads"},
      {head + R"("parameter_layout": {"qk_norm": "all_heads", "sinks": true}})",
       "preset x: parameter_layout.sinks: unknown key (known: qk_norm)"},
      {head + R"("parameter_layout": "all_heads"})", "preset x: parameter_layout: must be an object"},
      {R"({"name": "x", "title": "X", "description": "d", "source": "s", "hf_config": {}, "seq_length": 8,)"
       R"( "parameter_layout": {"qk_norm": "all_heads"}})",
       "preset x: \"parameter_layout\" goes with \"args\" only: a Hugging Face config's model type gives its own "
       "layout"},
      // Not a string: an error, not a JSON type exception out of the library.
      {head + R"("published_parameters": {"total": 2, "active": 1, "total_counts": "decoder",)"
              R"( "active_counts": "decoder", "source": 3}})",
       "preset x: published_parameters.source is missing: a non-empty string that says where the figures come "
       "from"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_preset(text).error().message(), message);
  }
}

std::string test_file(const std::string& name) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A model Megatron-LM has no arguments for is a preset by its release config.
TEST(PresetFilesTest, HuggingFaceConfigPresetIsTheImportedRelease) {
  const std::string release = test_file("hf/llama-3.1-8b.json");
  const Preset preset = parse_preset(R"({"name": "x", "title": "X", "description": "d", "source": "s",
                                         "seq_length": 8192, "hf_config": )" +
                                     release + "}")
                            .value();
  EXPECT_FALSE(preset.args.has_value());
  EXPECT_EQ(preset.seq_length, 8192);
  const Model model = preset_model(preset).value();
  EXPECT_EQ(model.name, "X");
  EXPECT_EQ(model.layers, import_hf_config(release).value().model.layers);

  nlohmann::json with_unknown = nlohmann::json::parse(release);
  with_unknown["mystery_width"] = 7;
  const Preset unknown = parse_preset(R"({"name": "y", "title": "Y", "description": "d", "source": "s",
                                          "seq_length": 8192, "hf_config": )" +
                                      with_unknown.dump() + "}")
                             .value();
  const Result<Model> refused = preset_model(unknown);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().rfind("preset y: ", 0), 0u) << refused.error().message();
  EXPECT_NE(refused.error().message().find("mystery_width"), std::string::npos) << refused.error().message();
}

struct ZooCase {
  const char* name;
  // Model-mode FLOPs per token without core attention and indexer scoring,
  // over 6 x the parameters of products (the router's included; the output
  // layer once per output head).
  const char* flops_over_6n;
};

// The ratios (docs/presets.md explains each one's departure from 1).
const ZooCase kZoo[] = {
    {"deepseek-v3", "0.9972"},
    {"deepseek-v3.2", "0.9825"},
    {"deepseek-v4-flash", "0.9974"},
    {"deepseek-v4-pro", "0.9971"},
    {"gemma-4-26b-a4b", "0.9972"},
    {"gemma-4-31b", "1.0000"},
    {"glm-4.7-flash", "0.9985"},
    {"glm-5", "0.9855"},
    {"glm-5.2", "0.9939"},
    {"gpt-oss-120b", "0.9974"},
    {"kimi-k2", "0.9948"},
    {"kimi-k3", "0.9987"},
    {"kimi-linear-48b-a3b", "1.0086"},
    {"llama-3.1-405b", "1.0000"},
    {"llama-3.1-70b", "1.0000"},
    {"llama-3.1-8b", "1.0000"},
    {"minimax-m2", "0.9960"},
    {"minimax-m3", "0.9940"},
    {"mixtral-8x7b", "0.9999"},
    {"nemotron-3-nano-30b-a3b", "1.0105"},
    {"nemotron-h-56b", "1.0143"},
    {"qwen3-235b-a22b", "0.9977"},
    {"qwen3-next-80b-a3b", "1.0061"},
    {"qwen3.5-27b", "1.0055"},
    {"qwen3.5-35b-a3b", "1.0118"},
    {"qwen3.8-2.4t-a95b", "1.0020"},
};

ModelParameters parameters_of(const Preset& preset) { return count_parameters(preset_model(preset).value()).value(); }

TEST(PresetZooTest, EveryPresetIsInTheTable) {
  std::vector<std::string> listed, known;
  for (const ZooCase& c : kZoo) listed.push_back(c.name);
  for (const Preset& preset : presets()) known.push_back(preset.name);
  EXPECT_EQ(listed, known);
}

// A preset's parameter_layout replaces the norms its arguments give: query
// and key norms over all heads hold 48 x 128 + 8 x 128 per layer where
// --qk-layernorm would hold 2 x 128.
TEST(PresetFilesTest, ParameterLayoutReplacesTheArgumentsNorms) {
  const std::string head = R"({"name": "x", "title": "X", "description": "d", "source": "s", "args": {
      "num_layers": 2, "hidden_size": 3072, "ffn_hidden_size": 1536, "num_attention_heads": 48,
      "group_query_attention": true, "num_query_groups": 8, "kv_channels": 128, "swiglu": true,
      "padded_vocab_size": 1024, "seq_length": 64, "qk_layernorm": true})";
  const auto norms = [](const std::string& text) {
    const ModelParameters p = count_parameters(preset_model(parse_preset(text).value()).value()).value();
    for (const KindParameters& part : p.kinds) {
      if (part.kind == ParameterKind::kNorm) return to_decimal(part.count.total);
    }
    return std::string("none");
  };
  // Two layers' input and pre-MLP norms and the final norm: 5 x 3072.
  EXPECT_EQ(norms(head + "}"), std::to_string(5 * 3072 + 2 * 2 * 128));
  EXPECT_EQ(norms(head + R"(, "parameter_layout": {"qk_norm": "per_head"}})"), std::to_string(5 * 3072 + 2 * 2 * 128));
  EXPECT_EQ(norms(head + R"(, "parameter_layout": {"qk_norm": "all_heads"}})"),
            std::to_string(5 * 3072 + 2 * (48 + 8) * 128));
}

// Every parameter, to the unit, against the released checkpoint's count
// (tests/data/parameters/published_totals.jsonl: the figure, its source, the
// parts of the model the checkpoint holds when not all ("counts": a
// checkpoint without the MTP modules), and what the checkpoint stores that is
// no parameter of the model: FP8 block scales, the MTP module's copies of
// shared tables, a multimodal release's vision tower).
TEST(PresetZooTest, ParametersEqualTheReleasedCheckpoints) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/parameters/published_totals.jsonl");
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    SCOPED_TRACE(row["preset"].get<std::string>());
    std::int64_t expected = row["published"].get<std::int64_t>();
    for (const auto& [what, count] : row["not_parameters"].items()) expected -= count.get<std::int64_t>();
    EXPECT_EQ(expected, row["total"].get<std::int64_t>());
    const ModelParameters p = parameters_of(find_preset(row["preset"].get<std::string>()).value());
    if (row.contains("counts")) {
      std::vector<ParameterPart> parts;
      for (const nlohmann::json& part : row["counts"]) {
        parts.push_back(parse_parameter_part(part.get<std::string>()).value());
      }
      EXPECT_EQ(to_decimal(p.sum(parts).total), std::to_string(expected));
    } else {
      EXPECT_EQ(to_decimal(p.total().total), std::to_string(expected));
    }
    ++rows;
  }
  EXPECT_EQ(rows, 25);
}

// What the presets count in their layouts, at h = the model's: Llama-3.1-8B's
// 65 norms (two per layer, the final one); gpt-oss-120b's biases and sinks;
// Gemma-4-26B-A4B's norms and scalars.
TEST(PresetZooTest, ParametersByKind) {
  const ModelParameters llama = parameters_of(find_preset("llama-3.1-8b").value());
  ASSERT_EQ(llama.kinds.size(), 3u);
  EXPECT_EQ(llama.kinds[0].kind, ParameterKind::kWeight);
  EXPECT_EQ(to_decimal(llama.kinds[0].count.total), "7504658432");
  EXPECT_EQ(llama.kinds[1].kind, ParameterKind::kEmbeddingTable);
  EXPECT_EQ(to_decimal(llama.kinds[1].count.total), std::to_string(128256 * 4096));
  EXPECT_EQ(to_decimal(llama.kinds[1].count.active), "0");
  EXPECT_EQ(llama.kinds[2].kind, ParameterKind::kNorm);
  EXPECT_EQ(to_decimal(llama.kinds[2].count.total), std::to_string(65 * 4096));
  EXPECT_EQ(to_decimal(llama.costing_flops().total), "7504658432");
  EXPECT_EQ(to_decimal(llama.not_costing_flops().total), std::to_string(128256 * 4096 + 65 * 4096));

  const ModelParameters oss = parameters_of(find_preset("gpt-oss-120b").value());
  std::map<ParameterKind, ParameterCount> kinds;
  for (const KindParameters& part : oss.kinds) kinds[part.kind] = part.count;
  // Per layer: q, k, v (64 x 64 + 2 x 8 x 64) and output (2880) biases; each
  // of 128 experts' 2 x 2880 + 2880, 4 of them active; the router's 128.
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kBias].total), std::to_string(36 * (5120 + 2880 + 128 * 8640 + 128)));
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kBias].active), std::to_string(36 * (5120 + 2880 + 4 * 8640 + 128)));
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kPerHeadScalar].total), std::to_string(36 * 64));  // sinks
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kRouter].total), std::to_string(36 * 128 * 2880));

  // Gemma-4-26B-A4B, per layer: four norms around the attention and the MLP,
  // the MoE block's three and the router's input scale (8 x 2816); the query
  // and key norms (2 x 256 on 25 sliding layers, 2 x 512 on 5 global ones);
  // the final norm. Per layer: 128 per-expert scales and the layer's scalar.
  const ModelParameters gemma = parameters_of(find_preset("gemma-4-26b-a4b").value());
  kinds.clear();
  for (const KindParameters& part : gemma.kinds) kinds[part.kind] = part.count;
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kNorm].total),
            std::to_string(30 * 8 * 2816 + 25 * 2 * 256 + 5 * 2 * 512 + 2816));
  EXPECT_EQ(to_decimal(kinds[ParameterKind::kPerHeadScalar].total), std::to_string(30 * (128 + 1)));
}

// Within 1% of the published figure, or within half its rounding unit when it
// is published with few digits ("3B"), counting the parts it counts.
TEST(PresetZooTest, ParametersMatchThePublishedFigures) {
  for (const Preset& preset : presets()) {
    SCOPED_TRACE(preset.name);
    ASSERT_TRUE(preset.published_parameters.has_value());
    const PublishedParameters& published = *preset.published_parameters;
    const ModelParameters p = parameters_of(preset);
    bool active_counts_table = false;
    for (ParameterPart part : published.active_counts) active_counts_table |= part == ParameterPart::kEmbedding;
    const double total = to_double(p.sum(published.total_counts).total);
    const double active = to_double(p.sum(published.active_counts, active_counts_table).active);
    const auto allowed = [](std::int64_t figure, std::int64_t precision) {
      return std::max(0.01 * static_cast<double>(figure), 0.5 * static_cast<double>(precision));
    };
    EXPECT_LE(std::abs(total - static_cast<double>(published.total)),
              allowed(published.total, published.total_precision))
        << "total " << total << " published " << published.total;
    EXPECT_LE(std::abs(active - static_cast<double>(published.active)),
              allowed(published.active, published.active_precision))
        << "active " << active << " published " << published.active;
  }
}

// Dense-equivalent FLOPs: per token, model mode at 4096 tokens of context,
// without the attention core (core attention, DSA's selected pairs, indexer
// scoring), against 6 x active parameters with the output layer counted once
// per output head (MTP depths compute their own logits). Within 2%: what is
// not 6 x a weight is the router (a weight, not counted in model mode), the
// indexer's projections (forward only: 2 x, not 6 x), the Mamba scan and the
// gated delta rule (FLOPs without weights), and MLA's norm terms.
TEST(PresetZooTest, DenseEquivalentFlopsAreSixTimesActiveParameters) {
  for (const ZooCase& c : kZoo) {
    SCOPED_TRACE(c.name);
    const Model model = preset_model(find_preset(c.name).value()).value();
    const Report report = count(model, Workload{Bshd{1, 4096}}, Mode::kModel).value();
    Int128 products = *report.total.exact;
    for (const ComponentFlops& part : report.components) {
      if (part.component == Component::kCoreAttention || part.component == Component::kDsaCoreAttention ||
          part.component == Component::kIndexerScoring || part.component == Component::kKpoolPooling) {
        products -= *part.flops.exact;
      }
    }
    const ModelParameters p = count_parameters(model).value();
    Int128 router = 0;
    for (const KindParameters& part : p.kinds) {
      if (part.kind == ParameterKind::kRouter) router = part.count.active;
    }
    const Int128 n = p.costing_flops().active + router +
                     static_cast<Int128>(model.mtp_depths.size()) * model.hidden_size * model.vocab_size;
    const double ratio = to_double(products) / to_double(6 * n * report.tokens);
    char printed[16];
    std::snprintf(printed, sizeof printed, "%.4f", ratio);
    EXPECT_EQ(std::string(printed), c.flops_over_6n);
    EXPECT_LE(std::abs(ratio - 1), 0.02);
  }
}

}  // namespace
}  // namespace trainflops
