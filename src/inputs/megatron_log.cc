#include "trainflops/megatron_log.h"

#include <charconv>
#include <cmath>
#include <string>

#include "base/decimal_text.h"
#include "base/input_file.h"

namespace trainflops {
namespace {

constexpr std::string_view kStepTime = "elapsed time per iteration (ms):";
constexpr std::string_view kThroughput = "throughput per GPU (TFLOP/s/GPU):";
constexpr std::string_view kBatch = "global batch size:";
constexpr std::string_view kIteration = "iteration";

// The text after `label` in `line`, up to the next '|' (or '/' for the
// iteration's "n/total"), trimmed; nullopt when the line has no such label.
std::optional<std::string_view> field(std::string_view line, std::string_view label, char end = '|') {
  const std::size_t at = line.find(label);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view value = line.substr(at + label.size());
  value = value.substr(0, value.find(end));
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.remove_suffix(1);
  return value;
}

Error not_a_number(std::int64_t line, std::string_view label, std::string_view value, const char* rule) {
  std::string name(label.substr(0, label.size() - 1));  // without the ':'
  return Error("line " + std::to_string(line) + ": " + name + " = \"" + std::string(value) + "\": must be " + rule);
}

Result<double> positive_number(std::int64_t line, std::string_view label, std::string_view value) {
  const std::optional<double> number = parse_double(value);
  if (!number || !(*number > 0) || !std::isfinite(*number))
    return not_a_number(line, label, value, "a positive number");
  return *number;
}

Result<std::int64_t> positive_integer(std::int64_t line, std::string_view label, std::string_view value) {
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < 1) {
    return not_a_number(line, label, value, "a positive integer");
  }
  return number;
}

}  // namespace

Result<MegatronLogIteration> parse_megatron_log(std::string_view text) {
  std::string_view last;
  std::int64_t last_number = 0, number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    const std::string_view line = text.substr(start, end - start);
    if (line.find(kStepTime) != std::string_view::npos) {
      last = line;
      last_number = number;
    }
    start = end + 1;
  }
  if (last_number == 0) {
    return Error("no line has \"" + std::string(kStepTime) +
                 "\": give a Megatron-LM training log (the lines it writes every log_interval iterations)");
  }
  MegatronLogIteration result;
  result.line = last_number;
  TRAINFLOPS_ASSIGN_OR_RETURN(const double milliseconds,
                              positive_number(last_number, kStepTime, *field(last, kStepTime)));
  result.step_time_s = milliseconds / 1000;
  if (const auto throughput = field(last, kThroughput)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(result.tflops_per_gpu, positive_number(last_number, kThroughput, *throughput));
  }
  if (const auto batch = field(last, kBatch)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(result.global_batch_size, positive_integer(last_number, kBatch, *batch));
  }
  // "iteration      100/    5000 |": the number before the '/'.
  if (const auto iteration = field(last, kIteration, '/')) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(iteration->data(), iteration->data() + iteration->size(), value);
    if (error == std::errc() && end == iteration->data() + iteration->size()) result.iteration = value;
  }
  return result;
}

Result<MegatronLogIteration> read_megatron_log(const std::string& path) {
  constexpr std::size_t kMaxLogBytes = std::size_t{1} << 30;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(path, kMaxLogBytes));
  Result<MegatronLogIteration> iteration = parse_megatron_log(text);
  if (!iteration.ok()) return iteration.error().context(path);
  return iteration;
}

}  // namespace trainflops
