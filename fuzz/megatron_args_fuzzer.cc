// Megatron-LM arguments as JSON (--args, the `args` of a reference vector).
#include "fuzz_helpers.h"
#include "trainflops/megatron_args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  const Result<ParsedMegatronArgs> args = parse_megatron_args_json(fuzz::text_of(data, size));
  if (!args.ok()) return 0;
  const Result<Model> model = model_from_megatron_args(args.value().args);
  if (model.ok()) fuzz::count_every_way(model.value());
  return 0;
}
