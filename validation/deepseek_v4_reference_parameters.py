"""The parameters of DeepSeek-V4's modules as a reference implementation
builds them, for tests/data/parameters/deepseek_v4_reference_modules.json.

NeMo Automodel's DeepSeek-V4 port (nemo_automodel/components/models/
deepseek_v4/layers.py and model.py, which map one to one onto the released
checkpoint's tensors) is imported from a snapshot with its framework imports
replaced by stand-ins (an RMSNorm of one weight, no kernels, no
distribution), and each module is built on a small config; the count is
`sum(p.numel() for p in module.parameters())`, buffers (the hash gate's
token-to-expert table) left out:

    /usr/bin/python3 -m validation.deepseek_v4_reference_parameters \\
        AUTOMODEL_LAYERS_PY AUTOMODEL_MODEL_PY OUT_JSON SOURCE

(SOURCE: the snapshot's repository and commit, written into the file.)

src/inputs/hf_parameter_layout_test.cc rebuilds each count from `--hf` on
the same config.
"""

import __future__
import ast
import importlib.util
import json
import sys
import types

import torch
import torch.nn as nn

# The small config: every width distinct, a CSA, an HCA and a window layer.
CONFIG = dict(hidden_size=48, q_lora_rank=20, num_attention_heads=6, head_dim=16, qk_rope_head_dim=4, o_groups=2,
              o_lora_rank=10, sliding_window=8, index_n_heads=3, index_head_dim=8, index_topk=4,
              compress_ratios=[0, 4, 128], hc_mult=3, hc_sinkhorn_iters=2, hc_eps=1e-6, rms_norm_eps=1e-6,
              n_routed_experts=5, num_experts_per_tok=2, vocab_size=40)


class _RmsNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))


def _stub(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def _import_layers(path):
    class Backend:
        attn = "sdpa"

    for name in ["nemo_automodel", "nemo_automodel.components", "nemo_automodel.components.models",
                 "nemo_automodel.components.models.deepseek_v4", "nemo_automodel.shared"]:
        _stub(name)
    _stub("torch.distributed.tensor", DTensor=type("DTensor", (), {}))
    _stub("nemo_automodel.components.models.common", BackendConfig=Backend,
          initialize_rms_norm_module=lambda kind, dim, eps=0.0, dtype=None: _RmsNorm(dim))
    _stub("nemo_automodel.components.models.deepseek_v4.config", DeepseekV4Config=object)
    _stub("nemo_automodel.components.models.deepseek_v4.cp",
          **{name: None for name in ["dsv4_cp_all_gather", "dsv4_cp_all_gather_metadata", "dsv4_cp_enabled",
                                     "dsv4_cp_rank", "dsv4_cp_size"]})
    _stub("nemo_automodel.components.models.deepseek_v4.optimized_kernels",
          **{name: None for name in ["build_dsv4_sparse_topk_indices", "dsv4_indexer_scores",
                                     "dsv4_sinkhorn_normalize", "dsv4_sparse_attention"]})
    _stub("nemo_automodel.shared.utils", dtype_from_str=lambda name, default=None: torch.float32)
    spec = importlib.util.spec_from_file_location("automodel_deepseek_v4_layers", path)
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    return layers


def _load_class(path, name):
    """The class `name` of the Python file `path`, alone."""
    tree = ast.parse(open(path).read())
    scope = {"torch": torch, "nn": nn, "Any": object}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            # The file postpones its annotations (from __future__ import annotations).
            code = compile(ast.Module([node], []), path, "exec", flags=__future__.annotations.compiler_flag)
            exec(code, scope)
            return scope[name]
    raise KeyError(name)


def _parameters(module):
    return sum(p.numel() for p in module.parameters())


def main(layers_py, model_py, out, source):
    layers = _import_layers(layers_py)
    config = types.SimpleNamespace(attention_dropout=0.0, torch_dtype="float32", **CONFIG)
    modules = {}
    for index, ratio in enumerate(CONFIG["compress_ratios"]):
        attention = layers.DeepseekV4Attention(config, index)
        modules[f"attention_ratio_{ratio}"] = {
            "parameters": _parameters(attention),
            "tensors": {name: list(p.shape) for name, p in attention.named_parameters()}}
    hc = layers.DeepseekV4HyperConnection(CONFIG["hc_mult"], CONFIG["hidden_size"], CONFIG["hc_sinkhorn_iters"],
                                          CONFIG["hc_eps"], CONFIG["rms_norm_eps"])
    head = layers.DeepseekV4HyperHead(CONFIG["hc_mult"], CONFIG["hidden_size"], CONFIG["hc_eps"],
                                      CONFIG["rms_norm_eps"])
    moe = types.SimpleNamespace(n_activated_experts=CONFIG["num_experts_per_tok"],
                                n_routed_experts=CONFIG["n_routed_experts"], score_func="sqrtsoftplus",
                                route_scale=1.0, norm_topk_prob=True)
    hash_gate = _load_class(model_py, "DeepseekV4HashGate")(config, moe)
    for name, module in [("hyper_connection", hc), ("hyper_head", head), ("hash_gate", hash_gate)]:
        modules[name] = {"parameters": _parameters(module),
                         "tensors": {n: list(p.shape) for n, p in module.named_parameters()}}
    modules["hash_gate"]["buffers"] = {n: list(b.shape) for n, b in hash_gate.named_buffers()}
    with open(out, "w") as f:
        json.dump({"source": source, "config": CONFIG, "modules": modules}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
