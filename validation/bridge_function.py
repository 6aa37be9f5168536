"""Megatron-Bridge's num_floating_point_operations, run from its source
without Megatron-Core installed: the imports of flop_utils.py that the
function does not reach on a non-GDN, non-LoRA model are stand-ins that fail
when called; the hybrid pattern's parser and the vocabulary padding are
Megatron-LM's own (megatron/core/models/hybrid/hybrid_layer_allocation.py,
megatron/training/vocab_utils.py). What validation/framework_functions.py
uses when Megatron-Bridge's imports of Megatron-Core cannot be resolved from
the source alone.

    /usr/bin/python3 -m validation.bridge_function BRIDGE_CHECKOUT MEGATRON_LM_CHECKOUT
"""

import importlib.util
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
import megatron_baseline  # noqa: E402


def _unreached(name):
    def call(*args, **kwargs):
        raise RuntimeError(f"{name}: not a stand-in for this model")
    return call


def _module(name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load(bridge, megatron_lm):
    """Megatron-Bridge's num_floating_point_operations from the checkouts."""
    for package in ("megatron", "megatron.core", "megatron.core.models", "megatron.core.models.gpt",
                    "megatron.core.models.hybrid", "megatron.training", "megatron.bridge", "megatron.bridge.data",
                    "megatron.bridge.data.packing", "megatron.bridge.peft", "megatron.bridge.training",
                    "megatron.bridge.training.utils", "megatron.bridge.utils"):
        _module(package, __path__=[])
    # Which variants are gated delta nets: Megatron-LM's own answer, read by
    # name from its source (the module's imports are not resolvable here).
    is_gdn, _, _ = megatron_baseline.load_function(
        [megatron_lm], "megatron/core/models/gpt/experimental_attention_variant_module_specs.py",
        "is_gated_delta_net_variant")
    _module("megatron.core.models.gpt.experimental_attention_variant_module_specs",
            is_gated_delta_net_variant=is_gdn)
    _module("megatron.core.utils", get_attr_wrapped_model=_unreached("get_attr_wrapped_model"),
            log_on_each_pipeline_stage=_unreached("log_on_each_pipeline_stage"),
            log_single_rank=_unreached("log_single_rank"))
    # A hybrid pattern's layer counts: Megatron-LM's own parser (its module
    # needs torch and the two logging helpers above, which counting never calls).
    _load("megatron.core.models.hybrid.hybrid_layer_allocation",
          os.path.join(megatron_lm, "megatron/core/models/hybrid/hybrid_layer_allocation.py"))
    _module("megatron.bridge.data.packing.algorithms", calculate_avg_seqlen=_unreached("calculate_avg_seqlen"))
    _module("megatron.bridge.peft.lora", LoRA=type("LoRA", (), {}))
    _module("megatron.bridge.training.config", ConfigContainer=object)
    _module("megatron.training.utils", print_rank_0=print)
    vocab = _load("megatron.training.vocab_utils", os.path.join(megatron_lm, "megatron/training/vocab_utils.py"))
    _module("megatron.bridge.utils.vocab_utils", calculate_padded_vocab_size=vocab.calculate_padded_vocab_size)
    flop_utils = _load("megatron.bridge.training.utils.flop_utils",
                       os.path.join(bridge, "src/megatron/bridge/training/utils/flop_utils.py"))
    return flop_utils.num_floating_point_operations
