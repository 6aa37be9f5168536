// The one-line parsers: integers, modes, formats, grad modes, data types,
// GPU names, preset names, context-length lists and Megatron-LM log lines.
// The first byte picks one.
#include "fuzz_helpers.h"
#include "trainflops/int128.h"
#include "trainflops/megatron_log.h"
#include "trainflops/mfu.h"
#include "trainflops/model.h"
#include "trainflops/presets.h"
#include "trainflops/render.h"
#include "trainflops/sweep.h"
#include "trainflops/workload_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  if (size == 0) return 0;
  const std::string_view text = fuzz::text_of(data + 1, size - 1);
  switch (data[0] % 9) {
    case 0: {
      const auto value = parse_decimal(text);
      if (value && parse_decimal(to_decimal(*value)) != value) fuzz::broken("decimal round trip");
      break;
    }
    case 1: (void)parse_mode(text).ok(); break;
    case 2: (void)parse_format(text).ok(); break;
    case 3: (void)parse_grad_mode(text).ok(); break;
    case 4: (void)parse_dtype(text).ok(); break;
    case 5: {
      const Result<Dtype> dtype = parse_dtype("bf16");
      if (dtype.ok()) (void)find_peak(text, dtype.value()).ok();
      break;
    }
    case 6: {
      const Result<Preset> preset = find_preset(text);
      if (preset.ok()) (void)preset_model(preset.value()).ok();
      break;
    }
    case 7: {
      const Result<MegatronLogIteration> line = parse_megatron_log(text);
      if (line.ok() && !(line.value().step_time_s > 0)) fuzz::broken("a non-positive step time");
      break;
    }
    default: {
      const Result<std::vector<std::int64_t>> lengths = parse_seq_lengths(text);
      if (lengths.ok()) {
        for (std::int64_t length : lengths.value()) {
          if (length < 1) fuzz::broken("a non-positive context length");
        }
      }
      break;
    }
  }
  return 0;
}
