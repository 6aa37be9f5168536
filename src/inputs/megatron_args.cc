#include "trainflops/megatron_args.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <span>

#include "base/edit_distance.h"
#include "base/json_text.h"
#include "base/overloaded.h"
#include "inputs/megatron_args_json.h"
#include "model/layer_stack_builder.h"
#include "trainflops/hybrid_pattern.h"

namespace trainflops {
namespace {

using nlohmann::json;

// JSON has no infinity nor NaN (dump() writes them as null), but values from
// Python do.
std::string json_shown(const json& value) {
  if (!value.is_number_float() || std::isfinite(value.get<double>())) return value.dump();
  const double number = value.get<double>();
  return std::isnan(number) ? "nan" : number > 0 ? "inf" : "-inf";
}

Error type_error(std::string_view key, const json& value, const char* rule) {
  return Error(std::string(key) + " = " + json_shown(value) + ": " + rule);
}

Status read(std::string_view key, const json& value, std::optional<std::int64_t>& out) {
  if (!value.is_number_integer()) return type_error(key, value, "must be an integer or null");
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    return type_error(key, value, "must fit in a signed 64-bit integer");
  }
  out = value.get<std::int64_t>();
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<double>& out) {
  if (!value.is_number()) return type_error(key, value, "must be a number or null");
  out = value.get<double>();
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<bool>& out) {
  if (!value.is_boolean()) return type_error(key, value, "must be true, false or null");
  out = value.get<bool>();
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<std::string>& out) {
  if (!value.is_string()) return type_error(key, value, "must be a string or null");
  out = value.get<std::string>();
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<LayerFrequency>& out) {
  if (value.is_number_integer()) {
    std::optional<std::int64_t> every;
    TRAINFLOPS_RETURN_IF_ERROR(read(key, value, every));
    out = *every;
    return Ok{};
  }
  if (!value.is_array()) return type_error(key, value, "must be an integer, a list of 0/1 or null");
  std::vector<std::int64_t> flags;
  for (const json& entry : value) {
    if (!entry.is_number_integer()) return type_error(key, value, "must be an integer, a list of 0/1 or null");
    flags.push_back(entry.get<std::int64_t>());
  }
  out = std::move(flags);
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<std::vector<std::int64_t>>& out) {
  if (!value.is_array()) return type_error(key, value, "must be a list of integers or null");
  std::vector<std::int64_t> numbers;
  for (const json& entry : value) {
    if (!entry.is_number_integer()) return type_error(key, value, "must be a list of integers or null");
    numbers.push_back(entry.get<std::int64_t>());
  }
  out = std::move(numbers);
  return Ok{};
}

Status read(std::string_view key, const json& value, std::optional<std::vector<std::string>>& out) {
  if (value.is_string()) {
    out = std::vector<std::string>{value.get<std::string>()};
    return Ok{};
  }
  if (!value.is_array()) return type_error(key, value, "must be a list of strings or null");
  std::vector<std::string> words;
  for (const json& entry : value) {
    if (!entry.is_string()) return type_error(key, value, "must be a list of strings or null");
    words.push_back(entry.get<std::string>());
  }
  out = std::move(words);
  return Ok{};
}

// --- model_from_megatron_args ---------------------------------------------

template <typename T>
std::string shown(const std::optional<T>& value) {
  if (!value) return "None";
  if constexpr (std::is_same_v<T, bool>)
    return *value ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>)
    return "\"" + *value + "\"";
  else
    return std::to_string(*value);
}

Error missing(std::string_view name, std::string_view when) {
  return Error(std::string(name) + " is missing: required " + std::string(when));
}

Result<std::int64_t> required(std::string_view name, const std::optional<std::int64_t>& value, std::string_view when) {
  if (!value) return missing(name, when);
  if (*value < 1) return Error(std::string(name) + " = " + std::to_string(*value) + ": must be a positive integer");
  return *value;
}

// A flag per layer, a byte each: indexing a std::vector<bool> cost more than
// the rest of building a layer's key.
using LayerFlags = std::vector<std::uint8_t>;

// A layer frequency as `bit`, ORed into the entry of each layer of `flags`
// that it marks: an int f marks layer i when i + shift is a multiple of f
// (with `marks_multiples`) or when it is not; an explicit list must have an
// entry of 0 or 1 per layer (their count named `count_name`); a list of
// another length is an error of code `wrong_length` (Megatron-LM's function
// asserts the length of the frequencies it reads).
Status expand_frequency(std::string_view name, const LayerFrequency& frequency, std::span<std::uint8_t> flags,
                        std::uint8_t bit, std::string_view count_name, std::int64_t shift, bool marks_multiples,
                        ErrorCode wrong_length) {
  const std::size_t count = flags.size();
  if (const auto* every = std::get_if<std::int64_t>(&frequency)) {
    if (*every < 1) return Error(std::string(name) + " = " + std::to_string(*every) + ": must be a positive integer");
    std::int64_t phase = shift % *every;  // (i + shift) mod f, stepped instead of divided
    for (std::size_t i = 0; i < count; ++i) {
      if ((phase == 0) == marks_multiples) flags[i] |= bit;
      if (++phase == *every) phase = 0;
    }
    return Ok{};
  }
  const auto& list = std::get<std::vector<std::int64_t>>(frequency);
  if (list.size() != count) {
    return Error(wrong_length, std::string(name) + ": the list has " + std::to_string(list.size()) +
                                   " entries; it must have " + std::string(count_name) + " = " + std::to_string(count));
  }
  std::uint64_t high_bits = 0;  // of every entry together: a loop without exits, which vectorises
  for (std::int64_t entry : list) high_bits |= static_cast<std::uint64_t>(entry) & ~std::uint64_t{1};
  if (high_bits != 0) {
    const auto bad =
        std::find_if(list.begin(), list.end(), [](std::int64_t entry) { return entry != 0 && entry != 1; });
    return Error(std::string(name) + "[" + std::to_string(bad - list.begin()) + "] = " + std::to_string(*bad) +
                 ": entries must be 0 or 1");
  }
  // Each entry 0 or 1 times the bit: arithmetic, which GCC vectorises at -O3, where a choice was not.
  for (std::size_t i = 0; i < count; ++i) flags[i] |= static_cast<std::uint8_t>(list[i] * bit);
  return Ok{};
}

bool flag(const std::optional<bool>& value) { return value.value_or(false); }

// A window per layer number (1-based; entry number - 1), unset for full causal
// attention; no entries at all when no layer has a window. Megatron-LM's
// window_size is (left, right) keys around a query, on the layers
// window_attn_skip_freq marks (an int f: the numbers that are not multiples
// of f; a 0/1 list: the entries 1; unset: every layer). A causal query
// attends `left` earlier keys and itself; left -1 means no limit.
using SlidingWindows = std::vector<std::optional<std::int64_t>>;

Result<SlidingWindows> sliding_windows(const MegatronArgs& a, std::size_t num_layers) {
  if (!a.window_size) return SlidingWindows{};
  const std::vector<std::int64_t>& size = *a.window_size;
  std::string shown_size = "window_size = (";
  for (std::size_t i = 0; i < size.size(); ++i) shown_size += (i ? ", " : "") + std::to_string(size[i]);
  shown_size += ")";
  if (size.size() != 2) return Error(shown_size + ": must be two integers, the keys left and right of a query");
  if (size[1] != 0) return Error(shown_size + ": the right side must be 0: a causal query attends no later key");
  if (size[0] == -1) return SlidingWindows{};
  if (size[0] < 0 || size[0] == INT64_MAX) {
    return Error(shown_size + ": the left side must be a non-negative integer below 2^63 - 1, or -1 for no window");
  }
  LayerFlags windowed(num_layers, !a.window_attn_skip_freq);
  if (a.window_attn_skip_freq) {
    TRAINFLOPS_RETURN_IF_ERROR(expand_frequency("window_attn_skip_freq", *a.window_attn_skip_freq, windowed, 1,
                                                "num_layers", 1, /*marks_multiples=*/false, ErrorCode::kInvalidInput));
  }
  SlidingWindows windows(num_layers);
  for (std::size_t i = 0; i < num_layers; ++i) {
    if (windowed[i]) windows[i] = size[0] + 1;
  }
  return windows;
}

// Gives the softmax attention of layer `number` its window; other mixers have
// none to give.
Status apply_sliding_window(const SlidingWindows& windows, std::int64_t number, Layer& layer) {
  const auto index = static_cast<std::size_t>(number - 1);
  if (!layer.mixer || index >= windows.size() || !windows[index]) return Ok{};
  return std::visit(Overloaded{
                        [&](GqaAttention& attention) -> Status {
                          attention.window = windows[index];
                          return Ok{};
                        },
                        [](const OneOf<MlaAttention, DsaAttention> auto&) -> Status {
                          return Error(
                              ErrorCode::kUnsupported,
                              "window_size: a sliding window on multi-latent attention is not counted; it is on "
                              "grouped-query attention");
                        },
                        [](const DsaGqaAttention&) -> Status {
                          return Error(ErrorCode::kUnsupported,
                                       "window_size: a sliding window on DSA over grouped-query attention is not "
                                       "counted; its queries attend the keys their indexer selects");
                        },
                        // DeepSeek-V4 and V4.1's attention have a window of their own; the others
                        // attend no window (Megatron-LM's arguments build no block-sparse, Kimi
                        // Delta, DeepSeek-V4.1 or QSA attention).
                        [](const OneOf<CompressedSparseAttention, SharedCompressedAttention, GatedDeltaNet, Mamba2,
                                       GatedDeltaProduct, BlockSparseAttention, KimiDeltaAttention,
                                       CompressedBlockSparseAttention> auto&) -> Status {
                          return Ok{};
                        },
                    },
                    *layer.mixer);
}

Result<GqaAttention> gqa_attention(const MegatronArgs& a, bool head_dim_required) {
  GqaAttention attention;
  constexpr std::string_view when = "for attention layers";
  TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_heads, required("num_attention_heads", a.num_attention_heads, when));
  attention.num_query_groups = attention.num_heads;
  if (flag(a.group_query_attention)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.num_query_groups,
                                required("num_query_groups", a.num_query_groups, "when group_query_attention is true"));
  }
  if (head_dim_required) {
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, required("kv_channels", a.kv_channels, when));
  } else if (a.kv_channels) {
    TRAINFLOPS_ASSIGN_OR_RETURN(attention.head_dim, required("kv_channels", a.kv_channels, when));
  }
  attention.output_gate = flag(a.attention_output_gate);
  return attention;
}

Result<MlaAttention> mla_attention(const MegatronArgs& a) {
  if (flag(a.group_query_attention)) {
    return Error(ErrorCode::kFailedAssertion,
                 "group_query_attention = true: cannot be combined with multi-latent attention");
  }
  constexpr std::string_view when = "for multi-latent attention";
  MlaAttention mla;
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.num_heads, required("num_attention_heads", a.num_attention_heads, when));
  if (a.q_lora_rank) {
    TRAINFLOPS_ASSIGN_OR_RETURN(mla.q_lora_rank, required("q_lora_rank", a.q_lora_rank, when));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.kv_lora_rank, required("kv_lora_rank", a.kv_lora_rank, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.qk_head_dim, required("qk_head_dim", a.qk_head_dim, when));
  if (!a.qk_pos_emb_head_dim) return missing("qk_pos_emb_head_dim", when);
  mla.qk_pos_emb_head_dim = *a.qk_pos_emb_head_dim;
  TRAINFLOPS_ASSIGN_OR_RETURN(mla.v_head_dim, required("v_head_dim", a.v_head_dim, when));
  return mla;
}

// docs/accounting.md, 2: explicit, else a positive loss coefficient trains the indexer,
// sparsely with the sparse loss; without a loss it runs forward only.
Result<DsaIndexer::GradMode> indexer_grad_mode(const MegatronArgs& a) {
  if (a.dsa_indexer_grad_mode) {
    Result<DsaIndexer::GradMode> mode = parse_grad_mode(*a.dsa_indexer_grad_mode);
    if (!mode.ok()) return Error("dsa_indexer_" + mode.error().message());
    return mode;
  }
  if (a.dsa_indexer_loss_coeff.value_or(0) > 0) {
    return flag(a.dsa_indexer_use_sparse_loss) ? DsaIndexer::GradMode::kSparse : DsaIndexer::GradMode::kDetached;
  }
  return DsaIndexer::GradMode::kOff;
}

Result<DsaIndexer> dsa_indexer(const MegatronArgs& a) {
  constexpr std::string_view when = "for DSA layers";
  DsaIndexer indexer;
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.num_heads, required("dsa_indexer_n_heads", a.dsa_indexer_n_heads, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.head_dim, required("dsa_indexer_head_dim", a.dsa_indexer_head_dim, when));
  // Megatron-LM's function takes a DSA layer without a top-k as dense
  // (FlopsCounter: megatron mode alone counts it).
  if (a.dsa_indexer_topk) {
    TRAINFLOPS_ASSIGN_OR_RETURN(indexer.topk, required("dsa_indexer_topk", a.dsa_indexer_topk, when));
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(indexer.grad_mode, indexer_grad_mode(a));
  if (a.dsa_kpool_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(indexer.pool_size, required("dsa_kpool_size", a.dsa_kpool_size, when));
  }
  indexer.pool_tail = a.dsa_kpool_tail.value_or(true);
  if (indexer.pool_size > 1 && indexer.grad_mode != DsaIndexer::GradMode::kOff) {
    return Error("dsa_kpool_size = " + std::to_string(indexer.pool_size) +
                 ": KPool requires the indexer loss disabled (the indexer grad mode is " +
                 std::string(grad_mode_name(indexer.grad_mode)) + ")");
  }
  if (indexer.pool_size > 1 && !indexer.topk) return missing("dsa_indexer_topk", "with dsa_kpool_size > 1");
  if (indexer.topk && *indexer.topk % indexer.pool_size != 0) {
    return Error("dsa_indexer_topk = " + std::to_string(*indexer.topk) +
                 ": must be a multiple of dsa_kpool_size = " + std::to_string(indexer.pool_size));
  }
  return indexer;
}

// Index sharing (docs/accounting.md, 7.2): which 1-based layer numbers run their own indexer.
class IndexSharing {
 public:
  static Result<IndexSharing> from(const MegatronArgs& a) {
    IndexSharing sharing;
    if (a.dsa_indexer_topk_freq) {
      TRAINFLOPS_ASSIGN_OR_RETURN(sharing.every_, required("dsa_indexer_topk_freq", a.dsa_indexer_topk_freq, ""));
    }
    sharing.offset_ = a.dsa_indexer_skip_topk_offset.value_or(0);
    if (sharing.offset_ < 0) {
      return Error("dsa_indexer_skip_topk_offset = " + std::to_string(sharing.offset_) + ": must be >= 0");
    }
    return sharing;
  }

  // Layer `number` reuses the previous layer's top-k unless
  // max(number - max(offset, 1), 0) is a multiple of the frequency.
  bool runs_indexer(std::int64_t number) const {
    return std::max<std::int64_t>(number - std::max<std::int64_t>(offset_, 1), 0) % every_ == 0;
  }
  // ORs `bit` into the entries of `kinds` (layers numbered 1, 2, 3, ...) whose
  // layer runs its indexer: each number up to max(offset, 1), then every
  // frequency-th; strided, not divided.
  void mark_own_indexers(std::span<std::uint8_t> kinds, std::uint8_t bit) const {
    const auto start = static_cast<std::uint64_t>(std::max<std::int64_t>(offset_, 1));
    const auto every = static_cast<std::uint64_t>(every_);
    for (std::uint64_t i = 0; i < std::min<std::uint64_t>(start, kinds.size()); ++i) kinds[i] |= bit;
    for (std::uint64_t i = start - 1 + every; i < kinds.size(); i += every) kinds[i] |= bit;
  }

 private:
  std::int64_t every_ = 1;
  std::int64_t offset_ = 0;
};

Result<DsaAttention> dsa_attention(const MegatronArgs& a, std::int64_t layer_number) {
  DsaAttention dsa;
  TRAINFLOPS_ASSIGN_OR_RETURN(dsa.mla, mla_attention(a));
  TRAINFLOPS_ASSIGN_OR_RETURN(dsa.indexer, dsa_indexer(a));
  TRAINFLOPS_ASSIGN_OR_RETURN(const IndexSharing sharing, IndexSharing::from(a));
  dsa.runs_indexer = sharing.runs_indexer(layer_number);
  return dsa;
}

// Megatron-LM's DSA-over-GQA layer spec (docs/sparse-attention.md), the last
// part of `spec`: its `D` layers are grouped-query attention with DSA's indexer.
constexpr std::string_view kDsaGqaSpec = "hybrid_stack_spec_dsa_gqa";

bool uses_dsa_gqa_spec(const MegatronArgs& a) { return a.spec && !a.spec->empty() && a.spec->back() == kDsaGqaSpec; }

Result<DsaGqaAttention> dsa_gqa_attention(const MegatronArgs& a, std::int64_t layer_number) {
  // Without grouped-query attention Megatron-LM's argument validation turns
  // multi-latent attention on for a pattern with `D`, which this spec cannot build.
  if (!flag(a.group_query_attention)) {
    return Error("group_query_attention = " + shown(a.group_query_attention) + ": the " + std::string(kDsaGqaSpec) +
                 " spec's D layers are grouped-query attention, which needs group_query_attention true");
  }
  if (flag(a.multi_latent_attention)) {
    return Error("multi_latent_attention = true: the " + std::string(kDsaGqaSpec) +
                 " spec's D layers are grouped-query attention, not multi-latent attention");
  }
  DsaGqaAttention dsa;
  TRAINFLOPS_ASSIGN_OR_RETURN(dsa.attention, gqa_attention(a, /*head_dim_required=*/true));
  TRAINFLOPS_ASSIGN_OR_RETURN(dsa.indexer, dsa_indexer(a));
  TRAINFLOPS_ASSIGN_OR_RETURN(const IndexSharing sharing, IndexSharing::from(a));
  dsa.runs_indexer = sharing.runs_indexer(layer_number);
  return dsa;
}

// DeepSeek-V4 attention of one kind (docs/accounting.md, 9).
Result<CompressedSparseAttention> compressed_sparse_attention(const MegatronArgs& a,
                                                              CompressedSparseAttention::Kind kind) {
  constexpr std::string_view when = "for DeepSeek-V4 attention layers";
  CompressedSparseAttention csa;
  csa.kind = kind;
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.num_heads, required("num_attention_heads", a.num_attention_heads, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.head_dim, required("v_head_dim", a.v_head_dim, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.q_lora_rank, required("q_lora_rank", a.q_lora_rank, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.o_groups, required("o_groups", a.o_groups, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.o_lora_rank, required("o_lora_rank", a.o_lora_rank, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(csa.window, required("csa_window_size", a.csa_window_size, when));
  if (kind == CompressedSparseAttention::Kind::kCsa) {
    const std::string csa_when = "for CSA layers (compression ratio 4)";
    TRAINFLOPS_ASSIGN_OR_RETURN(csa.indexer_num_heads,
                                required("dsa_indexer_n_heads", a.dsa_indexer_n_heads, csa_when));
    TRAINFLOPS_ASSIGN_OR_RETURN(csa.indexer_head_dim,
                                required("dsa_indexer_head_dim", a.dsa_indexer_head_dim, csa_when));
    TRAINFLOPS_ASSIGN_OR_RETURN(csa.topk, required("dsa_indexer_topk", a.dsa_indexer_topk, csa_when));
  }
  return csa;
}

Result<CompressedSparseAttention::Kind> compression_kind(std::size_t layer, std::int64_t ratio) {
  if (const auto kind = compression_kind_of(ratio)) return *kind;
  return Error("csa_compress_ratios[" + std::to_string(layer) + "] = " + std::to_string(ratio) +
               ": must be 0 (window only), 4 (CSA) or 128 (HCA)");
}

Result<DenseMlp> dense_mlp(const MegatronArgs& a) {
  DenseMlp mlp;
  TRAINFLOPS_ASSIGN_OR_RETURN(mlp.ffn_hidden_size,
                              required("ffn_hidden_size", a.ffn_hidden_size, "for dense MLP layers"));
  mlp.gated = flag(a.swiglu) || flag(a.quick_geglu);
  mlp.megatron_charges_ungated = !flag(a.swiglu) && flag(a.quick_geglu);
  return mlp;
}

Result<Moe> moe(const MegatronArgs& a) {
  constexpr std::string_view when = "for MoE layers";
  Moe moe;
  moe.num_experts = a.num_experts;
  TRAINFLOPS_ASSIGN_OR_RETURN(moe.topk, required("moe_router_topk", a.moe_router_topk, when));
  if (a.moe_ffn_hidden_size) {
    TRAINFLOPS_ASSIGN_OR_RETURN(moe.expert_ffn_hidden_size,
                                required("moe_ffn_hidden_size", a.moe_ffn_hidden_size, when));
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(moe.expert_ffn_hidden_size, required("ffn_hidden_size", a.ffn_hidden_size,
                                                                     "for MoE layers without moe_ffn_hidden_size"));
  }
  moe.shared_expert_ffn_hidden_size = a.moe_shared_expert_intermediate_size;
  moe.latent_size = a.moe_latent_size;
  moe.gated = flag(a.swiglu) || flag(a.quick_geglu);
  moe.megatron_charges_ungated = !flag(a.swiglu) && flag(a.quick_geglu);
  return moe;
}

// `gdn2_counted`: whether the branch's function has GDN2's input projection
// (main does; dev's hybrid function counts every G layer as GDN).
Result<GatedDeltaNet> gated_delta_net(const MegatronArgs& a, bool hybrid_defaults, bool gdn2_counted = true) {
  GatedDeltaNet gdn;
  gdn.variant = gdn2_counted && a.experimental_attention_variant == std::optional<std::string>("gdn2")
                    ? GatedDeltaNet::Variant::kGdn2
                    : GatedDeltaNet::Variant::kGdn;
  // Megatron-LM's hybrid accounting substitutes these for unset dimensions;
  // its transformer path has none.
  const auto dim = [&](std::string_view name, const std::optional<std::int64_t>& value,
                       std::int64_t hybrid_default) -> Result<std::int64_t> {
    if (!value && hybrid_defaults) return hybrid_default;
    return required(name, value, "for gated delta net layers");
  };
  TRAINFLOPS_ASSIGN_OR_RETURN(gdn.key_head_dim, dim("linear_key_head_dim", a.linear_key_head_dim, 128));
  TRAINFLOPS_ASSIGN_OR_RETURN(gdn.value_head_dim, dim("linear_value_head_dim", a.linear_value_head_dim, 128));
  TRAINFLOPS_ASSIGN_OR_RETURN(gdn.num_key_heads, dim("linear_num_key_heads", a.linear_num_key_heads, 16));
  TRAINFLOPS_ASSIGN_OR_RETURN(gdn.num_value_heads, dim("linear_num_value_heads", a.linear_num_value_heads, 32));
  TRAINFLOPS_ASSIGN_OR_RETURN(gdn.conv_kernel_dim, dim("linear_conv_kernel_dim", a.linear_conv_kernel_dim, 4));
  return gdn;
}

// Megatron-LM's Kimi Delta Attention (its pull request's `K` layers and
// experimental_attention_variant "kda"): the linear_* sizes, read as for the
// gated delta net but with 16 value heads by default on the hybrid path; q,
// k, v and both gates projected directly (full rank). Its layer, and its
// function, take as many value heads as key heads, each as wide.
Result<KimiDeltaAttention> megatron_kimi_delta_attention(const MegatronArgs& a, bool hybrid_defaults) {
  const auto dim = [&](std::string_view name, const std::optional<std::int64_t>& value,
                       std::int64_t hybrid_default) -> Result<std::int64_t> {
    if (!value && hybrid_defaults) return hybrid_default;
    return required(name, value, "for Kimi Delta Attention layers");
  };
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t key_head_dim, dim("linear_key_head_dim", a.linear_key_head_dim, 128));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t value_head_dim,
                              dim("linear_value_head_dim", a.linear_value_head_dim, 128));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t key_heads, dim("linear_num_key_heads", a.linear_num_key_heads, 16));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t value_heads,
                              dim("linear_num_value_heads", a.linear_num_value_heads, 16));
  constexpr std::string_view kEqualLayout =
      ": Kimi Delta Attention needs as many value heads as key heads, each as wide (Megatron-LM's "
      "KimiDeltaAttention and its FLOPs function refuse other layouts)";
  if (value_heads != key_heads) {
    return Error("linear_num_value_heads = " + std::to_string(value_heads) + ", linear_num_key_heads = " +
                 std::to_string(key_heads) + std::string(kEqualLayout));
  }
  if (value_head_dim != key_head_dim) {
    return Error("linear_value_head_dim = " + std::to_string(value_head_dim) + ", linear_key_head_dim = " +
                 std::to_string(key_head_dim) + std::string(kEqualLayout));
  }
  KimiDeltaAttention kda;
  kda.num_heads = key_heads;
  kda.head_dim = key_head_dim;
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.conv_kernel_dim, dim("linear_conv_kernel_dim", a.linear_conv_kernel_dim, 4));
  return kda;
}

// Megatron-Bridge's Kimi K3 fields: Kimi Delta Attention as its function
// charges it, a full-rank output gate and a forget gate of rank head_dim.
Result<KimiDeltaAttention> bridge_kimi_delta_attention(const MegatronArgs& a) {
  constexpr std::string_view kWhen = "with kimi_kda_layers (Megatron-Bridge's Kimi Delta Attention layers)";
  KimiDeltaAttention kda;
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.num_heads, required("kimi_linear_num_heads", a.kimi_linear_num_heads, kWhen));
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.head_dim, required("kimi_linear_head_dim", a.kimi_linear_head_dim, kWhen));
  TRAINFLOPS_ASSIGN_OR_RETURN(kda.conv_kernel_dim,
                              required("kimi_linear_conv_kernel_size", a.kimi_linear_conv_kernel_size, kWhen));
  kda.forget_gate_rank = kda.head_dim;
  return kda;
}

// Marks `kda` in `kinds` on the decoder layers kimi_kda_layers numbers (from 1,
// repeats allowed, as Megatron-Bridge takes them as a set) and, when it names
// the last decoder layer, on the MTP layers, which copy that layer.
Status mark_kimi_kda_layers(const MegatronArgs& a, std::size_t layers, std::span<std::uint8_t> kinds,
                            std::uint8_t kda) {
  std::vector<std::int64_t> outside;
  for (std::int64_t number : *a.kimi_kda_layers) {
    if (number < 1 || number > static_cast<std::int64_t>(layers)) {
      outside.push_back(number);
    } else {
      kinds[static_cast<std::size_t>(number - 1)] |= kda;
    }
  }
  if (!outside.empty()) {
    std::sort(outside.begin(), outside.end());
    outside.erase(std::unique(outside.begin(), outside.end()), outside.end());
    std::string shown_numbers;
    for (std::int64_t number : outside) shown_numbers += (shown_numbers.empty() ? "" : ", ") + std::to_string(number);
    return Error("kimi_kda_layers: layer numbers outside [1, " + std::to_string(layers) + "]: [" + shown_numbers +
                 "]; Megatron-Bridge numbers the decoder layers from 1");
  }
  if (layers > 0 && (kinds[layers - 1] & kda)) {
    for (std::size_t i = layers; i < kinds.size(); ++i) kinds[i] |= kda;
  }
  return Ok{};
}

bool uses_gated_delta_product(const MegatronArgs& a) {
  if (!a.spec || a.spec->empty()) return false;
  const std::string& last = a.spec->back();
  return last == "gdp_stack_spec" || last == "gated_delta_product_stack_spec";
}

// `gdp_counted`: whether the branch's function has gated delta products (dev's
// counts every M layer as Mamba-2).
Result<Mixer> mamba_mixer(const MegatronArgs& a, std::int64_t hidden_size, bool gdp_counted) {
  constexpr std::string_view when = "for Mamba layers";
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t state, required("mamba_state_dim", a.mamba_state_dim, when));
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t groups, required("mamba_num_groups", a.mamba_num_groups, when));
  std::int64_t inner = 2 * hidden_size, heads = 0;
  if (a.mamba_num_heads) {
    TRAINFLOPS_ASSIGN_OR_RETURN(heads, required("mamba_num_heads", a.mamba_num_heads, when));
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t head_dim, required("mamba_head_dim", a.mamba_head_dim, when));
    if (__builtin_mul_overflow(heads, head_dim, &inner)) {
      return Error("mamba_num_heads * mamba_head_dim = " + std::to_string(heads) + " * " + std::to_string(head_dim) +
                   ": overflows 64 bits");
    }
  } else {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t head_dim, required("mamba_head_dim", a.mamba_head_dim,
                                                                      "for Mamba layers without mamba_num_heads"));
    heads = inner / head_dim;
    if (heads < 1) {
      return Error("mamba_head_dim = " + std::to_string(head_dim) +
                   ": must not exceed the inner width 2 * hidden_size = " + std::to_string(inner));
    }
  }
  if (!gdp_counted || !uses_gated_delta_product(a)) return Mixer{Mamba2{inner, heads, groups, state}};
  constexpr std::string_view gdp_when = "for gated delta product layers";
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t householder,
                              required("gdp_num_householder", a.gdp_num_householder, gdp_when));
  return Mixer{GatedDeltaProduct{inner, heads, groups, state, householder}};
}

bool is_attention_symbol(LayerSymbol symbol) {
  switch (symbol) {
    case LayerSymbol::kAttention:
    case LayerSymbol::kMla:
    case LayerSymbol::kDsa:
    case LayerSymbol::kWindow:
    case LayerSymbol::kCsa:
    case LayerSymbol::kHca:
      return true;
    case LayerSymbol::kMamba:
    case LayerSymbol::kGatedDeltaNet:
    case LayerSymbol::kKimiDeltaAttention:
    case LayerSymbol::kMlp:
    case LayerSymbol::kMoe:
      return false;
  }
  return false;
}

CompressedSparseAttention::Kind compression_kind_of_symbol(LayerSymbol symbol) {
  return symbol == LayerSymbol::kWindow ? CompressedSparseAttention::Kind::kWindow
         : symbol == LayerSymbol::kCsa  ? CompressedSparseAttention::Kind::kCsa
                                        : CompressedSparseAttention::Kind::kHca;
}

// The attention of a hybrid layer as the dev branch's function counts it: by
// the arguments, not the symbol. DeepSeek-V4's variant counts W, C and H by
// their compression (hybrid_branch_rules() refuses the other symbols with
// it); otherwise every attention symbol is MLA with multi_latent_attention,
// else grouped-query attention.
Result<Mixer> dev_hybrid_attention(LayerSymbol symbol, const MegatronArgs& a) {
  if (a.experimental_attention_variant == std::optional<std::string>("dsv4_hybrid")) {
    TRAINFLOPS_ASSIGN_OR_RETURN(CompressedSparseAttention csa,
                                compressed_sparse_attention(a, compression_kind_of_symbol(symbol)));
    return Mixer{std::move(csa)};
  }
  if (flag(a.multi_latent_attention)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(MlaAttention mla, mla_attention(a));
    return Mixer{mla};
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(GqaAttention gqa, gqa_attention(a, /*head_dim_required=*/false));
  return Mixer{gqa};
}

// `number`: the layer's 1-based position in its pattern, for index sharing.
Result<Layer> hybrid_layer(LayerSymbol symbol, std::int64_t number, const MegatronArgs& a, std::int64_t hidden_size,
                           MegatronBranch branch) {
  Layer layer;
  if (branch == MegatronBranch::kDev && is_attention_symbol(symbol)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, dev_hybrid_attention(symbol, a));
    return layer;
  }
  const bool main = branch == MegatronBranch::kMain;
  switch (symbol) {
    case LayerSymbol::kAttention: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, gqa_attention(a, /*head_dim_required=*/false));
      break;
    }
    case LayerSymbol::kMla: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, mla_attention(a));
      break;
    }
    case LayerSymbol::kDsa: {
      if (uses_dsa_gqa_spec(a)) {
        TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, dsa_gqa_attention(a, number));
      } else {
        TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, dsa_attention(a, number));
      }
      break;
    }
    case LayerSymbol::kWindow:
    case LayerSymbol::kCsa:
    case LayerSymbol::kHca: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, compressed_sparse_attention(a, compression_kind_of_symbol(symbol)));
      break;
    }
    case LayerSymbol::kMamba: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, mamba_mixer(a, hidden_size, /*gdp_counted=*/main));
      break;
    }
    case LayerSymbol::kGatedDeltaNet: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, gated_delta_net(a, /*hybrid_defaults=*/true, /*gdn2_counted=*/main));
      break;
    }
    case LayerSymbol::kKimiDeltaAttention: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.mixer, megatron_kimi_delta_attention(a, /*hybrid_defaults=*/true));
      break;
    }
    case LayerSymbol::kMlp: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.channel_mixer, dense_mlp(a));
      break;
    }
    case LayerSymbol::kMoe: {
      TRAINFLOPS_ASSIGN_OR_RETURN(layer.channel_mixer, moe(a));
      break;
    }
  }
  return layer;
}

Result<LayerStack> hybrid_layers(const std::vector<LayerSymbol>& symbols, const MegatronArgs& a,
                                 const SlidingWindows& windows, std::int64_t hidden_size, MegatronBranch branch) {
  LayerStack layers;
  for (LayerSymbol symbol : symbols) {
    const auto number = static_cast<std::int64_t>(layers.size()) + 1;
    TRAINFLOPS_ASSIGN_OR_RETURN(Layer layer, hybrid_layer(symbol, number, a, hidden_size, branch));
    TRAINFLOPS_RETURN_IF_ERROR(apply_sliding_window(windows, number, layer));
    layers.push_back(std::move(layer));
  }
  return layers;
}

// What the dev branch refuses in a hybrid pattern: `+` (no symbol there), `*`
// beside W, C or H (as beside D), the DSA variant (its function asserts it
// away from the hybrid path), and DeepSeek-V4's variant with any attention
// symbol but W, C and H.
Status hybrid_branch_rules(const MegatronArgs& a, const HybridPattern& pattern) {
  std::vector<LayerSymbol> all = pattern.main;
  for (const auto& depth : pattern.mtp_depths) all.insert(all.end(), depth.begin(), depth.end());
  const auto has = [&](LayerSymbol symbol) { return std::find(all.begin(), all.end(), symbol) != all.end(); };
  const std::string shown_pattern = "hybrid_layer_pattern = \"" + *a.hybrid_layer_pattern + "\"";
  if (has(LayerSymbol::kMla)) {
    return Error(shown_pattern +
                 ": '+' is no layer symbol on Megatron-LM's dev branch; its MLA layers are '*' with "
                 "multi_latent_attention (or give megatron_branch main)");
  }
  if (has(LayerSymbol::kAttention) &&
      (has(LayerSymbol::kWindow) || has(LayerSymbol::kCsa) || has(LayerSymbol::kHca))) {
    return Error(shown_pattern + ": '*' (MHA/GQA) cannot be mixed with MLA-based attention (W, C or H) in one model");
  }
  const std::string variant = a.experimental_attention_variant.value_or("");
  if (variant == "dsa") {
    return Error(ErrorCode::kFailedAssertion,
                 "experimental_attention_variant = \"dsa\": Megatron-LM's dev branch counts DSA on the standard path "
                 "only, not on the hybrid-model path (hybrid_layer_pattern); describe the model without a pattern");
  }
  if (variant == "dsv4_hybrid") {
    for (LayerSymbol symbol : {LayerSymbol::kAttention, LayerSymbol::kDsa}) {
      if (has(symbol)) {
        return Error(ErrorCode::kFailedAssertion,
                     shown_pattern + ": with experimental_attention_variant = \"dsv4_hybrid\" every attention layer "
                                     "must be W, C or H on Megatron-LM's dev branch, not '" +
                     std::string(1, static_cast<char>(symbol)) + "'");
      }
    }
  }
  return Ok{};
}

Result<Model> hybrid_model(const MegatronArgs& a, Model model, MegatronBranch branch) {
  if (a.kimi_kda_layers && !a.kimi_kda_layers->empty()) {
    return Error(ErrorCode::kUnsupported,
                 "kimi_kda_layers with hybrid_layer_pattern: Megatron-Bridge's function reads kimi_kda_layers on its "
                 "transformer path only, not on the hybrid-model path; describe the model without a pattern");
  }
  TRAINFLOPS_ASSIGN_OR_RETURN(const HybridPattern pattern, parse_hybrid_pattern(*a.hybrid_layer_pattern));
  if (branch == MegatronBranch::kDev) TRAINFLOPS_RETURN_IF_ERROR(hybrid_branch_rules(a, pattern));
  const std::int64_t depths = a.mtp_num_layers.value_or(0);
  if (depths != static_cast<std::int64_t>(pattern.mtp_depths.size())) {
    return Error("mtp_num_layers = " + shown(a.mtp_num_layers) +
                 ": must equal the number of MTP depths in hybrid_layer_pattern (" +
                 std::to_string(pattern.mtp_depths.size()) + ", one per '/')");
  }
  model.megatron_path =
      branch == MegatronBranch::kDev ? MegatronPath::kHybridWithMtpProjection : MegatronPath::kHybrid;
  TRAINFLOPS_ASSIGN_OR_RETURN(const SlidingWindows windows, sliding_windows(a, pattern.main.size()));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.layers, hybrid_layers(pattern.main, a, windows, model.hidden_size, branch));
  if (pattern.main_stage_layers.size() > 1) {
    model.pipeline_stage_layers.assign(pattern.main_stage_layers.begin(), pattern.main_stage_layers.end());
  }
  for (const auto& depth : pattern.mtp_depths) {
    TRAINFLOPS_ASSIGN_OR_RETURN(LayerStack layers, hybrid_layers(depth, a, windows, model.hidden_size, branch));
    model.mtp_depths.push_back(std::move(layers));
  }
  return model;
}

Result<Model> standard_model(const MegatronArgs& a, Model model) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t num_layers, required("num_layers", a.num_layers, "for every model"));
  if (a.mtp_num_layers && *a.mtp_num_layers < 0) {
    return Error("mtp_num_layers = " + std::to_string(*a.mtp_num_layers) + ": must be >= 0");
  }
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("num_layers", num_layers));
  TRAINFLOPS_RETURN_IF_ERROR(check_layer_count("mtp_num_layers", a.mtp_num_layers.value_or(0)));
  const auto layers = static_cast<std::size_t>(num_layers);
  const auto depths = static_cast<std::size_t>(a.mtp_num_layers.value_or(0));

  // What sets a layer apart from the others, a byte per layer (the decoder's,
  // then the MTP layers'): its kinds (linear, runs its indexer, MoE, the
  // compression kind), for a decoder layer whether it has a window (the
  // same for every layer that has one), and Megatron-Bridge's KDA.
  constexpr std::uint8_t kLinear = 1 << 0, kRunsIndexer = 1 << 1, kMoe = 1 << 2, kWindowed = 1 << 5, kKda = 1 << 6;
  constexpr int kCompressionShift = 3;  // two bits
  // The three fields do not overlap: the kinds below the compression kind's two
  // bits, the window above them.
  static_assert(static_cast<int>(CompressedSparseAttention::Kind::kHca) < 4);
  static_assert((kLinear | kRunsIndexer | kMoe) < 1 << kCompressionShift);
  static_assert(kWindowed >= 4 << kCompressionShift);
  LayerFlags kinds(layers + depths);

  // Channel mixers: MoE where moe_layer_freq marks a decoder layer; the MTP
  // layers follow the last decoder layer.
  if (a.num_experts) {
    if (!a.moe_layer_freq) return missing("moe_layer_freq", "when num_experts is set (an int or a 0/1 list)");
    TRAINFLOPS_RETURN_IF_ERROR(expand_frequency("moe_layer_freq", *a.moe_layer_freq, std::span(kinds).first(layers),
                                                kMoe, "num_layers", 0, /*marks_multiples=*/true,
                                                ErrorCode::kFailedAssertion));
    std::fill(kinds.begin() + static_cast<std::ptrdiff_t>(layers), kinds.end(), kinds[layers - 1]);
  }

  // Mixers: linear attention where linear_attention_freq marks a layer,
  // counted over decoder and MTP layers together.
  const std::string variant = a.experimental_attention_variant.value_or("");
  const bool kimi_linear = variant == "kda";
  const bool linear = has_linear_attention_variant(a);
  const bool sparse = variant == "dsa";
  const bool compressed = variant == "dsv4_hybrid";
  if (!variant.empty() && !linear && !sparse && !compressed) {
    return Error("experimental_attention_variant = \"" + variant +
                 "\": must be one of dsa, dsv4_hybrid, gdn, gdn2, gated_delta_net, kda, or null");
  }
  std::vector<CompressedSparseAttention::Kind> compression;  // per layer, where compressed
  if (compressed) {
    if (!a.csa_compress_ratios) {
      return Error(ErrorCode::kFailedAssertion,
                   missing("csa_compress_ratios", "when experimental_attention_variant is \"dsv4_hybrid\"").message());
    }
    if (a.csa_compress_ratios->size() != layers + depths) {
      return Error(ErrorCode::kFailedAssertion, "csa_compress_ratios: the list has " + std::to_string(a.csa_compress_ratios->size()) +
                   " entries; it must have num_layers + mtp_num_layers = " + std::to_string(layers + depths));
    }
    compression.resize(layers + depths);
    for (std::size_t i = 0; i < compression.size(); ++i) {
      TRAINFLOPS_ASSIGN_OR_RETURN(compression[i], compression_kind(i, (*a.csa_compress_ratios)[i]));
    }
  }
  if (sparse && !flag(a.multi_latent_attention)) {
    return Error("multi_latent_attention = " + shown(a.multi_latent_attention) +
                 ": DSA (experimental_attention_variant = \"dsa\") is built on multi-latent attention");
  }
  // Megatron-Bridge's Kimi K3 fields: its function charges the layers they
  // name as Kimi Delta Attention in place of the model's attention (an empty
  // list names none).
  const bool kimi = a.kimi_kda_layers && !a.kimi_kda_layers->empty();
  if (kimi) {
    if (!variant.empty()) {
      return Error(ErrorCode::kUnsupported,
                   "kimi_kda_layers with experimental_attention_variant = \"" + variant +
                       "\": Megatron-Bridge's function replaces plain attention layers by Kimi Delta Attention; "
                       "trainflops does not model the two together");
    }
    if (a.window_size) {
      return Error(ErrorCode::kUnsupported,
                   "kimi_kda_layers with window_size: Megatron-Bridge's function replaces an average attention layer "
                   "by each Kimi Delta Attention layer, which windows make differ from the layers replaced");
    }
    TRAINFLOPS_RETURN_IF_ERROR(mark_kimi_kda_layers(a, layers, kinds, kKda));
  }
  if (linear) {
    if (!a.linear_attention_freq) {
      return missing("linear_attention_freq", "when experimental_attention_variant is \"" + variant + "\"");
    }
    TRAINFLOPS_RETURN_IF_ERROR(expand_frequency("linear_attention_freq", *a.linear_attention_freq, kinds, kLinear,
                                                "num_layers + mtp_num_layers", 1, /*marks_multiples=*/false,
                                                ErrorCode::kFailedAssertion));
  }

  TRAINFLOPS_ASSIGN_OR_RETURN(const SlidingWindows windows, sliding_windows(a, layers));
  std::optional<Mixer> attention, linear_attention, kimi_attention;
  std::optional<DsaAttention> sparse_attention;
  std::optional<IndexSharing> index_sharing;
  std::optional<ChannelMixer> dense, experts;
  // Fills `layer` in place: layers are copied often enough to dominate the cost.
  auto build_layer = [&](std::size_t i, Layer& layer) -> Status {
    if (kinds[i] & kKda) {
      if (!kimi_attention) {
        TRAINFLOPS_ASSIGN_OR_RETURN(kimi_attention, bridge_kimi_delta_attention(a));
      }
      layer.mixer = kimi_attention;
    } else if (kinds[i] & kLinear) {
      if (!linear_attention) {
        if (kimi_linear) {
          TRAINFLOPS_ASSIGN_OR_RETURN(linear_attention, megatron_kimi_delta_attention(a, false));
        } else {
          TRAINFLOPS_ASSIGN_OR_RETURN(linear_attention, gated_delta_net(a, false));
        }
      }
      layer.mixer = linear_attention;
    } else if (compressed) {
      TRAINFLOPS_ASSIGN_OR_RETURN(CompressedSparseAttention csa, compressed_sparse_attention(a, compression[i]));
      layer.mixer = std::move(csa);
    } else if (sparse) {
      // Decoder layers are numbered 1..num_layers; each MTP depth restarts at 1.
      const auto number = static_cast<std::int64_t>(i < layers ? i + 1 : 1);
      sparse_attention->runs_indexer = index_sharing->runs_indexer(number);
      layer.mixer = *sparse_attention;
    } else {
      if (!attention) {
        if (flag(a.multi_latent_attention)) {
          TRAINFLOPS_ASSIGN_OR_RETURN(attention, mla_attention(a));
        } else {
          TRAINFLOPS_ASSIGN_OR_RETURN(attention, gqa_attention(a, /*head_dim_required=*/true));
        }
      }
      layer.mixer = attention;
    }
    if (kinds[i] & kMoe) {
      if (!experts) {
        TRAINFLOPS_ASSIGN_OR_RETURN(experts, moe(a));
      }
      layer.channel_mixer = experts;
    } else {
      if (!dense) {
        TRAINFLOPS_ASSIGN_OR_RETURN(dense, dense_mlp(a));
      }
      layer.channel_mixer = dense;
    }
    return Ok{};
  };
  if (sparse && layers + depths > 0) {  // the keys read the index sharing: as the first layer would build it
    TRAINFLOPS_ASSIGN_OR_RETURN(sparse_attention, dsa_attention(a, 1));
    TRAINFLOPS_ASSIGN_OR_RETURN(index_sharing, IndexSharing::from(a));
  }
  // The decoder layers' keys: the first layer of each key is built, the
  // others repeat it, a run of equal keys at a time.
  const std::span<std::uint8_t> keys = std::span(kinds).first(layers);
  if (sparse) index_sharing->mark_own_indexers(keys, kRunsIndexer);
  if (compressed) {
    for (std::size_t i = 0; i < layers; ++i) keys[i] |= static_cast<std::uint8_t>(compression[i]) << kCompressionShift;
  }
  if (!windows.empty()) {
    for (std::size_t i = 0; i < layers; ++i) keys[i] |= windows[i] ? kWindowed : 0;
  }
  // Room for the runs there are: room for one per layer was a block too large
  // for the allocator's fast per-thread cache.
  const std::size_t runs = layers == 0
                               ? 0
                               : 1 + std::transform_reduce(keys.begin() + 1, keys.end(), keys.begin(), std::size_t{0},
                                                           std::plus<>(), std::not_equal_to<>());
  constexpr std::size_t kUsualKeys = 4;  // room enough for most models, not a limit
  LayerStackBuilder::reserve(model.layers, std::min(runs, kUsualKeys), runs);
  constexpr std::size_t kNotBuilt = SIZE_MAX;
  std::array<std::size_t, 2 * kKda> built;  // per key: its index in the decoder's distinct layers
  static_assert((kLinear | kRunsIndexer | kMoe | 3 << kCompressionShift | kWindowed | kKda) < built.size());
  built.fill(kNotBuilt);
  Layer layer;  // one for every layer built: build_layer() sets both its parts
  for (std::size_t i = 0; i < layers;) {
    const std::uint8_t key = keys[i];
    std::size_t end = i + 1;
    while (end < layers && keys[end] == key) ++end;
    const auto repeats = static_cast<std::int64_t>(end - i);
    if (built[key] != kNotBuilt) {
      LayerStackBuilder::append_again(model.layers, built[key], repeats);
    } else {
      TRAINFLOPS_RETURN_IF_ERROR(build_layer(i, layer));
      TRAINFLOPS_RETURN_IF_ERROR(apply_sliding_window(windows, static_cast<std::int64_t>(i + 1), layer));
      built[key] = model.layers.append(layer, repeats);
    }
    i = end;
  }
  // MTP layers are numbered by depth from 1, as Megatron-LM numbers them.
  model.mtp_depths.resize(depths);
  for (std::size_t d = 0; d < depths; ++d) {
    TRAINFLOPS_RETURN_IF_ERROR(build_layer(layers + d, layer));
    TRAINFLOPS_RETURN_IF_ERROR(apply_sliding_window(windows, static_cast<std::int64_t>(d + 1), layer));
    model.mtp_depths[d].append(layer);
  }
  return model;
}

}  // namespace

namespace {

// Each argument's reader, by name: a record is read in one pass over its keys.
struct ArgReader {
  std::string_view name;
  Status (*read)(const json& value, MegatronArgs& args);
};

const std::vector<ArgReader>& arg_readers() {
  static const std::vector<ArgReader> readers = [] {
    std::vector<ArgReader> all = {
#define TRAINFLOPS_ARG_READER(type, member) \
  {#member, [](const json& value, MegatronArgs& args) { return read(#member, value, args.member); }},
        TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_ARG_READER)
#undef TRAINFLOPS_ARG_READER
    };
    std::sort(all.begin(), all.end(), [](const ArgReader& a, const ArgReader& b) { return a.name < b.name; });
    return all;
  }();
  return readers;
}

}  // namespace

Result<ParsedMegatronArgs> megatron_args_from_json(const json& object) {
  if (!object.is_object()) return Error("args: must be a JSON object of Megatron-LM arguments, got " + object.dump());
  const std::vector<ArgReader>& readers = arg_readers();
  ParsedMegatronArgs parsed;
  for (const auto& [key, value] : object.items()) {
    const auto reader = std::lower_bound(readers.begin(), readers.end(), key,
                                         [](const ArgReader& r, const std::string& name) { return r.name < name; });
    if (reader == readers.end() || reader->name != key) {
      parsed.ignored.push_back(key);
    } else if (!value.is_null()) {
      TRAINFLOPS_RETURN_IF_ERROR(reader->read(value, parsed.args));
    }
  }
  return parsed;
}

Result<MegatronArgs> megatron_args_from_values(const std::vector<json>& values) {
  MegatronArgs args;
  std::size_t next = 0;
  Status status = Ok{};
  for_each_megatron_arg(args, [&](std::string_view name, auto& member) {
    const json& value = values[next++];
    if (status.ok() && !value.is_null()) status = read(name, value, member);
  });
  TRAINFLOPS_RETURN_IF_ERROR(status);
  return args;
}

Result<ParsedMegatronArgs> parse_megatron_args_json(std::string_view json_text) {
  Result<json> object = parse_json<json>(json_text, JsonComments::kAllowed);
  if (!object.ok()) return object.error().context("args");
  return megatron_args_from_json(object.value());
}

namespace {

// Lists, compared after the scalars.
template <typename T>
constexpr bool kIsList = false;
template <typename T>
constexpr bool kIsList<std::vector<T>> = true;
template <>
constexpr bool kIsList<LayerFrequency> = true;

}  // namespace

bool MegatronArgs::operator==(const MegatronArgs& other) const {
#define TRAINFLOPS_SAME_SCALAR(type, name) \
  if (!kIsList<type> && name != other.name) return false;
  TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_SAME_SCALAR)
#undef TRAINFLOPS_SAME_SCALAR
#define TRAINFLOPS_SAME_LIST(type, name) \
  if (kIsList<type> && name != other.name) return false;
  TRAINFLOPS_MEGATRON_ARGS(TRAINFLOPS_SAME_LIST)
#undef TRAINFLOPS_SAME_LIST
  return true;
}

namespace {

// The parameters besides the products' weights; unset arguments read as the
// presets' models have them (megatron_args.h).
Result<ParameterLayout> parameter_layout(const MegatronArgs& a) {
  ParameterLayout layout;
  const std::string normalization = a.normalization.value_or("RMSNorm");
  if (normalization == "LayerNorm") {
    layout.normalization = ParameterLayout::Normalization::kLayerNorm;
  } else if (normalization != "RMSNorm") {
    return Error("normalization = \"" + normalization + "\": must be one of LayerNorm, RMSNorm");
  }
  const std::string softmax = a.softmax_type.value_or("vanilla");
  if (softmax != "vanilla" && softmax != "off-by-one" && softmax != "learnable") {
    return Error("softmax_type = \"" + softmax + "\": must be one of vanilla, off-by-one, learnable");
  }
  layout.attention_sinks = softmax == "learnable";
  layout.qk_norm = flag(a.qk_layernorm) ? ParameterLayout::QkNorm::kPerHead : ParameterLayout::QkNorm::kNone;
  layout.linear_biases = flag(a.add_bias_linear);
  layout.qkv_biases = flag(a.add_qkv_bias);
  layout.expert_bias = flag(a.moe_router_enable_expert_bias);
  layout.shared_expert_gate = flag(a.moe_shared_expert_gate);
  layout.tied_embedding = a.untie_embeddings_and_output_weights.has_value() && !*a.untie_embeddings_and_output_weights;
  return layout;
}

}  // namespace

std::string_view megatron_branch_name(MegatronBranch branch) {
  return branch == MegatronBranch::kDev ? "dev" : "main";
}

Result<MegatronBranch> parse_megatron_branch(std::string_view text) {
  for (MegatronBranch branch : {MegatronBranch::kMain, MegatronBranch::kDev}) {
    if (text == megatron_branch_name(branch)) return branch;
  }
  std::string message = "megatron_branch = \"" + std::string(text) + "\": must be main or dev";
  if (const std::optional<std::string> near = nearest_name(text, {"main", "dev"}, 2)) {
    message += "; did you mean " + *near + "?";
  }
  return Error(message);
}

namespace {

// The dev branch's function, which carries Megatron-LM's DSA fix, charges an
// indexer trained by the sparse loss as by the dense one.
void charge_sparse_loss_as_dense(Model& model) {
  const auto charge = [](Layer& layer) {
    if (!layer.mixer) return;
    std::visit(Overloaded{[](OneOf<DsaAttention, DsaGqaAttention> auto& attention) {
                            attention.indexer.megatron_charges_dense_loss =
                                attention.indexer.grad_mode == DsaIndexer::GradMode::kSparse;
                          },
                          [](const auto&) {}},
               *layer.mixer);
  };
  model.layers.edit_each(charge);
  for (LayerStack& depth : model.mtp_depths) depth.edit_each(charge);
}

}  // namespace

bool has_linear_attention_variant(const MegatronArgs& args) {
  const std::string variant = args.experimental_attention_variant.value_or("");
  return variant == "gdn" || variant == "gdn2" || variant == "gated_delta_net" || variant == "kda";
}

Result<Model> model_from_megatron_args(const MegatronArgs& a, MegatronBranch branch) {
  Model model;
  TRAINFLOPS_ASSIGN_OR_RETURN(model.hidden_size, required("hidden_size", a.hidden_size, "for every model"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.vocab_size, required("padded_vocab_size", a.padded_vocab_size, "for every model"));
  TRAINFLOPS_ASSIGN_OR_RETURN(model.parameter_layout, parameter_layout(a));
  model.megatron_seq_length = a.seq_length;
  Result<Model> built =
      a.hybrid_layer_pattern ? hybrid_model(a, std::move(model), branch) : standard_model(a, std::move(model));
  if (!built.ok()) return built;
  // Megatron-LM's hyper-connections are mHC; its function does not count them.
  if (flag(a.enable_hyper_connections)) {
    TRAINFLOPS_ASSIGN_OR_RETURN(const std::int64_t streams,
                                required("num_residual_streams", a.num_residual_streams, "with enable_hyper_connections"));
    built.value().hyper_connections = HyperConnections{HyperConnections::Variant::kManifold, streams, 0};
  }
  if (branch == MegatronBranch::kDev) charge_sparse_loss_as_dense(built.value());
  TRAINFLOPS_RETURN_IF_ERROR(validate(built.value()));
  return built;
}

}  // namespace trainflops
