#include "trainflops/native_config.h"

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <type_traits>
#include <utility>
#include <variant>

#include "base/input_file.h"
#include "base/json_text.h"

namespace trainflops {
namespace {

using nlohmann::json;

std::string shown(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// Reads the members of one JSON object and reports the ones never read, so a
// misspelt key is an error rather than a silently missing feature.
class ObjectReader {
 public:
  static Result<ObjectReader> open(const json& value, std::string path) {
    if (!value.is_object())
      return Error((path.empty() ? "the config" : path) + " = " + shown(value) + ": must be an object");
    return ObjectReader(value, std::move(path));
  }

  std::string path_of(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  // Marks `key` as known; nullptr when it is absent or null.
  const json* optional_member(std::string_view key) {
    read_.emplace(key);
    const auto it = object_->find(key);
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }

  Result<const json*> member(std::string_view key) {
    read_.emplace(key);
    const auto it = object_->find(key);
    if (it == object_->end()) return Error(path_of(key) + " is missing");
    return &*it;
  }

  Result<std::int64_t> integer(std::string_view key) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const json* value, member(key));
    if (!value->is_number_integer() ||
        (value->is_number_unsigned() && value->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
      return Error(path_of(key) + " = " + shown(*value) + ": must be an integer");
    }
    return value->get<std::int64_t>();
  }

  Result<std::optional<std::int64_t>> optional_integer(std::string_view key) {
    if (!optional_member(key)) return std::optional<std::int64_t>();
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t value, integer(key));
    return std::optional<std::int64_t>(value);
  }

  // Absent means false.
  Result<bool> flag(std::string_view key) {
    if (!optional_member(key)) return false;
    TRAINFLOPS_ASSIGN_OR_RETURN(const json* value, member(key));
    if (!value->is_boolean()) return Error(path_of(key) + " = " + shown(*value) + ": must be true or false");
    return value->get<bool>();
  }

  Result<std::string> text(std::string_view key) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const json* value, member(key));
    if (!value->is_string()) return Error(path_of(key) + " = " + shown(*value) + ": must be a string");
    return value->get<std::string>();
  }

  Status finish() const {
    for (const auto& [key, value] : object_->items()) {
      if (read_.find(key) == read_.end()) {
        std::string known;
        for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
        return Error(path_of(key) + ": unknown key (this object takes " + known + ")");
      }
    }
    return Ok{};
  }

 private:
  ObjectReader(const json& object, std::string path) : object_(&object), path_(std::move(path)) {}

  const json* object_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

// How the config spells each mixer and channel mixer type: the names its
// "type" takes, in the order errors list them, and the reader of its other
// fields. Mixer and ChannelMixer are read through the entry of every
// alternative (read_part), so a type added to either without one does not
// compile.
template <typename Part>
struct ConfigType;

template <>
struct ConfigType<GqaAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"gqa"};
  static Status read(ObjectReader& r, std::string_view, GqaAttention& a) {
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_query_groups, r.integer("num_query_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.head_dim, r.integer("head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.output_gate, r.flag("output_gate"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.head_gate, r.flag("head_gate"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.key_is_value, r.flag("key_is_value"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.reuses_key_value, r.flag("reuses_key_value"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.window, r.optional_integer("window"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.chunk, r.optional_integer("chunk"));
    return Ok{};
  }
};

template <>
struct ConfigType<MlaAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"mla"};
  static Status read(ObjectReader& r, std::string_view, MlaAttention& a) {
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.q_lora_rank, r.optional_integer("q_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.kv_lora_rank, r.integer("kv_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.qk_head_dim, r.integer("qk_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.qk_pos_emb_head_dim, r.integer("qk_pos_emb_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.v_head_dim, r.integer("v_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.output_gate, r.flag("output_gate"));
    return Ok{};
  }
};

// The "indexer" object of a DSA layer (over MLA or grouped-query attention),
// and its "reuses_topk".
Status read_dsa_indexer(ObjectReader& r, DsaIndexer& out, bool& runs_indexer) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const json* indexer_json, r.member("indexer"));
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader indexer, ObjectReader::open(*indexer_json, r.path_of("indexer")));
  TRAINFLOPS_ASSIGN_OR_RETURN(out.num_heads, indexer.integer("num_heads"));
  TRAINFLOPS_ASSIGN_OR_RETURN(out.head_dim, indexer.integer("head_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(out.topk, indexer.integer("topk"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string grad_mode, indexer.text("grad_mode"));
  Result<DsaIndexer::GradMode> mode = parse_grad_mode(grad_mode);
  if (!mode.ok()) return Error(indexer.path_of("") + mode.error().message());
  out.grad_mode = mode.value();
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> pool_size, indexer.optional_integer("pool_size"));
  out.pool_size = pool_size.value_or(1);
  if (indexer.optional_member("pool_tail")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(out.pool_tail, indexer.flag("pool_tail"));
  }
  TRAINFLOPS_RETURN_IF_ERROR(indexer.finish());
  TRAINFLOPS_ASSIGN_OR_RETURN(const bool reuses, r.flag("reuses_topk"));
  runs_indexer = !reuses;
  return Ok{};
}

template <>
struct ConfigType<DsaAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"dsa"};
  static Status read(ObjectReader& r, std::string_view, DsaAttention& a) {
    TRAINFLOPS_RETURN_IF_ERROR(ConfigType<MlaAttention>::read(r, "mla", a.mla));
    return read_dsa_indexer(r, a.indexer, a.runs_indexer);
  }
};

template <>
struct ConfigType<DsaGqaAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"dsa_gqa"};
  static Status read(ObjectReader& r, std::string_view, DsaGqaAttention& a) {
    TRAINFLOPS_RETURN_IF_ERROR(ConfigType<GqaAttention>::read(r, "gqa", a.attention));
    return read_dsa_indexer(r, a.indexer, a.runs_indexer);
  }
};

template <>
struct ConfigType<CompressedSparseAttention> {
  using Kind = CompressedSparseAttention::Kind;
  static constexpr std::array<std::string_view, 3> kNames = {"window", "csa", "hca"};
  static Status read(ObjectReader& r, std::string_view type, CompressedSparseAttention& a) {
    a.kind = type == "csa" ? Kind::kCsa : type == "hca" ? Kind::kHca : Kind::kWindow;
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.head_dim, r.integer("head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.q_lora_rank, r.integer("q_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.o_groups, r.integer("o_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.o_lora_rank, r.integer("o_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.window, r.integer("window"));
    if (a.kind == Kind::kCsa) {
      TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_num_heads, r.integer("indexer_num_heads"));
      TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_head_dim, r.integer("indexer_head_dim"));
      TRAINFLOPS_ASSIGN_OR_RETURN(a.topk, r.integer("topk"));
    }
    return Ok{};
  }
};

// A delta rule's chunk_size, absent keeping the default it has.
Status read_delta_rule_chunk_size(ObjectReader& r, std::int64_t& chunk_size) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> read, r.optional_integer("chunk_size"));
  if (read) chunk_size = *read;
  return Ok{};
}

template <>
struct ConfigType<GatedDeltaNet> {
  static constexpr std::array<std::string_view, 2> kNames = {"gdn", "gdn2"};
  static Status read(ObjectReader& r, std::string_view type, GatedDeltaNet& g) {
    g.variant = type == "gdn2" ? GatedDeltaNet::Variant::kGdn2 : GatedDeltaNet::Variant::kGdn;
    TRAINFLOPS_ASSIGN_OR_RETURN(g.key_head_dim, r.integer("key_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.value_head_dim, r.integer("value_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.num_key_heads, r.integer("num_key_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.num_value_heads, r.integer("num_value_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.conv_kernel_dim, r.integer("conv_kernel_dim"));
    return read_delta_rule_chunk_size(r, g.chunk_size);
  }
};

template <>
struct ConfigType<Mamba2> {
  static constexpr std::array<std::string_view, 1> kNames = {"mamba2"};
  static Status read(ObjectReader& r, std::string_view, Mamba2& m) {
    TRAINFLOPS_ASSIGN_OR_RETURN(m.inner_dim, r.integer("inner_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_groups, r.integer("num_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.state_dim, r.integer("state_dim"));
    return Ok{};
  }
};

template <>
struct ConfigType<GatedDeltaProduct> {
  static constexpr std::array<std::string_view, 1> kNames = {"gdp"};
  static Status read(ObjectReader& r, std::string_view, GatedDeltaProduct& g) {
    TRAINFLOPS_ASSIGN_OR_RETURN(g.inner_dim, r.integer("inner_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.num_groups, r.integer("num_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.state_dim, r.integer("state_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(g.num_householder, r.integer("num_householder"));
    return Ok{};
  }
};

template <>
struct ConfigType<BlockSparseAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"block_sparse"};
  static Status read(ObjectReader& r, std::string_view, BlockSparseAttention& a) {
    TRAINFLOPS_RETURN_IF_ERROR(ConfigType<GqaAttention>::read(r, "gqa", a.attention));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_num_heads, r.integer("indexer_num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_head_dim, r.integer("indexer_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.block_size, r.integer("block_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.topk_blocks, r.integer("topk_blocks"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> init, r.optional_integer("init_blocks"));
    a.init_blocks = init.value_or(0);
    return Ok{};
  }
};

template <>
struct ConfigType<KimiDeltaAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"kda"};
  static Status read(ObjectReader& r, std::string_view, KimiDeltaAttention& k) {
    TRAINFLOPS_ASSIGN_OR_RETURN(k.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(k.head_dim, r.integer("head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(k.conv_kernel_dim, r.integer("conv_kernel_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(k.forget_gate_rank, r.optional_integer("forget_gate_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(k.output_gate_rank, r.optional_integer("output_gate_rank"));
    return read_delta_rule_chunk_size(r, k.chunk_size);
  }
};

template <>
struct ConfigType<CompressedBlockSparseAttention> {
  static constexpr std::array<std::string_view, 1> kNames = {"qsa"};
  static Status read(ObjectReader& r, std::string_view, CompressedBlockSparseAttention& a) {
    TRAINFLOPS_RETURN_IF_ERROR(ConfigType<GqaAttention>::read(r, "gqa", a.attention));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_num_heads, r.integer("indexer_num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_key_heads, r.integer("indexer_key_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_head_dim, r.integer("indexer_head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.block_size, r.integer("block_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.budget, r.integer("budget"));
    return Ok{};
  }
};

template <>
struct ConfigType<SharedCompressedAttention> {
  using Role = SharedCompressedAttention::CandidateRole;
  static constexpr std::array<std::string_view, 1> kNames = {"csa2"};
  static Status read(ObjectReader& r, std::string_view, SharedCompressedAttention& a) {
    TRAINFLOPS_ASSIGN_OR_RETURN(a.num_heads, r.integer("num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.head_dim, r.integer("head_dim"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.q_lora_rank, r.integer("q_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.o_groups, r.integer("o_groups"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.o_lora_rank, r.integer("o_lora_rank"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.window, r.integer("window"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> ratio, r.optional_integer("compress_ratio"));
    a.compress_ratio = ratio.value_or(0);
    if (a.compress_ratio == 0) return Ok{};
    TRAINFLOPS_ASSIGN_OR_RETURN(a.topk, r.integer("topk"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.writes_cache, r.flag("writes_cache"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.runs_indexer, r.flag("runs_indexer"));
    if (!a.runs_indexer) return Ok{};
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_num_heads, r.integer("indexer_num_heads"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.indexer_head_dim, r.integer("indexer_head_dim"));
    if (!r.optional_member("candidates")) return Ok{};
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string role, r.text("candidates"));
    if (role != "source" && role != "consumer") {
      return Error(r.path_of("candidates") + " = \"" + role + "\": must be \"source\" or \"consumer\"");
    }
    a.candidate_role = role == "source" ? Role::kSource : Role::kConsumer;
    TRAINFLOPS_ASSIGN_OR_RETURN(a.candidate_blocks, r.integer("candidate_blocks"));
    TRAINFLOPS_ASSIGN_OR_RETURN(a.candidate_block_size, r.integer("candidate_block_size"));
    return Ok{};
  }
};

template <>
struct ConfigType<DenseMlp> {
  static constexpr std::array<std::string_view, 1> kNames = {"mlp"};
  static Status read(ObjectReader& r, std::string_view, DenseMlp& m) {
    TRAINFLOPS_ASSIGN_OR_RETURN(m.ffn_hidden_size, r.integer("ffn_hidden_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.gated, r.flag("gated"));
    return Ok{};
  }
};

template <>
struct ConfigType<Moe> {
  static constexpr std::array<std::string_view, 1> kNames = {"moe"};
  static Status read(ObjectReader& r, std::string_view, Moe& m) {
    TRAINFLOPS_ASSIGN_OR_RETURN(m.num_experts, r.optional_integer("num_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.topk, r.integer("topk"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.expert_ffn_hidden_size, r.integer("expert_ffn_hidden_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.shared_expert_ffn_hidden_size, r.optional_integer("shared_expert_ffn_hidden_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.latent_size, r.optional_integer("latent_size"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.gated, r.flag("gated"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.zero_experts, r.optional_integer("zero_experts"));
    TRAINFLOPS_ASSIGN_OR_RETURN(m.real_experts_per_token, r.optional_integer("real_experts_per_token"));
    return Ok{};
  }
};

// Reads the alternative of Variant (Mixer, ChannelMixer) that `type` names.
template <typename Variant>
Result<Variant> read_part(ObjectReader& r, const std::string& type) {
  std::optional<Result<Variant>> read;
  std::string names;
  const auto try_alternative = [&]<typename Part>(std::type_identity<Part>) {
    for (std::string_view name : ConfigType<Part>::kNames) {
      names += (names.empty() ? "" : ", ") + std::string(name);
      if (read || name != type) continue;
      Part part;
      const Status status = ConfigType<Part>::read(r, type, part);
      read = status.ok() ? Result<Variant>(Variant{std::move(part)}) : Result<Variant>(status.error());
    }
  };
  [&]<std::size_t... kIndex>(std::index_sequence<kIndex...>) {
    (try_alternative(std::type_identity<std::variant_alternative_t<kIndex, Variant>>{}), ...);
  }
  (std::make_index_sequence<std::variant_size_v<Variant>>{});
  if (read) return std::move(*read);
  return Error(r.path_of("type") + " = \"" + type + "\": must be one of " + names);
}

// Reads a dictionary of named definitions ("mixers" or "channel_mixers").
template <typename T, typename ReadOne>
Result<std::map<std::string, T>> read_definitions(ObjectReader& top, std::string_view key, ReadOne read_one) {
  std::map<std::string, T> definitions;
  const json* object = top.optional_member(key);
  if (!object) return definitions;
  if (!object->is_object())
    return Error(top.path_of(key) + " = " + shown(*object) + ": must be an object of named definitions");
  for (const auto& [name, value] : object->items()) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(value, top.path_of(key) + "." + name));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string type, r.text("type"));
    TRAINFLOPS_ASSIGN_OR_RETURN(T definition, read_one(r, type));
    TRAINFLOPS_RETURN_IF_ERROR(r.finish());
    definitions.emplace(name, std::move(definition));
  }
  return definitions;
}

template <typename T>
Result<std::optional<T>> look_up(ObjectReader& r, std::string_view key, const std::map<std::string, T>& definitions,
                                 std::string_view kind) {
  if (!r.optional_member(key)) return std::optional<T>();
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string name, r.text(key));
  const auto it = definitions.find(name);
  if (it == definitions.end()) {
    std::string known;
    for (const auto& [k, v] : definitions) known += (known.empty() ? "" : ", ") + k;
    return Error(r.path_of(key) + " = \"" + name + "\": not one of the defined " + std::string(kind) + " (" +
                 (known.empty() ? "none defined" : known) + ")");
  }
  return std::optional<T>(it->second);
}

// A layer's "ngram_memory": {"embed_dim", "conv_kernel", "table_parameters"};
// its streams are the model's (set once the model is read).
Result<std::optional<NgramMemory>> read_ngram_memory(ObjectReader& layer) {
  const json* value = layer.optional_member("ngram_memory");
  if (!value) return std::optional<NgramMemory>();
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(*value, layer.path_of("ngram_memory")));
  NgramMemory memory;
  TRAINFLOPS_ASSIGN_OR_RETURN(memory.embed_dim, r.integer("embed_dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(memory.conv_kernel, r.integer("conv_kernel"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> tables, r.optional_integer("table_parameters"));
  memory.table_parameters = tables.value_or(0);
  TRAINFLOPS_RETURN_IF_ERROR(r.finish());
  return std::optional<NgramMemory>(memory);
}

// A layer's "per_layer_embedding": {"dim", "vocabulary"}.
Result<std::optional<PerLayerEmbedding>> read_per_layer_embedding(ObjectReader& layer) {
  const json* value = layer.optional_member("per_layer_embedding");
  if (!value) return std::optional<PerLayerEmbedding>();
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(*value, layer.path_of("per_layer_embedding")));
  PerLayerEmbedding embedding;
  TRAINFLOPS_ASSIGN_OR_RETURN(embedding.dim, r.integer("dim"));
  TRAINFLOPS_ASSIGN_OR_RETURN(embedding.vocabulary, r.integer("vocabulary"));
  TRAINFLOPS_RETURN_IF_ERROR(r.finish());
  return std::optional<PerLayerEmbedding>(embedding);
}

// The top level's "attention_residuals": {"block_size"}.
Result<std::optional<AttentionResiduals>> read_attention_residuals(ObjectReader& top) {
  const json* value = top.optional_member("attention_residuals");
  if (!value) return std::optional<AttentionResiduals>();
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(*value, "attention_residuals"));
  AttentionResiduals residuals;
  TRAINFLOPS_ASSIGN_OR_RETURN(residuals.block_size, r.integer("block_size"));
  TRAINFLOPS_RETURN_IF_ERROR(r.finish());
  return std::optional<AttentionResiduals>(residuals);
}

// The top level's "hyper_connections": {"variant", "streams", "rank"}.
Result<std::optional<HyperConnections>> read_hyper_connections(ObjectReader& top) {
  const json* value = top.optional_member("hyper_connections");
  if (!value) return std::optional<HyperConnections>();
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(*value, "hyper_connections"));
  HyperConnections hc;
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string variant, r.text("variant"));
  if (variant == hyper_connection_variant_name(HyperConnections::Variant::kManifold)) {
    hc.variant = HyperConnections::Variant::kManifold;
  } else if (variant == hyper_connection_variant_name(HyperConnections::Variant::kGatedResidual)) {
    hc.variant = HyperConnections::Variant::kGatedResidual;
  } else {
    return Error("hyper_connections.variant = \"" + variant + "\": must be mhc or gated_residual");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(hc.streams, r.integer("streams"));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> rank, r.optional_integer("rank"));
  hc.rank = rank.value_or(0);
  TRAINFLOPS_RETURN_IF_ERROR(r.finish());
  return std::optional<HyperConnections>(hc);
}

struct Definitions {
  std::map<std::string, Mixer> mixers;
  std::map<std::string, ChannelMixer> channel_mixers;
};

Result<LayerStack> read_layers(const json& list, const std::string& path, const Definitions& defs) {
  if (!list.is_array()) return Error(path + " = " + shown(list) + ": must be a list of layers");
  LayerStack layers;
  for (std::size_t i = 0; i < list.size(); ++i) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader r, ObjectReader::open(list[i], path + "[" + std::to_string(i) + "]"));
    Layer layer;
    TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, look_up(r, "mixer", defs.mixers, "mixers"));
    TRAINFLOPS_ASSIGN_OR_RETURN(layer.channel_mixer,
                                look_up(r, "channel_mixer", defs.channel_mixers, "channel_mixers"));
    if (!layer.mixer && !layer.channel_mixer) {
      return Error(r.path_of("mixer") + " is missing: a layer needs a mixer, a channel_mixer or both");
    }
    TRAINFLOPS_ASSIGN_OR_RETURN(layer.ngram_memory, read_ngram_memory(r));
    TRAINFLOPS_ASSIGN_OR_RETURN(layer.per_layer_embedding, read_per_layer_embedding(r));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::optional<std::int64_t> repeat, r.optional_integer("repeat"));
    if (repeat && *repeat < 1) return Error(r.path_of("repeat") + " = " + std::to_string(*repeat) + ": must be >= 1");
    if (repeat) TRAINFLOPS_RETURN_IF_ERROR(check_layer_count(r.path_of("repeat"), *repeat));
    TRAINFLOPS_RETURN_IF_ERROR(r.finish());
    layers.append(layer, repeat.value_or(1));
  }
  return layers;
}

}  // namespace

Result<Model> parse_native_config(std::string_view json_text) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const json config, parse_json<json>(json_text, JsonComments::kAllowed));
  TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader top, ObjectReader::open(config, ""));
  Model model;
  if (top.optional_member("name")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(model.name, top.text("name"));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, top.integer("hidden_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, top.integer("vocab_size"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.megatron_seq_length, top.optional_integer("megatron_seq_length"));
  if (top.optional_member("megatron_path")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::string path, top.text("megatron_path"));
    if (path != "standard" && path != "hybrid") {
      return Error("megatron_path = \"" + path + "\": must be standard or hybrid");
    }
    model.megatron_path = path == "hybrid" ? MegatronPath::kHybrid : MegatronPath::kStandard;
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hyper_connections, read_hyper_connections(top));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.attention_residuals, read_attention_residuals(top));
  Definitions defs;
  TRAINFLOPS_ASSIGN_OR_RETURN(defs.mixers, read_definitions<Mixer>(top, "mixers", read_part<Mixer>));
  TRAINFLOPS_ASSIGN_OR_RETURN(defs.channel_mixers,
                              read_definitions<ChannelMixer>(top, "channel_mixers", read_part<ChannelMixer>));
  TRAINFLOPS_ASSIGN_OR_RETURN(const json* layers, top.member("layers"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.layers, read_layers(*layers, "layers", defs));
  if (const json* mtp_json = top.optional_member("mtp")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(ObjectReader mtp, ObjectReader::open(*mtp_json, "mtp"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t depths, mtp.integer("depths"));
    if (depths < 0) return Error("mtp.depths = " + std::to_string(depths) + ": must be >= 0");
    TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("mtp.depths", depths));
    TRAINFLOPS_ASSIGN_OR_RETURN(const json* depth_layers, mtp.member("layers"));
    TRAINFLOPS_ASSIGN_OR_RETURN(const LayerStack depth, read_layers(*depth_layers, "mtp.layers", defs));
    TRAINFLOPS_RETURN_IF_ERROR(mtp.finish());
    model.mtp_depths.assign(static_cast<std::size_t>(depths), depth);
  }
  TRAINFLOPS_RETURN_IF_ERROR(top.finish());
  const std::int64_t streams = model.hyper_connections ? model.hyper_connections->streams : 1;
  const auto set_streams = [&](Layer& layer) {
    if (layer.ngram_memory) layer.ngram_memory->streams = streams;
  };
  model.layers.edit_each(set_streams);
  for (LayerStack& depth : model.mtp_depths) depth.edit_each(set_streams);
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  return model;
}

Result<Model> read_native_config(const std::string& path) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::string text, read_input_file(path, kMaxConfigFileBytes));
  Result<Model> model = parse_native_config(text);
  if (!model.ok()) return model.error().context(path);
  return model;
}

}  // namespace trainflops
