#include "trainflops/workload_input.h"

#include "model/workload_offsets.h"
#include "trainflops/workload_text.h"

namespace trainflops {
namespace {

constexpr char kOneWorkload[] =
    "batch_size (with seq_length), docs, cu_seqlens, or total_real_tokens with seqlen_squared_sum";

}  // namespace

Status check_one_workload(const WorkloadInput& in) {
  const bool aggregates = in.total_real_tokens || in.seqlen_squared_sum;
  const int given = in.docs.has_value() + (in.cu_seqlens || in.cu_seqlens_file) + aggregates;
  if (given > 1 || (given == 1 && in.batch_size) || (in.cu_seqlens && in.cu_seqlens_file)) {
    return Error(std::string("give one workload: ") + kOneWorkload);
  }
  if (given == 1 && in.seq_length) {
    return Error("seq_length = " + std::to_string(*in.seq_length) +
                 ": goes with batch_size (BSHD); docs, cu_seqlens and the aggregates carry their own lengths");
  }
  return Ok{};
}

Result<Workload> resolve_workload(const WorkloadInput& in, const ResolvedModel& model) {
  TRAINFLOPS_RETURN_IF_ERROR(check_one_workload(in));
  const bool aggregates = in.total_real_tokens || in.seqlen_squared_sum;
  if (in.docs) return Workload{PackedDocuments{*in.docs}};
  if (in.cu_seqlens) {
    TRAINFLOPS_ASSIGN_OR_RETURN(std::vector<std::int64_t> lengths, lengths_from_cu_seqlens(*in.cu_seqlens));
    TRAINFLOPS_RETURN_IF_ERROR(check_offsets_hold_tokens(in.cu_seqlens->back()));
    return Workload{PackedDocuments{std::move(lengths)}};
  }
  if (in.cu_seqlens_file) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<std::int64_t> offsets, read_cu_seqlens_file(*in.cu_seqlens_file));
    Result<std::vector<std::int64_t>> lengths = lengths_from_cu_seqlens(offsets);
    if (!lengths.ok()) return lengths.error().context(*in.cu_seqlens_file);
    const Status tokens = check_offsets_hold_tokens(offsets.back());
    if (!tokens.ok()) return tokens.error().context(*in.cu_seqlens_file);
    return Workload{PackedDocuments{std::move(lengths).value()}};
  }
  if (aggregates) {
    if (!in.total_real_tokens || !in.seqlen_squared_sum) {
      return Error("total_real_tokens and seqlen_squared_sum come together");
    }
    return Workload{SequenceAggregates{*in.total_real_tokens, *in.seqlen_squared_sum}};
  }
  const std::optional<std::int64_t> batch = in.batch_size ? in.batch_size : model.global_batch_size;
  const std::optional<std::int64_t> length = in.seq_length ? in.seq_length : model.seq_length;
  if (!batch) return Error(std::string("no workload: give ") + kOneWorkload);
  if (!length) {
    return Error("seq_length is missing: required with batch_size (BSHD); the model's source gives none");
  }
  return Workload{Bshd{*batch, *length}};
}

}  // namespace trainflops
