"""Megatron-Bridge's num_floating_point_operations on models with its Kimi K3
fields (kimi_kda_layers, kimi_linear_num_heads, kimi_linear_head_dim,
kimi_linear_conv_kernel_size), run from its source: the records
tests/data/megatron_bridge_kimi.json holds, which trainflops' megatron mode
reproduces from the same fields given as Megatron-LM arguments.

    /usr/bin/python3 -m validation.bridge_kimi_records BRIDGE_CHECKOUT MEGATRON_LM_CHECKOUT \
        "Megatron-Bridge <commit>" > tests/data/megatron_bridge_kimi.json
"""

import json
import sys

from validation import framework_functions

# A small Kimi K3 shape: MLA with a q LoRA, latent experts, an MTP depth.
SMALL_K3 = {
    "num_layers": 8, "hidden_size": 256, "ffn_hidden_size": 512, "num_attention_heads": 4,
    "multi_latent_attention": True, "q_lora_rank": 64, "kv_lora_rank": 32, "qk_head_dim": 32,
    "qk_pos_emb_head_dim": 16, "v_head_dim": 32, "swiglu": True, "padded_vocab_size": 1000,
    "num_experts": 8, "moe_layer_freq": [0] + [1] * 7, "moe_router_topk": 2, "moe_ffn_hidden_size": 64,
    "moe_shared_expert_intermediate_size": 128, "moe_latent_size": 96, "mtp_num_layers": 1,
    "kimi_kda_layers": [1, 2, 3, 5, 6, 7], "kimi_linear_num_heads": 4, "kimi_linear_head_dim": 32,
    "kimi_linear_conv_kernel_size": 4}

CASES = (
    ("Kimi Linear 48B-A3B's sizes", framework_functions.KIMI_LINEAR, (1500, 4096, 131072)),
    ("a small Kimi K3, its last layer MLA, one MTP depth", SMALL_K3, (512, 4096)),
    ("the last layer KDA: the two MTP depths copy it; a number given twice",
     {**SMALL_K3, "mtp_num_layers": 2, "kimi_kda_layers": [1, 1, 2, 4, 5, 6, 8]}, (512, 4096)),
    ("grouped-query attention around the KDA layers, no MTP",
     {"num_layers": 4, "hidden_size": 128, "ffn_hidden_size": 256, "num_attention_heads": 4,
      "group_query_attention": True, "num_query_groups": 2, "kv_channels": 32, "swiglu": True,
      "padded_vocab_size": 500, "kimi_kda_layers": [2, 4], "kimi_linear_num_heads": 2, "kimi_linear_head_dim": 64,
      "kimi_linear_conv_kernel_size": 3}, (300,)),
    ("an empty list: no KDA layer", {**SMALL_K3, "kimi_kda_layers": []}, (512,)),
)


def main():
    bridge, megatron_lm, function_name = sys.argv[1:4]
    run = framework_functions.megatron_bridge(bridge, megatron_lm)
    records = []
    for name, args, lengths in CASES:
        for length in lengths:
            records.append({"name": name, "args": args, "seq_length": length, "flops": run(args, length)})
    out_of_range = {**SMALL_K3, "kimi_kda_layers": [0, 3, 9, 9]}
    try:
        run(out_of_range, 512)
        raise SystemExit("Megatron-Bridge accepted kimi_kda_layers outside the layers")
    except ValueError as error:
        raised = str(error)
    json.dump({"source": "NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/utils/flop_utils.py "
                         "num_floating_point_operations",
               "function": function_name,
               "generated_by": "validation/bridge_kimi_records.py",
               "batch_size": 1,
               "records": records,
               "raises": {"args": out_of_range, "seq_length": 512, "message": raised}},
              sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
