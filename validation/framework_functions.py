"""`trainflops compare` against the frameworks' own FLOPs functions, run from
their source.

Each framework's function is read from a checkout named by an environment
variable (bench/megatron_baseline.py reads the function and the helpers it
calls, without the rest of the framework) and called on every preset, the
release configs of tests/data/hf and a few variants at
several sequence lengths; its number must equal compare's row for that
framework (relative 1e-12: the frameworks count in floating point). A
framework whose variable is unset is reported as not checked. torchtitan is
not run: its rule counts the parameters of a built PyTorch module.

    MEGATRON_LM=... MEGATRON_LM_DEV=... MEGATRON_BRIDGE=... MAXTEXT=... NEMO_RL=... NEMO_AUTOMODEL=... \\
        /usr/bin/python3 -m validation.framework_functions [build/trainflops] [--write FILE]
        [--write-automodel FILE]

MEGATRON_LM_DEV, a checkout of Megatron-LM's dev branch with its DSA fix
(pull request 6753), is run where it differs from main: the DSA models, the
DeepSeek-V4 configs and the hybrid (Mamba-2) models (its function is the one
compare's Megatron-LM DSA fix row stands for; main has no DSA fix and no
DeepSeek-V4 attention, and its hybrid function leaves out the MTP projection
the dev branch's counts).

--write records the frameworks' numbers (tests/data/compare/
framework_functions.jsonl holds one such run, which compare's tests read).
NeMo Automodel's formulas take a Hugging Face config: they run on each
preset's release config (automodel_config for a preset given as arguments,
the config itself for one that holds it), and --write-automodel records
them (tests/data/compare/nemo_automodel.jsonl), with the number for the
recipe aligned where its formula leaves out part of the release's model.

MEGATRON_BRIDGE also needs MEGATRON_LM (Bridge imports Megatron-Core).
"""

import argparse
import enum
import glob
import json
import os
import subprocess
import sys
import types

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import megatron_baseline  # noqa: E402

from validation import bridge_function  # noqa: E402

LENGTHS = (1500, 4096, 131072)
# The attention variants Megatron-LM's dev branch counts otherwise than main.
DEV_VARIANTS = ("dsa", "dsv4_hybrid")
# DeepSeek-V4 also at a length 4 does not divide (MaxText's CSA mask ratio
# then differs from Megatron-LM's band).
DSV4_LENGTHS = LENGTHS + (1001,)
TOLERANCE = 1e-12


def agree(theirs, ours):
    """Within relative TOLERANCE (the frameworks count in floating point), or
    within one FLOP: compare's counts are whole, a framework's need not be."""
    return abs(theirs - ours) <= max(TOLERANCE * ours, 1.0)


class Settings:
    """A framework's config object: attributes as given; a missing one is an
    AttributeError, so that getattr(config, name, default) takes the default."""

    def __init__(self, **values):
        self.__dict__.update(values)


def moe_pattern(args):
    """Megatron-LM's moe_layer_freq as a list of 0/1 per decoder layer."""
    freq = args.get("moe_layer_freq", 1)
    if isinstance(freq, list):
        return freq
    return [1 if i % freq == 0 else 0 for i in range(args["num_layers"])]


def with_argument_defaults(args):
    """`args` with what Megatron-LM's argument parsing and validation set where
    a preset leaves them unset and the hybrid function still reads them (the
    MLP width and top-k of layers a pattern may not have): ffn_hidden_size 4h
    (8h/3 rounded down to 64 with SwiGLU), moe_router_topk 2."""
    defaults = {"moe_router_topk": 2}
    if args.get("ffn_hidden_size") is None:
        h = args["hidden_size"]
        defaults["ffn_hidden_size"] = int((4 * h * 2 / 3) / 64) * 64 if args.get("swiglu") else 4 * h
    return {**defaults, **{k: v for k, v in args.items() if v is not None}}


def megatron_main(checkout):
    """Megatron-LM's num_floating_point_operations (main, or dev)."""
    function, read, _ = megatron_baseline.load(checkout)

    def run(args, length):
        # Megatron-LM has no per-layer window: its function never reads one.
        given = {k: v for k, v in with_argument_defaults(args).items()
                 if k not in ("window_size", "window_pattern", "maxtext")}
        namespace = Settings(**{**dict.fromkeys(read), **given, "seq_length": length})
        return function(namespace, 1)

    return run


# Megatron-Core TransformerConfig fields the Bridge function reads directly,
# None when the preset does not set them.
BRIDGE_FIELDS = ("num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_moe_experts",
                 "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size", "mtp_num_layers", "q_lora_rank",
                 "linear_attention_freq", "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
                 "linear_num_value_heads", "linear_conv_kernel_dim")
# Megatron-LM argument names that Megatron-Core spells otherwise.
BRIDGE_RENAMED = {"num_experts": "num_moe_experts", "swiglu": "gated_linear_unit"}


def megatron_bridge(checkout, megatron_lm):
    try:
        function, _, _ = megatron_baseline.load_function([os.path.join(checkout, "src"), megatron_lm],
                                                      "megatron/bridge/training/utils/flop_utils.py",
                                                      "num_floating_point_operations")
    except RuntimeError:  # Megatron-Core's imports not resolvable from its source alone
        function = bridge_function.load(checkout, megatron_lm)

    def run(args, length, batch_size=1):
        model = dict.fromkeys(BRIDGE_FIELDS)
        if args.get("hybrid_layer_pattern"):
            args = with_argument_defaults(args)  # as Megatron-Core's TransformerConfig sets them
        for name, value in args.items():
            if name in ("padded_vocab_size", "group_query_attention", "seq_length", "window_size", "window_pattern",
                        "maxtext"):
                continue
            model[BRIDGE_RENAMED.get(name, name)] = value
        if args.get("window_size"):
            # (left, right) keys besides the query's own; 1 in the list: a windowed layer.
            model.update(window_size=(args["window_size"] - 1, 0), window_attn_skip_freq=args["window_pattern"])
        if isinstance(args.get("linear_attention_freq"), list):
            # Megatron-LM's list may go on over the MTP layers; Bridge's covers the decoder.
            model["linear_attention_freq"] = args["linear_attention_freq"][:args["num_layers"]]
        model.update(vocab_size=args["padded_vocab_size"], make_vocab_size_divisible_by=1,
                     tensor_model_parallel_size=1, seq_length=length,
                     gated_linear_unit=args.get("swiglu", False),
                     multi_latent_attention=args.get("multi_latent_attention", False),
                     num_query_groups=args.get("num_query_groups") if args.get("group_query_attention") else None,
                     kv_channels=args.get("kv_channels") or args["hidden_size"] // args["num_attention_heads"])
        return function(Settings(model=Settings(**model), peft=None), batch_size)

    return run


def maxtext(checkout):
    # Its Gemma 4 small function imports two helpers of the gemma4_small model
    # file, whose other definitions need JAX: the helpers alone are loaded.
    namespace, small = megatron_baseline.load_functions(
        [os.path.join(checkout, "src")],
        [("maxtext/utils/maxtext_utils.py", ["calculate_tflops_training_per_device"]),
         ("maxtext/models/gemma4_small.py", ["build_layer_types", "first_kv_shared_layer_idx"])])
    namespace["gemma4_small"] = types.SimpleNamespace(build_layer_types=small["build_layer_types"],
                                                      first_kv_shared_layer_idx=small["first_kv_shared_layer_idx"])
    function = namespace["calculate_tflops_training_per_device"]
    blocks = namespace["DecoderBlockType"]  # the enum the function compares with

    def run(args, length):
        if "maxtext" in args:  # MaxText's own settings for the model
            settings = dict(args["maxtext"], decoder_block=getattr(blocks, args["maxtext"]["decoder_block"]))
            config = Settings(**settings, per_device_batch_size=1, max_target_length=length, gradient_accumulation_steps=1,
                              use_dpo=False, use_multimodal=False, engram_layers=[], mtp_num_layers=0)
            total_tflops, _, _ = function(config, log=False)
            return total_tflops * 1e12
        pattern = moe_pattern(args) if args.get("num_experts") else [0] * args["num_layers"]
        heads = args["num_attention_heads"]
        gdn = args.get("experimental_attention_variant") == "gated_delta_net"
        if args.get("window_size"):
            block = blocks.GPT_OSS  # windows on every other layer
        elif args.get("multi_latent_attention"):
            block = blocks.DEEPSEEK
        elif gdn:
            block = blocks.QWEN3_NEXT
        elif args.get("num_experts"):
            block = blocks.MIXTRAL
        else:
            block = blocks.LLAMA2
        linear = args.get("linear_attention_freq") or [1]
        config = Settings(
            decoder_block=block, per_device_batch_size=1, max_target_length=length, emb_dim=args["hidden_size"],
            num_decoder_layers=args["num_layers"], mlp_dim=args["ffn_hidden_size"],
            moe_mlp_dim=args.get("moe_ffn_hidden_size"), num_experts=args.get("num_experts") or 1,
            num_experts_per_tok=args.get("moe_router_topk"),
            shared_experts=1 if args.get("moe_shared_expert_intermediate_size") else 0,
            first_num_dense_layers=pattern.index(1) if 1 in pattern else len(pattern),
            mlp_activations=["silu", "linear"] if args.get("swiglu") else ["relu"],
            attention_type="mla" if args.get("multi_latent_attention") else "global", share_kv_projections=False,
            num_query_heads=heads,
            num_kv_heads=args.get("num_query_groups") if args.get("group_query_attention") else heads,
            head_dim=args.get("kv_channels") or args["hidden_size"] // heads, vocab_size=args["padded_vocab_size"],
            q_lora_rank=args.get("q_lora_rank") or 0, kv_lora_rank=args.get("kv_lora_rank"),
            qk_nope_head_dim=args.get("qk_head_dim"), qk_rope_head_dim=args.get("qk_pos_emb_head_dim"),
            v_head_dim=args.get("v_head_dim"), use_indexer=args.get("experimental_attention_variant") == "dsa",
            indexer_n_heads=args.get("dsa_indexer_n_heads"), indexer_head_dim=args.get("dsa_indexer_head_dim"),
            indexer_topk=args.get("dsa_indexer_topk"), mtp_num_layers=args.get("mtp_num_layers") or 0,
            gdn_num_key_heads=args.get("linear_num_key_heads"), gdn_num_value_heads=args.get("linear_num_value_heads"),
            gdn_key_head_dim=args.get("linear_key_head_dim"), gdn_value_head_dim=args.get("linear_value_head_dim"),
            gdn_conv_kernel_dim=args.get("linear_conv_kernel_dim"),
            inhomogeneous_layer_cycle_interval=linear.index(0) + 1 if 0 in linear else 1,
            sliding_window_size=args.get("window_size"), engram_layers=[], use_multimodal=False,
            gradient_accumulation_steps=1, use_dpo=False)
        total_tflops, _, _ = function(config, log=False)
        return total_tflops * 1e12

    return run


def nemo_rl(checkout):
    """Its formulas as its flops_tracker maps a Hugging Face config: Qwen3
    (and Llama, the same when n hd = h; MoE: intermediate_size, top-1) and
    DeepSeek-V3 (every layer MoE, a shared expert of moe_intermediate_size,
    no MTP)."""
    _, _, formulas = megatron_baseline.load_function([checkout], "nemo_rl/utils/flops_formulas.py", "qwen3",
                                                     also=("deepseekv3", "FLOPSConfig"))

    def run(args, length):
        common = dict(gbs=1, enc_seq_len=length, hs=args["hidden_size"], layers=args["num_layers"],
                      ffn_hs=args["ffn_hidden_size"], attention_heads=args["num_attention_heads"],
                      query_groups=args.get("num_query_groups"), vocab_size=args["padded_vocab_size"])
        if args.get("multi_latent_attention"):
            config = formulas["FLOPSConfig"](
                **common, moe_router_topk=args["moe_router_topk"], q_lora_rank=args.get("q_lora_rank"),
                kv_lora_rank=args["kv_lora_rank"], qk_head_dim=args["qk_head_dim"],
                qk_pos_emb_head_dim=args["qk_pos_emb_head_dim"], v_head_dim=args["v_head_dim"], moe_layer_freq=1,
                moe_shared_expert_intermediate_size=args["moe_ffn_hidden_size"],
                moe_ffn_hidden_size=args["moe_ffn_hidden_size"], mtp_num_layers=0, causal_self_attn=True)
            return formulas["deepseekv3"](config)
        # A Qwen3-MoE config's intermediate_size, which its releases set to
        # top-k x moe_intermediate_size.
        intermediate = args["moe_router_topk"] * args["moe_ffn_hidden_size"] if args.get("num_experts") else None
        config = formulas["FLOPSConfig"](**common, head_dim=args.get("kv_channels"),
                                         moe_ffn_hidden_size=intermediate or args["ffn_hidden_size"], moe_router_topk=1)
        return formulas["qwen3"](config)

    return run


# The Hugging Face config class NeMo Automodel's get_flops_formula_for_hf_config
# dispatches on, for each preset's release: the class its config.json names
# (Kimi-K2's auto_map names DeepSeek's DeepseekV3Config; DeepSeek-V3.2 loads
# as DeepseekV3Config with the index_* fields).
AUTOMODEL_CLASSES = {
    "deepseek-v3": "DeepseekV3Config", "deepseek-v3.2": "DeepseekV3Config", "kimi-k2": "DeepseekV3Config",
    "glm-5": "GlmMoeDsaConfig", "glm-5.2": "GlmMoeDsaConfig", "gpt-oss-120b": "GptOssConfig",
    "llama-3.1-8b": "LlamaConfig", "llama-3.1-70b": "LlamaConfig", "llama-3.1-405b": "LlamaConfig",
    "minimax-m2": "MiniMaxM2Config", "mixtral-8x7b": "MixtralConfig", "qwen3-235b-a22b": "Qwen3MoeConfig",
    "qwen3-next-80b-a3b": "Qwen3NextConfig", "nemotron-3-nano-30b-a3b": "NemotronHConfig",
    "nemotron-h-56b": "NemotronHConfig",
}


def automodel_config(name, args, recipe_aligned=False):
    """The preset's release config.json as NeMo Automodel reads it: an object
    of the class it dispatches on, with the config's field names. With
    `recipe_aligned`, DeepseekV3Config also gets mtp_num_layers (the field
    its DeepSeek-V3 formula reads; the release config names its MTP depths
    num_nextn_predict_layers, which that formula does not read)."""
    pattern = moe_pattern(args) if args.get("num_experts") else [0] * args["num_layers"]
    heads = args["num_attention_heads"]
    fields = dict(num_hidden_layers=args["num_layers"], hidden_size=args["hidden_size"],
                  num_attention_heads=heads, vocab_size=args["padded_vocab_size"],
                  intermediate_size=args.get("ffn_hidden_size"))
    if args.get("group_query_attention"):
        fields["num_key_value_heads"] = args["num_query_groups"]
    if args.get("kv_channels"):
        fields["head_dim"] = args["kv_channels"]
    if args.get("num_experts"):
        fields.update(num_experts_per_tok=args["moe_router_topk"], moe_intermediate_size=args["moe_ffn_hidden_size"],
                      num_experts=args["num_experts"], n_routed_experts=args["num_experts"],
                      n_shared_experts=1 if args.get("moe_shared_expert_intermediate_size") else 0,
                      first_k_dense_replace=pattern.index(1))
    if args.get("multi_latent_attention"):
        fields.update(q_lora_rank=args.get("q_lora_rank"), kv_lora_rank=args["kv_lora_rank"],
                      qk_nope_head_dim=args["qk_head_dim"], qk_rope_head_dim=args["qk_pos_emb_head_dim"],
                      v_head_dim=args["v_head_dim"], num_nextn_predict_layers=args.get("mtp_num_layers") or 0)
        fields.pop("num_key_value_heads", None)
        if recipe_aligned and args.get("mtp_num_layers"):
            fields["mtp_num_layers"] = args["mtp_num_layers"]
    if args.get("experimental_attention_variant") == "dsa":
        fields.update(index_topk=args["dsa_indexer_topk"], index_n_heads=args["dsa_indexer_n_heads"],
                      index_head_dim=args["dsa_indexer_head_dim"])
    klass = AUTOMODEL_CLASSES[name]
    if klass == "MixtralConfig":
        fields["intermediate_size"] = args["moe_ffn_hidden_size"]
    if klass == "MiniMaxM2Config":
        fields.update(intermediate_size=args["moe_ffn_hidden_size"], use_mtp=bool(args.get("mtp_num_layers")),
                      num_mtp_modules=args.get("mtp_num_layers") or 0, mtp_transformer_layers=1)
    if klass == "Qwen3NextConfig":
        linear = args["linear_attention_freq"][:args["num_layers"]]
        fields.update(linear_key_head_dim=args["linear_key_head_dim"],
                      linear_value_head_dim=args["linear_value_head_dim"],
                      linear_num_key_heads=args["linear_num_key_heads"],
                      linear_num_value_heads=args["linear_num_value_heads"],
                      linear_conv_kernel_dim=args["linear_conv_kernel_dim"],
                      layer_types=["linear_attention" if f else "full_attention" for f in linear],
                      shared_expert_intermediate_size=args["moe_shared_expert_intermediate_size"],
                      mtp_num_hidden_layers=args.get("mtp_num_layers") or 0)
    if klass == "GptOssConfig":
        fields["intermediate_size"] = args["moe_ffn_hidden_size"]
    if klass == "NemotronHConfig":
        fields.update(hybrid_override_pattern=args["hybrid_layer_pattern"], mamba_num_heads=args["mamba_num_heads"],
                      mamba_head_dim=args["mamba_head_dim"], ssm_state_size=args["mamba_state_dim"],
                      n_groups=args["mamba_num_groups"],
                      moe_shared_expert_intermediate_size=args.get("moe_shared_expert_intermediate_size"))
    return type(klass, (Settings,), {})(**{k: v for k, v in fields.items() if v is not None})


def nemo_automodel(checkout):
    """Its formula for a config object, as get_flops_formula_for_hf_config
    picks it by the config's class: run(config, length)."""
    _, _, namespace = megatron_baseline.load_function(
        [checkout], "nemo_automodel/components/utils/flops_utils.py", "get_flops_formula_for_hf_config")

    def run(config, length):
        return namespace["get_flops_formula_for_hf_config"](config)(config, gbs=1, seq_len=length)

    return run


# Release configs of tests/data/hf that NeMo Automodel reads as they are, and
# the class their config.json's auto_map names.
AUTOMODEL_RELEASE_CONFIGS = (("nemotron-3-nano-30b-a3b.json", "NemotronHConfig"),)


def config_object(fields, klass):
    """A config.json's fields as an object of `klass`, verbatim; a
    multimodal wrapper's text_config as an object too."""
    values = {k: v for k, v in fields.items() if v is not None}
    if isinstance(values.get("text_config"), dict):
        values["text_config"] = config_object(values["text_config"], klass.replace("Config", "TextConfig"))
    return type(klass, (Settings,), {})(**values)


def preset_config(name):
    """The release config presets/`name`.json holds."""
    with open(os.path.join(ROOT, "presets", name + ".json")) as f:
        return json.load(f)["hf_config"]


def release_config(config, klass):
    """tests/data/hf/`config` as an object of `klass`, its fields verbatim."""
    with open(os.path.join(ROOT, "tests", "data", "hf", config)) as f:
        return config_object(json.load(f), klass)


def deepseek_mla_args(config):
    """The Megatron-LM arguments a DeepSeek-V3-style config's names give
    directly: the layers, widths and vocabulary, MLA's ranks and head
    dimensions, SwiGLU MLPs."""
    return {
        "num_layers": config["num_hidden_layers"], "hidden_size": config["hidden_size"],
        "ffn_hidden_size": config["intermediate_size"], "num_attention_heads": config["num_attention_heads"],
        "multi_latent_attention": True, "q_lora_rank": config["q_lora_rank"], "kv_lora_rank": config["kv_lora_rank"],
        "qk_head_dim": config["qk_nope_head_dim"], "qk_pos_emb_head_dim": config["qk_rope_head_dim"],
        "v_head_dim": config["v_head_dim"], "swiglu": True, "padded_vocab_size": config["vocab_size"]}


def glm4_moe_lite_args(config):
    """GLM-4.7-Flash's release config (glm4_moe_lite: DeepSeek-V3's
    architecture) as Megatron-LM arguments, as the DeepSeek-V3 preset gives
    its own: MLA, dense layers before first_k_dense_replace, the shared
    experts' width summed, the router's expert bias, MTP depths."""
    layers, dense = config["num_hidden_layers"], config["first_k_dense_replace"]
    return {
        **deepseek_mla_args(config),
        "num_experts": config["n_routed_experts"], "moe_layer_freq": [0] * dense + [1] * (layers - dense),
        "moe_router_topk": config["num_experts_per_tok"], "moe_ffn_hidden_size": config["moe_intermediate_size"],
        "moe_shared_expert_intermediate_size": config["n_shared_experts"] * config["moe_intermediate_size"],
        "moe_router_enable_expert_bias": True, "mtp_num_layers": config["num_nextn_predict_layers"]}


def qwen3_5_args(config):
    """A Qwen3.5 or Qwen3.8 release config's language model as Megatron-LM
    arguments: gated attention, a gated delta net on each linear_attention
    layer, then the MTP depths as the checkpoint builds them (gated
    attention: 0 in linear_attention_freq, which covers decoder and MTP
    layers); the MoE's shared expert; ffn_hidden_size 4h where no layer is
    dense (Megatron-Core's default)."""
    text = config.get("text_config", config)
    depths = text.get("mtp_num_hidden_layers") or 0
    args = {
        "num_layers": text["num_hidden_layers"], "hidden_size": text["hidden_size"],
        "ffn_hidden_size": text.get("intermediate_size") or 4 * text["hidden_size"],
        "num_attention_heads": text["num_attention_heads"], "group_query_attention": True,
        "num_query_groups": text["num_key_value_heads"], "kv_channels": text["head_dim"], "swiglu": True,
        "padded_vocab_size": text["vocab_size"], "attention_output_gate": True,
        "experimental_attention_variant": "gated_delta_net",
        "linear_attention_freq": [int(t == "linear_attention") for t in text["layer_types"]] + [0] * depths,
        "linear_conv_kernel_dim": text["linear_conv_kernel_dim"], "linear_key_head_dim": text["linear_key_head_dim"],
        "linear_value_head_dim": text["linear_value_head_dim"], "linear_num_key_heads": text["linear_num_key_heads"],
        "linear_num_value_heads": text["linear_num_value_heads"], "mtp_num_layers": depths or None}
    if text.get("num_experts"):
        args.update(num_experts=text["num_experts"], moe_layer_freq=1, moe_router_topk=text["num_experts_per_tok"],
                    moe_ffn_hidden_size=text["moe_intermediate_size"],
                    moe_shared_expert_intermediate_size=text["shared_expert_intermediate_size"])
    return args


# Presets that hold a release config: the frameworks' arguments for it, and
# the config class NeMo Automodel's get_flops_formula_for_hf_config reads it as
# (the class Transformers builds from its model_type).
RELEASE_PRESETS = {
    "glm-4.7-flash": (glm4_moe_lite_args, "Glm4MoeLiteConfig"),
    "qwen3.5-27b": (qwen3_5_args, "Qwen3_5Config"),
    "qwen3.5-35b-a3b": (qwen3_5_args, "Qwen3_5MoeConfig"),
    "qwen3.8-2.4t-a95b": (qwen3_5_args, "Qwen3_5MoeTextConfig"),
}


# Megatron-LM arguments: Nemotron-H-56B under the gated-delta-product spec.
GDP_HYBRID = "tests/data/compare/nemotron-h-56b-gdp.json"

# gpt-oss-120b with its windows (a native config; the preset has none).
WINDOWED_GPT_OSS = "tests/data/compare/gpt-oss-120b-windowed.json"

# Kimi Linear 48B-A3B's sizes (tests/data/hf/kimi-linear-48b-a3b.json) as
# Megatron-Bridge's Kimi K3 fields (kimi_kda_layers, 1-based) over MLA.
KIMI_LINEAR = {
    "num_layers": 27, "hidden_size": 2304, "ffn_hidden_size": 9216, "num_attention_heads": 32,
    "multi_latent_attention": True, "q_lora_rank": None, "kv_lora_rank": 512, "qk_head_dim": 128,
    "qk_pos_emb_head_dim": 64, "v_head_dim": 128, "swiglu": True, "padded_vocab_size": 163840,
    "num_experts": 256, "moe_layer_freq": [0] + [1] * 26, "moe_router_topk": 8, "moe_ffn_hidden_size": 1024,
    "moe_shared_expert_intermediate_size": 1024,
    "kimi_kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
    "kimi_linear_num_heads": 32, "kimi_linear_head_dim": 128, "kimi_linear_conv_kernel_size": 4}

# The release configs of tests/data/hf and the frameworks' arguments for
# each: a preset's where it is the same model, else written from the config.
HF_CASES = (
    ("deepseek-v3.json", "deepseek-v3", {}),
    ("glm-5.1.json", "glm-5", {}),
    ("llama-3.1-8b.json", "llama-3.1-8b", {}),
    ("qwen3-30b-a3b.json", None, {
        "num_layers": 48, "hidden_size": 2048, "ffn_hidden_size": 6144, "num_attention_heads": 32,
        "group_query_attention": True, "num_query_groups": 4, "kv_channels": 128, "swiglu": True,
        "padded_vocab_size": 151936, "num_experts": 128, "moe_layer_freq": 1, "moe_router_topk": 8,
        "moe_ffn_hidden_size": 768}),
    # Its preset is this config (the hybrid pattern, Mamba-2 and MoE sizes).
    ("nemotron-3-nano-30b-a3b.json", "nemotron-3-nano-30b-a3b", {}),
    # Qwen3-Next's layers without an MTP depth (the config names none).
    ("qwen3-coder-next.json", "qwen3-next-80b-a3b", {"mtp_num_layers": None}),
    # Kimi Linear: Megatron-Bridge's Kimi K3 fields (kimi_kda_layers, 1-based)
    # over MLA; its other frameworks have no Kimi Delta Attention.
    ("kimi-linear-48b-a3b.json", None, KIMI_LINEAR),
)


def release_text_config(config):
    """tests/data/hf/`config`'s language model: its text_config."""
    with open(os.path.join(ROOT, "tests", "data", "hf", config)) as f:
        return json.load(f)["text_config"]


def kimi_k3_bridge_args(text):
    """Megatron-Bridge's arguments for Kimi K3, as its KimiK3Bridge's
    provider_bridge sets them from the text_config (the common config
    mapping, then its own fields): MLA, a latent MoE on every layer from
    first_k_dense_replace, the shared experts' width summed, the KDA layers
    (1-based) of linear_attn_config, no MTP (num_nextn_predict_layers 0)."""
    linear = text["linear_attn_config"]
    layers = text["num_hidden_layers"]
    return {
        **deepseek_mla_args(text),
        "num_experts": text["num_experts"], "moe_router_topk": text["num_experts_per_token"],
        "moe_ffn_hidden_size": text["moe_intermediate_size"], "moe_latent_size": text["routed_expert_hidden_size"],
        "moe_shared_expert_intermediate_size": text["moe_intermediate_size"] * text["num_shared_experts"],
        "moe_layer_freq": [int(i >= text["first_k_dense_replace"] and i % text["moe_layer_freq"] == 0)
                           for i in range(layers)],
        "mtp_num_layers": text["num_nextn_predict_layers"], "kimi_kda_layers": tuple(linear["kda_layers"]),
        "kimi_linear_num_heads": linear["num_heads"], "kimi_linear_head_dim": linear["head_dim"],
        "kimi_linear_conv_kernel_size": linear["short_conv_kernel_size"]}


def minimax_m3_bridge_args(text):
    """Megatron-Bridge's arguments for MiniMax-M3, as its MiniMaxM3Bridge's
    provider_bridge sets them from the text_config: GQA on every layer (the
    indexer's fields are stored, never read by the FLOPs function), dense
    layers dense_intermediate_size wide, experts intermediate_size wide, one
    shared expert, the 0/1 moe_layer_freq list; mtp_num_layers forced to None
    (the checkpoint ships no MTP weights)."""
    return {
        "num_layers": text["num_hidden_layers"], "hidden_size": text["hidden_size"],
        "ffn_hidden_size": text["dense_intermediate_size"], "num_attention_heads": text["num_attention_heads"],
        "group_query_attention": True, "num_query_groups": text["num_key_value_heads"],
        "kv_channels": text["head_dim"], "swiglu": True, "padded_vocab_size": text["vocab_size"],
        "num_experts": text["num_local_experts"], "moe_router_topk": text["num_experts_per_tok"],
        "moe_ffn_hidden_size": text["intermediate_size"],
        "moe_shared_expert_intermediate_size": text["n_shared_experts"] * text["shared_intermediate_size"],
        "moe_layer_freq": [int(f) for f in text["moe_layer_freq"]], "mtp_num_layers": None}


# Release-config presets that Megatron-Bridge's provider reads (its other
# frameworks cannot count them): the preset, Bridge's arguments, and where
# its provider leaves out part of the model, the arguments with the recipe
# aligned (compare's row): MiniMax-M3's 7 MTP depths, which its config
# builds and the provider forces off.
BRIDGE_PROVIDER_CASES = (
    ("kimi-k3", "kimi-k3.json", kimi_k3_bridge_args, None),
    ("minimax-m3", "minimax-m3.json", minimax_m3_bridge_args,
     lambda text: {"mtp_num_layers": text["num_mtp_modules"]}),
)


def gemma4_settings(preset):
    """MaxText's settings for a Gemma 4 preset (its configs/models/gemma4-*.yml
    fields), from the release config the preset holds."""
    text = preset["hf_config"]["text_config"]
    moe = bool(text.get("enable_moe_block"))
    return {"maxtext": {
        "decoder_block": "GEMMA4", "emb_dim": text["hidden_size"], "num_decoder_layers": text["num_hidden_layers"],
        "mlp_dim": text["intermediate_size"], "moe_mlp_dim": text.get("moe_intermediate_size"),
        "num_experts": text["num_experts"] if moe else 1, "num_experts_per_tok": text.get("top_k_experts"),
        "shared_experts": 1 if moe else 0, "mlp_activations": ["gelu", "linear"], "attention_type": "global",
        "share_kv_projections": bool(text.get("attention_k_eq_v")), "num_query_heads": text["num_attention_heads"],
        "num_kv_heads": text["num_key_value_heads"], "head_dim": text["head_dim"],
        "global_head_dim": text["global_head_dim"], "global_num_kv_heads": text["num_global_key_value_heads"],
        "sliding_window_size": text["sliding_window"], "vocab_size": text["vocab_size"]}}


# Gemma 4 E2B and E4B as MaxText defines them (its configs/models/gemma4-*.yml,
# read from the checkout), and the same models in trainflops' config format.
GEMMA4_SMALL = (("gemma4-e2b", "tests/data/compare/gemma-4-e2b-maxtext.json"),
                ("gemma4-e4b", "tests/data/compare/gemma-4-e4b-maxtext.json"))


def gemma4_small_settings(checkout, model_name):
    """MaxText's settings for a Gemma 4 small model: its yml's fields, under
    the names the function reads (the yml's base_* sizes without the prefix)."""
    with open(os.path.join(checkout, "src", "maxtext", "configs", "models", model_name + ".yml")) as f:
        yml = yaml.safe_load(f)
    return {"maxtext": {
        "decoder_block": "GEMMA4_SMALL", "model_name": model_name, "emb_dim": yml["base_emb_dim"],
        "num_decoder_layers": yml["base_num_decoder_layers"], "mlp_dim": yml["base_mlp_dim"], "moe_mlp_dim": None,
        "num_experts": 1, "num_experts_per_tok": None, "shared_experts": 0,
        "mlp_activations": yml["mlp_activations"], "attention_type": "global", "share_kv_projections": False,
        "num_query_heads": yml["base_num_query_heads"], "num_kv_heads": yml["base_num_kv_heads"],
        "head_dim": yml["head_dim"], "global_head_dim": yml["global_head_dim"], "global_num_kv_heads": 0,
        "sliding_window_size": yml["sliding_window_size"], "vocab_size": yml["vocab_size"],
        "hidden_size_per_layer_input": yml["hidden_size_per_layer_input"],
        "num_kv_shared_layers": yml["num_kv_shared_layers"], "use_double_wide_mlp": yml["use_double_wide_mlp"]}}


# DeepSeek-V4 configs (Hugging Face config.json form): DeepSeek-V4-Flash's
# sizes and two small ones, one without hyper-connections or MTP (the
# deepseek-v4-flash and deepseek-v4-pro presets, the releases' files, are
# cases of their own).
DSV4_CONFIGS = ("tests/data/compare/deepseek-v4-flash.json", "tests/data/compare/deepseek-v4-small.json",
                "tests/data/compare/deepseek-v4-small-plain.json")


def dsv4_args(config):
    """Megatron-LM's arguments for a DeepSeek-V4 config (dsv4_hybrid: one
    compression ratio per decoder and MTP layer, the MTP layer attending a
    window), and under "maxtext" MaxText's settings (its deepseek4 yml
    fields: compress_ratios over the decoder layers; MTP left out, as its
    DeepSeek-V4 configs drop the MTP layer)."""
    layers, depths = config["num_hidden_layers"], config.get("num_nextn_predict_layers", 0)
    ratios = config["compress_ratios"] + [0] * (layers + depths - len(config["compress_ratios"]))
    heads, head_dim, rope = config["num_attention_heads"], config["head_dim"], config["qk_rope_head_dim"]
    expert = config["moe_intermediate_size"]
    args = {
        "num_layers": layers, "hidden_size": config["hidden_size"], "ffn_hidden_size": expert,
        "num_attention_heads": heads, "swiglu": True, "padded_vocab_size": config["vocab_size"],
        "num_experts": config["n_routed_experts"], "moe_layer_freq": 1, "moe_router_topk": config["num_experts_per_tok"],
        "moe_ffn_hidden_size": expert, "moe_shared_expert_intermediate_size": config["n_shared_experts"] * expert,
        "mtp_num_layers": depths or None, "multi_latent_attention": True, "q_lora_rank": config["q_lora_rank"],
        "kv_lora_rank": head_dim, "qk_head_dim": head_dim - rope, "qk_pos_emb_head_dim": rope, "v_head_dim": head_dim,
        "experimental_attention_variant": "dsv4_hybrid", "csa_compress_ratios": ratios,
        "o_groups": config["o_groups"], "o_lora_rank": config["o_lora_rank"], "csa_window_size": config["sliding_window"],
        "dsa_indexer_n_heads": config["index_n_heads"], "dsa_indexer_head_dim": config["index_head_dim"],
        "dsa_indexer_topk": config["index_topk"]}
    args["maxtext"] = {
        "decoder_block": "DEEPSEEK4", "emb_dim": config["hidden_size"], "num_decoder_layers": layers,
        "mlp_dim": expert, "moe_mlp_dim": expert, "num_experts": config["n_routed_experts"],
        "num_experts_per_tok": config["num_experts_per_tok"], "shared_experts": config["n_shared_experts"],
        "mlp_activations": ["silu", "linear"], "attention_type": "compressed", "share_kv_projections": False,
        "num_query_heads": heads,
        "num_kv_heads": 1, "head_dim": head_dim, "vocab_size": config["vocab_size"],
        "q_lora_rank": config["q_lora_rank"], "o_groups": config["o_groups"], "o_lora_rank": config["o_lora_rank"],
        "sliding_window_size": config["sliding_window"], "indexer_n_heads": config["index_n_heads"],
        "indexer_head_dim": config["index_head_dim"], "indexer_topk": config["index_topk"],
        "compress_ratios": ratios[:layers], "mhc_expansion_rate": config.get("hc_mult", 1)}
    return args


# Presets that only MaxText's function counts (Gemma 4: MaxText's settings).
MAXTEXT_ONLY = ("gemma-4-26b-a4b", "gemma-4-31b")


def windowed_args(preset_args):
    """The frameworks' arguments for WINDOWED_GPT_OSS: 128-token windows on
    layers 1, 3, 5, ... (1-based)."""
    return dict(preset_args, window_size=128, window_pattern=[1 - i % 2 for i in range(preset_args["num_layers"])])


def cases():
    """(name, compare's model options, the frameworks' arguments) of every case."""
    presets = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "presets", "*.json"))):
        with open(path) as f:
            preset = json.load(f)
        if preset["name"] in MAXTEXT_ONLY:
            yield preset["name"], ["--preset", preset["name"]], gemma4_settings(preset)
            continue
        if "args" not in preset:
            if preset["hf_config"].get("model_type") == "deepseek_v4":
                yield preset["name"], ["--preset", preset["name"]], dsv4_settings(preset["hf_config"])
            elif preset["name"] in RELEASE_PRESETS:
                to_args, _ = RELEASE_PRESETS[preset["name"]]
                yield preset["name"], ["--preset", preset["name"]], to_args(preset["hf_config"])
            continue  # another release config: HF_CASES runs the frameworks on those
        presets[preset["name"]] = preset["args"]
        yield preset["name"], ["--preset", preset["name"]], preset["args"]
    # The indexer trained by a KL loss on detached inputs, dense or sparse.
    for mode, sparse in (("detached", False), ("sparse", True)):
        yield (f"glm-5.2 ({mode})", ["--preset", "glm-5.2", "--dsa-indexer-grad-mode", mode],
               dict(presets["glm-5.2"], dsa_indexer_loss_coeff=0.001, dsa_indexer_use_sparse_loss=sparse))
    yield "gpt-oss-120b (windowed)", ["--config", WINDOWED_GPT_OSS], windowed_args(presets["gpt-oss-120b"])
    # Nemotron-H-56B's M layers as gated delta products (Megatron-LM's
    # gated-delta-product spec, 2 Householder reflections): only Megatron-LM
    # main's hybrid function counts them.
    with open(os.path.join(ROOT, GDP_HYBRID)) as f:
        yield "nemotron-h-56b (gdp)", ["--args", GDP_HYBRID], json.load(f)
    for config, preset, args in HF_CASES:
        given = dict(presets[preset], **args) if preset else args
        if isinstance(given.get("linear_attention_freq"), list):
            given["linear_attention_freq"] = given["linear_attention_freq"][:given["num_layers"]]
        yield config, ["--hf", "tests/data/hf/" + config], {k: v for k, v in given.items() if v is not None}
    if os.environ.get("MAXTEXT"):
        for model_name, path in GEMMA4_SMALL:
            yield os.path.basename(path), ["--config", path], gemma4_small_settings(os.environ["MAXTEXT"], model_name)
    for path in DSV4_CONFIGS:
        with open(os.path.join(ROOT, path)) as f:
            yield os.path.basename(path), ["--hf", path], dsv4_settings(json.load(f))


def dsv4_settings(config):
    """dsv4_args without the arguments it leaves unset."""
    return {k: v for k, v in dsv4_args(config).items() if v is not None}


# The gpt-oss formula puts 128-token windows on every other layer whatever the
# config says; the preset has none, the windowed config has them.
AUTOMODEL_ALIGNED_OPTIONS = {"gpt-oss-120b": ["--config", WINDOWED_GPT_OSS]}


def check_automodel(cli, checkout, records):
    """NeMo Automodel on every preset it has a formula for; the number compare
    shows is its number for the recipe aligned (its MTP depths counted, the
    windows of the gpt-oss formula given): 1 per disagreement."""
    formula = nemo_automodel(checkout)

    def run(name, args, length, recipe_aligned=False):
        return formula(automodel_config(name, args, recipe_aligned), length)

    source = megatron_baseline.describe_checkout(checkout, "NeMo Automodel")
    differ = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "presets", "*.json"))):
        with open(path) as f:
            preset = json.load(f)
        if "args" not in preset:
            continue  # a release config (Gemma 4): no formula of Automodel's has its attention
        name, args = preset["name"], preset["args"]
        options = ["--preset", name]
        for length in LENGTHS:
            row = compare_rows(cli, options, length)["nemo-automodel"]
            if row["flops"] is None:
                print(f"{name:<24} {length:>7}  nemo-automodel   not expressible: {row['reason']}")
                continue
            theirs = run(name, args, length)
            record = {"options": options, "seq_length": length, "framework": "nemo-automodel",
                      "config_class": AUTOMODEL_CLASSES[name], "flops": float(theirs),
                      "function": source.split(" (")[0]}
            aligned, compared = theirs, int(row["exact"])
            if name in AUTOMODEL_ALIGNED_OPTIONS:
                record["aligned_options"] = AUTOMODEL_ALIGNED_OPTIONS[name]
                record["difference"] = "sliding_windows"
                compared = int(compare_rows(cli, record["aligned_options"], length)["nemo-automodel"]["exact"])
            elif AUTOMODEL_CLASSES[name] == "DeepseekV3Config" and args.get("mtp_num_layers"):
                aligned = run(name, args, length, recipe_aligned=True)
                record["aligned_flops"] = float(aligned)
                record["difference"] = "mtp"
            outcome = Outcome.AGREE if agree(aligned, compared) else Outcome.DIFFER
            differ += outcome is Outcome.DIFFER
            print(f"{name:<24} {length:>7}  nemo-automodel   {outcome.value:<7} theirs {aligned:.15e}  "
                  f"compare {compared}  ({source})")
            records.append(record)
    releases = [(["--preset", name], config_object(preset_config(name), klass))
                for name, (_, klass) in RELEASE_PRESETS.items()]
    releases += [(["--hf", "tests/data/hf/" + config], release_config(config, klass))
                 for config, klass in AUTOMODEL_RELEASE_CONFIGS]
    for options, config in releases:
        klass = type(config).__name__
        for length in LENGTHS:
            row = compare_rows(cli, options, length)["nemo-automodel"]
            if row["flops"] is None:
                # A row that says the formula raises: it must.
                try:
                    formula(config, length)
                    raised = None
                except Exception as error:  # what the row describes
                    raised = f"{type(error).__name__}: {error}"
                if "raises" in row["reason"] and raised is None:
                    differ += 1
                print(f"{options[1]:<24} {length:>7}  nemo-automodel   not expressible: {row['reason']}"
                      f"{f' (it raised {raised})' if raised else ''}")
                continue
            theirs = formula(config, length)
            compared = int(row["exact"])
            outcome = Outcome.AGREE if agree(theirs, compared) else Outcome.DIFFER
            differ += outcome is Outcome.DIFFER
            print(f"{options[1]:<24} {length:>7}  nemo-automodel   {outcome.value:<7} theirs {theirs:.15e}  "
                  f"compare {compared}  ({source})")
            records.append({"options": options, "seq_length": length, "framework": "nemo-automodel",
                            "config_class": klass, "flops": float(theirs), "function": source.split(" (")[0]})
    return differ


def check_bridge_providers(cli, run, source, records):
    """Megatron-Bridge on BRIDGE_PROVIDER_CASES: the number compare shows is
    its number for the recipe aligned; the record also holds its number with
    the provider's own arguments: 1 per disagreement."""
    differ = 0
    for name, config, bridge_args, aligned_args in BRIDGE_PROVIDER_CASES:
        text = release_text_config(config)
        args = bridge_args(text)
        options = ["--preset", name]
        for length in LENGTHS:
            theirs = run(args, length)
            record = {"options": options, "seq_length": length, "framework": "megatron-bridge",
                      "flops": float(theirs), "function": source.split(" (")[0]}
            if aligned_args:
                record.update(recipe_flops=float(theirs), difference="mtp")
                theirs = run(dict(args, **aligned_args(text)), length)
                record["flops"] = float(theirs)
            row = compare_rows(cli, options, length)["megatron-bridge"]
            compared = None if row["flops"] is None else int(row["exact"])
            outcome = Outcome.AGREE if compared is not None and agree(theirs, compared) else Outcome.DIFFER
            differ += outcome is Outcome.DIFFER
            print(f"{name:<24} {length:>7}  megatron-bridge  {outcome.value:<7} theirs {theirs:.15e}  "
                  f"compare {compared if compared is not None else row['reason']}  ({source})")
            records.append(record)
    return differ


def compare_rows(cli, source, length):
    result = subprocess.run([cli, "compare", *source, "--seq-length", str(length), "--global-batch-size", "1",
                             "--format", "json"], capture_output=True, text=True, check=True, cwd=ROOT)
    return {row["name"]: row for row in json.loads(result.stdout)["frameworks"]}


class Outcome(enum.Enum):
    AGREE = "agree"
    DIFFER = "DIFFER"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cli", nargs="?", default=os.path.join(ROOT, "build", "trainflops"))
    parser.add_argument("--write", metavar="FILE",
                        help="also record the frameworks' numbers there (JSON Lines), for compare's tests")
    parser.add_argument("--write-automodel", metavar="FILE",
                        help="also record NeMo Automodel's numbers there (JSON Lines), for compare's tests")
    options = parser.parse_args()
    env = os.environ.get
    runners = {}
    if env("MEGATRON_LM"):
        runners["megatron-lm"] = (megatron_main(env("MEGATRON_LM")),
                                  megatron_baseline.describe_checkout(env("MEGATRON_LM"), "Megatron-LM"))
    if env("MEGATRON_LM_DEV"):
        runners["megatron-lm-dsa-fix"] = (megatron_main(env("MEGATRON_LM_DEV")),
                                          megatron_baseline.describe_checkout(env("MEGATRON_LM_DEV"), "Megatron-LM dev"))
    if env("MEGATRON_BRIDGE") and env("MEGATRON_LM"):
        runners["megatron-bridge"] = (megatron_bridge(env("MEGATRON_BRIDGE"), env("MEGATRON_LM")),
                                      megatron_baseline.describe_checkout(env("MEGATRON_BRIDGE"), "Megatron-Bridge"))
    if env("MAXTEXT"):
        runners["maxtext"] = (maxtext(env("MAXTEXT")), megatron_baseline.describe_checkout(env("MAXTEXT"), "MaxText"))
    if env("NEMO_RL"):
        runners["nemo-rl"] = (nemo_rl(env("NEMO_RL")), megatron_baseline.describe_checkout(env("NEMO_RL"), "NeMo-RL"))
    for name, variable in (("megatron-lm", "MEGATRON_LM"), ("megatron-lm-dsa-fix", "MEGATRON_LM_DEV"),
                           ("megatron-bridge", "MEGATRON_BRIDGE and MEGATRON_LM"),
                           ("maxtext", "MAXTEXT"), ("nemo-rl", "NEMO_RL")):
        if name not in runners:
            print(f"{name}: not checked (set {variable} to a checkout)")
    differ, records = 0, []
    for case, source_options, args in cases():
        for length in DSV4_LENGTHS if args.get("experimental_attention_variant") == "dsv4_hybrid" else LENGTHS:
            rows = compare_rows(options.cli, source_options, length)
            for name, (run, source) in runners.items():
                if "num_layers" not in args and name != "maxtext":
                    continue  # no other framework's function has the model
                if (name == "megatron-lm-dsa-fix" and args.get("experimental_attention_variant") not in DEV_VARIANTS
                        and not args.get("hybrid_layer_pattern")):
                    continue  # Megatron-LM's dev branch: where it differs from main
                row = rows[name]
                if row["flops"] is None:
                    print(f"{case:<24} {length:>7}  {name:<16} not expressible: {row['reason']}")
                    continue
                theirs, ours = run(args, length), int(row["exact"])
                outcome = Outcome.AGREE if agree(theirs, ours) else Outcome.DIFFER
                differ += outcome is Outcome.DIFFER
                print(f"{case:<24} {length:>7}  {name:<16} {outcome.value:<7} theirs {theirs:.15e}  "
                      f"compare {ours}  ({source})")
                records.append({"options": source_options, "seq_length": length, "framework": name,
                                "flops": float(theirs), "function": source.split(" (")[0]})
    if "megatron-bridge" in runners:
        differ += check_bridge_providers(options.cli, *runners["megatron-bridge"], records)
    automodel_records = []
    if env("NEMO_AUTOMODEL"):
        differ += check_automodel(options.cli, env("NEMO_AUTOMODEL"), automodel_records)
    else:
        print("nemo-automodel: not checked (set NEMO_AUTOMODEL to a checkout)")
    print(f"{differ} differ")
    if options.write_automodel:
        with open(options.write_automodel, "w") as out:
            out.writelines(json.dumps(record) + "\n" for record in automodel_records)
    if options.write:
        with open(options.write, "w") as out:
            out.writelines(json.dumps(record) + "\n" for record in records)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
