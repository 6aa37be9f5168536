"""The frameworks' own counts of hyper-connections and hashed n-gram memory,
run from their source, for tests/data/hyper_connections/.

MaxText counts them in `calculate_mhc_flops_per_layer` and
`calculate_engram_tflops` (src/maxtext/utils/maxtext_utils.py); NeMo
Automodel inside `deepseek_v41_flops` and `qwen3_8_flash_next_flops`
(nemo_automodel/components/utils/flops_utils.py), whose terms are isolated
here as the difference of two calls that differ in those fields alone. Each
function is read from the file by name with the helpers it calls (nothing
else of the framework is imported) and called on small configs:

    /usr/bin/python3 -m validation.residual_machinery_functions \\
        MAXTEXT_UTILS_PY AUTOMODEL_FLOPS_UTILS_PY OUT_DIR

writes OUT_DIR/maxtext.json and OUT_DIR/automodel.json, which
src/accounting/hyper_connection_frameworks_test.cc reproduces.
"""

import ast
import json
import os
import sys


def load(path, names):
    """The functions `names` of the Python file `path`, and every top-level
    function whose name starts with an underscore (their helpers)."""
    tree = ast.parse(open(path).read())
    scope = {"Any": object}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (node.name in names or node.name.startswith("_")):
            exec(compile(ast.Module([node], []), path, "exec"), scope)
    return scope


class Config:
    def __init__(self, **values):
        self.__dict__.update(values)


def maxtext_cases(utils):
    f = load(utils, {"calculate_mhc_flops_per_layer", "calculate_engram_tflops"})
    cases = []
    for emb, rate, batch, length in [(4096, 4, 1, 4096), (8, 2, 1, 16), (12, 4, 2, 32), (7168, 4, 1, 8192)]:
        c = dict(per_device_batch_size=batch, max_target_length=length, mhc_expansion_rate=rate, emb_dim=emb)
        cases.append({"function": "calculate_mhc_flops_per_layer", "config": c,
                      "flops": f["calculate_mhc_flops_per_layer"](Config(**c))})
    for emb, rate, kernel, ngram, heads, head_dim, layers, batch, length in [
            (4096, 4, 4, 3, 8, 64, [1, 14], 1, 4096), (12, 2, 3, 4, 2, 5, [0], 1, 16), (8, 1, 4, 2, 1, 6, [0, 1, 2], 2, 8)]:
        c = dict(per_device_batch_size=batch, max_target_length=length, mhc_expansion_rate=rate, emb_dim=emb,
                 engram_kernel_size=kernel, engram_max_ngram_size=ngram, engram_num_heads=heads,
                 engram_head_dim=head_dim, engram_layers=layers)
        learnable, attention = f["calculate_engram_tflops"](Config(**c))
        cases.append({"function": "calculate_engram_tflops", "config": c, "learnable_tflops": learnable,
                      "attention_tflops": attention})
    return cases


def automodel_cases(flops_utils):
    f = load(flops_utils, {"deepseek_v41_flops", "qwen3_8_flash_next_flops"})
    v41, q38 = f["deepseek_v41_flops"], f["qwen3_8_flash_next_flops"]

    def v41_config(**over):
        c = dict(num_hidden_layers=3, hidden_size=16, vocab_size=40, num_attention_heads=2, head_dim=8,
                 q_lora_rank=6, o_lora_rank=4, o_groups=2, sliding_window=4, compress_ratios=[0, 4, 4],
                 kv_source_layer_ids=[1], index_source_layer_ids=[1, 2], index_n_heads=2, index_head_dim=4,
                 index_topk=2, hc_mult=4, moe_intermediate_size=8, n_routed_experts=4, num_experts_per_tok=2,
                 n_shared_experts=1, engram_layer_ids=[], engram_max_ngram_size=3, engram_n_heads=2,
                 engram_head_dim=5)
        c.update(over)
        return Config(**c)

    def q38_config(**over):
        c = dict(num_hidden_layers=4, hidden_size=16, vocab_size=40, num_attention_heads=2, num_key_value_heads=1,
                 head_dim=8, hc_count=3, hc_lowrank=5, moe_intermediate_size=8, shared_expert_intermediate_size=8,
                 num_experts=4, num_experts_per_tok=2, indexer_compress_ratio=4, indexer_budget=8,
                 indexer_n_heads=2, indexer_kv_heads=1, indexer_head_dim=4, ple_embed_dim=0,
                 ple_conv_kernel_size=4, ple_layer_ids=[],
                 layers_block_type=["linear_attention", "linear_attention", "linear_attention", "attention"],
                 linear_key_head_dim=4, linear_value_head_dim=4, linear_num_key_heads=2, linear_num_value_heads=2,
                 linear_conv_kernel_dim=4)
        c.update(over)
        return Config(**c)

    cases = []
    for gbs, length in [(1, 32), (2, 64)]:
        for n in [4, 2]:
            with_hc = v41_config(hc_mult=n)
            cases.append({"function": "deepseek_v41_flops", "part": "hyper_connections", "gbs": gbs,
                          "seq_len": length, "layers": 3, "hidden_size": 16, "hc_mult": n,
                          "flops": v41(with_hc, gbs, length) - v41(v41_config(hc_mult=0), gbs, length)})
            engram = v41_config(hc_mult=n, engram_layer_ids=[0, 2, 7])
            cases.append({"function": "deepseek_v41_flops", "part": "ngram_memory", "gbs": gbs, "seq_len": length,
                          "hidden_size": 16, "hc_mult": n, "engram_layer_ids": [0, 2, 7], "layers": 3,
                          "engram_max_ngram_size": 3, "engram_n_heads": 2, "engram_head_dim": 5,
                          "flops": v41(engram, gbs, length) - v41(with_hc, gbs, length)})
        for n, rank in [(3, 5), (4, 2)]:
            with_hc = q38_config(hc_count=n, hc_lowrank=rank)
            cases.append({"function": "qwen3_8_flash_next_flops", "part": "hyper_connections", "gbs": gbs,
                          "seq_len": length, "layers": 4, "hidden_size": 16, "hc_count": n, "hc_lowrank": rank,
                          "flops": q38(with_hc, gbs, length) - q38(q38_config(hc_count=0, hc_lowrank=rank), gbs,
                                                                     length)})
            ple = q38_config(hc_count=n, hc_lowrank=rank, ple_embed_dim=12, ple_layer_ids=[0, 3])
            cases.append({"function": "qwen3_8_flash_next_flops", "part": "ngram_memory", "gbs": gbs,
                          "seq_len": length, "hidden_size": 16, "hc_count": n, "ple_embed_dim": 12,
                          "ple_conv_kernel_size": 4, "ple_layer_ids": [0, 3],
                          "flops": q38(ple, gbs, length) - q38(with_hc, gbs, length)})
    return cases


def main(argv):
    maxtext_utils, automodel_flops_utils, out = argv
    with open(os.path.join(out, "maxtext.json"), "w") as f:
        json.dump(maxtext_cases(maxtext_utils), f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "automodel.json"), "w") as f:
        json.dump(automodel_cases(automodel_flops_utils), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
