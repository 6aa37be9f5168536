#include "workload_options.h"

#include <sstream>

namespace trainflops::cli {
namespace {

Result<std::vector<std::int64_t>> parse_length_list(const std::string& text) {
  std::vector<std::int64_t> lengths;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const Result<std::int64_t> length = parse_size(item, "--docs", 0, SizeSuffixes::kAccepted);
    if (!length.ok()) {
      return Error("--docs: \"" + item +
                   "\" is not a document length (a non-negative integer, optionally with k or m)");
    }
    lengths.push_back(length.value());
  }
  return lengths;
}

}  // namespace

void add_workload_options(CLI::App& command, WorkloadOptions& options) {
  command.add_option("--global-batch-size", options.global_batch_size, "BSHD: sequences per iteration");
  command.add_option("--seq-length", options.seq_length, "BSHD: tokens per sequence (4096, or 4k)");
  command.add_option("--docs", options.docs, "THD: packed document lengths, comma-separated (4096, or 4k)");
  command.add_option("--cu-seqlens", options.cu_seqlens_file, "THD: cu_seqlens file (.npy or text)");
  command.add_option("--total-real-tokens", options.total_real_tokens, "Aggregates: T = sum of lengths");
  command.add_option("--seqlen-squared-sum", options.seqlen_squared_sum, "Aggregates: S2 = sum of squared lengths");
}

namespace {

Result<WorkloadInput> workload_input(const WorkloadOptions& o, const ModelSource& source) {
  // None at all: say which options give one, in the command line's words.
  const bool none = !o.global_batch_size && !o.seq_length && o.docs.empty() && o.cu_seqlens_file.empty() &&
                    !o.total_real_tokens && !o.seqlen_squared_sum && !source.global_batch_size;
  if (none) {
    const std::string sequences = source.seq_length ? "sequences of the model's " + std::to_string(*source.seq_length) +
                                                          " tokens, or of --seq-length"
                                                    : "sequences of --seq-length tokens";
    return Error("no workload: give --global-batch-size N (N " + sequences +
                 "), --docs L1,L2,... (packed documents), --cu-seqlens FILE, or --total-real-tokens with "
                 "--seqlen-squared-sum (Megatron-LM's aggregates)");
  }
  // The text of the options becomes numbers here; every rule about which
  // workload was given is the library's (resolve_workload), as for Python and batch.
  WorkloadInput input;
  if (o.global_batch_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.batch_size,
                                parse_size(*o.global_batch_size, "--global-batch-size", 1, SizeSuffixes::kRejected));
  }
  if (o.seq_length) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.seq_length,
                                parse_size(*o.seq_length, "--seq-length", 1, SizeSuffixes::kAccepted));
  }
  if (!o.docs.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(input.docs, parse_length_list(o.docs));
  }
  if (!o.cu_seqlens_file.empty()) input.cu_seqlens_file = o.cu_seqlens_file;
  if (o.total_real_tokens) {
    input.total_real_tokens = parse_decimal(*o.total_real_tokens);
    if (!input.total_real_tokens) {
      return Error("--total-real-tokens = \"" + *o.total_real_tokens + "\": must be an integer");
    }
  }
  if (o.seqlen_squared_sum) {
    input.seqlen_squared_sum = parse_decimal(*o.seqlen_squared_sum);
    if (!input.seqlen_squared_sum) {
      return Error("--seqlen-squared-sum = \"" + *o.seqlen_squared_sum + "\": must be an integer");
    }
  }
  return input;
}

}  // namespace

Result<Report> count_workload(const WorkloadOptions& options, const ModelSource& source, Mode mode,
                              Recompute recompute) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const WorkloadInput input, workload_input(options, source));
  if (!input.cu_seqlens_file) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Workload workload, resolve_workload(input, source));
    return count(source.model, workload, mode, recompute);
  }
  TRAINFLOPS_RETURN_IF_ERROR(check_one_workload(input));
  const LengthBlocks file_blocks = [&](const std::function<Status(std::span<const std::int64_t>)>& consume) {
    return read_cu_seqlens_lengths(*input.cu_seqlens_file, consume);
  };
  return count(source.model, file_blocks, mode, recompute);
}

}  // namespace trainflops::cli
