#include "workload_options.h"

#include <sstream>

namespace trainflops::cli {
namespace {

Result<std::vector<std::int64_t>> parse_length_list(const std::string& text) {
  std::vector<std::int64_t> lengths;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const Result<std::int64_t> length = parse_size(item, "--docs", 0, SizeSuffixes::kRejected);
    if (!length.ok()) return Error("--docs: \"" + item + "\" is not a document length (a non-negative integer)");
    lengths.push_back(length.value());
  }
  return lengths;
}

}  // namespace

void add_workload_options(CLI::App& command, WorkloadOptions& options) {
  command.add_option("--global-batch-size", options.global_batch_size, "BSHD: sequences per iteration");
  command.add_option("--seq-length", options.seq_length, "BSHD: tokens per sequence (4096, or 4k)");
  command.add_option("--docs", options.docs, "THD: packed document lengths, comma-separated");
  command.add_option("--cu-seqlens", options.cu_seqlens_file, "THD: cu_seqlens file (.npy or text)");
  command.add_option("--total-real-tokens", options.total_real_tokens, "Aggregates: T = sum of lengths");
  command.add_option("--seqlen-squared-sum", options.seqlen_squared_sum, "Aggregates: S2 = sum of squared lengths");
}

Result<Workload> load_workload(const WorkloadOptions& o, const ModelSource& source) {
  const bool aggregates = o.total_real_tokens || o.seqlen_squared_sum;
  const int given = !o.docs.empty() + !o.cu_seqlens_file.empty() + aggregates;
  if (given > 1 || (given == 1 && o.global_batch_size)) {
    return Error(
        "give one workload: --global-batch-size (with --seq-length), --docs, --cu-seqlens, or "
        "--total-real-tokens with --seqlen-squared-sum");
  }
  if (given == 1 && o.seq_length) {
    return Error("--seq-length = " + *o.seq_length +
                 ": goes with --global-batch-size (BSHD); --docs, --cu-seqlens and the aggregates carry their own "
                 "lengths");
  }
  if (!o.docs.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<std::int64_t> lengths, parse_length_list(o.docs));
    return Workload{PackedDocuments{std::move(lengths)}};
  }
  if (!o.cu_seqlens_file.empty()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> offsets, read_cu_seqlens_file(o.cu_seqlens_file));
    Result<std::vector<std::int64_t>> lengths = lengths_from_cu_seqlens(offsets);
    if (!lengths.ok()) return lengths.error().context(o.cu_seqlens_file);
    return Workload{PackedDocuments{std::move(lengths).value()}};
  }
  if (aggregates) {
    if (!o.total_real_tokens || !o.seqlen_squared_sum) {
      return Error("--total-real-tokens and --seqlen-squared-sum come together");
    }
    auto tokens = parse_decimal(*o.total_real_tokens);
    auto squares = parse_decimal(*o.seqlen_squared_sum);
    if (!tokens) return Error("--total-real-tokens = \"" + *o.total_real_tokens + "\": must be an integer");
    if (!squares) return Error("--seqlen-squared-sum = \"" + *o.seqlen_squared_sum + "\": must be an integer");
    return Workload{SequenceAggregates{*tokens, *squares}};
  }
  std::optional<std::int64_t> batch = source.global_batch_size, length = source.seq_length;
  if (o.global_batch_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(batch,
                                parse_size(*o.global_batch_size, "--global-batch-size", 1, SizeSuffixes::kRejected));
  }
  if (o.seq_length) {
    TRAINFLOPS_ASSIGN_OR_RETURN(length, parse_size(*o.seq_length, "--seq-length", 1, SizeSuffixes::kAccepted));
  }
  if (!batch) {
    return Error(
        "no workload: give --global-batch-size with --seq-length (BSHD), --docs, --cu-seqlens FILE, or "
        "--total-real-tokens with --seqlen-squared-sum");
  }
  if (!length) return Error("--seq-length is missing: required with --global-batch-size (BSHD)");
  return Workload{Bshd{*batch, *length}};
}

}  // namespace trainflops::cli
