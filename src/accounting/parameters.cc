#include "trainflops/parameters.h"

#include <array>
#include <cstdio>
#include <optional>
#include <utility>

#include "accounting/layer_terms.h"

namespace trainflops {
namespace {

// The parameters of one layer (or part of the model) by component and by
// kind; every parameter is used by every token unless `active` says less
// (MoE experts).
class Parts {
 public:
  // The weight of a product (the router's is kRouter, the others kWeight).
  void weight(Component component, Int128 total) { weight(component, total, total); }
  void weight(Component component, Int128 total, Int128 active) {
    add_to(components_[static_cast<std::size_t>(component)], total, active);
    component_present_[static_cast<std::size_t>(component)] = true;
    add(component == Component::kMoeRouter ? ParameterKind::kRouter : ParameterKind::kWeight, total, active);
  }
  // A table looked up, not multiplied: no token makes it active.
  void table(Component component, Int128 total) {
    add_to(components_[static_cast<std::size_t>(component)], total, 0);
    component_present_[static_cast<std::size_t>(component)] = true;
    add(ParameterKind::kLookupTable, total, 0);
  }
  // A parameter that is no product's weight.
  void add(ParameterKind kind, Int128 total) { add(kind, total, total); }
  void add(ParameterKind kind, Int128 total, Int128 active) {
    add_to(kinds_[static_cast<std::size_t>(kind)], total, active);
  }
  // Adds `copies` times `other` (a layer that repeats).
  void add(const Parts& other, std::int64_t copies = 1) {
    for (Component c : kAllComponents) {
      const auto i = static_cast<std::size_t>(c);
      if (other.component_present_[i]) {
        add_to(components_[i], other.components_[i].total * copies, other.components_[i].active * copies);
        component_present_[i] = true;
      }
    }
    for (std::size_t i = 0; i < kinds_.size(); ++i) {
      add_to(kinds_[i], other.kinds_[i].total * copies, other.kinds_[i].active * copies);
    }
  }

  ParameterCount sum() const {
    ParameterCount sum;
    for (const ParameterCount& count : kinds_) add_to(sum, count.total, count.active);
    return sum;
  }

  std::vector<ComponentParameters> components() const {
    std::vector<ComponentParameters> out;
    for (Component c : kAllComponents) {
      const auto i = static_cast<std::size_t>(c);
      if (component_present_[i]) out.push_back({c, components_[i]});
    }
    return out;
  }
  std::vector<KindParameters> kinds() const {
    std::vector<KindParameters> out;
    for (ParameterKind kind : kAllParameterKinds) {
      const ParameterCount& count = kinds_[static_cast<std::size_t>(kind)];
      if (count.total != 0 || count.active != 0) out.push_back({kind, count});
    }
    return out;
  }

 private:
  static void add_to(ParameterCount& count, Int128 total, Int128 active) {
    count.total += total;
    count.active += active;
  }
  std::array<ParameterCount, kAllComponents.size()> components_{};
  std::array<bool, kAllComponents.size()> component_present_{};
  std::array<ParameterCount, std::size(kAllParameterKinds)> kinds_{};
};

// What every layer family reads besides its own sizes.
struct Context {
  Int128 h;
  const ParameterLayout& layout;
  std::optional<HyperConnections> hyper_connections;
  bool attention_residuals = false;  // the layers read their inputs through them (the decoder's)

  // The parameters of one norm over `width` elements.
  Int128 norm(Int128 width) const {
    return layout.normalization == ParameterLayout::Normalization::kLayerNorm ? 2 * width : width;
  }
};

Int128 gated_matrices(bool gated) { return gated ? 3 : 2; }

// --- attention -------------------------------------------------------------

void add_mixer(Parts& p, const GqaAttention& a, const Context& c) {
  const Int128 h = c.h, n = a.num_heads, g = a.num_query_groups;
  // Without a head_dim: query width h, key/value width h g / n rounded down.
  const Int128 q = a.head_dim ? *a.head_dim * n : h;
  const Int128 kv = a.head_dim ? *a.head_dim * g : h * g / n;
  const Int128 gate = (a.output_gate ? q : 0) + (a.head_gate ? n : 0);
  const Int128 key_value = a.reuses_key_value ? 0 : a.key_is_value ? kv : 2 * kv;
  p.weight(Component::kAttentionProjections, h * (q + key_value + gate) + q * h);
  const ParameterLayout& layout = c.layout;
  if (layout.linear_biases || layout.qkv_biases) p.add(ParameterKind::kBias, q + key_value + gate);
  if (layout.linear_biases) p.add(ParameterKind::kBias, h);
  switch (layout.qk_norm) {
    case ParameterLayout::QkNorm::kNone: break;
    // A layer that reuses another layer's keys normalizes none of its own.
    case ParameterLayout::QkNorm::kPerHead:
      p.add(ParameterKind::kNorm, c.norm((a.reuses_key_value ? 1 : 2) * (q / n)));
      break;
    case ParameterLayout::QkNorm::kAllHeads:
      p.add(ParameterKind::kNorm, c.norm(q + (a.reuses_key_value ? 0 : kv)));
      break;
  }
  if (layout.attention_sinks) p.add(ParameterKind::kPerHeadScalar, n);
}

void add_mla(Parts& p, const MlaAttention& a, const Context& c) {
  const Int128 h = c.h, n = a.num_heads, qk = a.qk_head_dim, rope = a.qk_pos_emb_head_dim, v = a.v_head_dim;
  const Int128 kv_lora = a.kv_lora_rank;
  const Int128 query = a.q_lora_rank ? h * *a.q_lora_rank + *a.q_lora_rank * n * (qk + rope) : h * n * (qk + rope);
  const Int128 key_value = h * (kv_lora + rope) + kv_lora * n * (qk + v);
  const Int128 gate = a.output_gate ? h * n * v : 0;  // Kimi K3's output gate
  p.weight(Component::kAttentionProjections, query + key_value + n * v * h + gate);
  // The LoRA norms: the queries' latent (when there is one) and the keys' and values'.
  p.add(ParameterKind::kNorm, c.norm((a.q_lora_rank ? *a.q_lora_rank : 0) + kv_lora));
  if (c.layout.linear_biases) {
    const Int128 query_outputs = a.q_lora_rank ? *a.q_lora_rank + n * (qk + rope) : n * (qk + rope);
    p.add(ParameterKind::kBias, query_outputs + kv_lora + rope + n * (qk + v) + h);
  }
}

void add_mixer(Parts& p, const MlaAttention& a, const Context& c) { add_mla(p, a, c); }

// A lightning indexer whose queries are projected from `query_input` wide inputs.
void add_dsa_indexer(Parts& p, const DsaIndexer& i, Int128 query_input, const Context& c) {
  const Int128 h = c.h, nh = i.num_heads, hd = i.head_dim;
  p.weight(Component::kIndexerProjections, query_input * nh * hd + h * hd + h * nh);
  p.add(ParameterKind::kNorm, 2 * hd);  // the keys' LayerNorm, whatever the model's norms
  if (i.pool_size > 1) p.weight(Component::kKpoolGate, h * hd);
}

void add_mixer(Parts& p, const DsaAttention& a, const Context& c) {
  add_mla(p, a.mla, c);
  if (a.runs_indexer) add_dsa_indexer(p, a.indexer, a.mla.q_lora_rank ? *a.mla.q_lora_rank : c.h, c);
}

void add_mixer(Parts& p, const DsaGqaAttention& a, const Context& c) {
  add_mixer(p, a.attention, c);
  if (a.runs_indexer) add_dsa_indexer(p, a.indexer, c.h, c);  // queries from the hidden state
}

void add_mixer(Parts& p, const CompressedSparseAttention& a, const Context& c) {
  using Kind = CompressedSparseAttention::Kind;
  const Int128 h = c.h, n = a.num_heads, dv = a.head_dim, q_lora = a.q_lora_rank, o_lora = a.o_lora_rank;
  p.weight(Component::kAttentionProjections,
           h * q_lora + q_lora * n * dv + h * dv + n * dv * o_lora + Int128{a.o_groups} * o_lora * h);
  p.add(ParameterKind::kNorm, q_lora + dv);  // the query LoRA's and the latent's
  if (c.layout.attention_sinks) p.add(ParameterKind::kPerHeadScalar, n);
  // A compressor of `width` outputs pooling `ratio` tokens: its key/value and
  // gate projections (twice the width where windows overlap, at ratio 4), a
  // position bias per token of the window and output, and the norm of its
  // entries.
  const auto add_compressor = [&](Component component, Int128 ratio, Int128 width) {
    const Int128 overlap = ratio == 4 ? 2 : 1;
    p.weight(component, 2 * h * overlap * width);
    p.add(ParameterKind::kBias, ratio * overlap * width);
    p.add(ParameterKind::kNorm, width);
  };
  if (a.kind == Kind::kWindow) return;
  const Int128 ratio = compression_ratio(a.kind);
  add_compressor(Component::kKvCompressor, ratio, dv);
  if (a.kind == Kind::kCsa) {
    const Int128 nh = a.indexer_num_heads, hd = a.indexer_head_dim;
    add_compressor(Component::kIndexerProjections, ratio, hd);  // the indexer's own compressor, at ratio 4
    p.weight(Component::kIndexerProjections, q_lora * nh * hd + h * nh);
  }
}

void add_mixer(Parts& p, const CompressedBlockSparseAttention& a, const Context& c) {
  add_mixer(p, a.attention, c);
  p.weight(Component::kIndexerProjections,
           c.h * (Int128{a.indexer_num_heads} + a.indexer_key_heads) * a.indexer_head_dim);
  p.add(ParameterKind::kNorm, 2 * Int128{a.indexer_head_dim});  // the index queries' and keys' norms
}

void add_mixer(Parts& p, const SharedCompressedAttention& a, const Context& c) {
  const Int128 h = c.h, n = a.num_heads, dv = a.head_dim, q_lora = a.q_lora_rank, o_lora = a.o_lora_rank;
  p.weight(Component::kAttentionProjections,
           h * q_lora + q_lora * n * dv + h * dv + n * dv * o_lora + Int128{a.o_groups} * o_lora * h);
  p.add(ParameterKind::kNorm, q_lora + dv);  // the query LoRA's and the latent's
  if (c.layout.attention_sinks) p.add(ParameterKind::kPerHeadScalar, n);
  if (a.writes_cache) {
    p.weight(Component::kKvCompressor, (a.compress_ratio > 1 ? 2 : 1) * h * dv);
    p.add(ParameterKind::kNorm, dv);
  }
  if (!a.runs_indexer) return;
  const Int128 nh = a.indexer_num_heads, hd = a.indexer_head_dim;
  p.weight(Component::kIndexerProjections, q_lora * nh * hd + h * nh + (a.writes_cache ? dv * hd : 0));
  if (a.writes_cache) p.add(ParameterKind::kNorm, hd);  // the index keys'
}

// --- linear attention and state spaces --------------------------------------

void add_mixer(Parts& p, const BlockSparseAttention& a, const Context& c) {
  add_mixer(p, a.attention, c);
  p.weight(Component::kIndexerProjections, c.h * (Int128{a.indexer_num_heads} + 1) * a.indexer_head_dim);
  p.add(ParameterKind::kNorm, 2 * Int128{a.indexer_head_dim});  // the index queries' and keys' norms
}

void add_mixer(Parts& p, const GatedDeltaNet& g, const Context& c) {
  const Int128 h = c.h, qk_dim = Int128{g.key_head_dim} * g.num_key_heads;
  const Int128 v_dim = Int128{g.value_head_dim} * g.num_value_heads;
  const Int128 in = g.variant == GatedDeltaNet::Variant::kGdn2 ? 4 * qk_dim + 3 * v_dim
                                                               : 2 * qk_dim + 2 * v_dim + 2 * Int128{g.num_value_heads};
  p.weight(Component::kGatedDeltaNet, h * in + g.conv_kernel_dim * (2 * qk_dim + v_dim) + v_dim * h);
  p.add(ParameterKind::kPerHeadScalar, 2 * Int128{g.num_value_heads});  // A and the dt bias
  p.add(ParameterKind::kNorm, g.value_head_dim);                        // the output norm, shared by the heads
}

void add_mixer(Parts& p, const Mamba2& m, const Context& c) {
  const Int128 h = c.h, d = m.inner_dim, group_state = Int128{m.num_groups} * m.state_dim;
  const Int128 conv_channels = d + 2 * group_state;
  p.weight(Component::kMamba, h * (2 * d + 2 * group_state + m.num_heads) + kMambaConvKernel * conv_channels + d * h);
  p.add(ParameterKind::kBias, conv_channels);                   // the convolution's
  p.add(ParameterKind::kPerHeadScalar, 3 * Int128{m.num_heads});  // A, D and the dt bias
  p.add(ParameterKind::kNorm, d);                               // the gated RMSNorm before the output projection
}

void add_mixer(Parts& p, const GatedDeltaProduct& g, const Context& c) {
  const Int128 h = c.h, d = g.inner_dim, hh = g.num_householder, group_state = Int128{g.num_groups} * g.state_dim;
  const Int128 in = (1 + hh) * (d + group_state + g.num_heads);
  const Int128 conv_channels = d * hh + group_state * (1 + hh);
  p.weight(Component::kGatedDeltaProduct, h * in + 4 * conv_channels + d * h);
}

void add_mixer(Parts& p, const KimiDeltaAttention& k, const Context& c) {
  const Int128 h = c.h, p_width = Int128{k.num_heads} * k.head_dim;
  const Int128 output_gate = k.output_gate_rank ? *k.output_gate_rank * (h + p_width) : h * p_width;
  const Int128 forget_gate = k.forget_gate_rank ? *k.forget_gate_rank * (h + p_width) : h * p_width;
  p.weight(Component::kKimiDeltaAttention, 4 * h * p_width + h * k.num_heads + forget_gate + output_gate +
                                               Int128{k.conv_kernel_dim} * 3 * p_width);
  // A per head and the forget gate's bias per channel; the gated output norm, shared by the heads.
  p.add(ParameterKind::kPerHeadScalar, k.num_heads + p_width);
  p.add(ParameterKind::kNorm, k.head_dim);
}

// --- channel mixers ---------------------------------------------------------

// One MLP's biases: its input projection's (twice the width when gated) and its output's.
Int128 mlp_biases(bool gated, Int128 ffn, Int128 width) { return (gated ? 2 : 1) * ffn + width; }

void add_channel_mixer(Parts& p, const DenseMlp& m, const Context& c) {
  p.weight(Component::kMlp, gated_matrices(m.gated) * c.h * m.ffn_hidden_size);
  if (c.layout.linear_biases) p.add(ParameterKind::kBias, mlp_biases(m.gated, m.ffn_hidden_size, c.h));
}

void add_channel_mixer(Parts& p, const Moe& m, const Context& c) {
  const Int128 h = c.h, experts = *m.num_experts;  // checked by the caller
  const Int128 width = m.latent_size ? *m.latent_size : h;
  const Int128 expert = gated_matrices(m.gated) * width * m.expert_ffn_hidden_size;
  const Int128 latent_projections = m.latent_size ? 2 * h * *m.latent_size : 0;
  // A token uses the experts its picks send it to: real_experts_per_token of
  // them when some picks are zero experts, which have no weights.
  const Int128 used = m.real_experts_per_token.value_or(m.topk);
  p.weight(Component::kMoeRouted, experts * expert + latent_projections, used * expert + latent_projections);
  if (m.shared_expert_ffn_hidden_size) {
    p.weight(Component::kMoeShared, gated_matrices(m.gated) * h * *m.shared_expert_ffn_hidden_size);
  }
  p.weight(Component::kMoeRouter, h * (experts + m.zero_experts.value_or(0)));  // it scores the zero experts too
  const ParameterLayout& layout = c.layout;
  if (layout.linear_biases) {
    const Int128 one = mlp_biases(m.gated, m.expert_ffn_hidden_size, width);
    p.add(ParameterKind::kBias, experts * one + experts, used * one + experts);  // the experts', the router's
    if (m.shared_expert_ffn_hidden_size) {
      p.add(ParameterKind::kBias, mlp_biases(m.gated, *m.shared_expert_ffn_hidden_size, h));
    }
  }
  if (layout.expert_bias && !m.hash_routed) p.add(ParameterKind::kExpertBias, experts + m.zero_experts.value_or(0));
  if (layout.shared_expert_gate && m.shared_expert_ffn_hidden_size) p.add(ParameterKind::kGate, h);
  // Beside the layer's input and output norms (the shared expert's branch):
  // the routed experts' input norm and both branches' output norms.
  if (layout.sublayer_output_norms && m.shared_expert_ffn_hidden_size) p.add(ParameterKind::kNorm, 3 * c.norm(h));
  if (layout.router_scales) {
    p.add(ParameterKind::kNorm, h);  // the scale of the router's normalized input
    p.add(ParameterKind::kPerHeadScalar, experts);
  }
  if (layout.latent_expert_norm && m.latent_size) p.add(ParameterKind::kNorm, c.norm(*m.latent_size));
}

void add_ngram_memory(Parts& p, const NgramMemory& m, Int128 h) {
  p.weight(Component::kNgramMemory,
           Int128{m.embed_dim} * (m.streams * h + h) + Int128{m.conv_kernel} * m.streams * h);
  p.table(Component::kNgramMemory, m.table_parameters);
}

// The static parameters of DeepSeek-V4's manifold hyper-connections beside
// their weights: each sublayer's mixing biases ((2 + n) n, added to the
// mixes) and its three scales (the pre, post and residual mixes'); a head's
// (the final read of the streams, the MTP depth's) n biases and one scale.
// The gated-residual variant's are not counted.
void add_hyper_connection_statics(Parts& p, const HyperConnections& hc, Int128 sublayers, bool head) {
  if (hc.variant != HyperConnections::Variant::kManifold) return;
  const Int128 n = hc.streams;
  p.add(ParameterKind::kBias, sublayers * (head ? n : (2 + n) * n));
  p.add(ParameterKind::kPerHeadScalar, sublayers * (head ? 1 : 3));
}

// The layer's slice of the model-level projection, its gate and its
// projection back, and its h-wide norm after that; its slice of the table.
void add_per_layer_embedding(Parts& p, const PerLayerEmbedding& e, const Context& c) {
  p.weight(Component::kPerLayerEmbedding, 3 * c.h * e.dim);
  p.add(ParameterKind::kNorm, c.norm(c.h));
  p.table(Component::kPerLayerEmbedding, Int128{e.vocabulary} * e.dim);
}

Result<Parts> layer_parts(const std::string& path, const Layer& layer, const Context& c) {
  Parts p;
  if (layer.ngram_memory) add_ngram_memory(p, *layer.ngram_memory, c.h);
  if (c.hyper_connections) {
    const int sublayers = (layer.mixer ? 1 : 0) + (layer.channel_mixer ? 1 : 0);
    p.weight(Component::kHyperConnections, sublayers * hyper_connection_weights(*c.hyper_connections, c.h, false));
    add_hyper_connection_statics(p, *c.hyper_connections, sublayers, false);
  }
  // Each attention residual read scores with its own h x 1 projection after its own norm.
  if (c.attention_residuals) {
    const int reads = (layer.mixer ? 1 : 0) + (layer.channel_mixer ? 1 : 0);
    p.weight(Component::kAttentionResiduals, reads * c.h);
    p.add(ParameterKind::kNorm, reads * c.norm(c.h));
  }
  // add_mixer() and add_channel_mixer() have one overload per layer type: a
  // type without one does not compile. Each sublayer has its own input norm.
  const int norms_per_sublayer = c.layout.sublayer_output_norms ? 2 : 1;
  if (layer.mixer) {
    std::visit([&](const auto& mixer) { add_mixer(p, mixer, c); }, *layer.mixer);
    p.add(ParameterKind::kNorm, norms_per_sublayer * c.norm(c.h));
  }
  if (layer.channel_mixer) {
    if (const auto* moe = std::get_if<Moe>(&*layer.channel_mixer); moe && !moe->num_experts) {
      return Error(path + ".channel_mixer.num_experts is missing: the total parameters count every expert");
    }
    std::visit([&](const auto& mixer) { add_channel_mixer(p, mixer, c); }, *layer.channel_mixer);
    p.add(ParameterKind::kNorm, norms_per_sublayer * c.norm(c.h));
  }
  if (layer.per_layer_embedding) add_per_layer_embedding(p, *layer.per_layer_embedding, c);
  if (c.layout.layer_scalars) p.add(ParameterKind::kPerHeadScalar, 1);
  return p;
}

void add_to(ParameterCount& sum, const ParameterCount& part) {
  sum.total += part.total;
  sum.active += part.active;
}

std::string printed(const char* format, double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

ParameterCount ModelParameters::total() const {
  return sum({ParameterPart::kEmbedding, ParameterPart::kOutputLayer, ParameterPart::kDecoder, ParameterPart::kMtp});
}

std::string_view parameter_kind_name(ParameterKind kind) {
  switch (kind) {
    case ParameterKind::kWeight: return "weight";
    case ParameterKind::kEmbeddingTable: return "embedding_table";
    case ParameterKind::kRouter: return "router";
    case ParameterKind::kNorm: return "norm";
    case ParameterKind::kBias: return "bias";
    case ParameterKind::kPerHeadScalar: return "per_head_scalar";
    case ParameterKind::kExpertBias: return "expert_bias";
    case ParameterKind::kGate: return "gate";
    case ParameterKind::kLookupTable: return "lookup_table";
  }
  return "unknown";
}

bool costs_flops_per_token(ParameterKind kind) { return kind == ParameterKind::kWeight; }

// A tied embedding table is the output layer's weight: every token
// multiplies by all of it (embedding.active is then the table, else 0).
ParameterCount ModelParameters::costing_flops() const {
  ParameterCount sum{embedding.active, embedding.active};
  for (const KindParameters& part : kinds) {
    if (costs_flops_per_token(part.kind)) add_to(sum, part.count);
  }
  return sum;
}

ParameterCount ModelParameters::not_costing_flops() const {
  ParameterCount sum{-embedding.active, -embedding.active};
  for (const KindParameters& part : kinds) {
    if (!costs_flops_per_token(part.kind)) add_to(sum, part.count);
  }
  return sum;
}

ParameterCount ModelParameters::main_model() const {
  return sum({ParameterPart::kEmbedding, ParameterPart::kOutputLayer, ParameterPart::kDecoder});
}

ParameterCount ModelParameters::sum(const std::vector<ParameterPart>& parts, bool embedding_table_active) const {
  ParameterCount sum;
  for (ParameterPart part : parts) {
    switch (part) {
      case ParameterPart::kEmbedding:
        add_to(sum, {embedding.total, embedding_table_active ? embedding.total : embedding.active});
        break;
      case ParameterPart::kOutputLayer: add_to(sum, output_layer); break;
      case ParameterPart::kDecoder: add_to(sum, decoder); break;
      case ParameterPart::kMtp: add_to(sum, mtp); break;
    }
  }
  return sum;
}

namespace {

// count_parameters(), with a row per layer when `rows`.
Result<ModelParameters> parameters_of(const Model& model, bool rows) {
  TRAINFLOPS_RETURN_IF_ERROR(validate(model));
  const Context c{model.hidden_size, model.parameter_layout, model.hyper_connections,
                  model.attention_residuals.has_value()};
  // MTP depths keep a plain residual.
  const Context mtp_context{c.h, c.layout, c.hyper_connections, false};
  const Int128 h = c.h, table = h * model.vocab_size;
  const bool tied = model.parameter_layout.tied_embedding;
  ModelParameters out;
  Parts all;
  // With a tied embedding every token multiplies by the whole table (the logits).
  out.embedding = {table, tied ? table : 0};
  all.add(ParameterKind::kEmbeddingTable, out.embedding.total, out.embedding.active);
  if (rows) {
    std::size_t count = 2 + model.layers.size();
    for (const LayerStack& depth : model.mtp_depths) count += 1 + depth.size();
    out.layers.reserve(count);
    out.layers.push_back({"embedding", "embedding", out.embedding});
  }
  // Each distinct layer's parameters once (an error names its first
  // position), added once times the layers that repeat it; then a row per layer.
  auto add_layers = [&](const std::string& path, const std::string& prefix, const LayerStack& layers,
                        ParameterCount& part, const Context& c) -> Status {
    struct Distinct {
      std::optional<Parts> parts;
      ParameterCount one;
      std::int64_t uses = 0;
    };
    std::vector<Distinct> distinct(layers.distinct().size());
    for (const LayerStack::Run& run : layers.runs()) {
      Distinct& known = distinct[run.layer];
      if (!known.parts) {
        TRAINFLOPS_ASSIGN_OR_RETURN(known.parts, layer_parts(path + "[" + std::to_string(run.start) + "]",
                                                             layers.distinct()[run.layer], c));
        known.one = known.parts->sum();
      }
      known.uses += run.count;
    }
    for (const Distinct& known : distinct) {
      if (!known.parts) continue;  // held but in no run: no layer has it
      all.add(*known.parts, known.uses);
      add_to(part, {known.one.total * known.uses, known.one.active * known.uses});
    }
    if (!rows) return Ok{};
    std::vector<std::string> kinds;
    for (const Layer& layer : layers.distinct()) kinds.push_back(layer_kind(layer));
    for (const LayerStack::Run& run : layers.runs()) {
      for (std::int64_t i = 0; i < run.count; ++i) {
        out.layers.push_back(
            {prefix + "." + std::to_string(run.start + i + 1), kinds[run.layer], distinct[run.layer].one});
      }
    }
    return Ok{};
  };
  TRAINFLOPS_RETURN_IF_ERROR(add_layers("layers", "decoder", model.layers, out.decoder, c));
  for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
    const std::string depth = "mtp" + std::to_string(d + 1);
    // The 2h -> h projection, the norms of its two inputs (the embedding and
    // the hidden state) and the depth's final norm; the depth's head reads
    // its residual streams as the main head does.
    Parts projection;
    projection.weight(Component::kMtp, 2 * h * h);
    projection.add(ParameterKind::kNorm, 3 * c.norm(h));
    if (model.hyper_connections) {
      projection.weight(Component::kHyperConnections, hyper_connection_weights(*model.hyper_connections, h, true));
      add_hyper_connection_statics(projection, *model.hyper_connections, 1, true);
    }
    all.add(projection);
    add_to(out.mtp, projection.sum());
    if (rows) out.layers.push_back({depth + ".projection", "projection", projection.sum()});
    TRAINFLOPS_RETURN_IF_ERROR(
        add_layers("mtp_depths[" + std::to_string(d) + "]", depth, model.mtp_depths[d], out.mtp, mtp_context));
  }
  // The final norm, the final read of the residual streams (or the last
  // attention residual read, with its norm) and, unless it is the embedding
  // table, the output layer.
  Parts head;
  head.add(ParameterKind::kNorm, c.norm(h));
  if (model.attention_residuals) {
    head.weight(Component::kAttentionResiduals, h);
    head.add(ParameterKind::kNorm, c.norm(h));
  }
  if (model.hyper_connections) {
    head.weight(Component::kHyperConnections, hyper_connection_weights(*model.hyper_connections, h, true));
    add_hyper_connection_statics(head, *model.hyper_connections, 1, true);
  }
  if (!tied) head.weight(Component::kLogits, table);
  all.add(head);
  out.output_layer = head.sum();
  if (rows) out.layers.push_back({"output_layer", "output_layer", out.output_layer});
  out.components = all.components();
  out.kinds = all.kinds();
  return out;
}

}  // namespace

Result<ModelParameters> count_parameters(const Model& model) { return parameters_of(model, /*rows=*/true); }

Result<std::vector<KindParameters>> layer_parameters(const Layer& layer, std::int64_t hidden_size,
                                                     const ParameterLayout& layout) {
  TRAINFLOPS_ASSIGN_OR_RETURN(const Parts parts,
                              layer_parts("layer", layer, Context{hidden_size, layout, std::nullopt, false}));
  return parts.kinds();
}

Result<ModelParameters> count_parameter_totals(const Model& model) { return parameters_of(model, /*rows=*/false); }

std::string format_parameters(Int128 count) {
  static constexpr const char* kSuffixes[] = {"", "K", "M", "B", "T"};
  double value = to_double(count);
  int suffix = 0;
  // Round first, so that 999.6M prints as "1.00B" rather than "1000M".
  while (suffix < 4 && std::stod(printed("%.3g", value)) >= 1000) {
    value /= 1000;
    ++suffix;
  }
  std::string text = printed(value >= 100 || suffix == 0 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value);
  return text + kSuffixes[suffix];
}

}  // namespace trainflops
