// trainflops' own model config (--config).
#include "fuzz_helpers.h"
#include "trainflops/native_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  const Result<Model> model = parse_native_config(fuzz::text_of(data, size));
  if (model.ok()) fuzz::count_every_way(model.value());
  return 0;
}
