"""The reference model's description, read from Megatron-LM arguments.

The same arguments go to `trainflops count --args`; this module reads the
subset the references implement (standard transformer path: GQA, MLA, DSA
with or without KPool, dense MLP or SwiGLU, MoE, MTP) and rejects the rest.
Block-sparse attention (MiniMax-M3's), QSA (Qwen3.8's), Kimi Delta
Attention and DeepSeek-V4.1's CSA2 have no Megatron-LM arguments: a case
puts one of them on every layer of its GQA arguments (`with_native_mixer`;
the sparse attentions keep the GQA's heads, KDA and CSA2 replace the
attention, CSA2 with one config per layer), and the model then goes to
trainflops as a native config (`native_config`). So does a model with
attention residuals (Kimi K3's), which have no Megatron-LM arguments either.
"""

import dataclasses

GRAD_MODES = ("off", "detached", "sparse", "full")

SUPPORTED_ARGS = frozenset(
    """
    num_layers hidden_size ffn_hidden_size num_attention_heads group_query_attention num_query_groups
    kv_channels attention_output_gate swiglu padded_vocab_size num_experts moe_layer_freq
    moe_router_topk moe_ffn_hidden_size moe_shared_expert_intermediate_size moe_latent_size
    mtp_num_layers multi_latent_attention q_lora_rank kv_lora_rank qk_head_dim qk_pos_emb_head_dim
    v_head_dim experimental_attention_variant dsa_indexer_n_heads dsa_indexer_head_dim
    dsa_indexer_topk dsa_indexer_topk_freq dsa_indexer_skip_topk_offset dsa_indexer_loss_coeff
    dsa_indexer_use_sparse_loss dsa_indexer_grad_mode dsa_kpool_size dsa_kpool_tail
    enable_hyper_connections num_residual_streams
    """.split()
)


@dataclasses.dataclass(frozen=True)
class Gqa:
    num_heads: int
    num_groups: int
    head_dim: int
    output_gate: bool


@dataclasses.dataclass(frozen=True)
class Mla:
    num_heads: int
    q_lora_rank: int | None
    kv_lora_rank: int
    qk_head_dim: int
    rope_dim: int
    v_head_dim: int


@dataclasses.dataclass(frozen=True)
class Indexer:
    num_heads: int
    head_dim: int
    topk: int
    topk_freq: int
    skip_topk_offset: int
    grad_mode: str
    pool_size: int
    pool_tail: bool

    def runs_at(self, number):
        """Whether the layer numbered `number` (1-based) runs its indexer; docs/accounting.md, 7.2."""
        return max(number - max(self.skip_topk_offset, 1), 0) % self.topk_freq == 0


@dataclasses.dataclass(frozen=True)
class BlockSparse:
    """Every GQA layer attends the keys of topk_blocks blocks of block_size
    (its own among them), chosen by a forward-only indexer."""
    indexer_num_heads: int
    indexer_head_dim: int
    block_size: int
    topk_blocks: int
    init_blocks: int


@dataclasses.dataclass(frozen=True)
class Qsa:
    """Qwen3.8's sparse attention on the GQA: every query attends the keys of
    the budget / block_size complete blocks a forward-only indexer scores
    best (indexer_num_heads query heads against the blocks' mean of
    indexer_key_heads key heads), and the keys of its own incomplete block."""
    indexer_num_heads: int
    indexer_key_heads: int
    indexer_head_dim: int
    block_size: int
    budget: int


@dataclasses.dataclass(frozen=True)
class Kda:
    """Kimi Delta Attention in place of the attention (docs/kimi.md)."""
    num_heads: int
    head_dim: int
    conv_kernel_dim: int
    forget_gate_rank: int
    output_gate_rank: int | None  # None: a full-rank output gate
    chunk_size: int  # the delta rule's chunks (the native config's chunk_size)


@dataclasses.dataclass(frozen=True)
class Gdn:
    """The gated delta net in place of the attention (docs/accounting.md, 8),
    with the native config's field names."""
    key_head_dim: int
    value_head_dim: int
    num_key_heads: int
    num_value_heads: int  # a multiple of num_key_heads
    conv_kernel_dim: int
    chunk_size: int  # the delta rule's chunks


@dataclasses.dataclass(frozen=True)
class Csa2:
    """One DeepSeek-V4.1 attention layer (docs/deepseek-v4.1.md), with the
    native config's field names."""
    num_heads: int
    head_dim: int
    q_lora_rank: int
    o_groups: int
    o_lora_rank: int
    window: int
    compress_ratio: int = 0  # 0: the window alone
    topk: int = 0
    writes_cache: bool = False
    runs_indexer: bool = False
    indexer_num_heads: int = 0
    indexer_head_dim: int = 0
    candidates: str | None = None  # "source" or "consumer"
    candidate_blocks: int = 0
    candidate_block_size: int = 0

    def native(self):
        """The layer's mixer in the native config: the fields it reads."""
        fields = dataclasses.asdict(self)
        names = ["num_heads", "head_dim", "q_lora_rank", "o_groups", "o_lora_rank", "window"]
        if self.compress_ratio:
            names += ["compress_ratio", "topk", "writes_cache", "runs_indexer"]
        if self.runs_indexer:
            names += ["indexer_num_heads", "indexer_head_dim"]
        if self.candidates:
            names += ["candidates", "candidate_blocks", "candidate_block_size"]
        return {"type": "csa2", **{name: fields[name] for name in names}}


@dataclasses.dataclass(frozen=True)
class Csa2Stack:
    """CSA2 in place of the attention: one layer config per decoder layer
    (caches and selections flow from layer to layer), and the MTP layer's."""
    layers: tuple
    mtp: Csa2 | None = None

    @classmethod
    def of(cls, layers, mtp=None):
        return cls(tuple(Csa2(**layer) for layer in layers), Csa2(**mtp) if mtp else None)


# A native mixer's config type -> a function from its fields to the config.
NATIVE_MIXERS = {"block_sparse": BlockSparse, "qsa": Qsa, "kda": Kda, "gdn": Gdn, "csa2": Csa2Stack.of}


@dataclasses.dataclass(frozen=True)
class Mlp:
    ffn_hidden_size: int
    gated: bool  # SwiGLU


@dataclasses.dataclass(frozen=True)
class Moe:
    num_experts: int
    topk: int
    expert: Mlp
    shared: Mlp | None
    latent_size: int | None


@dataclasses.dataclass(frozen=True)
class Config:
    hidden_size: int
    vocab_size: int
    attention: Gqa | Mla
    indexer: Indexer | None  # DSA: every layer is MLA plus this indexer
    channel_mixers: tuple  # one Mlp or Moe per decoder layer
    mtp_channel_mixer: Mlp | Moe  # the MTP layers': MoE iff the last decoder layer is
    mtp_depths: int
    native_mixer: BlockSparse | Qsa | Kda | Gdn | Csa2Stack | None = None  # on the GQA: every layer, MTP included
    residual_streams: int | None = None  # mHC's streams; None: one plain residual stream
    attention_residuals: int | None = None  # AttnRes' block size; None: a plain residual sum


def _get(args, name, default=None):
    value = args.get(name)
    return default if value is None else value


def _grad_mode(args):
    explicit = args.get("dsa_indexer_grad_mode")
    if explicit is not None:
        if explicit not in GRAD_MODES:
            raise ValueError(f"dsa_indexer_grad_mode = {explicit!r}: must be one of {GRAD_MODES}")
        return explicit
    if _get(args, "dsa_indexer_loss_coeff", 0) > 0:
        return "sparse" if _get(args, "dsa_indexer_use_sparse_loss", False) else "detached"
    return "off"


def _moe_layers(args, num_layers):
    if not _get(args, "num_experts"):
        return [False] * num_layers
    frequency = _get(args, "moe_layer_freq", 1)
    if isinstance(frequency, int):
        return [i % frequency == 0 for i in range(num_layers)]
    if len(frequency) != num_layers:
        raise ValueError(f"moe_layer_freq has {len(frequency)} entries for {num_layers} layers")
    return [bool(x) for x in frequency]


def config_from_args(args):
    unsupported = sorted(name for name, value in args.items() if value is not None and name not in SUPPORTED_ARGS)
    if unsupported:
        raise ValueError(f"the references do not implement: {', '.join(unsupported)}")
    h = args["hidden_size"]
    n = args["num_attention_heads"]
    gated = bool(_get(args, "swiglu", False))
    variant = args.get("experimental_attention_variant")
    if variant not in (None, "dsa"):
        raise ValueError(f"experimental_attention_variant = {variant!r}: only dsa has a reference")
    if args.get("multi_latent_attention") or variant == "dsa":
        attention = Mla(n, args.get("q_lora_rank"), args["kv_lora_rank"], args["qk_head_dim"],
                        args["qk_pos_emb_head_dim"], args["v_head_dim"])
    else:
        groups = args["num_query_groups"] if args.get("group_query_attention") else n
        attention = Gqa(n, groups, _get(args, "kv_channels", h // n), bool(_get(args, "attention_output_gate", False)))
    indexer = None
    if variant == "dsa":
        indexer = Indexer(args["dsa_indexer_n_heads"], args["dsa_indexer_head_dim"], args["dsa_indexer_topk"],
                          _get(args, "dsa_indexer_topk_freq", 1), _get(args, "dsa_indexer_skip_topk_offset", 0),
                          _grad_mode(args), _get(args, "dsa_kpool_size", 1), bool(_get(args, "dsa_kpool_tail", True)))
    dense = Mlp(args["ffn_hidden_size"], gated)
    moe = None
    if _get(args, "num_experts"):
        shared_size = args.get("moe_shared_expert_intermediate_size")
        moe = Moe(args["num_experts"], args["moe_router_topk"],
                  Mlp(_get(args, "moe_ffn_hidden_size", args["ffn_hidden_size"]), gated),
                  Mlp(shared_size, gated) if shared_size else None, args.get("moe_latent_size"))
    moe_layers = _moe_layers(args, args["num_layers"])
    mixers = tuple(moe if is_moe else dense for is_moe in moe_layers)
    streams = _get(args, "num_residual_streams", 4) if args.get("enable_hyper_connections") else None
    return Config(h, args["padded_vocab_size"], attention, indexer, mixers, mixers[-1],
                  _get(args, "mtp_num_layers", 0), residual_streams=streams)


def with_native_mixer(config, mixer):
    """`config` with a native mixer on every layer: None, or a dict of its
    config `type` (a key of NATIVE_MIXERS) and its class's fields."""
    if mixer is None:
        return config
    if not isinstance(config.attention, Gqa):
        raise ValueError("a native mixer goes on GQA arguments")
    fields = dict(mixer)
    return dataclasses.replace(config, native_mixer=NATIVE_MIXERS[fields.pop("type")](**fields))


def _native_channel_mixer(mixer):
    if isinstance(mixer, Mlp):
        return {"type": "mlp", "ffn_hidden_size": mixer.ffn_hidden_size, "gated": mixer.gated}
    moe = {"type": "moe", "num_experts": mixer.num_experts, "topk": mixer.topk,
           "expert_ffn_hidden_size": mixer.expert.ffn_hidden_size, "gated": mixer.expert.gated}
    if mixer.shared:
        moe["shared_expert_ffn_hidden_size"] = mixer.shared.ffn_hidden_size
    if mixer.latent_size:
        moe["latent_size"] = mixer.latent_size
    return moe


def native_config(config):
    """The model as a trainflops config (docs/config-format.md): GQA models,
    with or without a native mixer."""
    a = config.attention
    if not isinstance(a, Gqa):
        raise ValueError("native_config writes GQA models only")
    mixer = {"type": "gqa", "num_heads": a.num_heads, "num_query_groups": a.num_groups, "head_dim": a.head_dim,
             "output_gate": a.output_gate}
    replacement = config.native_mixer
    if isinstance(replacement, Kda):
        mixer = {"type": "kda", **{k: v for k, v in dataclasses.asdict(replacement).items() if v is not None}}
    elif isinstance(replacement, Gdn):
        mixer = {"type": "gdn", **dataclasses.asdict(replacement)}
    elif isinstance(replacement, (BlockSparse, Qsa)):
        mixer.update(type="block_sparse" if isinstance(replacement, BlockSparse) else "qsa",
                     **dataclasses.asdict(replacement))
    layer_count = len(config.channel_mixers)
    if isinstance(replacement, Csa2Stack):
        mixers = {f"attention{i}": layer.native() for i, layer in enumerate(replacement.layers, start=1)}
        layer_mixers = list(mixers)
        if replacement.mtp:
            mixers["mtp_attention"] = replacement.mtp.native()
        mtp_mixer = "mtp_attention"
    else:
        mixers, layer_mixers, mtp_mixer = {"attention": mixer}, ["attention"] * layer_count, "attention"
    kinds = list(dict.fromkeys(config.channel_mixers + (config.mtp_channel_mixer,)))
    name = {mixer_config: f"c{i}" for i, mixer_config in enumerate(kinds)}
    native = {
        "hidden_size": config.hidden_size, "vocab_size": config.vocab_size, "mixers": mixers,
        "channel_mixers": {name[m]: _native_channel_mixer(m) for m in kinds},
        "layers": [{"mixer": layer_mixer, "channel_mixer": name[m]}
                   for layer_mixer, m in zip(layer_mixers, config.channel_mixers)],
    }
    if config.attention_residuals:
        native["attention_residuals"] = {"block_size": config.attention_residuals}
    if config.mtp_depths:
        native["mtp"] = {"depths": config.mtp_depths,
                         "layers": [{"mixer": mtp_mixer, "channel_mixer": name[config.mtp_channel_mixer]}]}
    return native
