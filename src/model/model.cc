#include "trainflops/model.h"

#include <algorithm>
#include <limits>

#include "base/overloaded.h"

namespace trainflops {
namespace {

// Sizes are capped so that every per-token coefficient (a product of at most
// four sizes) fits in 128 bits; real models are many orders below this.
constexpr std::int64_t kMaxSize = std::numeric_limits<std::int32_t>::max();

// Where a value sits ("mixer.indexer.topk"). Every model built is validated
// and almost none fails, so a path is spelled out only for an error.
class Checker {
 public:
  explicit Checker(std::string_view name, const Checker* parent = nullptr) : name_(name), parent_(parent) {}

  // The checker of a member; it refers to this one, which must outlive it.
  Checker at(std::string_view member) const { return Checker(member, this); }

  Status positive(std::string_view name, std::int64_t value) const {
    if (value >= 1 && value <= kMaxSize) return Ok{};
    return out_of_range(name, value, 1, "must be a positive integer");
  }
  Status non_negative(std::string_view name, std::int64_t value) const {
    if (value >= 0 && value <= kMaxSize) return Ok{};
    return out_of_range(name, value, 0, "must be a non-negative integer");
  }
  Status positive(std::string_view name, const std::optional<std::int64_t>& value) const {
    return value ? positive(name, *value) : Status(Ok{});
  }
  [[gnu::cold]] Error error(std::string_view name, std::int64_t value, const std::string& rule) const {
    return Error(qualified(name) + " = " + std::to_string(value) + ": " + rule);
  }

 private:
  [[gnu::cold, gnu::noinline]] Error out_of_range(std::string_view name, std::int64_t value, std::int64_t low,
                                                  const char* rule) const {
    if (value < low) return error(name, value, rule);
    return error(name, value, "must be at most " + std::to_string(kMaxSize));
  }

  std::string qualified(std::string_view member) const {
    const std::string path = parent_ ? parent_->qualified(name_) : std::string(name_);
    return path.empty() ? std::string(member) : path + "." + std::string(member);
  }

  std::string_view name_;
  const Checker* parent_;
};

Status check(const Checker& c, const GqaAttention& a) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", a.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_query_groups", a.num_query_groups));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("head_dim", a.head_dim));
  if (a.num_heads % a.num_query_groups != 0) {
    return c.error("num_query_groups", a.num_query_groups, "must divide num_heads = " + std::to_string(a.num_heads));
  }
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("window", a.window));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("chunk", a.chunk));
  if (a.key_is_value && a.reuses_key_value) {
    return c.error("reuses_key_value", 1, "a layer without key/value projections has none to use as both");
  }
  if ((a.key_is_value || a.reuses_key_value) && !a.head_dim) {
    return c.error("head_dim", 0, "is required with key_is_value or reuses_key_value");
  }
  if (a.window && a.chunk)
    return c.error("chunk", *a.chunk, "cannot be combined with window = " + std::to_string(*a.window));
  if (a.output_gate && a.head_gate) {
    return c.error("head_gate", 1, "a layer gates its output per element (output_gate) or per head, not both");
  }
  return Ok{};
}

Status check(const Checker& c, const CompressedSparseAttention& a) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", a.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("head_dim", a.head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("q_lora_rank", a.q_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("o_groups", a.o_groups));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("o_lora_rank", a.o_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("window", a.window));
  if (a.kind != CompressedSparseAttention::Kind::kCsa) return Ok{};
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_num_heads", a.indexer_num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_head_dim", a.indexer_head_dim));
  return c.positive("topk", a.topk);
}

Status check(const Checker& c, const CompressedBlockSparseAttention& a) {
  const Checker attention = c.at("attention");
  TRAINFLOPS_RETURN_IF_ERROR(check(attention, a.attention));
  if (a.attention.window) {
    return attention.error("window", *a.attention.window, "QSA selects its keys by blocks");
  }
  if (a.attention.chunk) return attention.error("chunk", *a.attention.chunk, "QSA selects its keys by blocks");
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_num_heads", a.indexer_num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_key_heads", a.indexer_key_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_head_dim", a.indexer_head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("block_size", a.block_size));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("budget", a.budget));
  if (a.budget % a.block_size != 0) {
    return c.error("budget", a.budget, "must be a multiple of block_size = " + std::to_string(a.block_size));
  }
  return Ok{};
}

Status check(const Checker& c, const SharedCompressedAttention& a) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", a.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("head_dim", a.head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("q_lora_rank", a.q_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("o_groups", a.o_groups));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("o_lora_rank", a.o_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("window", a.window));
  TRAINFLOPS_RETURN_IF_ERROR(c.non_negative("compress_ratio", a.compress_ratio));
  if (a.compress_ratio == 0) {
    if (a.writes_cache) {
      return c.error("writes_cache", 1, "a layer that reads no cache (compress_ratio = 0) writes none");
    }
    if (a.runs_indexer) {
      return c.error("runs_indexer", 1, "a layer that reads no cache (compress_ratio = 0) indexes none");
    }
    return Ok{};
  }
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("topk", a.topk));
  if (a.runs_indexer) {
    TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_num_heads", a.indexer_num_heads));
    TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_head_dim", a.indexer_head_dim));
  }
  if (a.candidate_role == SharedCompressedAttention::CandidateRole::kNone) return Ok{};
  if (!a.runs_indexer) {
    return c.error("runs_indexer", 0, "a candidate source or consumer must be an index source");
  }
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("candidate_blocks", a.candidate_blocks));
  return c.positive("candidate_block_size", a.candidate_block_size);
}

Status check(const Checker& c, const MlaAttention& a) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", a.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("q_lora_rank", a.q_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("kv_lora_rank", a.kv_lora_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("qk_head_dim", a.qk_head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.non_negative("qk_pos_emb_head_dim", a.qk_pos_emb_head_dim));
  return c.positive("v_head_dim", a.v_head_dim);
}

// `indexer` checks the members of `i`.
Status check(const Checker& indexer, const DsaIndexer& i) {
  TRAINFLOPS_RETURN_IF_ERROR(indexer.positive("num_heads", i.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(indexer.positive("head_dim", i.head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(indexer.positive("topk", i.topk));
  TRAINFLOPS_RETURN_IF_ERROR(indexer.positive("pool_size", i.pool_size));
  if (i.pool_size > 1 && i.grad_mode != DsaIndexer::GradMode::kOff) {
    return indexer.error("pool_size", i.pool_size,
                         "KPool requires the indexer loss disabled (grad mode off, got " +
                             std::string(grad_mode_name(i.grad_mode)) + ")");
  }
  if (!i.topk) {
    if (i.pool_size == 1) return Ok{};
    return indexer.error("pool_size", i.pool_size, "KPool selects topk / pool_size pools, and topk is unset");
  }
  if (*i.topk % i.pool_size != 0) {
    return indexer.error("topk", *i.topk, "must be a multiple of pool_size = " + std::to_string(i.pool_size));
  }
  return Ok{};
}

Status check(const Checker& c, const DsaAttention& a) {
  TRAINFLOPS_RETURN_IF_ERROR(check(c, a.mla));
  return check(c.at("indexer"), a.indexer);
}

Status check(const Checker& c, const DsaGqaAttention& a) {
  const Checker attention = c.at("attention");
  TRAINFLOPS_RETURN_IF_ERROR(check(attention, a.attention));
  constexpr std::string_view selects = "DSA over grouped-query attention attends the keys its indexer selects";
  if (a.attention.window) return attention.error("window", *a.attention.window, std::string(selects));
  if (a.attention.chunk) return attention.error("chunk", *a.attention.chunk, std::string(selects));
  if (a.attention.key_is_value || a.attention.reuses_key_value) {
    return attention.error(a.attention.key_is_value ? "key_is_value" : "reuses_key_value", 1,
                           "DSA over grouped-query attention projects its own keys and values");
  }
  if (!a.attention.head_dim) return attention.error("head_dim", 0, "is required for DSA over grouped-query attention");
  const Checker indexer = c.at("indexer");
  if (a.indexer.pool_size != 1) {
    return indexer.error("pool_size", a.indexer.pool_size,
                         "must be 1: KPool is DSA's over MLA; DSA over grouped-query attention has none");
  }
  return check(indexer, a.indexer);
}

Status check(const Checker& c, const BlockSparseAttention& a) {
  const Checker attention = c.at("attention");
  TRAINFLOPS_RETURN_IF_ERROR(check(attention, a.attention));
  if (a.attention.window) {
    return attention.error("window", *a.attention.window, "block-sparse attention selects its keys by blocks");
  }
  if (a.attention.chunk) {
    return attention.error("chunk", *a.attention.chunk, "block-sparse attention selects its keys by blocks");
  }
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_num_heads", a.indexer_num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("indexer_head_dim", a.indexer_head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("block_size", a.block_size));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("topk_blocks", a.topk_blocks));
  TRAINFLOPS_RETURN_IF_ERROR(c.non_negative("init_blocks", a.init_blocks));
  if (a.init_blocks >= a.topk_blocks) {
    return c.error("init_blocks", a.init_blocks,
                   "must be less than topk_blocks = " + std::to_string(a.topk_blocks) +
                       " (the query's own block is attended too)");
  }
  return Ok{};
}

Status check(const Checker& c, const GatedDeltaNet& g) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("key_head_dim", g.key_head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("value_head_dim", g.value_head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_key_heads", g.num_key_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_value_heads", g.num_value_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("conv_kernel_dim", g.conv_kernel_dim));
  return c.positive("chunk_size", g.chunk_size);
}

Status check(const Checker& c, const Mamba2& m) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("inner_dim", m.inner_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", m.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_groups", m.num_groups));
  return c.positive("state_dim", m.state_dim);
}

Status check(const Checker& c, const GatedDeltaProduct& g) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("inner_dim", g.inner_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", g.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_groups", g.num_groups));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("state_dim", g.state_dim));
  return c.positive("num_householder", g.num_householder);
}

Status check(const Checker& c, const KimiDeltaAttention& k) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_heads", k.num_heads));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("head_dim", k.head_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("conv_kernel_dim", k.conv_kernel_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("forget_gate_rank", k.forget_gate_rank));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("chunk_size", k.chunk_size));
  return c.positive("output_gate_rank", k.output_gate_rank);
}

Status check(const Checker& c, const DenseMlp& m) { return c.positive("ffn_hidden_size", m.ffn_hidden_size); }

Status check(const Checker& c, const Moe& m) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("num_experts", m.num_experts));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("topk", m.topk));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("expert_ffn_hidden_size", m.expert_ffn_hidden_size));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("shared_expert_ffn_hidden_size", m.shared_expert_ffn_hidden_size));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("latent_size", m.latent_size));
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("zero_experts", m.zero_experts));
  const std::int64_t choices = m.num_experts ? *m.num_experts + m.zero_experts.value_or(0) : m.topk;
  if (m.topk > choices) {
    return c.error("topk", m.topk,
                   "must not exceed num_experts = " + std::to_string(*m.num_experts) +
                       (m.zero_experts ? " + zero_experts = " + std::to_string(*m.zero_experts) : ""));
  }
  if (m.zero_experts.has_value() != m.real_experts_per_token.has_value()) {
    return m.zero_experts ? c.error("zero_experts", *m.zero_experts,
                                    "needs real_experts_per_token, how many of the topk picks are real experts")
                          : c.error("real_experts_per_token", *m.real_experts_per_token,
                                    "applies only with zero_experts (identity experts)");
  }
  if (m.real_experts_per_token && (*m.real_experts_per_token < 0 || *m.real_experts_per_token > m.topk)) {
    return c.error("real_experts_per_token", *m.real_experts_per_token,
                   "must be between 0 and topk = " + std::to_string(m.topk));
  }
  if (m.real_experts_per_token && m.num_experts && *m.real_experts_per_token > *m.num_experts) {
    return c.error("real_experts_per_token", *m.real_experts_per_token,
                   "must not exceed num_experts = " + std::to_string(*m.num_experts));
  }
  return Ok{};
}

Status check(const Checker& c, const HyperConnections& hc) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("streams", hc.streams));
  if (hc.variant == HyperConnections::Variant::kGatedResidual) return c.positive("rank", hc.rank);
  if (hc.rank != 0) return c.error("rank", hc.rank, "applies to the gated_residual variant only");
  return Ok{};
}

// `streams`: the model's residual streams.
Status check(const Checker& c, const NgramMemory& m, std::int64_t streams) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("embed_dim", m.embed_dim));
  TRAINFLOPS_RETURN_IF_ERROR(c.non_negative("conv_kernel", m.conv_kernel));
  if (m.streams != streams) {
    return c.error("streams", m.streams,
                   "must equal the model's residual streams, " + std::to_string(streams) +
                       (streams == 1 ? " (it has no hyper-connections)" : " (hyper_connections.streams)"));
  }
  if (m.table_parameters < 0) return c.error("table_parameters", m.table_parameters, "must not be negative");
  return Ok{};
}

// Each decoder layer reads its two inputs through the attention residuals.
Status check(const Checker& c, const AttentionResiduals& residuals, const Model& model) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("block_size", residuals.block_size));
  if (model.hyper_connections) {
    return Error(
        "attention_residuals and hyper_connections: a model has one or the other (both replace the residual sum)");
  }
  for (const LayerStack::Run& run : model.layers.runs()) {
    const Layer& layer = model.layers.distinct()[run.layer];
    if (!layer.mixer || !layer.channel_mixer) {
      return Error("attention_residuals: layers[" + std::to_string(run.start) + "] has no " +
                   (layer.mixer ? "channel mixer" : "mixer") +
                   "; attention residuals feed every decoder layer's mixer and channel mixer");
    }
  }
  return Ok{};
}

Status check(const Checker& c, const PerLayerEmbedding& e) {
  TRAINFLOPS_RETURN_IF_ERROR(c.positive("dim", e.dim));
  return c.positive("vocabulary", e.vocabulary);
}

// `path()` names the stack ("layers"), called only for an error; `streams`
// the model's residual streams.
template <typename Path>
Status check_layers(const Path& path, const LayerStack& layers, std::int64_t streams) {
  if (layers.empty()) return Error(path() + ": must hold at least one layer");
  // Paths relative to the layer; its own is prefixed only to an error.
  const Checker mixer("mixer"), channel_mixer("channel_mixer"), ngram_memory("ngram_memory"),
      per_layer_embedding("per_layer_embedding");
  // Each distinct layer is checked once, at its first run (an error names
  // that position): distinct() holds them in the order of their first runs.
  std::size_t checked = 0;
  for (const LayerStack::Run& run : layers.runs()) {
    const std::size_t index = run.layer;
    if (index < checked) continue;
    checked = index + 1;
    const Layer& l = layers.distinct()[index];
    const auto where = [&] { return path() + "[" + std::to_string(run.start) + "]"; };
    if (!l.mixer && !l.channel_mixer) return Error(where() + ": has neither a mixer nor a channel mixer");
    Status status = Ok{};
    // check() has one overload per layer type: a type without one does not compile.
    if (l.mixer) status = std::visit([&](const auto& m) { return check(mixer, m); }, *l.mixer);
    if (status.ok() && l.channel_mixer) {
      status = std::visit([&](const auto& m) { return check(channel_mixer, m); }, *l.channel_mixer);
    }
    if (status.ok() && l.ngram_memory) status = check(ngram_memory, *l.ngram_memory, streams);
    if (status.ok() && l.per_layer_embedding) status = check(per_layer_embedding, *l.per_layer_embedding);
    if (!status.ok()) return Error(status.error().code(), where() + "." + status.error().message());
  }
  return Ok{};
}

// The indexer of `mixer` whose training a grad mode describes, or null.
DsaIndexer* trainable_indexer(Mixer& mixer) {
  return std::visit(Overloaded{
                        [](DsaAttention& a) -> DsaIndexer* { return &a.indexer; },
                        [](DsaGqaAttention& a) -> DsaIndexer* { return &a.indexer; },
                        // DeepSeek-V4's CSA indexer trains with its layer, a block-sparse
                        // indexer not at all: no grad mode.
                        // DeepSeek-V4.1's runs forward only: no grad mode either.
                        [](OneOf<GqaAttention, MlaAttention, CompressedSparseAttention, GatedDeltaNet, Mamba2,
                                 GatedDeltaProduct, BlockSparseAttention, KimiDeltaAttention,
                                 SharedCompressedAttention, CompressedBlockSparseAttention> auto&) -> DsaIndexer* {
                          return nullptr;
                        },
                    },
                    mixer);
}

}  // namespace

std::optional<CompressedSparseAttention::Kind> compression_kind_of(std::int64_t ratio) {
  for (auto kind : {CompressedSparseAttention::Kind::kWindow, CompressedSparseAttention::Kind::kCsa,
                    CompressedSparseAttention::Kind::kHca}) {
    if (ratio == compression_ratio(kind)) return kind;
  }
  return std::nullopt;
}

std::int64_t compression_ratio(CompressedSparseAttention::Kind kind) {
  switch (kind) {
    case CompressedSparseAttention::Kind::kWindow: return 0;
    case CompressedSparseAttention::Kind::kCsa: return 4;
    case CompressedSparseAttention::Kind::kHca: return 128;
  }
  return 0;
}

std::string_view hyper_connection_variant_name(HyperConnections::Variant variant) {
  switch (variant) {
    case HyperConnections::Variant::kManifold: return "mhc";
    case HyperConnections::Variant::kGatedResidual: return "gated_residual";
  }
  return "unknown";
}

std::string_view grad_mode_name(DsaIndexer::GradMode mode) {
  switch (mode) {
    case DsaIndexer::GradMode::kOff: return "off";
    case DsaIndexer::GradMode::kDetached: return "detached";
    case DsaIndexer::GradMode::kSparse: return "sparse";
    case DsaIndexer::GradMode::kFull: return "full";
  }
  return "unknown";
}

Result<DsaIndexer::GradMode> parse_grad_mode(std::string_view text) {
  for (auto mode : {DsaIndexer::GradMode::kOff, DsaIndexer::GradMode::kDetached, DsaIndexer::GradMode::kSparse,
                    DsaIndexer::GradMode::kFull}) {
    if (text == grad_mode_name(mode)) return mode;
  }
  return Error("grad_mode = \"" + std::string(text) + "\": must be one of off, detached, sparse, full");
}

Status set_dsa_indexer_grad_mode(Model& model, DsaIndexer::GradMode mode) {
  bool any = false;
  const auto set = [&](Layer& layer) {
    DsaIndexer* indexer = layer.mixer ? trainable_indexer(*layer.mixer) : nullptr;
    if (!indexer) return;
    indexer->grad_mode = mode;
    any = true;
  };
  model.layers.edit_each(set);
  for (LayerStack& depth : model.mtp_depths) depth.edit_each(set);
  if (!any) {
    return Error("dsa_indexer_grad_mode = \"" + std::string(grad_mode_name(mode)) +
                 "\": the model has no DSA layer, so no indexer to train");
  }
  return Ok{};
}

Status set_real_experts_per_token(Model& model, std::int64_t real) {
  const std::string field = "real_experts_per_token = " + std::to_string(real);
  std::vector<Moe*> moes;
  const auto find = [&](Layer& layer) {
    Moe* moe = layer.channel_mixer ? std::get_if<Moe>(&*layer.channel_mixer) : nullptr;
    if (moe && moe->zero_experts) moes.push_back(moe);
  };
  model.layers.edit_each(find);
  for (LayerStack& depth : model.mtp_depths) depth.edit_each(find);
  if (moes.empty()) {
    return Error(field + ": the model has no zero experts, so every one of its top-k picks is a real expert");
  }
  for (const Moe* moe : moes) {
    if (real < 0 || real > moe->topk) return Error(field + ": must be between 0 and topk = " + std::to_string(moe->topk));
    if (moe->num_experts && real > *moe->num_experts) {
      return Error(field + ": must not exceed num_experts = " + std::to_string(*moe->num_experts));
    }
  }
  for (Moe* moe : moes) moe->real_experts_per_token = real;
  return Ok{};
}

Status check_layer_count(std::string_view field, std::int64_t count) {
  if (count <= kMaxLayers) return Ok{};
  return Error(std::string(field) + " = " + std::to_string(count) + ": must be at most " + std::to_string(kMaxLayers) +
               " (trainflops describes every layer; published models have a few hundred)");
}

Status validate(const Model& model) {
  const Checker top("");
  TRAINFLOPS_RETURN_IF_ERROR(top.positive("hidden_size", model.hidden_size));
  TRAINFLOPS_RETURN_IF_ERROR(top.positive("vocab_size", model.vocab_size));
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("layers", static_cast<std::int64_t>(model.layers.size())));
  std::int64_t mtp_layers = 0;
  for (const auto& depth : model.mtp_depths) mtp_layers += static_cast<std::int64_t>(depth.size());
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("the layers of mtp_depths", mtp_layers));
  if (model.hyper_connections) {
    TRAINFLOPS_RETURN_IF_ERROR(check(top.at("hyper_connections"), *model.hyper_connections));
  }
  const std::int64_t streams = model.hyper_connections ? model.hyper_connections->streams : 1;
  TRAINFLOPS_RETURN_IF_ERROR(check_layers([] { return std::string("layers"); }, model.layers, streams));
  for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
    TRAINFLOPS_RETURN_IF_ERROR(
        check_layers([d] { return "mtp_depths[" + std::to_string(d) + "]"; }, model.mtp_depths[d], streams));
  }
  if (model.attention_residuals) {
    TRAINFLOPS_RETURN_IF_ERROR(check(top.at("attention_residuals"), *model.attention_residuals, model));
  }
  std::int64_t staged = 0;
  for (std::size_t i = 0; i < model.pipeline_stage_layers.size(); ++i) {
    TRAINFLOPS_RETURN_IF_ERROR(
        top.non_negative("pipeline_stage_layers[" + std::to_string(i) + "]", model.pipeline_stage_layers[i]));
    staged += model.pipeline_stage_layers[i];
  }
  if (!model.pipeline_stage_layers.empty() && staged != static_cast<std::int64_t>(model.layers.size())) {
    return Error("pipeline_stage_layers: the stages hold " + std::to_string(staged) +
                 " decoder layers; the model has " + std::to_string(model.layers.size()));
  }
  return Ok{};
}

namespace {

// The position of the first DSA layer of `layers` without a top-k.
std::optional<std::int64_t> first_dsa_layer_without_topk(const LayerStack& layers) {
  for (const LayerStack::Run& run : layers.runs()) {
    const Layer& layer = layers.distinct()[run.layer];
    if (!layer.mixer) continue;
    const auto* dsa = std::get_if<DsaAttention>(&*layer.mixer);
    const auto* dsa_gqa = std::get_if<DsaGqaAttention>(&*layer.mixer);
    const DsaIndexer* indexer = dsa ? &dsa->indexer : dsa_gqa ? &dsa_gqa->indexer : nullptr;
    if (indexer && !indexer->topk) return run.start;
  }
  return std::nullopt;
}

}  // namespace

Status check_dsa_topk_given(const Model& model, std::string_view mode) {
  std::string path;
  if (const std::optional<std::int64_t> position = first_dsa_layer_without_topk(model.layers)) {
    path = "layers[" + std::to_string(*position) + "]";
  }
  for (std::size_t d = 0; path.empty() && d < model.mtp_depths.size(); ++d) {
    if (const std::optional<std::int64_t> position = first_dsa_layer_without_topk(model.mtp_depths[d])) {
      path = "mtp_depths[" + std::to_string(d) + "][" + std::to_string(*position) + "]";
    }
  }
  if (path.empty()) return Ok{};
  return Error(path + ".mixer.indexer.topk is missing: " + std::string(mode) +
               " counts the keys a DSA layer selects (only megatron mode counts a layer without a top-k, as "
               "Megatron-LM's function does: every causal pair)");
}

std::string mixer_kind(const Mixer& mixer) {
  struct Namer {
    std::string operator()(const GqaAttention& a) const { return a.window ? "swa" : a.chunk ? "chunked" : "gqa"; }
    std::string operator()(const CompressedSparseAttention& a) const {
      switch (a.kind) {
        case CompressedSparseAttention::Kind::kWindow: return "window";
        case CompressedSparseAttention::Kind::kCsa: return "csa";
        case CompressedSparseAttention::Kind::kHca: return "hca";
      }
      return "unknown";
    }
    std::string operator()(const MlaAttention&) const { return "mla"; }
    std::string operator()(const DsaAttention& a) const { return a.runs_indexer ? "dsa" : "dsa-shared"; }
    std::string operator()(const GatedDeltaNet& g) const {
      return g.variant == GatedDeltaNet::Variant::kGdn2 ? "gdn2" : "gdn";
    }
    std::string operator()(const Mamba2&) const { return "mamba2"; }
    std::string operator()(const GatedDeltaProduct&) const { return "gdp"; }
    std::string operator()(const BlockSparseAttention&) const { return "block-sparse"; }
    std::string operator()(const KimiDeltaAttention&) const { return "kda"; }
    std::string operator()(const SharedCompressedAttention& a) const {
      return a.compress_ratio == 0 ? "csa2-window" : "csa2";
    }
    std::string operator()(const CompressedBlockSparseAttention&) const { return "qsa"; }
    std::string operator()(const DsaGqaAttention& a) const { return a.runs_indexer ? "dsa-gqa" : "dsa-gqa-shared"; }
  };
  return std::visit(Namer{}, mixer);
}

std::string channel_mixer_kind(const ChannelMixer& channel_mixer) {
  return std::visit(Overloaded{[](const DenseMlp&) { return "mlp"; }, [](const Moe&) { return "moe"; }}, channel_mixer);
}

std::string layer_kind(const Layer& layer) {
  if (layer.mixer && layer.channel_mixer)
    return mixer_kind(*layer.mixer) + "+" + channel_mixer_kind(*layer.channel_mixer);
  return layer.mixer ? mixer_kind(*layer.mixer) : channel_mixer_kind(*layer.channel_mixer);
}

std::string summarize(const Model& model) {
  std::vector<std::string> kinds;  // per distinct layer
  for (const Layer& layer : model.layers.distinct()) kinds.push_back(layer_kind(layer));
  std::vector<KindCount> layers(kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) layers[i].kind = kinds[i];
  for (const LayerStack::Run& run : model.layers.runs()) layers[run.layer].count += run.count;
  return summarize(model.name, layers, model.mtp_depths.size(), model.hidden_size, model.vocab_size);
}

std::string summarize(std::string_view name, std::span<const KindCount> layers, std::size_t mtp_depths,
                      std::int64_t hidden_size, std::int64_t vocab_size) {
  // Kinds in order of first appearance, with their counts.
  std::vector<KindCount> kinds;
  std::int64_t total = 0;
  for (const KindCount& layer : layers) {
    total += layer.count;
    const auto it = std::find_if(kinds.begin(), kinds.end(), [&](const KindCount& k) { return k.kind == layer.kind; });
    if (it == kinds.end()) {
      kinds.push_back(layer);
    } else {
      it->count += layer.count;
    }
  }
  std::string text = (name.empty() ? "" : std::string(name) + ": ") + std::to_string(total) + " layers (";
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(kinds[i].count) + " ";
    text += kinds[i].kind;
  }
  text += ")";
  if (mtp_depths > 0) text += " + " + std::to_string(mtp_depths) + " MTP depth" + (mtp_depths > 1 ? "s" : "");
  return text + ", hidden " + std::to_string(hidden_size) + ", vocab " + std::to_string(vocab_size);
}

}  // namespace trainflops
