// Hand-derived forward FLOPs for each layer type. Every expected number is
// worked out in the comment beside it from the layer's GEMM shapes.
#include "trainflops/layer_flops.h"

#include <gtest/gtest.h>

namespace trainflops {
namespace {

struct ExpectedTerm {
  Component component;
  Statistic per;
  Int128 forward_flops;
  Int128 divisor;
};

struct LayerCase {
  const char* name;
  Terms terms;
  std::vector<ExpectedTerm> expected;
};

constexpr auto kProj = Component::kAttentionProjections;
constexpr auto kCore = Component::kCoreAttention;

// 64 experts of 6 and 32 zero experts, top-6, `real` of the picks real.
Moe zero_expert_moe(std::int64_t real) {
  Moe moe{64, 6, 6, std::nullopt, std::nullopt, true};
  moe.zero_experts = 32;
  moe.real_experts_per_token = real;
  return moe;
}

GqaAttention gqa(std::optional<std::int64_t> head_dim, std::int64_t groups, bool gate) {
  return GqaAttention{
      .num_heads = 4, .num_query_groups = groups, .head_dim = head_dim, .output_gate = gate, .window = {}, .chunk = {}};
}

GqaAttention head_gated(GqaAttention attention) {
  attention.head_gate = true;
  return attention;
}

TEST(LayerFlopsTest, HandDerivedTermsPerLayerType) {
  const MlaAttention mla{2, 4, 3, 5, 2, 6};
  const std::vector<LayerCase> cases = {
      // h=8, n=4, g=2, head 2: q=8, kv=4. h(q+2kv) + qh = 128 + 64 = 192 FMAs; core 2q = 16 FMAs per pair.
      {"gqa",
       gqa_attention_terms(gqa(2, 2, false), 8, Convention{Mode::kModel}),
       {{kProj, kTokens, 384, 1}, {kCore, kCausalPairs, 32, 1}}},
      // The gate adds h*q = 64 FMAs.
      {"gqa with gate",
       gqa_attention_terms(gqa(2, 2, true), 8, Convention{Mode::kModel}),
       {{kProj, kTokens, 512, 1}, {kCore, kCausalPairs, 32, 1}}},
      {"gqa with gate, Megatron standard",
       gqa_attention_terms(gqa(2, 2, true), 8, Convention{Mode::kMegatron}),
       {{kProj, kTokens, 512, 1}, {kCore, kCausalPairs, 32, 1}}},
      // Megatron's hybrid path has no gate term.
      {"gqa with gate, Megatron hybrid",
       gqa_attention_terms(gqa(2, 2, true), 8, Convention{Mode::kMegatron, MegatronPath::kHybrid}),
       {{kProj, kTokens, 384, 1}, {kCore, kCausalPairs, 32, 1}}},
      // Step-3.5's per-head gate adds h*n = 8*4 = 32 FMAs: 224. Megatron-LM's function has no term for it.
      {"gqa with head gate",
       gqa_attention_terms(head_gated(gqa(2, 2, false)), 8, Convention{Mode::kModel}),
       {{kProj, kTokens, 448, 1}, {kCore, kCausalPairs, 32, 1}}},
      {"gqa with head gate, executed",
       gqa_attention_terms(head_gated(gqa(2, 2, false)), 8, Convention{Mode::kExecuted}),
       {{kProj, kTokens, 448, 1}, {kCore, kCausalPairs, 32, 1}}},
      {"gqa with head gate, Megatron standard",
       gqa_attention_terms(head_gated(gqa(2, 2, false)), 8, Convention{Mode::kMegatron}),
       {{kProj, kTokens, 384, 1}, {kCore, kCausalPairs, 32, 1}}},
      // No head dim, h=10, n=4, g=2: q = 10, kv = 10*2/4 = 5: 100 + 100 + 2*10*5 = 300 FMAs; core 2*10.
      {"gqa without head dim",
       gqa_attention_terms(gqa(std::nullopt, 2, false), 10, Convention{Mode::kModel}),
       {{kProj, kTokens, 600, 1}, {kCore, kCausalPairs, 40, 1}}},
      // g=1: kv = 2.5. Megatron: 200 + 2*10*2.5 = 250 FMAs = 2000/4 FLOPs; exact: kv rounds down to 2, 240 FMAs.
      {"gqa fractional kv, Megatron",
       gqa_attention_terms(gqa(std::nullopt, 1, false), 10, Convention{Mode::kMegatron, MegatronPath::kHybrid}),
       {{kProj, kTokens, 2000, 4}, {kCore, kCausalPairs, 40, 1}}},
      {"gqa fractional kv, exact",
       gqa_attention_terms(gqa(std::nullopt, 1, false), 10, Convention{Mode::kModel}),
       {{kProj, kTokens, 480, 1}, {kCore, kCausalPairs, 40, 1}}},
      // h=16, n=2, q LoRA 4, kv LoRA 3, qk 5, rope 2, v 6:
      // query 4(16 + 2*7 + 1) = 124; kv 3(16 + 2*11 + 1) + 16*2 = 149; out 2*6*16 = 192; 465 FMAs.
      // core 2*7 + 2*6 = 26 FMAs per pair.
      {"mla",
       mla_attention_terms(mla, 16, Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 1}, {kCore, kCausalPairs, 52, 1}}},
      // Without q LoRA the query is 16*2*7 = 224: 565 FMAs.
      {"mla without q lora",
       mla_attention_terms(MlaAttention{2, std::nullopt, 3, 5, 2, 6}, 16, Convention{Mode::kModel}),
       {{kProj, kTokens, 1130, 1}, {kCore, kCausalPairs, 52, 1}}},
      // Kimi K3's output gate adds h*n*v = 16*2*6 = 192: 657 FMAs. Megatron-LM has no MLA gate.
      {"mla with output gate",
       mla_attention_terms(MlaAttention{2, 4, 3, 5, 2, 6, true}, 16, Convention{Mode::kModel}),
       {{kProj, kTokens, 1314, 1}, {kCore, kCausalPairs, 52, 1}}},
      // Executed mode drops the two LoRA norms' 4 + 3 FMAs, not the gate: 650 FMAs.
      {"mla with output gate, executed",
       mla_attention_terms(MlaAttention{2, 4, 3, 5, 2, 6, true}, 16, Convention{Mode::kExecuted}),
       {{kProj, kTokens, 1300, 1}, {kCore, kCausalPairs, 52, 1}}},
      {"mla with output gate, megatron",
       mla_attention_terms(MlaAttention{2, 4, 3, 5, 2, 6, true}, 16, Convention{Mode::kMegatron}),
       {{kProj, kTokens, 930, 1}, {kCore, kCausalPairs, 52, 1}}},
      // h=8, 2 heads of 3 (P = 6), conv 4, forget gate rank 3, full-rank output gate:
      // q, k, v, o 4*8*6 = 192; beta 8*2 = 16; forget 3(8 + 6) = 42; gate 8*6 = 48;
      // conv 4*3*6 = 72; delta rule 4*2*9 = 72: 442 FMAs.
      {"kda",
       kimi_delta_attention_terms(KimiDeltaAttention{2, 3, 4, 3, std::nullopt}, 8, Convention{Mode::kModel}),
       {{Component::kKimiDeltaAttention, kTokens, 884, 1}}},
      // Low-rank gates of rank 2: forget 2(8 + 6) = 28, output 2(8 + 6) = 28: 408 FMAs.
      {"kda with low-rank gates",
       kimi_delta_attention_terms(KimiDeltaAttention{2, 3, 4, 2, 2}, 8, Convention{Mode::kModel}),
       {{Component::kKimiDeltaAttention, kTokens, 816, 1}}},
      // Executed: the delta rule in chunks of 64 (the default), per head of 3:
      // the 336 FMAs besides the delta rule, then 3*9 = 27 per token (x2 heads: 54),
      // 5*3 = 15 per chunk square (30) and 1 per substitution product (2).
      {"kda with low-rank gates, executed",
       kimi_delta_attention_terms(KimiDeltaAttention{2, 3, 4, 2, 2}, 8, Convention{Mode::kExecuted}),
       {{Component::kKimiDeltaAttention, kTokens, 672, 1},
        {Component::kKimiDeltaAttention, kTokens, 108, 1},
        {Component::kKimiDeltaAttention, chunk_squares(64), 60, 1},
        {Component::kKimiDeltaAttention, chunk_substitutions(64), 4, 1}}},
      {"kda in chunks of 32, executed",
       kimi_delta_attention_terms(KimiDeltaAttention{2, 3, 4, 2, 2, 32}, 8, Convention{Mode::kExecuted}),
       {{Component::kKimiDeltaAttention, kTokens, 672, 1},
        {Component::kKimiDeltaAttention, kTokens, 108, 1},
        {Component::kKimiDeltaAttention, chunk_squares(32), 60, 1},
        {Component::kKimiDeltaAttention, chunk_substitutions(32), 4, 1}}},
      // Megatron-Bridge charges Kimi K3's gates: forget rank head_dim 3, a full-rank output gate: 442 FMAs.
      {"kda with low-rank gates, megatron",
       kimi_delta_attention_terms(KimiDeltaAttention{2, 3, 4, 2, 2}, 8, Convention{Mode::kMegatron}),
       {{Component::kKimiDeltaAttention, kTokens, 884, 1}}},
      // h=8, key 2x2 heads (qk 4), value 3x4 heads (v 12), conv 4:
      // in 2*4 + 2*12 + 2*4 = 40 -> 320; conv 4*(8+12) = 80; rule 4*4*9 = 144; out 8*12 = 96; 640 FMAs.
      {"gdn",
       gated_delta_net_terms(GatedDeltaNet{GatedDeltaNet::Variant::kGdn, 2, 3, 2, 4, 4}, 8, Convention{Mode::kModel}),
       {{Component::kGatedDeltaNet, kTokens, 1280, 1}}},
      // Executed: the same model without the recurrent rule, 496 FMAs, and the chunked form per value head
      // (dk 2, dv 3; 4 value heads, two per key head): 3*2*3 = 18 per token, 3*2 + 2*3 = 12 per chunk square,
      // 1 per substitution, times 4 heads: 72, 48 and 4 FMAs.
      {"gdn executed, chunks of 16",
       gated_delta_net_terms(GatedDeltaNet{GatedDeltaNet::Variant::kGdn, 2, 3, 2, 4, 4, 16}, 8, Convention{Mode::kExecuted}),
       {{Component::kGatedDeltaNet, kTokens, 992, 1},
        {Component::kGatedDeltaNet, kTokens, 144, 1},
        {Component::kGatedDeltaNet, chunk_squares(16), 96, 1},
        {Component::kGatedDeltaNet, chunk_substitutions(16), 8, 1}}},
      // Megatron mode keeps the recurrent rule, as model mode.
      {"gdn megatron",
       gated_delta_net_terms(GatedDeltaNet{GatedDeltaNet::Variant::kGdn, 2, 3, 2, 4, 4, 16}, 8,
                             Convention{Mode::kMegatron}),
       {{Component::kGatedDeltaNet, kTokens, 1280, 1}}},
      // gdn2: in 4*4 + 3*12 = 52 -> 416; 736 FMAs.
      {"gdn2",
       gated_delta_net_terms(GatedDeltaNet{GatedDeltaNet::Variant::kGdn2, 2, 3, 2, 4, 4}, 8, Convention{Mode::kModel}),
       {{Component::kGatedDeltaNet, kTokens, 1472, 1}}},
      // h=8, d=16, 4 heads, 2 groups, state 3: in 8(32 + 12 + 4) = 384, out 128: 512 FMAs; scan 7*16*3 FLOPs.
      {"mamba2",
       mamba2_terms(Mamba2{16, 4, 2, 3}, 8, Convention{Mode::kModel}),
       {{Component::kMamba, kTokens, 1024, 1}, {Component::kMamba, kTokens, 336, 1}}},
      // d=24: in 8(48 + 12 + 4) = 512, out 192: 704 FMAs; scan 7*24*3 FLOPs. Megatron-LM's estimate takes
      // d = 2h = 16 whatever the layer's width.
      {"mamba2 wider than 2h",
       mamba2_terms(Mamba2{24, 4, 2, 3}, 8, Convention{Mode::kModel}),
       {{Component::kMamba, kTokens, 1408, 1}, {Component::kMamba, kTokens, 504, 1}}},
      {"mamba2 wider than 2h, megatron",
       mamba2_terms(Mamba2{24, 4, 2, 3}, 8, Convention{Mode::kMegatron, MegatronPath::kHybrid}),
       {{Component::kMamba, kTokens, 1024, 1}, {Component::kMamba, kTokens, 336, 1}}},
      // H=2: in 16*3 + 6*3 + 4*3 = 78 -> 624; conv 4(16*2 + 6*3) = 200; out 128: 952 FMAs;
      // scan (4*2 + 3)*16*3 = 528 FLOPs.
      {"gdp",
       gated_delta_product_terms(GatedDeltaProduct{16, 4, 2, 3, 2}, 8, Convention{Mode::kModel}),
       {{Component::kGatedDeltaProduct, kTokens, 1904, 1}, {Component::kGatedDeltaProduct, kTokens, 528, 1}}},
      {"gdp, megatron",
       gated_delta_product_terms(GatedDeltaProduct{16, 4, 2, 3, 2}, 8, Convention{Mode::kMegatron}),
       {{Component::kGatedDeltaProduct, kTokens, 1904, 1}, {Component::kGatedDeltaProduct, kTokens, 528, 1}}},
      // h=8, ffn 12: 2*8*12 = 192 FMAs; gated 3*8*12 = 288.
      {"mlp", dense_mlp_terms(DenseMlp{12, false}, 8, Convention{Mode::kModel}), {{Component::kMlp, kTokens, 384, 1}}},
      {"swiglu mlp",
       dense_mlp_terms(DenseMlp{12, true}, 8, Convention{Mode::kModel}),
       {{Component::kMlp, kTokens, 576, 1}}},
      // --quick-geglu: gated, but Megatron-LM's estimate charges it as ungated.
      {"quick-geglu mlp",
       dense_mlp_terms(DenseMlp{12, true, true}, 8, Convention{Mode::kExecuted}),
       {{Component::kMlp, kTokens, 576, 1}}},
      {"quick-geglu mlp, megatron",
       dense_mlp_terms(DenseMlp{12, true, true}, 8, Convention{Mode::kMegatron}),
       {{Component::kMlp, kTokens, 384, 1}}},
      {"quick-geglu moe, megatron",
       moe_terms(Moe{64, 2, 6, std::nullopt, std::nullopt, true, true}, 8, Convention{Mode::kMegatron}),
       {{Component::kMoeRouted, kTokens, 384, 1}}},
      // h=8, expert 6, top-2, gated: 3*6*2*8 = 288 FMAs; shared 5: 3*8*5 = 120.
      {"moe",
       moe_terms(Moe{64, 2, 6, 5, std::nullopt, true}, 8, Convention{Mode::kModel}),
       {{Component::kMoeRouted, kTokens, 576, 1}, {Component::kMoeShared, kTokens, 240, 1}}},
      // latent 4: experts 3*6*2*4 = 144, in and out 2*8*4 = 64: 208 FMAs.
      {"moe latent",
       moe_terms(Moe{64, 2, 6, std::nullopt, 4, true}, 8, Convention{Mode::kModel}),
       {{Component::kMoeRouted, kTokens, 416, 1}}},
      // 3h + 2h^2 = 24 + 128 = 152 FMAs.
      {"mtp projection", {mtp_projection_term(8, Convention{Mode::kModel})}, {{Component::kMtp, kTokens, 304, 1}}},
      {"logits", {logits_term(8, 100)}, {{Component::kLogits, kTokens, 1600, 1}}},
      // Executed: the LoRA norms (4 + 3 per token) are not products: 465 - 7 = 458 FMAs.
      {"mla executed",
       mla_attention_terms(mla, 16, Convention{Mode::kExecuted}),
       {{kProj, kTokens, 916, 1}, {kCore, kCausalPairs, 52, 1}}},
      // Executed: the router GEMM, h x 64 experts = 512 FMAs.
      {"moe executed",
       moe_terms(Moe{64, 2, 6, 5, std::nullopt, true}, 8, Convention{Mode::kExecuted}),
       {{Component::kMoeRouted, kTokens, 576, 1},
        {Component::kMoeShared, kTokens, 240, 1},
        {Component::kMoeRouter, kTokens, 1024, 1}}},
      // Zero experts (LongCat-Flash): 64 real and 32 zero experts, top-6, of
      // which 2 are real: 3*6*2*8 = 288 FMAs, as "moe".
      {"moe with zero experts",
       moe_terms(zero_expert_moe(2), 8, Convention{Mode::kModel}),
       {{Component::kMoeRouted, kTokens, 576, 1}}},
      // No real expert: the routed experts cost nothing.
      {"moe with zero experts only",
       moe_terms(zero_expert_moe(0), 8, Convention{Mode::kModel}),
       {{Component::kMoeRouted, kTokens, 0, 1}}},
      // Executed: the router scores the 64 + 32 experts, 8 x 96 = 768 FMAs.
      {"moe with zero experts executed",
       moe_terms(zero_expert_moe(2), 8, Convention{Mode::kExecuted}),
       {{Component::kMoeRouted, kTokens, 576, 1}, {Component::kMoeRouter, kTokens, 1536, 1}}},
      // Megatron-LM knows no zero experts: every one of the 6 picks, 3*6*6*8 = 864 FMAs.
      {"moe with zero experts, megatron",
       moe_terms(zero_expert_moe(2), 8, Convention{Mode::kMegatron}),
       {{Component::kMoeRouted, kTokens, 1728, 1}}},
      // Executed: only the 2h^2 = 128 FMAs of the projection.
      {"mtp projection executed",
       {mtp_projection_term(8, Convention{Mode::kExecuted})},
       {{Component::kMtp, kTokens, 256, 1}}},
  };
  for (const LayerCase& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.terms.size(), c.expected.size());
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      EXPECT_EQ(c.terms[i].component, c.expected[i].component);
      EXPECT_EQ(c.terms[i].per, c.expected[i].per);
      EXPECT_EQ(to_decimal(c.terms[i].forward_flops), to_decimal(c.expected[i].forward_flops));
      EXPECT_EQ(to_decimal(c.terms[i].divisor), to_decimal(c.expected[i].divisor));
      EXPECT_EQ(c.terms[i].executions, kTrainingExpansion);
    }
  }
}

// DSA layers, h=16, MLA as above (n=2, q LoRA 4, kv LoRA 3, qk 5, rope 2, v 6),
// indexer 3 heads x 4, top-8.
TEST(LayerFlopsTest, HandDerivedDsaTerms) {
  const MlaAttention mla{2, 4, 3, 5, 2, 6};
  struct Expected {
    Component component;
    Statistic per;
    Int128 forward_flops;
    int executions;
    bool forward;
  };
  struct Case {
    const char* name;
    Terms terms;
    std::vector<Expected> expected;
  };
  const auto indexer = [](DsaIndexer::GradMode mode, std::int64_t pool = 1) {
    return DsaIndexer{3, 4, 8, mode, pool, true};
  };
  constexpr auto kDsaCore = Component::kDsaCoreAttention, kIdxProj = Component::kIndexerProjections,
                 kScore = Component::kIndexerScoring, kTeacher = Component::kIndexerTeacher;
  // Indexer projections: q LoRA 4 x (3 x 4) + h x 4 + h x 3 = 48 + 64 + 48 = 160 FMAs per token;
  // scoring 3 x 4 = 12 FMAs per pair.
  const std::vector<Case> cases = {
      {"off",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kOff), true}, 16, Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, topk_pairs(8), 52, 3, true},
        {kIdxProj, kTokens, 320, 1, true},
        {kScore, kCausalPairs, 24, 1, true}}},
      {"detached",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kDetached), true}, 16,
                           Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, topk_pairs(8), 52, 3, true},
        {kIdxProj, kTokens, 320, 2, true},
        {kScore, kCausalPairs, 24, 1, true},
        {kScore, kCausalPairs, 24, 2, false}}},
      // The sparse backward covers the selected pairs only.
      {"sparse",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kSparse), true}, 16,
                           Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, topk_pairs(8), 52, 3, true},
        {kIdxProj, kTokens, 320, 2, true},
        {kScore, kCausalPairs, 24, 1, true},
        {kScore, topk_pairs(8), 24, 2, false}}},
      {"full",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kFull), true}, 16, Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, topk_pairs(8), 52, 3, true},
        {kIdxProj, kTokens, 320, 3, true},
        {kScore, kCausalPairs, 24, 1, true},
        {kScore, kCausalPairs, 24, 2, false}}},
      // A layer that reuses another's top-k has no indexer.
      {"shared",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kFull), false}, 16,
                           Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true}, {kDsaCore, topk_pairs(8), 52, 3, true}}},
      // KPool p=2: forward only; gate h x 4 = 64 FMAs per token; pooling 4 FMAs per pooled key.
      {"kpool",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kOff, 2), true}, 16,
                           Convention{Mode::kModel}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, pooled_attended_pairs(8, 2, true), 52, 3, true},
        {kIdxProj, kTokens, 320, 1, true},
        {Component::kKpoolGate, kTokens, 128, 1, true},
        {kScore, complete_pool_pairs(2), 24, 1, true},
        {Component::kKpoolPooling, pooled_keys(2), 8, 1, true}}},
      // Executed: absorbed core n(kv_lora + rope) + n kv_lora = 2 x 5 + 2 x 3 = 16 FMAs per pair;
      // head weighting adds 3 FMAs per scored pair; no LoRA norms (458 FMAs of projections);
      // the KL teacher's logits, n(kv_lora + rope) = 10 FMAs per pair of the loss, forward only.
      {"executed sparse",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kSparse), true}, 16,
                           Convention{Mode::kExecuted}),
       {{kProj, kTokens, 916, 3, true},
        {kDsaCore, topk_pairs(8), 32, 3, true},
        {kIdxProj, kTokens, 320, 2, true},
        {kScore, kCausalPairs, 30, 1, true},
        {kScore, topk_pairs(8), 30, 2, false},
        {kTeacher, topk_pairs(8), 20, 1, true}}},
      {"executed detached",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kDetached), true}, 16,
                           Convention{Mode::kExecuted}),
       {{kProj, kTokens, 916, 3, true},
        {kDsaCore, topk_pairs(8), 32, 3, true},
        {kIdxProj, kTokens, 320, 2, true},
        {kScore, kCausalPairs, 30, 1, true},
        {kScore, kCausalPairs, 30, 2, false},
        {kTeacher, kCausalPairs, 20, 1, true}}},
      // No loss, no teacher; a sharing layer computes no loss either.
      {"executed off",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kOff), true}, 16,
                           Convention{Mode::kExecuted}),
       {{kProj, kTokens, 916, 3, true},
        {kDsaCore, topk_pairs(8), 32, 3, true},
        {kIdxProj, kTokens, 320, 1, true},
        {kScore, kCausalPairs, 30, 1, true}}},
      {"executed shared",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kFull), false}, 16,
                           Convention{Mode::kExecuted}),
       {{kProj, kTokens, 916, 3, true}, {kDsaCore, topk_pairs(8), 32, 3, true}}},
      // Megatron-LM since its DSA fix: the absorbed core, with its norm terms, without head weighting or teacher.
      {"megatron",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kDetached), true}, 16,
                           Convention{Mode::kMegatron}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, topk_pairs(8), 32, 3, true},
        {kIdxProj, kTokens, 320, 2, true},
        {kScore, kCausalPairs, 24, 1, true},
        {kScore, kCausalPairs, 24, 2, false}}},
      {"megatron hybrid",
       dsa_attention_terms(DsaAttention{mla, indexer(DsaIndexer::GradMode::kOff, 2), true}, 16,
                           Convention{Mode::kMegatron, MegatronPath::kHybrid}),
       {{kProj, kTokens, 930, 3, true},
        {kDsaCore, pooled_attended_pairs(8, 2, true), 32, 3, true},
        {kIdxProj, kTokens, 320, 1, true},
        {Component::kKpoolGate, kTokens, 128, 1, true},
        {kScore, complete_pool_pairs(2), 24, 1, true},
        {Component::kKpoolPooling, pooled_keys(2), 8, 1, true}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.terms.size(), c.expected.size());
    for (std::size_t i = 0; i < c.terms.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(c.terms[i].component, c.expected[i].component);
      EXPECT_EQ(c.terms[i].per, c.expected[i].per);
      EXPECT_EQ(to_decimal(c.terms[i].forward_flops), to_decimal(c.expected[i].forward_flops));
      EXPECT_EQ(c.terms[i].executions, c.expected[i].executions);
      EXPECT_EQ(c.terms[i].forward, c.expected[i].forward);
    }
  }
}

// Executed mode's gated delta product: the projections and convolutions as
// model mode's (952 FMAs, trained), then the chunked form, forward and
// backward apart. d=16 over 4 heads (dv 4), state 3, 2 Householder steps.
TEST(LayerFlopsTest, HandDerivedExecutedGatedDeltaProductTerms) {
  struct Expected {
    Statistic per;
    Int128 forward_flops;
    int executions;
    bool forward;
  };
  // Forward, per head: per token the state's reads by 2 transformed keys and
  // 1 query and 2 updates, 5*3*4 = 60 (x4 heads: 240 FMAs); per square of
  // the position chunks key-key scores and transformed keys 2*3, values 4:
  // 10 (40); per substitution product 1 (4); per square of the token chunks,
  // each step's query-key scores 3 and their read of 4 values: 2*7 = 14 (56).
  // Backward: the gated delta rule over the 2 positions of each token:
  // 3*3*4 = 36 per position (x2 per token x4 heads: 288), 3*3 + 2*4 = 17 per
  // square (68), 1 per substitution (4); counted twice.
  const Terms terms = gated_delta_product_terms(GatedDeltaProduct{16, 4, 2, 3, 2}, 8, Convention{Mode::kExecuted});
  const std::vector<Expected> expected = {{kTokens, 1904, kTrainingExpansion, true},
                                          {kTokens, 480, kForwardOnly, true},
                                          {interleaved_chunk_squares(64, 2), 80, kForwardOnly, true},
                                          {interleaved_chunk_substitutions(64, 2), 8, kForwardOnly, true},
                                          {chunk_squares(64), 112, kForwardOnly, true},
                                          {kTokens, 576, kBackward, false},
                                          {interleaved_chunk_squares(64, 2), 136, kBackward, false},
                                          {interleaved_chunk_substitutions(64, 2), 8, kBackward, false}};
  ASSERT_EQ(terms.size(), expected.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(terms[i].component, Component::kGatedDeltaProduct);
    EXPECT_EQ(terms[i].per, expected[i].per);
    EXPECT_EQ(to_decimal(terms[i].forward_flops), to_decimal(expected[i].forward_flops));
    EXPECT_EQ(terms[i].executions, expected[i].executions);
    EXPECT_EQ(terms[i].forward, expected[i].forward);
  }
}

}  // namespace
}  // namespace trainflops
