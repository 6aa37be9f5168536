// `trainflops batch` records: JSON in, one result line out, never a crash.
// Records name models every way the resolver takes them (args, preset, hf,
// config, flags with their options), so this target fuzzes the resolver too;
// the resolver-* seeds start it on each source.
#include <nlohmann/json.hpp>

#include "fuzz_helpers.h"
#include "trainflops/batch.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  const std::string line = answer_batch_line(fuzz::text_of(data, size), 1).json;
  const nlohmann::json result = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (result.is_discarded() || !result.is_object() || (!result.contains("flops") && !result.contains("error"))) {
    fuzz::broken("not a result line: " + line);
  }
  return 0;
}
