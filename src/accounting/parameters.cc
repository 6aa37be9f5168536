#include "trainflops/parameters.h"

#include <array>
#include <cstdio>
#include <optional>
#include <utility>

namespace trainflops {
namespace {

// The weights of one layer part by component; every weight is used by every
// token unless `active` says less (MoE experts).
class Weights {
 public:
  void add(Component component, Int128 total) { add(component, total, total); }
  void add(Component component, Int128 total, Int128 active) {
    ParameterCount& count = counts_[static_cast<std::size_t>(component)];
    count.total += total;
    count.active += active;
    present_[static_cast<std::size_t>(component)] = true;
  }
  // Adds `copies` times the weights of `other` (a layer that repeats).
  void add(const Weights& other, std::int64_t copies = 1) {
    for (Component c : kAllComponents) {
      const auto i = static_cast<std::size_t>(c);
      if (other.present_[i]) add(c, other.counts_[i].total * copies, other.counts_[i].active * copies);
    }
  }

  ParameterCount sum() const {
    ParameterCount sum;
    for (const ParameterCount& count : counts_) {
      sum.total += count.total;
      sum.active += count.active;
    }
    return sum;
  }

  std::vector<ComponentParameters> list() const {
    std::vector<ComponentParameters> out;
    for (Component c : kAllComponents) {
      const auto i = static_cast<std::size_t>(c);
      if (present_[i]) out.push_back({c, counts_[i]});
    }
    return out;
  }

 private:
  std::array<ParameterCount, kAllComponents.size()> counts_{};
  std::array<bool, kAllComponents.size()> present_{};
};

Int128 gated_matrices(bool gated) { return gated ? 3 : 2; }

void add_mixer(Weights& w, const GqaAttention& a, Int128 h) {
  const Int128 n = a.num_heads, g = a.num_query_groups;
  // Without a head_dim: query width h, key/value width h g / n rounded down.
  const Int128 q = a.head_dim ? *a.head_dim * n : h;
  const Int128 kv = a.head_dim ? *a.head_dim * g : h * g / n;
  const Int128 gate = a.output_gate ? q : 0;
  const Int128 key_value = a.reuses_key_value ? 0 : a.key_is_value ? kv : 2 * kv;
  w.add(Component::kAttentionProjections, h * (q + key_value + gate) + q * h);
}

void add_mla(Weights& w, const MlaAttention& a, Int128 h) {
  const Int128 n = a.num_heads, qk = a.qk_head_dim, rope = a.qk_pos_emb_head_dim, v = a.v_head_dim;
  const Int128 query = a.q_lora_rank ? h * *a.q_lora_rank + *a.q_lora_rank * n * (qk + rope) : h * n * (qk + rope);
  const Int128 key_value = h * (a.kv_lora_rank + rope) + Int128{a.kv_lora_rank} * n * (qk + v);
  w.add(Component::kAttentionProjections, query + key_value + n * v * h);
}

void add_mixer(Weights& w, const MlaAttention& a, Int128 h) { add_mla(w, a, h); }

void add_mixer(Weights& w, const DsaAttention& a, Int128 h) {
  add_mla(w, a.mla, h);
  if (!a.runs_indexer) return;
  const DsaIndexer& i = a.indexer;
  const Int128 nh = i.num_heads, hd = i.head_dim;
  const Int128 query_input = a.mla.q_lora_rank ? *a.mla.q_lora_rank : h;
  w.add(Component::kIndexerProjections, query_input * nh * hd + h * hd + h * nh);
  if (i.pool_size > 1) w.add(Component::kKpoolGate, h * hd);
}

void add_mixer(Weights& w, const CompressedSparseAttention& a, Int128 h) {
  using Kind = CompressedSparseAttention::Kind;
  const Int128 n = a.num_heads, dv = a.head_dim, q_lora = a.q_lora_rank, o_lora = a.o_lora_rank;
  w.add(Component::kAttentionProjections,
        h * q_lora + q_lora * n * dv + h * dv + n * dv * o_lora + Int128{a.o_groups} * o_lora * h);
  if (a.kind == Kind::kCsa) {
    const Int128 nh = a.indexer_num_heads, hd = a.indexer_head_dim;
    w.add(Component::kKvCompressor, 4 * h * dv);
    w.add(Component::kIndexerProjections, 4 * h * hd + q_lora * nh * hd + h * nh);
  } else if (a.kind == Kind::kHca) {
    w.add(Component::kKvCompressor, 2 * h * dv);
  }
}

void add_mixer(Weights& w, const BlockSparseAttention& a, Int128 h) {
  add_mixer(w, a.attention, h);
  w.add(Component::kIndexerProjections, h * (Int128{a.indexer_num_heads} + 1) * a.indexer_head_dim);
}

void add_mixer(Weights& w, const GatedDeltaNet& g, Int128 h) {
  const Int128 qk_dim = Int128{g.key_head_dim} * g.num_key_heads;
  const Int128 v_dim = Int128{g.value_head_dim} * g.num_value_heads;
  const Int128 in = g.variant == GatedDeltaNet::Variant::kGdn2 ? 4 * qk_dim + 3 * v_dim
                                                               : 2 * qk_dim + 2 * v_dim + 2 * Int128{g.num_value_heads};
  w.add(Component::kGatedDeltaNet, h * in + g.conv_kernel_dim * (2 * qk_dim + v_dim) + v_dim * h);
}

void add_mixer(Weights& w, const Mamba2& m, Int128 h) {
  const Int128 d = m.inner_dim, group_state = Int128{m.num_groups} * m.state_dim;
  w.add(Component::kMamba,
        h * (2 * d + 2 * group_state + m.num_heads) + kMambaConvKernel * (d + 2 * group_state) + d * h);
}

void add_mixer(Weights& w, const GatedDeltaProduct& g, Int128 h) {
  const Int128 d = g.inner_dim, hh = g.num_householder, group_state = Int128{g.num_groups} * g.state_dim;
  const Int128 in = (1 + hh) * (d + group_state + g.num_heads);
  const Int128 conv_channels = d * hh + group_state * (1 + hh);
  w.add(Component::kGatedDeltaProduct, h * in + 4 * conv_channels + d * h);
}

void add_channel_mixer(Weights& w, const DenseMlp& m, Int128 h) {
  w.add(Component::kMlp, gated_matrices(m.gated) * h * m.ffn_hidden_size);
}

void add_channel_mixer(Weights& w, const Moe& m, Int128 h) {
  const Int128 experts = *m.num_experts;  // checked by the caller
  const Int128 width = m.latent_size ? *m.latent_size : h;
  const Int128 expert = gated_matrices(m.gated) * width * m.expert_ffn_hidden_size;
  const Int128 latent_projections = m.latent_size ? 2 * h * *m.latent_size : 0;
  w.add(Component::kMoeRouted, experts * expert + latent_projections, m.topk * expert + latent_projections);
  if (m.shared_expert_ffn_hidden_size) {
    w.add(Component::kMoeShared, gated_matrices(m.gated) * h * *m.shared_expert_ffn_hidden_size);
  }
  w.add(Component::kMoeRouter, h * experts);
}

Result<Weights> layer_weights(const std::string& path, const Layer& layer, Int128 h) {
  Weights w;
  // add_mixer() and add_channel_mixer() have one overload per layer type: a
  // type without one does not compile.
  if (layer.mixer) std::visit([&](const auto& mixer) { add_mixer(w, mixer, h); }, *layer.mixer);
  if (layer.channel_mixer) {
    if (const auto* moe = std::get_if<Moe>(&*layer.channel_mixer); moe && !moe->num_experts) {
      return Error(path + ".channel_mixer.num_experts is missing: the total parameters count every expert");
    }
    std::visit([&](const auto& mixer) { add_channel_mixer(w, mixer, h); }, *layer.channel_mixer);
  }
  return w;
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
  const Int128 h = model.hidden_size, table = h * model.vocab_size;
  ModelParameters out;
  Weights all;
  out.embedding = {table, 0};
  if (rows) {
    std::size_t count = 2 + model.layers.size();
    for (const LayerStack& depth : model.mtp_depths) count += 1 + depth.size();
    out.layers.reserve(count);
    out.layers.push_back({"embedding", "embedding", out.embedding});
  }
  // Each distinct layer's weights once (an error names its first position),
  // added once times the layers that repeat it; then a row per layer.
  auto add_layers = [&](const std::string& path, const std::string& prefix, const LayerStack& layers,
                        ParameterCount& part) -> Status {
    struct Distinct {
      std::optional<Weights> weights;
      ParameterCount one;
      std::int64_t uses = 0;
    };
    std::vector<Distinct> distinct(layers.distinct().size());
    for (const LayerStack::Run& run : layers.runs()) {
      Distinct& known = distinct[run.layer];
      if (!known.weights) {
        TRAINFLOPS_ASSIGN_OR_RETURN(known.weights, layer_weights(path + "[" + std::to_string(run.start) + "]",
                                                                 layers.distinct()[run.layer], h));
        known.one = known.weights->sum();
      }
      known.uses += run.count;
    }
    for (const Distinct& known : distinct) {
      if (!known.weights) continue;  // held but in no run: no layer has it
      all.add(*known.weights, known.uses);
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
  TRAINFLOPS_RETURN_IF_ERROR(add_layers("layers", "decoder", model.layers, out.decoder));
  for (std::size_t d = 0; d < model.mtp_depths.size(); ++d) {
    const std::string depth = "mtp" + std::to_string(d + 1);
    const ParameterCount projection{2 * h * h, 2 * h * h};
    all.add(Component::kMtp, projection.total);
    add_to(out.mtp, projection);
    if (rows) out.layers.push_back({depth + ".projection", "projection", projection});
    TRAINFLOPS_RETURN_IF_ERROR(
        add_layers("mtp_depths[" + std::to_string(d) + "]", depth, model.mtp_depths[d], out.mtp));
  }
  out.output_layer = {table, table};
  all.add(Component::kLogits, table);
  if (rows) out.layers.push_back({"output_layer", "output_layer", out.output_layer});
  out.components = all.list();
  return out;
}

}  // namespace

Result<ModelParameters> count_parameters(const Model& model) { return parameters_of(model, /*rows=*/true); }

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
