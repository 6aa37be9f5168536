// Each framework's number against its own rule, written here as a closed form
// from the framework's source (docs/compare.md cites the files), for small
// models where every size is distinct enough to catch a misplaced term.
#include "trainflops/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "trainflops/count.h"

namespace trainflops {
namespace {

constexpr std::int64_t kH = 8, kVocab = 10;

// Sizes shared by the models below.
constexpr std::int64_t kHeads = 2, kGroups = 1, kHeadDim = 4;                // GQA: q = 8, kv = 4
constexpr std::int64_t kFfn = 16;                                            // dense MLP
constexpr std::int64_t kExperts = 4, kTopk = 2, kExpertFfn = 6;              // MoE
constexpr std::int64_t kQLora = 4, kKvLora = 5, kQk = 3, kRope = 2, kV = 3;  // MLA

Layer gqa_layer(ChannelMixer channel_mixer, std::optional<std::int64_t> window = {}, bool gate = false) {
  return Layer{Mixer{GqaAttention{.num_heads = kHeads,
                                  .num_query_groups = kGroups,
                                  .head_dim = kHeadDim,
                                  .output_gate = gate,
                                  .window = window}},
               std::move(channel_mixer)};
}

DenseMlp dense() { return DenseMlp{kFfn, true}; }
Moe moe(std::optional<std::int64_t> shared) { return Moe{kExperts, kTopk, kExpertFfn, shared, {}, true}; }
MlaAttention mla() { return MlaAttention{kHeads, kQLora, kKvLora, kQk, kRope, kV}; }

Model model_of(std::vector<Layer> layers, std::vector<std::vector<Layer>> mtp = {}) {
  Model model;
  model.hidden_size = kH;
  model.vocab_size = kVocab;
  model.layers = std::move(layers);
  model.mtp_depths.assign(mtp.begin(), mtp.end());
  return model;
}

// name -> FLOPs, or -1 when the framework cannot express the model.
std::map<std::string, Int128> numbers(const Model& model, std::int64_t length) {
  const Result<Comparison> comparison = compare_frameworks(model, length, 1);
  EXPECT_TRUE(comparison.ok()) << comparison.error().message();
  std::map<std::string, Int128> out;
  if (!comparison.ok()) return out;
  for (const FrameworkCount& f : comparison.value().frameworks) {
    out[std::string(framework_name(f.framework))] = f.flops ? *f.flops : Int128{-1};
    Int128 sum = 0;
    for (const ConventionDifference& d : f.differences) sum += d.flops;
    if (f.flops) {
      EXPECT_EQ(to_decimal(sum), to_decimal(*f.flops - comparison.value().model_flops));
    }
  }
  return out;
}

void expect_flops(const std::map<std::string, Int128>& got, const std::string& name, Int128 want) {
  ASSERT_TRUE(got.count(name)) << name;
  EXPECT_EQ(to_decimal(got.at(name)), to_decimal(want)) << name;
}

// Per-token multiply-adds of the parts (FMAs), as every framework writes them.
constexpr Int128 kQ = kHeads * kHeadDim, kKv = kGroups * kHeadDim;
constexpr Int128 kGqaProjections = kH * (kQ + 2 * kKv) + kQ * kH;  // 192
constexpr Int128 kGate = kH * kQ;
constexpr Int128 kDenseMlp = 3 * kH * kFfn;  // 384
constexpr Int128 kRouted = 3 * kH * kExpertFfn * kTopk, kShared = 3 * kH * kExpertFfn;
constexpr Int128 kRouter = kH * kExperts;
constexpr Int128 kLogits = kH * kVocab;

// A dense GQA layer with a window of 3 keys, a GQA+MoE layer (shared expert,
// output gate) and one MTP depth copying it.
Model windowed_moe_model() {
  Layer moe_layer = gqa_layer(moe(kExpertFfn), {}, true);
  return model_of({gqa_layer(dense(), 3), moe_layer}, {{moe_layer}});
}

TEST(CompareTest, GqaWindowsMoeAndMtpByEachFrameworksRule) {
  for (std::int64_t s : {2, 3, 7}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(windowed_moe_model(), s);
    const Int128 S = s, w = std::min<Int128>(3, S);
    const Int128 pairs_exact = S * (S + 1) / 2, window_exact = S <= 3 ? S * (S + 1) / 2 : 3 * S - 3;
    const Int128 per_token_layers = (kGqaProjections) + kDenseMlp + 2 * (kGqaProjections + kGate + kRouted + kShared);
    const Int128 mtp_projection = 2 * kH * kH + 3 * kH;
    // trainflops model: exact pairs, the window's own pairs.
    expect_flops(
        got, "trainflops-model",
        6 * (S * (per_token_layers + mtp_projection + 2 * kLogits) + 2 * kQ * (window_exact + 2 * pairs_exact)));
    // Megatron-LM (training.py): every layer S^2/2 pairs, the window ignored;
    // seq * (... + 2 q S/2) per layer, doubled here to stay in integers.
    const Int128 megatron = 6 * (S * (per_token_layers + mtp_projection + 2 * kLogits)) + 6 * 3 * kQ * S * S;
    expect_flops(got, "megatron-lm", megatron);
    expect_flops(got, "megatron-lm-dsa-fix", megatron);
    // Megatron-Bridge: the window's context W - W(W-1)/2S when W < S, else S/2.
    const Int128 bridge_window = 3 < S ? 2 * kQ * (3 * S - 3) : kQ * S * S;
    expect_flops(got, "megatron-bridge",
                 6 * (S * (per_token_layers + mtp_projection + 2 * kLogits)) + 6 * (bridge_window + 2 * kQ * S * S));
    // MaxText: no gate in qkv, the router's 2 S h E, the window's S W - W^2/2
    // (4 (...) n hd), global layers 2 S^2 n hd; MTP: the last layer again.
    const Int128 maxtext_weights = 2 * S * (kGqaProjections + kDenseMlp) +
                                   2 * 2 * S * (kGqaProjections + kRouted + kShared + kRouter) + 2 * S * kLogits;
    const Int128 maxtext_attention = (4 * (S * w) - 2 * w * w) * kQ + 2 * (2 * S * S * kQ);
    expect_flops(got, "maxtext", 3 * (maxtext_weights + maxtext_attention));
    // torchtitan: 6 per active non-embedding parameter (the 2 x 2 norms of
    // the layers and the final norm among them), 6 L n (2 hd) S^2.
    const Int128 parameters =
        kGqaProjections + kDenseMlp + kGqaProjections + kGate + kRouted + kShared + kRouter + kLogits + 5 * kH;
    expect_flops(got, "torchtitan", 6 * parameters * S + 6 * 2 * kHeads * (2 * kHeadDim) * S * S);
    expect_flops(got, "nemo-rl", -1);  // windows, an output gate
    // NeMo Automodel (its gpt-oss formula, the one with windows): exact pairs
    // and window pairs; MTP with a 2h -> h projection without norms.
    expect_flops(got, "nemo-automodel",
                 6 * (S * (per_token_layers + 2 * kH * kH + 2 * kLogits) + 2 * kQ * (window_exact + 2 * pairs_exact)));
  }
}

TEST(CompareTest, NemoRlQwen3AndLlamaFormulas) {
  // Qwen3-MoE through NeMo-RL's qwen3(): attention 6 S L (2 q h + 2 kv h + S q),
  // MLP 6 S L h 3 (intermediate = top-k x expert width), vocabulary 6 S h V.
  const Model qwen3 = model_of({gqa_layer(moe(std::nullopt)), gqa_layer(moe(std::nullopt))});
  const Model llama = model_of({gqa_layer(dense()), gqa_layer(dense())});
  for (std::int64_t s : {1, 6}) {
    const Int128 S = s;
    const Int128 attention = 6 * S * 2 * (2 * kQ * kH + 2 * kKv * kH + S * kQ);
    expect_flops(numbers(qwen3, s), "nemo-rl", attention + 6 * S * 2 * kH * 3 * (kExpertFfn * kTopk) + 6 * S * kLogits);
    // NeMo Automodel's qwen3_flops: the same formula.
    expect_flops(numbers(qwen3, s), "nemo-automodel",
                 attention + 6 * S * 2 * kH * 3 * (kExpertFfn * kTopk) + 6 * S * kLogits);
    // llama(): S L h^2 (12 + 12 g/n + 18 f/h + 6 S/h + 6 V/(L h)), with n hd = h.
    static_assert(kQ == kH);
    const Int128 per_token_layer = 12 * kH * kH + 12 * kH * kH * kGroups / kHeads + 18 * kFfn * kH + 6 * S * kH;
    expect_flops(numbers(llama, s), "nemo-rl", S * (2 * per_token_layer + 6 * kVocab * kH));
    expect_flops(numbers(llama, s), "nemo-automodel", S * (2 * per_token_layer + 6 * kVocab * kH));  // llama2_flops
  }
}

// NeMo Automodel picks its formula by the Hugging Face config's class: the
// same Llama-shaped model is counted from a llama config, but not from a
// class it maps nothing from.
TEST(CompareTest, NemoAutomodelReadsTheConfigClass) {
  const auto automodel = [](const std::string& hf_model_type) {
    Model llama = model_of({gqa_layer(dense()), gqa_layer(dense())});
    llama.hf_model_type = hf_model_type;
    return compare_frameworks(llama, 6, 1).value().frameworks[static_cast<std::size_t>(Framework::kNemoAutomodel)];
  };
  EXPECT_TRUE(automodel("").flops.has_value());
  EXPECT_TRUE(automodel("llama").flops.has_value());
  EXPECT_FALSE(automodel("mistral").flops.has_value());
  EXPECT_EQ(automodel("mistral").reason,
            "NeMo Automodel maps no formula from MistralConfig, the class of Mistral's config: "
            "get_flops_formula_for_hf_config falls back to transformer_flops, which charges every layer multi-head "
            "attention h wide and an ungated MLP of intermediate_size (half the layers routed when the config names "
            "num_experts_per_tok), whatever the model; compare does not model that estimate");
  EXPECT_EQ(automodel("qwen3_5_moe_text").reason,
            "NeMo Automodel maps no formula from Qwen3_5MoeTextConfig, the class of a text-only Qwen3.5-MoE config "
            "(its Qwen3.5 formula is mapped from the multimodal Qwen3_5MoeConfig): get_flops_formula_for_hf_config "
            "falls back to transformer_flops, which raises there (the class has no intermediate_size)");
  // The other frameworks read the architecture.
  Model mistral = model_of({gqa_layer(dense())});
  mistral.hf_model_type = "mistral";
  const Comparison c = compare_frameworks(mistral, 6, 1).value();
  EXPECT_TRUE(c.frameworks[static_cast<std::size_t>(Framework::kMegatronMain)].flops.has_value());
}

// NeMo Automodel's DeepSeek-V3 formula, which a DeepseekV3Config release
// reaches, leaves the MTP depths out; its MLA formula, which GLM's classes
// reach, counts them: the recipe difference is named for the former alone.
TEST(CompareTest, NemoAutomodelMtpRecipeFollowsTheConfigClass) {
  const Layer moe_layer{Mixer{mla()}, ChannelMixer{moe(kExpertFfn)}};
  const auto recipe = [&](const std::string& hf_model_type) {
    Model model = model_of({moe_layer}, {{moe_layer}});
    model.hf_model_type = hf_model_type;
    return compare_frameworks(model, 6, 1)
        .value()
        .frameworks[static_cast<std::size_t>(Framework::kNemoAutomodel)]
        .recipe_differences.size();
  };
  EXPECT_EQ(recipe("deepseek_v3"), 1u);
  EXPECT_EQ(recipe(""), 1u);  // Megatron-LM arguments: the class is not known
  EXPECT_EQ(recipe("glm4_moe_lite"), 0u);
  EXPECT_EQ(recipe("glm_moe_dsa"), 0u);
}

TEST(CompareTest, MlaWithMtpByEachFrameworksRule) {
  const Layer moe_layer{Mixer{mla()}, ChannelMixer{moe(kExpertFfn)}};
  const Model model = model_of({Layer{Mixer{mla()}, ChannelMixer{dense()}}, moe_layer}, {{moe_layer}});
  constexpr Int128 n = kHeads;
  // MLA projections without the LoRA norms (MaxText, NeMo-RL, torchtitan's matmuls).
  constexpr Int128 projections =
      kH * kQLora + kQLora * n * (kQk + kRope) + kH * (kKvLora + kRope) + kKvLora * n * (kQk + kV) + n * kV * kH;
  constexpr Int128 norms = kQLora + kKvLora;
  constexpr Int128 pair = n * (kQk + kRope + kV);
  for (std::int64_t s : {1, 5}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(model, s);
    const Int128 S = s;
    const Int128 layers = 3 * (projections + norms) + kDenseMlp + 2 * (kRouted + kShared);
    // Megatron-LM: q_lora (h + n (qk + rope) + 1), kv_lora (h + n (qk + v) + 1) + h rope, n v h,
    // core S/2 per token; MTP 3h + 2h^2 and its logits.
    const Int128 megatron = 6 * S * (layers + 3 * kH + 2 * kH * kH + 2 * kLogits) + 3 * 3 * pair * S * S;
    expect_flops(got, "megatron-lm", megatron);
    expect_flops(got, "megatron-lm-dsa-fix", megatron);
    expect_flops(got, "megatron-bridge", megatron);
    // MaxText (DeepSeek block): projections without norms, router, attention
    // 2 S S n (qk + rope + v) / 2; MTP adds the last layer only.
    const Int128 maxtext =
        3 * (2 * S * (3 * projections + kDenseMlp + 2 * (kRouted + kShared + kRouter) + kLogits) + 3 * S * S * pair);
    expect_flops(got, "maxtext", maxtext);
    // torchtitan: 6 per parameter (the q and kv norm weights among them, and
    // the layers' 2 x 2 norms and the final one), 6 L n (qk + rope + v) S^2 without MTP.
    const Int128 parameters =
        2 * (projections + norms) + kDenseMlp + kRouted + kShared + kRouter + kLogits + 5 * kH;
    expect_flops(got, "torchtitan", 6 * parameters * S + 6 * 2 * pair * S * S);
    // NeMo-RL deepseekv3(): every layer MoE (shared + top-k), no norms, no MTP,
    // attention 6 (0.5 (qk + rope) n S^2 + 0.5 v n S^2) L.
    expect_flops(got, "nemo-rl",
                 3 * 2 * pair * S * S + 6 * S * (2 * projections + 2 * (kShared + kRouted)) + 6 * kVocab * kH * S);
  }
}

// DSA: index sharing (the second layer reuses the first's top-k), one MTP
// depth that runs its own indexer, a top-k of 4.
constexpr std::int64_t kIndexerHeads = 2, kIndexerDim = 3, kDsaTopk = 4;

Model dsa_model(DsaIndexer::GradMode mode) {
  const DsaIndexer indexer{kIndexerHeads, kIndexerDim, kDsaTopk, mode, 1, true};
  const auto layer = [&](bool runs_indexer, ChannelMixer channel) {
    return Layer{Mixer{DsaAttention{mla(), indexer, runs_indexer}}, std::move(channel)};
  };
  return model_of({layer(true, dense()), layer(false, moe(kExpertFfn))}, {{layer(true, moe(kExpertFfn))}});
}

TEST(CompareTest, DsaByEachFrameworksRule) {
  using Mode = DsaIndexer::GradMode;
  constexpr Int128 n = kHeads, nh = kIndexerHeads, hd = kIndexerDim, k = kDsaTopk;
  constexpr Int128 projections =
      kH * kQLora + kQLora * n * (kQk + kRope) + kH * (kKvLora + kRope) + kKvLora * n * (kQk + kV) + n * kV * kH;
  constexpr Int128 norms = kQLora + kKvLora;
  constexpr Int128 indexer_projections = kQLora * nh * hd + kH * hd + kH * nh;
  constexpr Int128 absorbed = n * (kKvLora + kRope) + n * kKvLora, expanded = n * (kQk + kRope + kV);
  for (Mode mode : {Mode::kOff, Mode::kDetached, Mode::kSparse}) {
    for (std::int64_t s : {3, 4, 9}) {
      SCOPED_TRACE(std::string(grad_mode_name(mode)) + ", L = " + std::to_string(s));
      const auto got = numbers(dsa_model(mode), s);
      const Int128 S = s;
      const Int128 rest = kDenseMlp + 2 * (kRouted + kShared) + 2 * kLogits;  // MLPs, logits
      const Int128 megatron_rest = 6 * S * (3 * (projections + norms) + rest + 3 * kH + 2 * kH * kH);
      // Megatron-LM main: dense MLA, S^2/2 pairs, no indexer.
      expect_flops(got, "megatron-lm", megatron_rest + 3 * 3 * expanded * S * S);
      // Megatron-Bridge, per token times S: dense context S(S+1)/2, sparse
      // k S - k(k-1)/2 (the dense one when S <= k); indexer layers 2 (the
      // decoder's first, the MTP layer); projections x2, x4 when trained;
      // scoring nh (hd + 1): 2 forward over the dense context, 4 backward over
      // the dense or sparse one; teacher 2 n (kv_lora + rope) forward.
      const Int128 dense_pairs = S * (S + 1) / 2, sparse_pairs = S <= k ? dense_pairs : k * S - k * (k - 1) / 2;
      const bool trains = mode != Mode::kOff;
      const Int128 loss_pairs = mode == Mode::kSparse ? sparse_pairs : dense_pairs;
      const Int128 bridge_indexer =
          2 * ((trains ? 4 : 2) * indexer_projections * S + 2 * dense_pairs * nh * (hd + 1) +
               (trains ? 4 * loss_pairs * nh * (hd + 1) + 2 * loss_pairs * n * (kKvLora + kRope) : 0));
      expect_flops(got, "megatron-bridge", megatron_rest + 6 * 3 * sparse_pairs * absorbed + bridge_indexer);
      // MaxText: no norms, router counted, MTP the last layer only; when
      // S > k: expanded MLA over S k - k^2/2 pairs, the indexer on every layer
      // (its projections and (2 S^2 nh hd + 2 S^2 nh) / 2 scoring), all x3;
      // else dense MLA over S^2/2 and no indexer.
      const Int128 maxtext_weights =
          2 * S * (3 * projections + kDenseMlp + 2 * (kRouted + kShared + kRouter) + kLogits);
      const Int128 maxtext_attention =
          S > k ? 3 * (2 * expanded * (k * S) - expanded * k * k + 2 * S * indexer_projections + S * S * nh * (hd + 1))
                : 3 * expanded * S * S;
      expect_flops(got, "maxtext", 3 * (maxtext_weights + maxtext_attention));
      expect_flops(got, "torchtitan", -1);
      expect_flops(got, "nemo-rl", -1);
      // NeMo Automodel (mla_moe_flops): MLA projections without norms,
      // expanded MLA over S k pairs (k keys for every query), the indexer on
      // every layer trained x3 with S^2 scored pairs; MTP layers, a 2h -> h
      // projection without norms and logits; whatever the grad mode.
      expect_flops(got, "nemo-automodel",
                   6 * S * (3 * projections + rest + 2 * kH * kH) + 3 * 6 * expanded * S * k +
                       3 * 6 * (S * indexer_projections + nh * hd * S * S));
    }
  }
}

TEST(CompareTest, GatedDeltaNetMtpLayerKindByEachFrameworksRule) {
  // A GDN layer, a gated GQA layer, and an MTP layer described as GDN (what
  // Megatron-LM's integer linear_attention_freq gives it).
  const GatedDeltaNet gdn{GatedDeltaNet::Variant::kGdn, 2, 2, 3, 3, 4};
  const Model model = model_of({Layer{Mixer{gdn}, ChannelMixer{moe(kExpertFfn)}}, gqa_layer(moe(kExpertFfn), {}, true)},
                               {{Layer{Mixer{gdn}, ChannelMixer{moe(kExpertFfn)}}}});
  constexpr Int128 qk = 2 * 3, v = 2 * 3, nv = 3;
  constexpr Int128 gdn_fmas = kH * (2 * qk + 2 * v + 2 * nv) + 4 * (2 * qk + v) + 4 * nv * 2 * 2 + kH * v;
  constexpr Int128 moes = 3 * (kRouted + kShared);
  for (std::int64_t s : {1, 6}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(model, s);
    const Int128 S = s;
    const Int128 tail = 3 * kH + 2 * kH * kH + 2 * kLogits;
    // Megatron-LM: the MTP layer as described (GDN).
    expect_flops(got, "megatron-lm", 6 * S * (2 * gdn_fmas + kGqaProjections + kGate + moes + tail) + 6 * kQ * S * S);
    // Megatron-Bridge: MTP layers copy the last decoder layer (gated GQA).
    expect_flops(got, "megatron-bridge",
                 6 * S * (gdn_fmas + 2 * (kGqaProjections + kGate) + moes + tail) + 2 * 6 * kQ * S * S);
    // MaxText (Qwen3-Next block): GDN weights and its 8 Hv Dk Dv core, no gate,
    // router and shared expert, MTP the last (attention) layer without logits.
    const Int128 maxtext = 3 * (2 * S * (gdn_fmas + 2 * kGqaProjections + 3 * (kRouted + kShared + kRouter) + kLogits) +
                                2 * (2 * S * S * kQ));
    expect_flops(got, "maxtext", maxtext);
    // torchtitan (its Qwen3.5 rule): 6 per parameter, the GDN's convolution
    // weights among them, its A and dt bias (2 nv) and output norm (2), the
    // layers' 2 x 2 norms and the final one; no delta rule; the quadratic
    // term for the one attention layer; no MTP.
    const Int128 parameters = (gdn_fmas - 4 * nv * 2 * 2) + kGqaProjections + kGate +
                              2 * (kRouted + kShared + kRouter) + kLogits + 2 * nv + 2 + 5 * kH;
    expect_flops(got, "torchtitan", 6 * parameters * S + 6 * kHeads * (2 * kHeadDim) * S * S);
  }
}

TEST(CompareTest, QuickGegluAndLatentExperts) {
  // Megatron-LM's function charges a quick-GeGLU MLP as ungated (2 h ffn);
  // Megatron-Bridge, by gated_linear_unit, as gated (3 h ffn).
  DenseMlp geglu = dense();
  geglu.megatron_charges_ungated = true;
  const Model model = model_of({gqa_layer(geglu)});
  for (std::int64_t s : {2, 5}) {
    const auto got = numbers(model, s);
    const Int128 S = s;
    const Int128 attention = 6 * kQ * S * S;  // one layer, S^2/2 pairs
    expect_flops(got, "megatron-lm", 6 * S * (kGqaProjections + 2 * kH * kFfn + kLogits) + attention);
    expect_flops(got, "megatron-lm-dsa-fix", 6 * S * (kGqaProjections + 2 * kH * kFfn + kLogits) + attention);
    expect_flops(got, "megatron-bridge", 6 * S * (kGqaProjections + kDenseMlp + kLogits) + attention);
  }
  Moe latent = moe(std::nullopt);
  latent.latent_size = 4;
  const Result<Comparison> c = compare_frameworks(model_of({gqa_layer(latent)}), 4, 1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().frameworks[static_cast<std::size_t>(Framework::kMaxText)].reason,
            "MaxText's experts run in the hidden size: no latent MoE");
  EXPECT_TRUE(c.value().frameworks[static_cast<std::size_t>(Framework::kMegatronBridge)].flops.has_value());
}

// DeepSeek-V4: a window, a CSA and an HCA layer over MoE, manifold
// hyper-connections over 2 streams, one MTP depth attending a window.
constexpr std::int64_t kV4Heads = 2, kV4Dim = 8, kV4QLora = 4, kV4Groups = 2, kV4OLora = 4, kV4Window = 3;
constexpr std::int64_t kV4IndexerHeads = 2, kV4IndexerDim = 4, kV4Topk = 2, kStreams = 2;

Layer v4_layer(CompressedSparseAttention::Kind kind) {
  return Layer{Mixer{CompressedSparseAttention{kind, kV4Heads, kV4Dim, kV4QLora, kV4Groups, kV4OLora, kV4Window,
                                               kV4IndexerHeads, kV4IndexerDim, kV4Topk}},
               ChannelMixer{moe(kExpertFfn)}};
}

Model v4_model() {
  using Kind = CompressedSparseAttention::Kind;
  Model model =
      model_of({v4_layer(Kind::kWindow), v4_layer(Kind::kCsa), v4_layer(Kind::kHca)}, {{v4_layer(Kind::kWindow)}});
  model.hyper_connections = HyperConnections{HyperConnections::Variant::kManifold, kStreams, 0};
  return model;
}

TEST(CompareTest, DeepSeekV4ByEachFrameworksRule) {
  constexpr Int128 l = 40;  // 4 divides it: MaxText's CSA mask ratio is Megatron-LM's band
  const auto got = numbers(v4_model(), l);
  // Megatron-LM's dev branch and Bridge: megatron mode, whose DeepSeek-V4
  // terms tests/data/dsv4.jsonl ties to Megatron-LM's own function.
  Model with_length = v4_model();
  with_length.megatron_seq_length = static_cast<std::int64_t>(l);  // Megatron-LM reads the selected entries from it
  const Result<Report> counted = count(with_length, PackedDocuments{{static_cast<std::int64_t>(l)}}, Mode::kMegatron);
  ASSERT_TRUE(counted.ok()) << counted.error().message();
  const Report& megatron = counted.value();
  for (const char* name : {"megatron-lm-dsa-fix", "megatron-bridge"}) {
    ASSERT_NE(got.at(name), -1) << name;
    EXPECT_NEAR(to_double(got.at(name)), megatron.total.value, 1e-12 * megatron.total.value) << name;
  }
  for (const char* name : {"megatron-lm", "torchtitan", "nemo-rl", "nemo-automodel"}) {
    EXPECT_EQ(got.at(name), -1) << name;
  }
  // MaxText's calculate_deepseek4_tflops_training_per_device, in multiply-adds
  // (x 6 for a training step): no query/key norms, no MTP.
  constexpr Int128 nd = kV4Heads * kV4Dim, nh = kStreams * kH;
  constexpr Int128 projections = kV4QLora * (kH + nd) + kH * kV4Dim + nd * kV4OLora + kV4Groups * kV4OLora * kH;
  // Per sublayer: the coefficients, the read, the write at one FLOP a product, the mixing.
  constexpr Int128 hyper = 2 * (nh * (kStreams * kStreams + 2 * kStreams) + nh + nh / 2 + kStreams * nh);
  constexpr Int128 moe_layer = kRouted + kShared + kRouter;
  // The compressors (CSA's 2 dv wide, HCA's dv, each with a gate) and the indexer's projections, per token.
  constexpr Int128 compressors = 4 * kH * kV4Dim + 2 * kH * kV4Dim;
  constexpr Int128 indexer = 4 * kH * kV4IndexerDim + kV4QLora * kV4IndexerHeads * kV4IndexerDim + kH * kV4IndexerHeads;
  const Int128 per_token = 3 * (projections + hyper + moe_layer) + compressors + indexer + kLogits;
  // 2 nd per pair: L w - w^2/2 window pairs; CSA's L e - 2 e^2 selected entries
  // and its indexer's scoring (nh hd) and head weighting (nh) over L^2/8; HCA's L^2/256.
  const Int128 window = nd * (2 * l * kV4Window - kV4Window * kV4Window);
  const Int128 e = std::min<Int128>(kV4Topk, l / 4);
  const Int128 csa =
      window + 2 * nd * (l * e - 2 * e * e) + (kV4IndexerHeads * kV4IndexerDim + kV4IndexerHeads) * l * l / 8;
  const Int128 hca = window + 2 * nd * l * l / 256;
  expect_flops(got, "maxtext", 6 * (l * per_token + window + csa + hca));

  // A hash-routed layer (DeepSeek-V4's first num_hash_layers) differs in its
  // router's parameters only: every framework's number is the same.
  Model hashed = v4_model();
  Layer first = hashed.layers[0];
  std::get<Moe>(*first.channel_mixer).hash_routed = true;
  hashed.layers.set(0, first);
  EXPECT_EQ(numbers(hashed, l), got);

  const Comparison c = compare_frameworks(v4_model(), 40, 1).value();
  const FrameworkCount& maxtext = c.frameworks[static_cast<std::size_t>(Framework::kMaxText)];
  std::vector<std::string> names;
  for (const ConventionDifference& d : maxtext.differences) names.push_back(std::string(convention_name(d.kind)));
  EXPECT_EQ(names, (std::vector<std::string>{"moe_router", "mtp", "compressed_pairs", "compressed_indexer", "norms",
                                             "hyper_connections"}));
  ASSERT_EQ(maxtext.recipe_differences.size(), 1u);
  EXPECT_NE(maxtext.recipe_differences[0].find("deepseek4-284b.yml"), std::string::npos);
  EXPECT_EQ(c.frameworks[static_cast<std::size_t>(Framework::kMegatronMain)].reason,
            "DeepSeek-V4 attention (dsv4_hybrid) is not on Megatron-LM's main branch; its dev branch counts it (the "
            "DSA fix row)");
}

TEST(CompareTest, DifferencesAreNamedAndOnlyNonZero) {
  const Result<Comparison> c = compare_frameworks(windowed_moe_model(), 7, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().sequences, 3);
  const FrameworkCount& maxtext = c.value().frameworks[static_cast<std::size_t>(Framework::kMaxText)];
  std::vector<std::string> names;
  for (const ConventionDifference& d : maxtext.differences) {
    names.push_back(std::string(convention_name(d.kind)) + ": " + d.choice);
    EXPECT_NE(d.flops, 0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"causal_pairs: L^2/2 pairs", "sliding_windows: W - W^2/2L per query",
                                             "moe_router: counted", "mtp: layers only", "output_gate: not counted"}));
  const FrameworkCount& model = c.value().frameworks[0];
  EXPECT_EQ(model.framework, Framework::kTrainflopsModel);
  EXPECT_EQ(to_decimal(*model.flops), to_decimal(c.value().model_flops));
  EXPECT_TRUE(model.differences.empty());
}

// A hybrid pattern (MGM*-E / ME): a Mamba-2 layer 12 wide (3 heads of 4,
// state 4), attention of 2 heads 6 wide with an output gate, an ungated MLP, an
// ungated MoE with a shared expert; one MTP depth of a Mamba-2 and an MoE layer.
Model hybrid_mamba_model(MegatronPath path) {
  const Layer mamba{Mixer{Mamba2{12, 3, 1, 4}}, std::nullopt};
  const Layer attention{Mixer{GqaAttention{.num_heads = 2, .num_query_groups = 1, .head_dim = 6, .output_gate = true}},
                        std::nullopt};
  const Layer experts{std::nullopt, ChannelMixer{Moe{kExperts, kTopk, kExpertFfn, kExpertFfn, {}, false}}};
  Model model = model_of({mamba, attention, Layer{std::nullopt, ChannelMixer{DenseMlp{kFfn, false}}}, experts},
                         {{mamba, experts}});
  model.megatron_path = path;
  return model;
}

TEST(CompareTest, HybridMambaByEachFrameworksRule) {
  for (std::int64_t s : {1, 6, 7}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(hybrid_mamba_model(MegatronPath::kHybrid), s);
    const Int128 S = s;
    // FMAs per token: Mamba-2 of width d, h (2d + 2 groups state + heads) + d h;
    // attention h (q + 2 kv + gate) + q h; the MLP 2 h ffn; the MoE 2 h ffn
    // (top-k + shared); an MTP depth's projection and norms 2h^2 + 3h.
    const auto mamba = [](Int128 d) { return kH * (2 * d + 2 * 4 + 3) + d * kH; };
    const Int128 mlp = 2 * kH * kFfn, experts = 2 * kH * kExpertFfn * (kTopk + 1), projection = 2 * kH * kH + 3 * kH;
    // trainflops model: width 12, the gate, exact pairs, the scan's 7 d state
    // FLOPs; every product trained (x3).
    expect_flops(got, "trainflops-model",
                 6 * S * (2 * mamba(12) + (kH * 36 + 12 * kH) + mlp + 2 * experts + projection + 2 * kLogits) +
                     3 * S * 2 * (7 * 12 * 4) + 6 * 24 * S * (S + 1) / 2);
    // Megatron-LM's hybrid_flops: Mamba-2 2h wide, no gate, S^2/2 pairs, the
    // pattern's layers and logits for the MTP depth; the dev branch adds its
    // projection and norms; Megatron-Bridge's hybrid_flops is main's.
    const Int128 main = 6 * S * (2 * mamba(2 * kH) + (kH * 24 + 12 * kH) + mlp + 2 * experts + 2 * kLogits) +
                        3 * S * 2 * (7 * 16 * 4) + 3 * 24 * S * S;
    expect_flops(got, "megatron-lm", main);
    expect_flops(got, "megatron-lm-dsa-fix", main + 6 * S * projection);
    expect_flops(got, "megatron-bridge", main);
    // NeMo Automodel's nemotronh_flops: 6 T h (h + 2 h g/n + S + h) per
    // attention layer; the MLP as gated (18 T h ffn); the experts and their
    // router (6 T h E); the decoder's layers and logits alone.
    expect_flops(got, "nemo-automodel",
                 6 * S * (kH * (kH + kH + kH) + mamba(12) + 3 * kH * kFfn + experts + kRouter + kLogits) +
                     6 * kH * S * S + 21 * S * 12 * 4);
    expect_flops(got, "maxtext", -1);
    expect_flops(got, "torchtitan", -1);
    expect_flops(got, "nemo-rl", -1);
  }
  // Its benchmark recipe adds the MTP depths its formula leaves out.
  const Comparison c = compare_frameworks(hybrid_mamba_model(MegatronPath::kHybrid), 6, 1).value();
  const FrameworkCount& automodel = c.frameworks[static_cast<std::size_t>(Framework::kNemoAutomodel)];
  ASSERT_EQ(automodel.recipe_differences.size(), 1u);
  EXPECT_NE(automodel.recipe_differences[0].find("benchmark recipe adds the MTP depths"), std::string::npos);
}

TEST(CompareTest, WhyAFrameworkCannotCountAMambaModel) {
  const auto reasons = [](const Model& model) {
    std::map<std::string, std::string> out;
    const Result<Comparison> c = compare_frameworks(model, 4, 1);
    EXPECT_TRUE(c.ok()) << c.error().message();
    if (!c.ok()) return out;
    for (const FrameworkCount& f : c.value().frameworks) {
      out[std::string(framework_name(f.framework))] = f.reason;
    }
    return out;
  };
  const auto hybrid = reasons(hybrid_mamba_model(MegatronPath::kHybrid));
  EXPECT_EQ(hybrid.at("maxtext"), "MaxText has no Mamba-2 layer (no Nemotron-H model)");
  EXPECT_EQ(hybrid.at("torchtitan"), "torchtitan has no Mamba-2 model");
  EXPECT_EQ(hybrid.at("nemo-rl"),
            "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only: its "
            "nemotronh formula is mapped from no config (a Nemotron-H config raises \"Unsupported config type\")");
  // Without a hybrid pattern Megatron-LM's transformer function has no Mamba-2.
  const auto standard = reasons(hybrid_mamba_model(MegatronPath::kStandard));
  EXPECT_EQ(standard.at("megatron-lm"),
            "Megatron-LM's transformer function has no Mamba-2 term (its hybrid function, for a hybrid_layer_pattern, "
            "has)");
  EXPECT_EQ(standard.at("megatron-bridge"),
            "Megatron-Bridge's transformer function has no Mamba-2 term (its hybrid function, for a "
            "hybrid_layer_pattern, has)");
  // MLA in a hybrid pattern: neither hybrid function reads it; Automodel's
  // Nemotron-H formula has no gated experts.
  Model mla_hybrid = hybrid_mamba_model(MegatronPath::kHybrid);
  mla_hybrid.layers = std::vector<Layer>{mla_hybrid.layers[0], Layer{Mixer{mla()}, std::nullopt}};
  const auto with_mla = reasons(mla_hybrid);
  EXPECT_EQ(with_mla.at("megatron-lm"),
            "Megatron-LM's hybrid function counts Mamba-2, gated delta net and grouped-query attention layers only (M, "
            "G and * of the pattern); this model has mla layers");
  EXPECT_EQ(with_mla.at("nemo-automodel"),
            "NeMo Automodel's Nemotron-H formula counts Mamba-2 and grouped-query attention layers only");
  Model gated = hybrid_mamba_model(MegatronPath::kHybrid);
  gated.mtp_depths.clear();
  gated.layers = std::vector<Layer>{gated.layers[0], Layer{std::nullopt, ChannelMixer{moe(kExpertFfn)}}};
  EXPECT_EQ(reasons(gated).at("nemo-automodel"),
            "NeMo Automodel's Nemotron-H formula charges every expert ungated (relu2); this model's are gated");
  Model two_widths = hybrid_mamba_model(MegatronPath::kHybrid);
  two_widths.mtp_depths.clear();
  two_widths.layers = std::vector<Layer>{two_widths.layers[0], Layer{Mixer{Mamba2{16, 4, 1, 4}}, std::nullopt}};
  EXPECT_EQ(reasons(two_widths).at("nemo-automodel"),
            "NeMo Automodel's Nemotron-H formula reads one config: one Mamba-2 shape, one head count, one MLP width "
            "and one MoE shape for every layer");
}

// A dense GQA layer, then MiniMax-M3's kind: block-sparse attention (blocks
// of 2 keys, 2 of them per query, an indexer of 1 head of 2) with MoE, and
// one MTP depth copying it.
Model block_sparse_model() {
  const BlockSparseAttention sparse{
      .attention = {.num_heads = kHeads, .num_query_groups = kGroups, .head_dim = kHeadDim},
      .indexer_num_heads = 1,
      .indexer_head_dim = 2,
      .block_size = 2,
      .topk_blocks = 2};
  const Layer sparse_layer{Mixer{sparse}, ChannelMixer{moe(kExpertFfn)}};
  return model_of({gqa_layer(dense()), sparse_layer}, {{sparse_layer}});
}

TEST(CompareTest, BlockSparseByEachFrameworksRule) {
  for (std::int64_t s : {1, 6, 7}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(block_sparse_model(), s);
    const Int128 S = s;
    // Megatron-Bridge (MiniMax-M3's provider): every layer dense GQA over
    // S^2/2 pairs, no indexer; the MTP depth as a transformer MTP layer (its
    // projection and norms, its logits).
    const Int128 per_token = kGqaProjections + kDenseMlp + 2 * (kGqaProjections + kRouted + kShared);
    expect_flops(got, "megatron-bridge", 6 * S * (per_token + 2 * kH * kH + 3 * kH + 2 * kLogits) + 6 * 3 * kQ * S * S);
    for (const char* other :
         {"megatron-lm", "megatron-lm-dsa-fix", "maxtext", "torchtitan", "nemo-rl", "nemo-automodel"}) {
      expect_flops(got, other, -1);
    }
  }
  const Comparison c = compare_frameworks(block_sparse_model(), 6, 1).value();
  const FrameworkCount& bridge = c.frameworks[static_cast<std::size_t>(Framework::kMegatronBridge)];
  EXPECT_TRUE(std::any_of(bridge.differences.begin(), bridge.differences.end(), [](const ConventionDifference& d) {
    return d.kind == ConventionKind::kBlockSparse && d.choice == "dense GQA over causal pairs, no indexer";
  }));
  ASSERT_EQ(bridge.recipe_differences.size(), 1u);
  EXPECT_EQ(bridge.recipe_differences[0],
            "Megatron-Bridge's MiniMax-M3 provider forces mtp_num_layers to None (the checkpoint ships no MTP "
            "weights): run with it, its number leaves out the 1 MTP depths; shown with them, as mtp_num_layers = 1 "
            "counts them");
  const auto reason = [&](Framework f) { return c.frameworks[static_cast<std::size_t>(f)].reason; };
  EXPECT_EQ(reason(Framework::kMegatronMain),
            "Megatron-LM has no block-sparse attention and no MiniMax-M3 model (main or dev); Megatron-Bridge's "
            "provider runs it");
  EXPECT_EQ(reason(Framework::kMegatronDsaFix), reason(Framework::kMegatronMain));
  EXPECT_EQ(reason(Framework::kMaxText), "MaxText has no block-sparse attention (no MiniMax-M3 model)");
  EXPECT_EQ(reason(Framework::kTorchtitan), "torchtitan has no block-sparse attention (no MiniMax-M3 model)");
  EXPECT_EQ(reason(Framework::kNemoRl),
            "NeMo-RL's FLOPs tracker has formulas for Llama, Qwen2/Qwen3 (dense and MoE) and DeepSeek-V3 only; this "
            "model has other attention");
  EXPECT_EQ(reason(Framework::kNemoAutomodel)
                .rfind("NeMo Automodel has no block-sparse attention formula (none is mapped from MiniMaxM3VLConfig or "
                       "MiniMaxM3VLTextConfig): get_flops_formula_for_hf_config falls back to transformer_flops",
                       0),
            0u);
}

// A gated delta product (d = 16, 2 heads, 1 group, state 4, 2 Householder
// reflections) and a GQA layer with a dense MLP, on a hybrid pattern.
Model gated_delta_product_model() {
  Model model = model_of({Layer{Mixer{GatedDeltaProduct{16, 2, 1, 4, 2}}, std::nullopt}, gqa_layer(dense())});
  model.megatron_path = MegatronPath::kHybrid;
  return model;
}

TEST(CompareTest, GatedDeltaProductOnlyMegatronLmMainCounts) {
  for (std::int64_t s : {1, 6, 7}) {
    SCOPED_TRACE("L = " + std::to_string(s));
    const auto got = numbers(gated_delta_product_model(), s);
    const Int128 S = s;
    // Megatron-LM main's gated_delta_product_layer_flops: h (d (1 + H) + g
    // state (1 + H) + heads (1 + H)) + 4 (d H + g state (1 + H)) + d h FMAs per
    // token, and (4 H + 3) d state FLOPs of recurrence; its attention over S^2/2
    // pairs.
    const Int128 gdp = kH * (16 * 3 + 4 * 3 + 2 * 3) + 4 * (16 * 2 + 4 * 3) + 16 * kH;  // 832
    expect_flops(got, "megatron-lm",
                 6 * S * (gdp + kGqaProjections + kDenseMlp + kLogits) + 3 * S * (11 * 16 * 4) + 6 * kQ * S * S);
    // trainflops' executed row: the chunked form, as executed mode counts it.
    expect_flops(got, "trainflops-executed",
                 *count(gated_delta_product_model(), Bshd{1, s}, Mode::kExecuted).value().total.exact);
    for (const char* other :
         {"megatron-lm-dsa-fix", "megatron-bridge", "maxtext", "torchtitan", "nemo-rl", "nemo-automodel"}) {
      expect_flops(got, other, -1);
    }
  }
  const Comparison c = compare_frameworks(gated_delta_product_model(), 4, 1).value();
  const auto reason = [&](Framework f) { return c.frameworks[static_cast<std::size_t>(f)].reason; };
  // The executed row differs from the model's by its delta rule alone.
  const auto& executed = c.frameworks[static_cast<std::size_t>(Framework::kTrainflopsExecuted)].differences;
  ASSERT_EQ(executed.size(), 1u);
  EXPECT_EQ(executed[0].kind, ConventionKind::kDeltaRule);
  EXPECT_EQ(executed[0].choice, "chunked");
  EXPECT_EQ(reason(Framework::kMegatronDsaFix),
            "Megatron-LM's dev branch has no gated delta product: its hybrid function charges the M layers of a "
            "gated-delta-product spec as Mamba-2 (main's counts them)");
  EXPECT_EQ(reason(Framework::kMegatronBridge),
            "Megatron-Bridge's hybrid function has no gated delta product: it charges every M layer as Mamba-2 "
            "(Megatron-LM main's counts them)");
  EXPECT_EQ(reason(Framework::kMaxText), "MaxText has no gated delta product");
  EXPECT_EQ(reason(Framework::kNemoAutomodel), "NeMo Automodel has no gated delta product formula");
  Model standard = gated_delta_product_model();
  standard.megatron_path = MegatronPath::kStandard;
  EXPECT_EQ(
      compare_frameworks(standard, 4, 1).value().frameworks[static_cast<std::size_t>(Framework::kMegatronMain)].reason,
      "Megatron-LM's transformer function has no gated delta product term (Megatron-LM main's hybrid function, "
      "for a hybrid_layer_pattern under a gated-delta-product spec, has)");
}

TEST(CompareTest, Errors) {
  EXPECT_EQ(compare_frameworks(windowed_moe_model(), 0, 1).error().message(), "seq_length = 0: must be at least 1");
  EXPECT_EQ(compare_frameworks(windowed_moe_model(), 4, 0).error().message(), "sequences = 0: must be at least 1");
  Model overflow = windowed_moe_model();
  EXPECT_EQ(compare_frameworks(overflow, 4'000'000'000'000'000'000, 1).error().code(), ErrorCode::kOverflow);
}

}  // namespace
}  // namespace trainflops
