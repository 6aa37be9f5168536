// The presets built from a release's config.json, against the release's file
// in tests/data/hf: a preset that holds the config holds every key and value
// of the file, and a preset given as Megatron-LM arguments builds the model the
// file builds. Either way they count the same parameters, and the same FLOPs
// in model and executed mode.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/input_file.h"
#include "base/json_text.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/int128.h"
#include "trainflops/model_input.h"
#include "trainflops/parameters.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

std::string release_file(const std::string& name) {
  return read_input_file(std::string(TRAINFLOPS_TEST_DATA) + "/hf/" + name, kMaxConfigFileBytes).value();
}

std::string exact(const Model& model, Mode mode) {
  const Result<Report> report = count(model, Bshd{2, 4096}, mode);
  EXPECT_TRUE(report.ok()) << report.error().message();
  if (!report.ok()) return "";
  return report.value().total.exact ? to_decimal(*report.value().total.exact)
                                    : std::to_string(report.value().total.value);
}

struct Case {
  const char* preset;
  const char* file;
};

// Megatron mode on a Qwen3.5 file counts Megatron-Bridge's function on the
// arguments Bridge sets (Megatron-LM's refuses them); it charges the MTP
// layer as the last decoder layer, gated attention, as the preset's model has it.
TEST(PresetReleaseConfigsTest, PresetsBuildTheModelsOfTheirReleaseConfigs) {
  const Case cases[] = {
      {"deepseek-v4-flash", "deepseek-v4-flash.json"}, {"deepseek-v4-pro", "deepseek-v4-pro.json"},
      {"gemma-4-26b-a4b", "gemma-4-26b-a4b.json"},     {"qwen3.5-27b", "qwen3.5-27b.json"},
      {"qwen3.5-35b-a3b", "qwen3.5-35b-a3b.json"},     {"nemotron-h-56b", "nemotron-h-56b-base-8k.json"},
      {"qwen3.8-2.4t-a95b", "qwen3.8-2.4t-a95b.json"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.preset) + " against " + c.file);
    const Preset preset = find_preset(c.preset).value();
    const std::string text = release_file(c.file);
    if (preset.hf_config) {
      EXPECT_EQ(nlohmann::json::parse(*preset.hf_config), parse_python_json(text).value());
    }
    const Model from_preset = preset_model(preset).value();
    const Result<HfImport> imported = import_hf_config(text, UnknownFields::kRejected);
    ASSERT_TRUE(imported.ok()) << imported.error().message();
    const Model& from_file = imported.value().model;
    EXPECT_EQ(from_preset.hidden_size, from_file.hidden_size);
    EXPECT_EQ(from_preset.vocab_size, from_file.vocab_size);
    EXPECT_TRUE(from_preset.layers == from_file.layers);
    EXPECT_TRUE(from_preset.mtp_depths == from_file.mtp_depths);
    EXPECT_TRUE(from_preset.parameter_layout == from_file.parameter_layout);
    EXPECT_EQ(from_preset.megatron_path, from_file.megatron_path);
    const ModelParameters preset_parameters = count_parameters(from_preset).value();
    const ModelParameters file_parameters = count_parameters(from_file).value();
    EXPECT_EQ(to_decimal(preset_parameters.total().total), to_decimal(file_parameters.total().total));
    EXPECT_EQ(to_decimal(preset_parameters.total().active), to_decimal(file_parameters.total().active));
    for (const Mode mode : {Mode::kModel, Mode::kExecuted, Mode::kMegatron}) {
      EXPECT_EQ(exact(from_preset, mode), exact(from_file, mode));
    }
    // What the command line counts from each source.
    ModelInput preset_input, file_input;
    preset_input.preset = c.preset;
    file_input.hf_config_json = text;
    const ResolvedModel preset_resolved = resolve_model(preset_input).value();
    const ResolvedModel file_resolved = resolve_model(file_input).value();
    for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
      EXPECT_EQ(exact(counted_in(preset_resolved, mode).value().model, mode),
                exact(counted_in(file_resolved, mode).value().model, mode));
    }
    const Result<ResolvedModel> file_megatron = counted_in(file_resolved, Mode::kMegatron);
    ASSERT_TRUE(file_megatron.ok()) << file_megatron.error().message();
    EXPECT_EQ(exact(counted_in(preset_resolved, Mode::kMegatron).value().model, Mode::kMegatron),
              exact(file_megatron.value().model, Mode::kMegatron));
  }
}

}  // namespace
}  // namespace trainflops
