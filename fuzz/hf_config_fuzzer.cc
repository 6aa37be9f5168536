// Hugging Face config.json import (--hf).
#include "fuzz_helpers.h"
#include "trainflops/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  const Result<Model> model = parse_hf_config(fuzz::text_of(data, size));
  if (model.ok()) fuzz::count_every_way(model.value());
  return 0;
}
