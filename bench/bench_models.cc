#include "bench_models.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace trainflops::bench {

std::string glm5_args_path() { return TRAINFLOPS_BENCH_DATA "/glm-5.args.json"; }

void fail(const std::string& what) {
  std::fprintf(stderr, "trainflops_bench: %s\n", what.c_str());
  std::exit(1);
}

MegatronArgs glm5_args() {
  std::ifstream in(glm5_args_path());
  std::ostringstream text;
  text << in.rdbuf();
  Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(text.str());
  if (!parsed.ok()) fail(glm5_args_path() + ": " + parsed.error().message());
  return parsed.value().args;
}

Model glm5_model() {
  Result<Model> model = model_from_megatron_args(glm5_args());
  if (!model.ok()) fail("GLM-5: " + model.error().message());
  return model.value();
}

Model glm5_kpool_model() {
  MegatronArgs args = glm5_args();
  args.dsa_kpool_size = 4;
  Result<Model> model = model_from_megatron_args(args);
  if (!model.ok()) fail("GLM-5 with KPool: " + model.error().message());
  return model.value();
}

std::vector<std::int64_t> packed_cu_seqlens(std::size_t documents) {
  std::mt19937_64 rng(20260101);
  std::uniform_int_distribution<std::int64_t> length(0, 4000);
  std::vector<std::int64_t> offsets = {0};
  offsets.reserve(documents + 1);
  for (std::size_t d = 0; d < documents; ++d) offsets.push_back(offsets.back() + length(rng));
  return offsets;
}

}  // namespace trainflops::bench
