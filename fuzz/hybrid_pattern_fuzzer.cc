// Hybrid layer patterns, alone and as the layers of a hybrid model.
#include "fuzz_helpers.h"
#include "trainflops/hybrid_pattern.h"
#include "trainflops/megatron_args.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trainflops;
  const std::string pattern(fuzz::text_of(data, size));
  const Result<HybridPattern> parsed = parse_hybrid_pattern(pattern);
  if (!parsed.ok()) return 0;
  std::size_t layers = parsed.value().main.size();
  for (const auto& depth : parsed.value().mtp_depths) layers += depth.size();
  if (layers > 2000) return 0;
  MegatronArgs args;
  args.hybrid_layer_pattern = pattern;
  args.num_layers = static_cast<std::int64_t>(parsed.value().main.size());
  args.mtp_num_layers = static_cast<std::int64_t>(parsed.value().mtp_depths.size());
  args.hidden_size = 256;
  args.num_attention_heads = 4;
  args.padded_vocab_size = 1024;
  args.ffn_hidden_size = 512;
  args.multi_latent_attention = true;
  args.q_lora_rank = 64;
  args.kv_lora_rank = 32;
  args.qk_head_dim = 32;
  args.qk_pos_emb_head_dim = 16;
  args.v_head_dim = 32;
  args.num_experts = 8;
  args.moe_router_topk = 2;
  args.moe_ffn_hidden_size = 128;
  args.mamba_state_dim = 16;
  args.mamba_head_dim = 16;
  args.mamba_num_groups = 2;
  args.linear_key_head_dim = 32;
  args.linear_value_head_dim = 32;
  args.linear_num_key_heads = 2;
  args.linear_num_value_heads = 4;
  args.linear_conv_kernel_dim = 4;
  args.dsa_indexer_n_heads = 4;
  args.dsa_indexer_head_dim = 16;
  args.dsa_indexer_topk = 64;
  args.dsa_indexer_topk_freq = 2;
  args.dsa_indexer_skip_topk_offset = 1;
  const Result<Model> model = model_from_megatron_args(args);
  if (model.ok()) fuzz::count_every_way(model.value());
  return 0;
}
