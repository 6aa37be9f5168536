#include "trainflops/parameters.h"

#include <gtest/gtest.h>

#include "trainflops/count.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

constexpr std::int64_t kHidden = 64;

Model one_layer(Layer layer) {
  Model model;
  model.hidden_size = kHidden;
  model.vocab_size = 100;
  model.layers.push_back(std::move(layer));
  return model;
}

MlaAttention mla(std::optional<std::int64_t> q_lora_rank) {
  return MlaAttention{.num_heads = 2,
                      .q_lora_rank = q_lora_rank,
                      .kv_lora_rank = 8,
                      .qk_head_dim = 4,
                      .qk_pos_emb_head_dim = 2,
                      .v_head_dim = 3};
}

DsaAttention dsa(bool runs_indexer, std::int64_t pool_size) {
  return DsaAttention{mla(16), DsaIndexer{.num_heads = 2, .head_dim = 4, .topk = 8, .pool_size = pool_size},
                      runs_indexer};
}

CompressedSparseAttention v4(CompressedSparseAttention::Kind kind) {
  return CompressedSparseAttention{.kind = kind,
                                   .num_heads = 2,
                                   .head_dim = 8,
                                   .q_lora_rank = 16,
                                   .o_groups = 2,
                                   .o_lora_rank = 4,
                                   .window = 4,
                                   .indexer_num_heads = 2,
                                   .indexer_head_dim = 4,
                                   .topk = 8};
}

Moe moe(std::optional<std::int64_t> latent_size) {
  return Moe{.num_experts = 8,
             .topk = 2,
             .expert_ffn_hidden_size = 32,
             .shared_expert_ffn_hidden_size = 48,
             .latent_size = latent_size,
             .gated = true};
}

// The weights of the decoder's products (the router's among them): the
// components less the output layer.
ParameterCount decoder_products(const ModelParameters& p) {
  ParameterCount sum;
  for (const ComponentParameters& part : p.components) {
    if (part.component == Component::kLogits) continue;
    sum.total += part.count.total;
    sum.active += part.count.active;
  }
  return sum;
}

// Each layer type's weights, worked by hand at h = 64.
TEST(ParametersTest, EveryLayerTypeCountsItsWeights) {
  using Kind = CompressedSparseAttention::Kind;
  struct Case {
    const char* name;
    Layer layer;
    std::int64_t total, active;
  };
  const Case cases[] = {
      // 64 (64 + 2 x 32) + 64 x 64
      {"gqa", {GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16}, {}}, 12288, 12288},
      // + the output gate, 64 x 64
      {"gqa gated",
       {GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16, .output_gate = true}, {}},
       16384,
       16384},
      // + Step-3.5's per-head gate, 64 x 4
      {"gqa head gate",
       {GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16, .head_gate = true}, {}},
       12288 + 256,
       12288 + 256},
      // no head_dim: query width 64, key/value width 64 x 2 / 6 = 21 (rounded down)
      {"gqa hybrid",
       {GqaAttention{.num_heads = 6, .num_query_groups = 2}, {}},
       64 * (64 + 42) + 64 * 64,
       64 * (64 + 42) + 64 * 64},
      // q: 64 x 16 + 16 x 2 x 6; kv: 64 x 10 + 8 x 2 x 7; out: 2 x 3 x 64
      {"mla q lora", {mla(16), {}}, 1216 + 752 + 384, 1216 + 752 + 384},
      {"mla", {mla(std::nullopt), {}}, 768 + 752 + 384, 768 + 752 + 384},
      // + the output gate: 64 x 2 x 3
      {"mla output gate",
       {MlaAttention{.num_heads = 2,
                     .kv_lora_rank = 8,
                     .qk_head_dim = 4,
                     .qk_pos_emb_head_dim = 2,
                     .v_head_dim = 3,
                     .output_gate = true},
        {}},
       768 + 752 + 384 + 384,
       768 + 752 + 384 + 384},
      // + indexer: 16 x 2 x 4 + 64 x 4 + 64 x 2
      {"dsa", {dsa(true, 1), {}}, 2352 + 512, 2352 + 512},
      {"dsa shared", {dsa(false, 1), {}}, 2352, 2352},
      // + KPool gate 64 x 4
      {"dsa kpool", {dsa(true, 2), {}}, 2352 + 512 + 256, 2352 + 512 + 256},
      // 64 x 16 + 16 x 2 x 8 + 64 x 8 + 2 x 8 x 4 + 2 x 4 x 64
      {"v4 window", {v4(Kind::kWindow), {}}, 2368, 2368},
      // + compressor 4 x 64 x 8, indexer 4 x 64 x 4 + 16 x 2 x 4 + 64 x 2
      {"v4 csa", {v4(Kind::kCsa), {}}, 2368 + 2048 + 1280, 2368 + 2048 + 1280},
      // + compressor 2 x 64 x 8
      {"v4 hca", {v4(Kind::kHca), {}}, 2368 + 1024, 2368 + 1024},
      // in 64 x (2 x 8 + 2 x 32 + 2 x 4), conv 3 x (2 x 8 + 32), out 32 x 64
      {"gdn",
       {GatedDeltaNet{
            .key_head_dim = 4, .value_head_dim = 8, .num_key_heads = 2, .num_value_heads = 4, .conv_kernel_dim = 3},
        {}},
       5632 + 144 + 2048,
       5632 + 144 + 2048},
      // in 64 x (4 x 8 + 3 x 32)
      {"gdn2",
       {GatedDeltaNet{.variant = GatedDeltaNet::Variant::kGdn2,
                      .key_head_dim = 4,
                      .value_head_dim = 8,
                      .num_key_heads = 2,
                      .num_value_heads = 4,
                      .conv_kernel_dim = 3},
        {}},
       8192 + 144 + 2048,
       8192 + 144 + 2048},
      // in 64 x (256 + 32 + 4), conv 4 x (128 + 32), out 128 x 64
      {"mamba2",
       {Mamba2{.inner_dim = 128, .num_heads = 4, .num_groups = 2, .state_dim = 8}, {}},
       18688 + 640 + 8192,
       18688 + 640 + 8192},
      // in 64 x 3 x (128 + 16 + 4), conv 4 x (128 x 2 + 16 x 3), out 128 x 64
      {"gdp",
       {GatedDeltaProduct{.inner_dim = 128, .num_heads = 4, .num_groups = 2, .state_dim = 8, .num_householder = 2}, {}},
       28416 + 1216 + 8192,
       28416 + 1216 + 8192},
      // P = 4 x 8 = 32: q, k, v, o 4 x 64 x 32, beta 64 x 4, forget gate 8 x (64 + 32),
      // output gate 64 x 32, convolutions 4 x 3 x 32
      {"kda",
       {KimiDeltaAttention{.num_heads = 4, .head_dim = 8, .conv_kernel_dim = 4, .forget_gate_rank = 8}, {}},
       8192 + 256 + 768 + 2048 + 384,
       8192 + 256 + 768 + 2048 + 384},
      // a low-rank output gate: 16 x (64 + 32)
      {"kda low-rank gate",
       {KimiDeltaAttention{
            .num_heads = 4, .head_dim = 8, .conv_kernel_dim = 4, .forget_gate_rank = 8, .output_gate_rank = 16},
        {}},
       8192 + 256 + 768 + 1536 + 384,
       8192 + 256 + 768 + 1536 + 384},
      // Megatron-LM's layer: a full-rank forget gate, 64 x 32
      {"kda full-rank gates",
       {KimiDeltaAttention{.num_heads = 4, .head_dim = 8, .conv_kernel_dim = 4}, {}},
       8192 + 256 + 2048 + 2048 + 384,
       8192 + 256 + 2048 + 2048 + 384},
      {"swiglu mlp", {{}, DenseMlp{.ffn_hidden_size = 96, .gated = true}}, 3 * 64 * 96, 3 * 64 * 96},
      {"mlp", {{}, DenseMlp{.ffn_hidden_size = 96}}, 2 * 64 * 96, 2 * 64 * 96},
      // experts 8 (2 active) x 3 x 64 x 32, shared 3 x 64 x 48, router 64 x 8
      {"moe", {{}, moe(std::nullopt)}, 49152 + 9216 + 512, 12288 + 9216 + 512},
      // latent 16: experts 8 (2) x 3 x 16 x 32, latent projections 2 x 64 x 16
      {"moe latent", {{}, moe(16)}, 12288 + 2048 + 9216 + 512, 3072 + 2048 + 9216 + 512},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Result<ModelParameters> parameters = count_parameters(one_layer(c.layer));
    ASSERT_TRUE(parameters.ok()) << parameters.error().message();
    const ParameterCount products = decoder_products(parameters.value());
    EXPECT_EQ(to_decimal(products.total), std::to_string(c.total));
    EXPECT_EQ(to_decimal(products.active), std::to_string(c.active));
  }
}

// The parameters besides the products' weights, worked by hand at h = 64:
// each sublayer's input norm (64), and each family's own.
TEST(ParametersTest, EveryLayerTypeCountsItsOtherParameters) {
  using Normalization = ParameterLayout::Normalization;
  using QkNorm = ParameterLayout::QkNorm;
  const GqaAttention gqa{.num_heads = 4, .num_query_groups = 2, .head_dim = 16};
  struct Case {
    const char* name;
    Layer layer;
    ParameterLayout layout;
    std::int64_t total, active;
  };
  const Case cases[] = {
      {"gqa", {gqa, {}}, {}, 64, 64},
      // LayerNorm: a weight and a bias
      {"gqa layernorm", {gqa, {}}, {.normalization = Normalization::kLayerNorm}, 128, 128},
      // q, k, v biases 64 + 2 x 32 (output 64 more with every projection's)
      {"gqa qkv biases", {gqa, {}}, {.qkv_biases = true}, 64 + 128, 64 + 128},
      {"gqa linear biases", {gqa, {}}, {.linear_biases = true}, 64 + 128 + 64, 64 + 128 + 64},
      // q and k norms of head_dim 16, or of the 64 query and 32 key widths
      {"gqa qk norm", {gqa, {}}, {.qk_norm = QkNorm::kPerHead}, 64 + 32, 64 + 32},
      {"gqa qk norm all heads", {gqa, {}}, {.qk_norm = QkNorm::kAllHeads}, 64 + 96, 64 + 96},
      {"gqa sinks", {gqa, {}}, {.attention_sinks = true}, 64 + 4, 64 + 4},
      // q LoRA 16 and KV LoRA 8 norms
      {"mla", {mla(16), {}}, {}, 64 + 24, 64 + 24},
      {"mla no q lora", {mla(std::nullopt), {}}, {}, 64 + 8, 64 + 8},
      // + the indexer's key LayerNorm, 2 x 4
      {"dsa", {dsa(true, 1), {}}, {}, 64 + 24 + 8, 64 + 24 + 8},
      {"dsa shared", {dsa(false, 1), {}}, {}, 64 + 24, 64 + 24},
      // A and dt bias of 4 value heads, the output norm of 8
      {"gdn",
       {GatedDeltaNet{
            .key_head_dim = 4, .value_head_dim = 8, .num_key_heads = 2, .num_value_heads = 4, .conv_kernel_dim = 3},
        {}},
       {},
       64 + 8 + 8,
       64 + 8 + 8},
      // convolution bias 128 + 2 x 2 x 8, A, D, dt bias of 4 heads, norm 128
      {"mamba2",
       {Mamba2{.inner_dim = 128, .num_heads = 4, .num_groups = 2, .state_dim = 8}, {}},
       {},
       64 + 160 + 12 + 128,
       64 + 160 + 12 + 128},
      // A of 4 heads and the forget gate's bias of 32 channels, the output norm of 8
      {"kda",
       {KimiDeltaAttention{.num_heads = 4, .head_dim = 8, .conv_kernel_dim = 4, .forget_gate_rank = 8}, {}},
       {},
       64 + 36 + 8,
       64 + 36 + 8},
      {"mlp", {{}, DenseMlp{.ffn_hidden_size = 96}}, {}, 64, 64},
      // biases: 2 x 96 + 64
      {"swiglu mlp biases", {{}, DenseMlp{.ffn_hidden_size = 96, .gated = true}}, {.linear_biases = true}, 64 + 256,
       64 + 256},
      {"moe", {{}, moe(std::nullopt)}, {}, 64, 64},
      // 8 experts' 2 x 32 + 64 (2 active), the router's 8, the shared expert's 2 x 48 + 64
      {"moe biases", {{}, moe(std::nullopt)}, {.linear_biases = true}, 64 + 1024 + 8 + 160, 64 + 256 + 8 + 160},
      // latent experts: 2 x 32 + 16 each
      {"moe latent biases", {{}, moe(16)}, {.linear_biases = true}, 64 + 640 + 8 + 160, 64 + 160 + 8 + 160},
      {"moe expert bias and gate", {{}, moe(std::nullopt)}, {.expert_bias = true, .shared_expert_gate = true},
       64 + 8 + 64, 64 + 8 + 64},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Model model = one_layer(c.layer);
    model.parameter_layout = c.layout;
    const ModelParameters p = count_parameters(model).value();
    const ParameterCount products = decoder_products(p);
    EXPECT_EQ(to_decimal(p.decoder.total - products.total), std::to_string(c.total));
    EXPECT_EQ(to_decimal(p.decoder.active - products.active), std::to_string(c.active));
  }
}

TEST(ParametersTest, TiedEmbeddingIsCountedOnce) {
  Model model = one_layer({{}, DenseMlp{.ffn_hidden_size = 96}});
  model.parameter_layout.tied_embedding = true;
  const ModelParameters p = count_parameters(model).value();
  EXPECT_EQ(p.embedding.total, 6400);
  EXPECT_EQ(p.embedding.active, 6400);  // the logits multiply by all of it
  EXPECT_EQ(p.output_layer.total, 64);  // the final norm alone
  EXPECT_EQ(p.total().total, 6400 + 2 * 64 * 96 + 64 + 64);
  // The table is the output layer's weight: it costs FLOPs per token.
  EXPECT_EQ(p.costing_flops().total, 6400 + 2 * 64 * 96);
  EXPECT_EQ(p.costing_flops().active, 6400 + 2 * 64 * 96);
  EXPECT_EQ(p.not_costing_flops().total, 64 + 64);  // the layer's norm and the final one
}

// DeepSeek-V4's hyper-connections over n = 4 streams, by the shapes of its
// modeling code: each sublayer's hc_fn [(2 + n) n, n h] (a weight),
// hc_base [(2 + n) n] and hc_scale [3]; the head's hc_head_fn [n, n h],
// hc_head_base [n] and hc_head_scale [1]; an MTP depth's head the same.
TEST(ParametersTest, ManifoldHyperConnectionsCountTheirStaticParameters) {
  Model model = one_layer({GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16},
                           DenseMlp{.ffn_hidden_size = 96}});
  model.hyper_connections = HyperConnections{HyperConnections::Variant::kManifold, 4, 0};
  const std::int64_t h = kHidden, mix = (2 + 4) * 4;
  const auto kind = [](const ModelParameters& p, ParameterKind k) {
    for (const KindParameters& part : p.kinds) {
      if (part.kind == k) return part.count.total;
    }
    return Int128{0};
  };
  const ModelParameters p = count_parameters(model).value();
  EXPECT_EQ(kind(p, ParameterKind::kBias), 2 * mix + 4);
  EXPECT_EQ(kind(p, ParameterKind::kPerHeadScalar), 2 * 3 + 1);
  const std::int64_t products = 12288 + 2 * 64 * 96 + 100 * h;  // attention, MLP, output layer
  EXPECT_EQ(kind(p, ParameterKind::kWeight), products + 2 * mix * 4 * h + 4 * 4 * h);

  model.mtp_depths.push_back({model.layers[0]});
  const ModelParameters with_mtp = count_parameters(model).value();
  EXPECT_EQ(kind(with_mtp, ParameterKind::kBias), 2 * (2 * mix + 4));
  EXPECT_EQ(kind(with_mtp, ParameterKind::kPerHeadScalar), 2 * (2 * 3 + 1));

  // The gated-residual variant's static parameters are not counted.
  model.mtp_depths.clear();
  model.hyper_connections = HyperConnections{HyperConnections::Variant::kGatedResidual, 4, 8};
  EXPECT_EQ(kind(count_parameters(model).value(), ParameterKind::kBias), 0);
}

TEST(ParametersTest, PartsLayersAndComponentsSumToTheTotal) {
  Model model = one_layer({GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16},
                           DenseMlp{.ffn_hidden_size = 96, .gated = true}});
  model.layers.push_back({GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16}, moe(std::nullopt)});
  model.mtp_depths.push_back({model.layers[1]});
  const ModelParameters p = count_parameters(model).value();
  const Int128 attention = 12288, mlp = 18432, moe_total = 58880, moe_active = 22016, table = 6400, projection = 8192;
  const Int128 norm = 64;  // RMSNorm: two per layer, three per MTP depth, the final one
  EXPECT_EQ(p.embedding.total, table);
  EXPECT_EQ(p.embedding.active, 0);
  EXPECT_EQ(p.output_layer.total, table + norm);
  EXPECT_EQ(p.output_layer.active, table + norm);
  EXPECT_EQ(p.decoder.total, 2 * attention + mlp + moe_total + 4 * norm);
  EXPECT_EQ(p.decoder.active, 2 * attention + mlp + moe_active + 4 * norm);
  EXPECT_EQ(p.mtp.total, projection + attention + moe_total + 5 * norm);
  EXPECT_EQ(p.mtp.active, projection + attention + moe_active + 5 * norm);
  EXPECT_EQ(p.total().total, 2 * table + norm + p.decoder.total + p.mtp.total);
  EXPECT_EQ(p.total().active, table + norm + p.decoder.active + p.mtp.active);
  EXPECT_EQ(p.main_model().total, 2 * table + norm + p.decoder.total);
  EXPECT_EQ(p.main_model().active, table + norm + p.decoder.active);
  const ParameterCount with_table = p.sum({ParameterPart::kEmbedding, ParameterPart::kDecoder}, true);
  EXPECT_EQ(with_table.active, table + p.decoder.active);

  std::vector<std::string> names;
  ParameterCount layer_sum, component_sum;
  for (const LayerParameters& layer : p.layers) {
    names.push_back(layer.name + " " + layer.kind);
    layer_sum.total += layer.count.total;
    layer_sum.active += layer.count.active;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"embedding embedding", "decoder.1 gqa+mlp", "decoder.2 gqa+moe",
                                      "mtp1.projection projection", "mtp1.1 gqa+moe", "output_layer output_layer"}));
  for (const ComponentParameters& part : p.components) {
    component_sum.total += part.count.total;
    component_sum.active += part.count.active;
  }
  EXPECT_EQ(layer_sum.total, p.total().total);
  EXPECT_EQ(layer_sum.active, p.total().active);
  EXPECT_EQ(component_sum.total + table + 10 * norm, p.total().total);  // the embedding and the norms are apart
  EXPECT_EQ(component_sum.active + 10 * norm, p.total().active);
  ParameterCount kind_sum;
  for (const KindParameters& part : p.kinds) {
    kind_sum.total += part.count.total;
    kind_sum.active += part.count.active;
  }
  EXPECT_EQ(kind_sum.total, p.total().total);
  EXPECT_EQ(kind_sum.active, p.total().active);
  ASSERT_EQ(p.kinds.size(), 4u);
  EXPECT_EQ(p.kinds[2].kind, ParameterKind::kRouter);
  EXPECT_EQ(p.kinds[2].count.total, 2 * 64 * 8);
  EXPECT_EQ(p.kinds[3].kind, ParameterKind::kNorm);
  EXPECT_EQ(p.kinds[3].count.total, 10 * norm);
  EXPECT_EQ(p.costing_flops().total + p.not_costing_flops().total, p.total().total);
  EXPECT_EQ(p.not_costing_flops().total, table + 2 * 64 * 8 + 10 * norm);
  ASSERT_EQ(p.components.size(), 7u);
  EXPECT_EQ(p.components[0].component, Component::kAttentionProjections);
  EXPECT_EQ(p.components[0].count.total, 3 * attention);
  EXPECT_EQ(p.components[5].component, Component::kMtp);
  EXPECT_EQ(p.components[6].component, Component::kLogits);
}

// An independent check of both: in executed mode (no norm terms, the router
// GEMM counted), a model of projection-only layer types costs exactly 6 FLOPs
// per token per active parameter, plus its core attention and indexer
// scoring, plus the output layer once more per MTP depth (each depth computes
// its own logits with the shared output layer).
TEST(ParametersTest, ExecutedFlopsAreSixTimesActiveParameters) {
  using Kind = CompressedSparseAttention::Kind;
  Model gqa = one_layer({GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16, .output_gate = true},
                         DenseMlp{.ffn_hidden_size = 96, .gated = true}});
  gqa.layers.push_back({GqaAttention{.num_heads = 4, .num_query_groups = 4, .head_dim = 8}, moe(std::nullopt)});
  gqa.mtp_depths = {{gqa.layers[1]}, {gqa.layers[1]}};
  DsaAttention full_indexer = dsa(true, 1);
  full_indexer.indexer.grad_mode = DsaIndexer::GradMode::kFull;
  Model latent = one_layer({mla(16), moe(16)});
  latent.layers.push_back({full_indexer, DenseMlp{.ffn_hidden_size = 40}});
  latent.layers.push_back({dsa(false, 1), moe(std::nullopt)});
  latent.mtp_depths = {{latent.layers[0]}};
  Model v4_model = one_layer({v4(Kind::kCsa), moe(std::nullopt)});
  v4_model.layers.push_back({v4(Kind::kHca), DenseMlp{.ffn_hidden_size = 32}});
  v4_model.layers.push_back({v4(Kind::kWindow), {}});
  for (const Model& model : {gqa, latent, v4_model}) {
    SCOPED_TRACE(summarize(model));
    const Report report = count(model, Workload{Bshd{3, 37}}, Mode::kExecuted).value();
    Int128 products = *report.total.exact;
    for (const ComponentFlops& part : report.components) {
      if (part.component == Component::kCoreAttention || part.component == Component::kDsaCoreAttention ||
          part.component == Component::kIndexerScoring || part.component == Component::kIndexerTeacher) {
        products -= *part.flops.exact;
      }
    }
    const ModelParameters p = count_parameters(model).value();
    Int128 router = 0;
    for (const KindParameters& part : p.kinds) {
      if (part.kind == ParameterKind::kRouter) router = part.count.active;
    }
    const Int128 per_token = p.costing_flops().active + router +
                             static_cast<Int128>(model.mtp_depths.size()) * model.hidden_size * model.vocab_size;
    EXPECT_EQ(to_decimal(products), to_decimal(6 * per_token * report.tokens));
  }
}

// The totals alone are the totals of the per-layer count, on every preset.
TEST(ParametersTest, TotalsWithoutRowsAreTheTotalsOfTheRows) {
  for (const Preset& preset : presets()) {
    SCOPED_TRACE(preset.name);
    const Model model = preset_model(preset).value();
    const ModelParameters rows = count_parameters(model).value();
    const ModelParameters totals = count_parameter_totals(model).value();
    EXPECT_TRUE(totals.layers.empty());
    EXPECT_FALSE(rows.layers.empty());
    for (const auto& [part, row] :
         {std::pair(totals.embedding, rows.embedding), std::pair(totals.output_layer, rows.output_layer),
          std::pair(totals.decoder, rows.decoder), std::pair(totals.mtp, rows.mtp)}) {
      EXPECT_EQ(to_decimal(part.total), to_decimal(row.total));
      EXPECT_EQ(to_decimal(part.active), to_decimal(row.active));
    }
    ASSERT_EQ(totals.components.size(), rows.components.size());
    for (std::size_t i = 0; i < rows.components.size(); ++i) {
      EXPECT_EQ(totals.components[i].component, rows.components[i].component);
      EXPECT_EQ(to_decimal(totals.components[i].count.total), to_decimal(rows.components[i].count.total));
    }
  }
}

TEST(ParametersTest, TheTotalNeedsTheNumberOfExperts) {
  Model model = one_layer({GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 16}, {}});
  Moe experts = moe(std::nullopt);
  experts.num_experts.reset();
  model.layers.push_back({{}, experts});
  EXPECT_EQ(count_parameters(model).error().message(),
            "layers[1].channel_mixer.num_experts is missing: the total parameters count every expert");
  model.layers.set(0, {GqaAttention{.num_heads = 4, .num_query_groups = 3, .head_dim = 16}, {}});
  EXPECT_EQ(count_parameters(model).error().message(),
            "layers[0].mixer.num_query_groups = 3: must divide num_heads = 4");
}

TEST(ParametersTest, PartNamesParseBack) {
  for (auto part :
       {ParameterPart::kEmbedding, ParameterPart::kOutputLayer, ParameterPart::kDecoder, ParameterPart::kMtp}) {
    EXPECT_EQ(parse_parameter_part(parameter_part_name(part)).value(), part);
  }
  EXPECT_EQ(parse_parameter_part("logits").error().message(),
            "parameter part \"logits\": must be one of embedding, output_layer, decoder, mtp");
}

TEST(ParametersTest, FormatsWithThreeSignificantDigits) {
  const std::pair<std::int64_t, const char*> cases[] = {
      {0, "0"},
      {999, "999"},
      {1000, "1.00K"},
      {134'217'728, "134M"},
      {999'600'000, "1.00B"},
      {8'030'261'248, "8.03B"},
      {40'314'000'000, "40.3B"},
      {116'829'000'000, "117B"},
      {743'400'000'000, "743B"},
      {1'500'000'000'000, "1.50T"},
  };
  for (const auto& [count, text] : cases) EXPECT_EQ(format_parameters(count), text) << count;
}

}  // namespace
}  // namespace trainflops
