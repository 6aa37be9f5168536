#include "trainflops/megatron_args.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "trainflops/count.h"
#include "trainflops/presets.h"

namespace trainflops {
namespace {

// A small standard-path model; cases patch fields of it.
const char* const kBase = R"({
  "num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024, "num_attention_heads": 8,
  "group_query_attention": true, "num_query_groups": 2, "kv_channels": 32, "swiglu": true,
  "padded_vocab_size": 1024, "seq_length": 128
})";

// A DSA model on top of kBase.
const std::string kDsa = R"("group_query_attention": false, "multi_latent_attention": true, "kv_lora_rank": 32,
  "qk_head_dim": 16, "qk_pos_emb_head_dim": 8, "v_head_dim": 16, "experimental_attention_variant": "dsa",
  "dsa_indexer_n_heads": 4, "dsa_indexer_head_dim": 16, "dsa_indexer_topk": 64)";

Result<Model> model_from(const std::string& patch, MegatronBranch branch = MegatronBranch::kMain) {
  std::string text = kBase;
  text.pop_back();  // drop '}' so that the patch's fields extend the object
  text = text.substr(0, text.find_last_not_of(" \n") + 1);
  if (!patch.empty()) text += ", " + patch;
  text += "}";
  Result<ParsedMegatronArgs> parsed = parse_megatron_args_json(text);
  if (!parsed.ok()) return parsed.error();
  return model_from_megatron_args(parsed.value().args, branch);
}

TEST(MegatronArgsTest, ErrorsNameTheFieldTheValueAndTheRule) {
  struct Case {
    std::string patch;
    std::string message;
    // kFailedAssertion where Megatron-LM's function asserts (a drop-in raises an AssertionError there).
    ErrorCode code = ErrorCode::kInvalidInput;
  };
  const std::vector<Case> cases = {
      {R"("num_layers": 0)", "num_layers = 0: must be a positive integer"},
      {R"("num_layers": null)", "num_layers is missing: required for every model"},
      {R"("hidden_size": 4.5)", "hidden_size = 4.5: must be an integer or null"},
      {R"("swiglu": 1)", "swiglu = 1: must be true, false or null"},
      {R"("padded_vocab_size": null)", "padded_vocab_size is missing: required for every model"},
      {R"("kv_channels": null)", "kv_channels is missing: required for attention layers"},
      {R"("num_query_groups": null)", "num_query_groups is missing: required when group_query_attention is true"},
      {R"("num_query_groups": 3)", "layers[0].mixer.num_query_groups = 3: must divide num_heads = 8"},
      {R"("num_experts": 8, "moe_layer_freq": [1, 0, 1])",
       "moe_layer_freq: the list has 3 entries; it must have num_layers = 4", ErrorCode::kFailedAssertion},
      {R"("num_experts": 8, "moe_layer_freq": [1, 0, 2, 1], "moe_router_topk": 2)",
       "moe_layer_freq[2] = 2: entries must be 0 or 1"},
      {R"("num_experts": 8, "moe_layer_freq": [1, -1, 2, 1], "moe_router_topk": 2)",
       "moe_layer_freq[1] = -1: entries must be 0 or 1"},
      {R"("num_experts": 8, "moe_layer_freq": 0, "moe_router_topk": 2)",
       "moe_layer_freq = 0: must be a positive integer"},
      {R"("num_experts": 8, "moe_layer_freq": 1)", "moe_router_topk is missing: required for MoE layers"},
      {R"("num_experts": 8, "moe_layer_freq": "1")",
       "moe_layer_freq = \"1\": must be an integer, a list of 0/1 or null"},
      {R"("num_experts": 8, "moe_router_topk": 9, "moe_layer_freq": 1)",
       "layers[0].channel_mixer.topk = 9: must not exceed num_experts = 8"},
      {R"("multi_latent_attention": true)",
       "group_query_attention = true: cannot be combined with multi-latent attention", ErrorCode::kFailedAssertion},
      {R"("multi_latent_attention": true, "group_query_attention": false)",
       "kv_lora_rank is missing: required for multi-latent attention"},
      {R"("experimental_attention_variant": "linear")",
       "experimental_attention_variant = \"linear\": must be one of dsa, dsv4_hybrid, gdn, gdn2, gated_delta_net, kda, "
       "or null"},
      {R"("experimental_attention_variant": "gdn")",
       "linear_attention_freq is missing: required when experimental_attention_variant is \"gdn\""},
      {R"("experimental_attention_variant": "gdn", "linear_attention_freq": 4)",
       "linear_key_head_dim is missing: required for gated delta net layers"},
      {R"("experimental_attention_variant": "gdn", "linear_attention_freq": [1, 1, 1, 0], "mtp_num_layers": 1)",
       "linear_attention_freq: the list has 4 entries; it must have num_layers + mtp_num_layers = 5",
       ErrorCode::kFailedAssertion},
      {R"("mtp_num_layers": -1)", "mtp_num_layers = -1: must be >= 0"},
      {R"("experimental_attention_variant": "dsv4_hybrid")",
       "csa_compress_ratios is missing: required when experimental_attention_variant is \"dsv4_hybrid\"",
       ErrorCode::kFailedAssertion},
      {R"("experimental_attention_variant": "dsv4_hybrid", "csa_compress_ratios": [0, 4])",
       "csa_compress_ratios: the list has 2 entries; it must have num_layers + mtp_num_layers = 4",
       ErrorCode::kFailedAssertion},
      {R"("experimental_attention_variant": "dsa")",
       "multi_latent_attention = None: DSA (experimental_attention_variant = \"dsa\") is built on multi-latent "
       "attention"},
      {kDsa + R"(, "dsa_indexer_topk": null, "dsa_kpool_size": 4)",
       "dsa_indexer_topk is missing: required with dsa_kpool_size > 1"},
      {kDsa + R"(, "dsa_kpool_size": 4, "dsa_indexer_loss_coeff": 0.1)",
       "dsa_kpool_size = 4: KPool requires the indexer loss disabled (the indexer grad mode is detached)"},
      {kDsa + R"(, "dsa_kpool_size": 3)", "dsa_indexer_topk = 64: must be a multiple of dsa_kpool_size = 3"},
      {kDsa + R"(, "dsa_kpool_size": 0)", "dsa_kpool_size = 0: must be a positive integer"},
      {kDsa + R"(, "dsa_indexer_grad_mode": "dense")",
       "dsa_indexer_grad_mode = \"dense\": must be one of off, detached, sparse, full"},
      {kDsa + R"(, "dsa_indexer_topk_freq": 0)", "dsa_indexer_topk_freq = 0: must be a positive integer"},
      {kDsa + R"(, "dsa_indexer_skip_topk_offset": -2)", "dsa_indexer_skip_topk_offset = -2: must be >= 0"},
      {kDsa + R"(, "dsa_indexer_loss_coeff": "0.1")", "dsa_indexer_loss_coeff = \"0.1\": must be a number or null"},
      {R"("hybrid_layer_pattern": "M*-X")",
       "hybrid_layer_pattern = \"M*-X\": 'X' at position 4 is not a layer symbol (M G K * + D W C H - E, with | [ ] /)"},
      {R"("hybrid_layer_pattern": "M*-E")", "mamba_state_dim is missing: required for Mamba layers"},
      {R"("hybrid_layer_pattern": "**--/*-")",
       "mtp_num_layers = None: must equal the number of MTP depths in hybrid_layer_pattern (1, one per '/')"},
      {R"("hybrid_layer_pattern": "**--", "mtp_num_layers": 2)",
       "mtp_num_layers = 2: must equal the number of MTP depths in hybrid_layer_pattern (0, one per '/')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.patch);
    const Result<Model> model = model_from(c.patch);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().message(), c.message);
    EXPECT_EQ(model.error().code(), c.code);
  }
}

// Megatron-LM's function scales DSA's core attention by the top-k it is
// given; without one it scales nothing (dev 34515063, and main's port of the
// same fix). The arguments and numbers are the "dsa" configuration of
// tests/data/megatron_argument_forms.json, measured with Megatron-LM's dev function.
TEST(MegatronArgsTest, DsaWithoutTopkIsDenseInMegatronModeAlone) {
  const char* const args = R"({"num_layers": 3, "hidden_size": 1024, "ffn_hidden_size": 2816,
    "num_attention_heads": 16, "kv_channels": 64, "swiglu": true, "padded_vocab_size": 32000, "seq_length": 4096,
    "moe_layer_freq": 1, "multi_latent_attention": true, "q_lora_rank": 256, "kv_lora_rank": 128, "qk_head_dim": 64,
    "qk_pos_emb_head_dim": 32, "v_head_dim": 64, "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 8,
    "dsa_indexer_head_dim": 64, "dsa_indexer_topk": null})";
  const MegatronArgs parsed = parse_megatron_args_json(args).value().args;
  for (const MegatronBranch branch : {MegatronBranch::kMain, MegatronBranch::kDev}) {
    SCOPED_TRACE(std::string(megatron_branch_name(branch)));
    const Result<Model> model = model_from_megatron_args(parsed, branch);
    ASSERT_TRUE(model.ok()) << model.error().message();
    const Result<FlopsCounter> megatron = FlopsCounter::create(model.value(), Mode::kMegatron);
    ASSERT_TRUE(megatron.ok()) << megatron.error().message();
    EXPECT_EQ(megatron.value().total(Bshd{8, 4096}).value().value, 0x1.0eded8p+44);
    EXPECT_EQ(megatron.value().total(SequenceAggregates{6144 / 3, 9437184 / 3}).value().value, 0x1.b4bdbp+39);
    for (const Mode exact : {Mode::kModel, Mode::kExecuted}) {
      const Result<FlopsCounter> refused = FlopsCounter::create(model.value(), exact);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.error().message(),
                "layers[0].mixer.indexer.topk is missing: " + std::string(mode_name(exact)) +
                    " mode counts the keys a DSA layer selects (only megatron mode counts a layer without a top-k, "
                    "as Megatron-LM's function does: every causal pair)");
    }
  }
}

// Megatron-LM's dev branch (its DSA fix) charges an indexer trained by the
// sparse KL loss as by the dense one: what its own function returned on
// GLM-5.2 with each loss (tests/data/compare/framework_functions.jsonl, from
// validation/framework_functions.py). Main charges the sparse loss's scoring
// backward over the selected pairs alone (docs/accounting.md, 7).
TEST(MegatronArgsTest, DevChargesTheSparseLossAsTheDenseOne) {
  std::ifstream in(std::string(TRAINFLOPS_TEST_DATA) + "/compare/framework_functions.jsonl");
  std::size_t records = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json record = nlohmann::json::parse(line);
    const std::vector<std::string> options = record.at("options");
    if (record.at("framework") != "megatron-lm-dsa-fix" || options.size() != 4 || options[1] != "glm-5.2") continue;
    SCOPED_TRACE(line);
    MegatronArgs args = *find_preset("glm-5.2").value().args;
    args.dsa_indexer_loss_coeff = 0.001;
    args.dsa_indexer_use_sparse_loss = options[3] == "sparse";
    const std::int64_t length = record.at("seq_length");
    const auto megatron = [&](MegatronBranch branch) {
      return count(model_from_megatron_args(args, branch).value(), Bshd{1, length}, Mode::kMegatron)
          .value()
          .total.value;
    };
    EXPECT_EQ(megatron(MegatronBranch::kDev), record.at("flops").get<double>());
    if (options[3] == "sparse" && length > *args.dsa_indexer_topk) {  // else the top-k is every causal pair
      EXPECT_LT(megatron(MegatronBranch::kMain), megatron(MegatronBranch::kDev));
    }
    ++records;
  }
  EXPECT_EQ(records, 6u);  // the dense and the sparse loss at 3 lengths
}

TEST(MegatronArgsTest, StandardPathLayers) {
  struct Case {
    std::string patch;
    std::vector<std::string> kinds;
    std::vector<std::string> mtp_kinds;
  };
  const std::vector<Case> cases = {
      {"", {"gqa+mlp", "gqa+mlp", "gqa+mlp", "gqa+mlp"}, {}},
      // Without num_experts Megatron-LM treats every layer as dense, whatever moe_layer_freq says.
      {R"("moe_layer_freq": 1, "moe_router_topk": 2)", {"gqa+mlp", "gqa+mlp", "gqa+mlp", "gqa+mlp"}, {}},
      {R"("num_experts": 8, "moe_layer_freq": 2, "moe_router_topk": 2)",
       {"gqa+moe", "gqa+mlp", "gqa+moe", "gqa+mlp"},
       {}},
      // MTP layers take the channel mixer of the last decoder layer.
      {R"("num_experts": 8, "moe_layer_freq": [0, 0, 1, 1], "moe_router_topk": 2, "mtp_num_layers": 2)",
       {"gqa+mlp", "gqa+mlp", "gqa+moe", "gqa+moe"},
       {"gqa+moe", "gqa+moe"}},
      {R"("num_experts": 8, "moe_layer_freq": [1, 1, 1, 0], "moe_router_topk": 2, "mtp_num_layers": 1)",
       {"gqa+moe", "gqa+moe", "gqa+moe", "gqa+mlp"},
       {"gqa+mlp"}},
      // Linear attention on every layer but each 2nd, counted across decoder and MTP layers.
      {R"("experimental_attention_variant": "gdn2", "linear_attention_freq": 2, "mtp_num_layers": 1,
          "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
          "linear_num_value_heads": 4, "linear_conv_kernel_dim": 4)",
       {"gdn2+mlp", "gqa+mlp", "gdn2+mlp", "gqa+mlp"},
       {"gdn2+mlp"}},
      {R"("hybrid_layer_pattern": "[M*]|-E/*-/*-", "num_layers": null, "mtp_num_layers": 2, "moe_router_topk": 2,
          "mamba_state_dim": 16, "mamba_head_dim": 16, "mamba_num_groups": 1)",
       {"mamba2", "gqa", "mlp", "moe"},
       {"gqa", "mlp", "gqa", "mlp"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.patch);
    const Result<Model> model = model_from(c.patch);
    ASSERT_TRUE(model.ok()) << model.error().message();
    std::vector<std::string> kinds, mtp_kinds;
    for (const Layer& layer : model.value().layers) kinds.push_back(layer_kind(layer));
    for (const auto& depth : model.value().mtp_depths) {
      for (const Layer& layer : depth) mtp_kinds.push_back(layer_kind(layer));
    }
    EXPECT_EQ(kinds, c.kinds);
    EXPECT_EQ(mtp_kinds, c.mtp_kinds);
  }
}

// Which decoder layers run their own indexer, against Megatron-LM's rule
// divided out per layer number n: max(n - max(offset, 1), 0) mod frequency
// is 0. Each MTP depth numbers its layer 1, which runs it.
TEST(MegatronArgsTest, IndexSharingMarksTheLayersThatRunTheirIndexer) {
  struct Case {
    std::int64_t layers, frequency, offset;
  };
  const std::vector<Case> cases = {{4, 1, 0}, {8, 2, 0},  {8, 2, 1},  {8, 4, 3},  {9, 3, 5},
                                   {5, 7, 0}, {6, 2, 20}, {78, 4, 3}, {12, 5, 2}, {1, 3, 0}};
  for (const Case& c : cases) {
    // A list of MoE layers alongside, so that the indexer's marks share each layer's key with another kind.
    std::string moe_layers;
    for (std::int64_t i = 0; i < c.layers; ++i) moe_layers += std::string(i ? ", " : "") + (i % 3 == 0 ? "0" : "1");
    const std::string patch = kDsa + ", \"num_layers\": " + std::to_string(c.layers) +
                              ", \"dsa_indexer_topk_freq\": " + std::to_string(c.frequency) +
                              ", \"dsa_indexer_skip_topk_offset\": " + std::to_string(c.offset) +
                              ", \"num_experts\": 8, \"moe_router_topk\": 2, \"mtp_num_layers\": 1" +
                              ", \"moe_layer_freq\": [" + moe_layers + "]";
    SCOPED_TRACE(patch);
    const Result<Model> model = model_from(patch);
    ASSERT_TRUE(model.ok()) << model.error().message();
    std::string expected, counted;
    for (std::int64_t n = 1; n <= c.layers; ++n) {
      expected += std::max<std::int64_t>(n - std::max<std::int64_t>(c.offset, 1), 0) % c.frequency == 0 ? 'F' : 'S';
      const Layer& layer = model.value().layers[static_cast<std::size_t>(n - 1)];
      counted += std::get<DsaAttention>(*layer.mixer).runs_indexer ? 'F' : 'S';
      EXPECT_EQ(std::holds_alternative<Moe>(*layer.channel_mixer), (n - 1) % 3 != 0) << "layer " << n;
    }
    EXPECT_EQ(counted, expected);
    EXPECT_TRUE(std::get<DsaAttention>(*model.value().mtp_depths[0][0].mixer).runs_indexer);
  }
}

TEST(MegatronArgsTest, EqualityComparesScalarsStringsAndLists) {
  MegatronArgs base;
  base.hidden_size = 256;
  base.moe_layer_freq = std::vector<std::int64_t>{0, 1, 1};
  base.spec = std::vector<std::string>{"stack"};
  base.experimental_attention_variant = "dsa";
  const std::vector<std::pair<std::string, void (*)(MegatronArgs&)>> changes = {
      {"a scalar", [](MegatronArgs& a) { a.hidden_size = 512; }},
      {"a scalar set", [](MegatronArgs& a) { a.seq_length = 4096; }},
      {"a string", [](MegatronArgs& a) { a.experimental_attention_variant = "gdn"; }},
      {"a frequency's entry", [](MegatronArgs& a) { std::get<1>(*a.moe_layer_freq)[0] = 1; }},
      {"a frequency's form", [](MegatronArgs& a) { a.moe_layer_freq = std::int64_t{1}; }},
      {"a list unset", [](MegatronArgs& a) { a.spec.reset(); }},
  };
  EXPECT_TRUE(base == MegatronArgs(base));
  for (const auto& [name, change] : changes) {
    SCOPED_TRACE(name);
    MegatronArgs changed = base;
    change(changed);
    EXPECT_FALSE(changed == base);
    EXPECT_FALSE(base == changed);
  }
}

TEST(MegatronArgsTest, UnknownKeysAreIgnoredAndListed) {
  const Result<ParsedMegatronArgs> parsed =
      parse_megatron_args_json(R"({"hidden_size": 8, "lr": 0.0003, "micro_batch_size": null})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value().ignored, (std::vector<std::string>{"lr", "micro_batch_size"}));
  EXPECT_EQ(parsed.value().args.hidden_size, 8);
}

TEST(MegatronArgsTest, HybridDefaultsAndDerivedSizes) {
  // Mamba heads default to 2h / head_dim; gated delta nets take Megatron's
  // hybrid defaults 128/128/16/32/4; the gated-delta-product spec turns M into GDP.
  const Result<Model> model = model_from(
      R"("hybrid_layer_pattern": "MG*-", "mamba_state_dim": 16, "mamba_head_dim": 64, "mamba_num_groups": 2,
         "gdp_num_householder": 2)");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const auto& mamba = std::get<Mamba2>(*model.value().layers[0].mixer);
  EXPECT_EQ(mamba.inner_dim, 512);
  EXPECT_EQ(mamba.num_heads, 8);
  const auto& gdn = std::get<GatedDeltaNet>(*model.value().layers[1].mixer);
  EXPECT_EQ(std::vector<std::int64_t>(
                {gdn.key_head_dim, gdn.value_head_dim, gdn.num_key_heads, gdn.num_value_heads, gdn.conv_kernel_dim}),
            std::vector<std::int64_t>({128, 128, 16, 32, 4}));
  const Result<Model> gdp = model_from(
      R"("hybrid_layer_pattern": "MG*-", "mamba_state_dim": 16, "mamba_head_dim": 64, "mamba_num_groups": 2,
         "mamba_num_heads": 4, "gdp_num_householder": 2,
         "spec": ["megatron.core.models.hybrid.hybrid_layer_specs", "gdp_stack_spec"])");
  ASSERT_TRUE(gdp.ok()) << gdp.error().message();
  const auto& product = std::get<GatedDeltaProduct>(*gdp.value().layers[0].mixer);
  EXPECT_EQ(product.inner_dim, 4 * 64);
  EXPECT_EQ(product.num_householder, 2);
  EXPECT_EQ(gdp.value().megatron_path, MegatronPath::kHybrid);
}

// The pattern decides the layer count on both branches, as Megatron-LM's
// argument validation replaces num_layers by it.
TEST(MegatronArgsTest, HybridPatternOverridesNumLayers) {
  for (MegatronBranch branch : {MegatronBranch::kMain, MegatronBranch::kDev}) {
    SCOPED_TRACE(std::string(megatron_branch_name(branch)));
    const Result<Model> model = model_from(R"("hybrid_layer_pattern": "**--*")", branch);
    ASSERT_TRUE(model.ok()) << model.error().message();
    EXPECT_EQ(model.value().layers.size(), 5u);
  }
}

// The dev branch's hybrid function: attention by the arguments, not the symbol.
TEST(MegatronArgsTest, DevBranchHybridLayers) {
  const std::string mla = R"("group_query_attention": false, "multi_latent_attention": true, "kv_lora_rank": 32,
    "qk_head_dim": 16, "qk_pos_emb_head_dim": 8, "v_head_dim": 16)";
  const std::string dsv4_sizes = mla + R"(, "q_lora_rank": 64, "o_groups": 2, "o_lora_rank": 16,
    "csa_window_size": 32, "dsa_indexer_n_heads": 4, "dsa_indexer_head_dim": 16, "dsa_indexer_topk": 8)";
  const std::string dsv4 = dsv4_sizes + R"(, "experimental_attention_variant": "dsv4_hybrid")";
  const std::string mamba = R"("mamba_state_dim": 16, "mamba_head_dim": 64, "mamba_num_groups": 2)";
  struct Case {
    std::string patch;
    std::vector<std::string> main_kinds, dev_kinds;
  };
  const std::vector<Case> cases = {
      {R"("hybrid_layer_pattern": "*-")", {"gqa", "mlp"}, {"gqa", "mlp"}},
      // Every attention symbol is MLA with multi_latent_attention, else grouped-query attention.
      {dsv4_sizes + R"(, "hybrid_layer_pattern": "C-H-")", {"csa", "mlp", "hca", "mlp"}, {"mla", "mlp", "mla", "mlp"}},
      {mla + R"(, "hybrid_layer_pattern": "*-")", {"gqa", "mlp"}, {"mla", "mlp"}},
      {R"("hybrid_layer_pattern": "D-", "dsa_indexer_n_heads": 4, "dsa_indexer_head_dim": 16,
          "dsa_indexer_topk": 8, )" + mla, {"dsa", "mlp"}, {"mla", "mlp"}},
      {dsv4 + R"(, "hybrid_layer_pattern": "W-C-H-")",
       {"window", "mlp", "csa", "mlp", "hca", "mlp"}, {"window", "mlp", "csa", "mlp", "hca", "mlp"}},
      // No gated delta products and no GDN2 at dev.
      {mamba + R"(, "hybrid_layer_pattern": "MG", "mamba_num_heads": 4, "gdp_num_householder": 2,
         "experimental_attention_variant": "gdn2", "spec": ["hybrid_layer_specs", "gdp_stack_spec"])",
       {"gdp", "gdn2"}, {"mamba2", "gdn"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.patch);
    for (MegatronBranch branch : {MegatronBranch::kMain, MegatronBranch::kDev}) {
      const Result<Model> model = model_from(c.patch, branch);
      ASSERT_TRUE(model.ok()) << megatron_branch_name(branch) << ": " << model.error().message();
      std::vector<std::string> kinds;
      for (const Layer& layer : model.value().layers) kinds.push_back(layer_kind(layer));
      EXPECT_EQ(kinds, branch == MegatronBranch::kMain ? c.main_kinds : c.dev_kinds) << megatron_branch_name(branch);
      EXPECT_EQ(model.value().megatron_path, branch == MegatronBranch::kMain ? MegatronPath::kHybrid
                                                                              : MegatronPath::kHybridWithMtpProjection);
    }
  }
}

TEST(MegatronArgsTest, DevBranchHybridRefusals) {
  const std::string mla = R"("group_query_attention": false, "multi_latent_attention": true, "kv_lora_rank": 32,
    "qk_head_dim": 16, "qk_pos_emb_head_dim": 8, "v_head_dim": 16)";
  struct Case {
    std::string patch;
    std::string message;
    // kFailedAssertion where Megatron-LM's function asserts (a drop-in raises an AssertionError there).
    ErrorCode code = ErrorCode::kInvalidInput;
  };
  const std::vector<Case> cases = {
      {mla + R"(, "hybrid_layer_pattern": "+-")",
       "hybrid_layer_pattern = \"+-\": '+' is no layer symbol on Megatron-LM's dev branch; its MLA layers are '*' "
       "with multi_latent_attention (or give megatron_branch main)"},
      {mla + R"(, "hybrid_layer_pattern": "*-W-")",
       "hybrid_layer_pattern = \"*-W-\": '*' (MHA/GQA) cannot be mixed with MLA-based attention (W, C or H) in one "
       "model"},
      {mla + R"(, "hybrid_layer_pattern": "D-", "experimental_attention_variant": "dsa")",
       "experimental_attention_variant = \"dsa\": Megatron-LM's dev branch counts DSA on the standard path only, "
       "not on the hybrid-model path (hybrid_layer_pattern); describe the model without a pattern",
       ErrorCode::kFailedAssertion},
      {mla + R"(, "hybrid_layer_pattern": "D-W-", "experimental_attention_variant": "dsv4_hybrid")",
       "hybrid_layer_pattern = \"D-W-\": with experimental_attention_variant = \"dsv4_hybrid\" every attention "
       "layer must be W, C or H on Megatron-LM's dev branch, not 'D'", ErrorCode::kFailedAssertion},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.patch);
    const Result<Model> model = model_from(c.patch, MegatronBranch::kDev);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().message(), c.message);
    EXPECT_EQ(model.error().code(), c.code);
  }
}

TEST(MegatronArgsTest, BranchNames) {
  EXPECT_EQ(parse_megatron_branch("main").value(), MegatronBranch::kMain);
  EXPECT_EQ(parse_megatron_branch("dev").value(), MegatronBranch::kDev);
  EXPECT_EQ(parse_megatron_branch("mian").error().message(),
            "megatron_branch = \"mian\": must be main or dev; did you mean main?");
  EXPECT_EQ(parse_megatron_branch("develop").error().message(), "megatron_branch = \"develop\": must be main or dev");
}

}  // namespace
}  // namespace trainflops
