// trainflops compare on every preset and every release config in tests/data/hf:
// its trainflops rows are the counts of model and executed mode, its
// Megatron-LM rows the megatron-mode count (which the reference vectors tie to
// Megatron-LM's own function) of the model as each branch sees it, and every
// reconciliation sums exactly to its difference.
#include <gtest/gtest.h>

#include <filesystem>

#include "trainflops/compare.h"
#include "trainflops/count.h"
#include "trainflops/hf_config.h"
#include "trainflops/presets.h"
#include "trainflops/sweep.h"

namespace trainflops {
namespace {

std::vector<std::pair<std::string, Model>> real_models() {
  std::vector<std::pair<std::string, Model>> models;
  for (const Preset& preset : presets()) models.emplace_back(preset.name, preset_model(preset).value());
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TRAINFLOPS_TEST_DATA) + "/hf")) {
    if (entry.path().extension() != ".json") continue;
    models.emplace_back(entry.path().filename().string(), read_hf_config(entry.path().string()).value());
  }
  return models;
}

const FrameworkCount& row(const Comparison& c, Framework framework) {
  return c.frameworks[static_cast<std::size_t>(framework)];
}

TEST(CompareModelsTest, TrainflopsAndMegatronRowsAreTheModesCounts) {
  const std::vector<std::pair<std::string, Model>> models = real_models();
  EXPECT_GE(models.size(), 20u);
  for (const auto& [name, model] : models) {
    for (std::int64_t length : {1, 1500, 4095, 131072}) {
      SCOPED_TRACE(name + " at " + std::to_string(length));
      const Workload workload = Bshd{2, length};
      const Result<Comparison> c = compare_frameworks(model, length, 2);
      ASSERT_TRUE(c.ok()) << c.error().message();
      EXPECT_EQ(to_decimal(*row(c.value(), Framework::kTrainflopsModel).flops),
                to_decimal(*count(model, workload, Mode::kModel).value().total.exact));
      EXPECT_EQ(to_decimal(*row(c.value(), Framework::kTrainflopsExecuted).flops),
                to_decimal(*count(model, workload, Mode::kExecuted).value().total.exact));
      // On a hybrid pattern, the hybrid function of each branch: the dev
      // branch's counts the MTP projection, main's does not.
      const auto on_path = [&](MegatronPath hybrid_path) {
        Model seen = model;
        if (seen.megatron_path != MegatronPath::kStandard) seen.megatron_path = hybrid_path;
        return seen;
      };
      const FrameworkCount& fix = row(c.value(), Framework::kMegatronDsaFix);
      if (fix.flops) {
        const double megatron =
            count(on_path(MegatronPath::kHybridWithMtpProjection), workload, Mode::kMegatron).value().total.value;
        EXPECT_NEAR(to_double(*fix.flops), megatron, 1e-12 * megatron);
      }
      // Megatron-LM's main branch has no DSA: its function sees the MLA underneath
      // (and megatron mode charges windows as full attention anyway).
      const FrameworkCount& main = row(c.value(), Framework::kMegatronMain);
      if (main.flops) {
        const double megatron =
            count(with_dense_attention(on_path(MegatronPath::kHybrid)), workload, Mode::kMegatron).value().total.value;
        EXPECT_NEAR(to_double(*main.flops), megatron, 1e-12 * megatron);
      }
      for (const FrameworkCount& f : c.value().frameworks) {
        if (!f.flops) continue;
        Int128 sum = 0;
        for (const ConventionDifference& d : f.differences) sum += d.flops;
        EXPECT_EQ(to_decimal(sum), to_decimal(*f.flops - c.value().model_flops)) << framework_name(f.framework);
      }
    }
  }
}

}  // namespace
}  // namespace trainflops
