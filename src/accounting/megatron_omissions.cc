// What megatron mode leaves out of a model, or charges otherwise for want of
// a term, measured with compare's conventions (convention_count.h): the one
// description of how Megatron-LM's function counts each feature.
#include <algorithm>
#include <variant>

#include "accounting/convention_count.h"
#include "trainflops/count.h"

namespace trainflops {
namespace {

// The conventions whose megatron-mode choice leaves a feature of the model
// out, or charges it as another one; the others (pair counts, widths, the
// DSA and DeepSeek-V4 estimates, ...) are its shortcuts, which
// docs/accounting.md lists.
constexpr ConventionKind kOmissionKinds[] = {
    ConventionKind::kMtp,           ConventionKind::kBlockSparse,        ConventionKind::kDsaGqa,
    ConventionKind::kOutputGate,    ConventionKind::kHeadGate,           ConventionKind::kMlaOutputGate,
    ConventionKind::kHyperConnections, ConventionKind::kNgramMemory,     ConventionKind::kPerLayerEmbedding,
    ConventionKind::kAttentionResiduals, ConventionKind::kZeroExperts,
};

// Megatron mode's choice for each of kOmissionKinds: Megatron-LM's hybrid
// function drops the attention output gate and, on the main branch, the MTP
// projection, and counts no layer of DSA over grouped-query attention; its
// transformer function charges those as dense grouped-query attention, as it
// charges block-sparse attention and QSA, without their indexers; neither has
// a term for the head gate, the MLA output gate, the residual-stream
// machinery or zero-computation experts.
Conventions megatron_mode_choices(const Model& model) {
  const bool hybrid = model.megatron_path != MegatronPath::kStandard;
  Conventions c = kModelConventions;
  c.mtp = model.megatron_path == MegatronPath::kHybrid ? MtpRule::kNoProjection : MtpRule::kFull;
  c.block_sparse_as_dense = true;
  c.dsa_gqa = hybrid ? DsaGqaRule::kNotCounted : DsaGqaRule::kDenseGqa;
  c.output_gate = !hybrid;
  c.head_gate = false;
  c.mla_output_gate = false;
  c.hyper_connections = HyperConnectionRule::kNotCounted;
  c.ngram_memory = NgramMemoryRule::kNone;
  c.per_layer_embedding = PerLayerEmbeddingRule::kNone;
  c.attention_residuals = false;
  c.zero_experts_free = false;
  return c;
}

struct Switch {
  ConventionKind kind;
  Conventions after;  // model mode's choices with this one and the earlier switches' made
};

// Each kind's switch, in kAllConventionKinds order.
std::vector<Switch> switches_of(const Model& model) {
  const Conventions megatron = megatron_mode_choices(model);
  std::vector<Switch> switches;
  Conventions choices = kModelConventions;
  for (ConventionKind kind : kAllConventionKinds) {
    if (std::find(std::begin(kOmissionKinds), std::end(kOmissionKinds), kind) == std::end(kOmissionKinds)) continue;
    take_choice(kind, megatron, choices);
    switches.push_back({kind, choices});
  }
  return switches;
}

// Twice what each switch changes in one sequence of `length` tokens.
Result<std::vector<Int128>> doubled_changes(const Model& model, const std::vector<Switch>& switches,
                                            std::int64_t length) {
  TRAINFLOPS_ASSIGN_OR_RETURN(Int128 previous, doubled_flops(model, kModelConventions, length));
  std::vector<Int128> changes;
  for (const Switch& s : switches) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const Int128 doubled, doubled_flops(model, s.after, length));
    changes.push_back(doubled - previous);
    previous = doubled;
  }
  return changes;
}

Error omission_overflow() {
  return Error(ErrorCode::kOverflow, "the model-mode FLOPs of a feature megatron mode leaves out do not fit in 128 bits");
}

// The omissions over `documents`, or, without documents, those a sequence of
// `probe` tokens shows, without sizes. A feature the model lacks changes
// nothing at any length; one it has changes its longest document's count.
Result<std::vector<MegatronOmission>> omissions(const Model& model, const DocumentsByLength& documents,
                                                std::int64_t probe) {
  std::vector<Switch> switches = switches_of(model);
  const bool sized = !documents.empty();
  const std::int64_t longest = sized ? documents.rbegin()->first : probe;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<Int128> at_longest, doubled_changes(model, switches, longest));
  std::vector<Switch> present;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    if (at_longest[i] != 0) present.push_back(switches[i]);
  }
  std::vector<MegatronOmission> out;
  const Conventions megatron = megatron_mode_choices(model);
  for (const Switch& s : present) out.push_back({s.kind, choice_text(s.kind, megatron), std::nullopt});
  if (!sized) return out;
  std::vector<Int128> sums(present.size(), 0);
  for (const auto& [length, count] : documents) {
    if (length == 0 || count == 0) continue;
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::vector<Int128> changes, doubled_changes(model, present, length));
    for (std::size_t i = 0; i < present.size(); ++i) {
      const auto product = checked_mul(changes[i] / 2, count);
      const auto sum = product ? checked_add(sums[i], *product) : std::nullopt;
      if (!sum) return omission_overflow();
      sums[i] = *sum;
    }
  }
  for (std::size_t i = 0; i < present.size(); ++i) out[i].flops = sums[i];
  return out;
}

}  // namespace

Status add_megatron_omissions(const Model& model, const DocumentsByLength& documents, Report& report) {
  if (report.mode != Mode::kMegatron) return Ok{};
  TRAINFLOPS_ASSIGN_OR_RETURN(report.megatron_omissions, omissions(model, documents, 1));
  return Ok{};
}

Status add_megatron_omissions(const Model& model, const Workload& workload, Report& report) {
  if (report.mode != Mode::kMegatron) return Ok{};
  DocumentsByLength documents;
  std::int64_t probe = 1;
  if (const auto* bshd = std::get_if<Bshd>(&workload)) {
    documents[bshd->seq_length] = bshd->batch_size;
  } else if (const auto* packed = std::get_if<PackedDocuments>(&workload)) {
    for (const std::int64_t length : packed->lengths) ++documents[length];
  } else {
    // T and S2 alone: the features are found at the mean context S2 / T
    // (T <= S2 in a valid batch), capped where it could pass 128 bits; any
    // length shows them, each has a part per token.
    constexpr Int128 kLongestProbe = Int128{1} << 20;
    const auto& aggregates = std::get<SequenceAggregates>(workload);
    probe = static_cast<std::int64_t>(std::min(aggregates.squared_sum / aggregates.total_tokens, kLongestProbe));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(report.megatron_omissions, omissions(model, documents, probe));
  return Ok{};
}

}  // namespace trainflops
