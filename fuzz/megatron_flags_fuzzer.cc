// Megatron-LM flags: the input is one argument per line, as a launch script's
// words; whatever parses is built into a model and counted.
#include "fuzz_helpers.h"
#include "trainflops/megatron_args.h"
#include "trainflops/megatron_flags.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  std::vector<std::string> argv;
  std::string word;
  for (char c : fuzz::text_of(data, size)) {
    if (c == '\n') {
      argv.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) argv.push_back(word);
  const Result<ParsedMegatronFlags> flags = parse_megatron_flags(argv);
  if (!flags.ok()) return 0;
  const Result<Model> model = model_from_megatron_args(flags.value().args);
  if (model.ok()) fuzz::count_every_way(model.value());
  return 0;
}
