// Attention residuals (Kimi K3): the closed-form count against a walk of the
// reference forward (the released modeling code's loop over layers, which
// seals the running sum as a source at the first layer of each block), one
// multiply-add at a time; the report, recomputation, parameters, compare,
// the native config and the rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "trainflops/compare.h"
#include "trainflops/count.h"
#include "trainflops/layer_flops.h"
#include "trainflops/native_config.h"
#include "trainflops/parameters.h"

namespace trainflops {
namespace {

// One read's multiply-adds per token over `sources` sources of width h: each
// element's norm weight (when `norms`), its share of the score and its share
// of the weighted sum.
Int128 read_fmas(std::int64_t sources, std::int64_t h, bool norms) {
  Int128 fmas = 0;
  for (std::int64_t source = 0; source < sources; ++source) {
    for (std::int64_t i = 0; i < h; ++i) {
      if (norms) ++fmas;  // the RMS-normalized element times the norm's weight
      ++fmas;             // times the projection's weight, into the score
      ++fmas;             // the source's softmax weight times the element, into the sum
    }
  }
  return fmas;
}

struct Walked {
  Int128 layers = 0;  // the mixers' and channel mixers' reads
  Int128 output = 0;  // the read before the final norm
};

// The reference forward's bookkeeping, per token: `sealed` sources (the
// embedding first), and the running sum of the current block beside them.
Walked walk(std::int64_t layers, std::int64_t block_size, std::int64_t h, bool norms) {
  Walked fmas;
  std::int64_t sealed = 0;
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    // The mixer reads the sealed sources and the running sum; before any is
    // sealed (layer 0) its input is the embedding itself.
    if (sealed > 0) fmas.layers += read_fmas(sealed + 1, h, norms);
    // The first layer of a block seals the running sum; the mixer's output
    // starts the next one.
    if (layer % block_size == 0) ++sealed;
    fmas.layers += read_fmas(sealed + 1, h, norms);  // the channel mixer's read
  }
  fmas.output = read_fmas(sealed + 1, h, norms);
  return fmas;
}

Int128 forward_fmas(const Term& term) {
  EXPECT_EQ(term.component, Component::kAttentionResiduals);
  EXPECT_EQ(term.per, kTokens);
  EXPECT_EQ(term.executions, kTrainingExpansion);
  return term.forward_flops / kFlopsPerFma;
}

TEST(AttentionResidualTest, TermsMatchTheWalkedForward) {
  for (std::int64_t block_size : {1, 2, 3, 5, 12, 40}) {
    for (std::int64_t layers = 0; layers <= 30; ++layers) {
      SCOPED_TRACE("block_size " + std::to_string(block_size) + ", layers " + std::to_string(layers));
      for (const Mode mode : {Mode::kModel, Mode::kExecuted}) {
        const Terms terms = attention_residual_terms(AttentionResiduals{block_size}, layers, 7, Convention{mode});
        const Walked walked = walk(layers, block_size, 7, mode == Mode::kModel);
        ASSERT_EQ(terms.size(), 2u);
        EXPECT_EQ(forward_fmas(terms[0]), walked.layers);
        EXPECT_EQ(forward_fmas(terms[1]), walked.output);
      }
      EXPECT_TRUE(attention_residual_terms(AttentionResiduals{block_size}, layers, 7, Convention{Mode::kMegatron})
                      .empty());
    }
  }
}

// Kimi K3: 93 layers in blocks of 12, hidden size 7168. Mixers of layers
// 1-92 read ceil(l/12) + 1 sources: 12 x (2 + ... + 8) + 8 x 9 = 492; channel
// mixers of layers 0-92 floor(l/12) + 2: 12 x (2 + ... + 8) + 9 x 9 = 501; the
// output layer 8 sealed sources and the last block's sum, 9.
TEST(AttentionResidualTest, KimiK3) {
  const AttentionResiduals k3{12};
  EXPECT_EQ(attention_residual_layer_sources(k3, 93), 993);
  EXPECT_EQ(attention_residual_output_sources(k3, 93), 9);
  // 1002 reads of a source, 3 x 7168 multiply-adds each in model mode, 2 x 7168 executed.
  const Terms model = attention_residual_terms(k3, 93, 7168, Convention{Mode::kModel});
  EXPECT_EQ(model[0].forward_flops + model[1].forward_flops, 2 * 3 * Int128{7168} * 1002);
  EXPECT_EQ(to_decimal(3 * (model[0].forward_flops + model[1].forward_flops)), "129282048");
  const Terms executed = attention_residual_terms(k3, 93, 7168, Convention{Mode::kExecuted});
  EXPECT_EQ(to_decimal(3 * (executed[0].forward_flops + executed[1].forward_flops)), "86188032");
}

// GQA + MLP layers, the last an MoE layer; an MTP depth (a plain residual).
Model small_model(std::optional<AttentionResiduals> residuals) {
  Model model;
  model.hidden_size = 12;
  model.vocab_size = 50;
  const Mixer attention = GqaAttention{.num_heads = 4, .num_query_groups = 2, .head_dim = 3};
  const ChannelMixer mlp = DenseMlp{20, true};
  const ChannelMixer moe = Moe{8, 2, 6, std::nullopt, std::nullopt, true, false};
  model.layers = {Layer{attention, mlp}, Layer{attention, mlp}, Layer{attention, mlp}, Layer{attention, mlp},
                  Layer{attention, moe}};
  model.mtp_depths = {LayerStack{Layer{attention, moe}}};
  model.attention_residuals = residuals;
  return model;
}

Int128 exact_total(const Model& model, Mode mode, Recompute recompute = Recompute::kNone) {
  const Result<Report> report = count(model, Bshd{2, 8}, mode, recompute);
  EXPECT_TRUE(report.ok()) << report.error().message();
  return *report.value().total.exact;
}

TEST(AttentionResidualTest, CountAddsTheWalkedForward) {
  const Model plain = small_model(std::nullopt), with = small_model(AttentionResiduals{2});
  const Walked model = walk(5, 2, 12, true), executed = walk(5, 2, 12, false);
  // 16 tokens, 2 FLOPs per multiply-add, trained x3.
  EXPECT_EQ(exact_total(with, Mode::kModel) - exact_total(plain, Mode::kModel),
            16 * 6 * (model.layers + model.output));
  EXPECT_EQ(exact_total(with, Mode::kExecuted) - exact_total(plain, Mode::kExecuted),
            16 * 6 * (executed.layers + executed.output));
  // A full recomputation runs the layers' reads forward once more, not the output layer's.
  EXPECT_EQ(exact_total(with, Mode::kExecuted, Recompute::kFull) - exact_total(plain, Mode::kExecuted, Recompute::kFull),
            16 * 8 * executed.layers + 16 * 6 * executed.output);
  // Megatron-LM's function has no attention residuals.
  EXPECT_EQ(count(with, Bshd{2, 8}, Mode::kMegatron).value().total.value,
            count(plain, Bshd{2, 8}, Mode::kMegatron).value().total.value);
}

TEST(AttentionResidualTest, BreakdownShowsTheirRowAndComponent) {
  const Report report = count(small_model(AttentionResiduals{2}), Bshd{2, 8}, Mode::kModel).value();
  const Walked walked = walk(5, 2, 12, true);
  const auto found = std::find_if(report.components.begin(), report.components.end(),
                                  [](const ComponentFlops& c) { return c.component == Component::kAttentionResiduals; });
  ASSERT_NE(found, report.components.end());
  EXPECT_EQ(*found->flops.exact, 16 * 6 * (walked.layers + walked.output));
  // Their own row, after the decoder's: the reads differ from layer to layer.
  const auto row = std::find_if(report.layers.begin(), report.layers.end(),
                                [](const LayerFlops& layer) { return layer.name == "attention_residuals"; });
  ASSERT_NE(row, report.layers.end());
  EXPECT_EQ(row->kind, "attention_residuals");
  EXPECT_EQ(*row->flops.exact, *found->flops.exact);
  EXPECT_EQ((row - 1)->name, "decoder.5");
  const Report megatron = count(small_model(AttentionResiduals{2}), Bshd{2, 8}, Mode::kMegatron).value();
  for (const LayerFlops& layer : megatron.layers) EXPECT_NE(layer.name, "attention_residuals");
}

// Per read an h x 1 projection and an h-wide norm: two per layer, one before
// the final norm; the MTP depth has none.
TEST(AttentionResidualTest, Parameters) {
  const ModelParameters plain = count_parameters(small_model(std::nullopt)).value();
  const ModelParameters with = count_parameters(small_model(AttentionResiduals{2})).value();
  EXPECT_EQ(with.decoder.total - plain.decoder.total, 5 * (2 * 12 + 2 * 12));
  EXPECT_EQ(with.decoder.active - plain.decoder.active, 5 * (2 * 12 + 2 * 12));
  EXPECT_EQ(with.output_layer.total - plain.output_layer.total, 12 + 12);
  EXPECT_EQ(with.mtp.total, plain.mtp.total);
  const auto projections = std::find_if(with.components.begin(), with.components.end(), [](const auto& part) {
    return part.component == Component::kAttentionResiduals;
  });
  ASSERT_NE(projections, with.components.end());
  EXPECT_EQ(projections->count.total, 11 * 12);
}

// No framework's function counts them. The norms' share goes with the norms
// convention, which comes first: a framework that leaves norms out has left
// out theirs by then.
TEST(AttentionResidualTest, CompareSaysEveryFrameworkLeavesThemOut) {
  const Model model = small_model(AttentionResiduals{2});
  const Walked with_norms = walk(5, 2, 12, true), without = walk(5, 2, 12, false);
  const Comparison comparison = compare_frameworks(model, 8, 1).value();
  EXPECT_EQ(comparison.frameworks[1].framework, Framework::kTrainflopsExecuted);
  EXPECT_EQ(*comparison.frameworks[1].flops, *count(model, Bshd{1, 8}, Mode::kExecuted).value().total.exact);
  for (const FrameworkCount& framework : comparison.frameworks) {
    if (framework.framework == Framework::kTrainflopsModel || framework.framework == Framework::kTrainflopsExecuted) {
      continue;
    }
    SCOPED_TRACE(std::string(framework_name(framework.framework)));
    ASSERT_TRUE(framework.flops.has_value()) << framework.reason;
    const auto left_out = std::find_if(framework.differences.begin(), framework.differences.end(),
                                       [](const auto& d) { return d.kind == ConventionKind::kAttentionResiduals; });
    ASSERT_NE(left_out, framework.differences.end());
    EXPECT_EQ(left_out->choice, "not counted");
    const bool norms_counted = framework.framework == Framework::kMegatronMain ||
                               framework.framework == Framework::kMegatronDsaFix ||
                               framework.framework == Framework::kMegatronBridge ||
                               framework.framework == Framework::kTorchtitan;
    const Walked& walked = norms_counted ? with_norms : without;
    EXPECT_EQ(left_out->flops, -8 * 6 * (walked.layers + walked.output));
  }
}

TEST(AttentionResidualTest, NativeConfigAndRules) {
  const auto config = [](const std::string& top, const std::string& second_layer) {
    return R"({"hidden_size": 12, "vocab_size": 50, )" + top +
           R"("mixers": {"a": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 3}},
      "channel_mixers": {"m": {"type": "mlp", "ffn_hidden_size": 20, "gated": true}},
      "layers": [{"mixer": "a", "channel_mixer": "m"}, )" +
           second_layer + "]}";
  };
  const std::string full_layer = R"({"mixer": "a", "channel_mixer": "m"})";
  EXPECT_EQ(parse_native_config(config(R"("attention_residuals": {"block_size": 3}, )", full_layer))
                .value()
                .attention_residuals,
            AttentionResiduals{3});
  const std::vector<std::pair<std::string, std::string>> errors = {
      {config(R"("attention_residuals": {"block_size": 0}, )", full_layer),
       "attention_residuals.block_size = 0: must be a positive integer"},
      {config(R"("attention_residuals": {"block_size": 2, "blocks": 4}, )", full_layer),
       "attention_residuals.blocks: unknown key (this object takes block_size)"},
      {config(R"("attention_residuals": {"block_size": 2}, )", R"({"mixer": "a"})"),
       "attention_residuals: layers[1] has no channel mixer; attention residuals feed every decoder layer's mixer "
       "and channel mixer"},
      {config(R"("attention_residuals": {"block_size": 2}, "hyper_connections": {"variant": "mhc", "streams": 4}, )",
              full_layer),
       "attention_residuals and hyper_connections: a model has one or the other (both replace the residual sum)"},
  };
  for (const auto& [text, message] : errors) {
    const Result<Model> parsed = parse_native_config(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().message(), message);
  }
}

}  // namespace
}  // namespace trainflops
