"""The randomized validation cases: small models as Megatron-LM arguments,
a packed batch of documents, and a recompute policy.

Each family fixes what it must cover (a grad mode, a pool size, the output
gate, ...) and draws everything else, sizes and document lengths included,
from a generator seeded by (seed, case name), so a case reproduces from its
name and the seed alone.
"""

import dataclasses
import random

from validation.config import config_from_args, with_native_mixer
from validation.model import RECOMPUTE


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    args: dict  # Megatron-LM arguments, as `trainflops count --args` reads them
    docs: tuple  # packed document lengths
    recompute: str
    seed: int
    native_mixer: dict | None = None  # a mixer on the GQA of `args` (config.with_native_mixer)
    attention_residuals: int | None = None  # AttnRes' block size, in place of the residual sum

    def config(self):
        """The reference model's config.Config."""
        config = with_native_mixer(config_from_args(self.args), self.native_mixer)
        return dataclasses.replace(config, attention_residuals=self.attention_residuals)

    def describe(self):
        return f"docs {','.join(map(str, self.docs))}, recompute {self.recompute}"


def _documents(rng, max_docs=4, max_length=40, max_tokens=72):
    lengths = []
    for _ in range(rng.randint(1, max_docs)):
        room = max_tokens - sum(lengths)
        if room < 1:
            break
        lengths.append(rng.randint(1, min(max_length, room)))
    return tuple(lengths)


def _base(rng, layers=None):
    heads = rng.choice([2, 3, 4])
    return {
        "num_layers": layers or rng.randint(1, 3),
        "hidden_size": rng.choice([16, 24, 32, 48, 64]),
        "ffn_hidden_size": rng.choice([16, 24, 40, 64]),
        "num_attention_heads": heads,
        "kv_channels": rng.choice([4, 6, 8]),
        "swiglu": rng.random() < 0.5,
        "padded_vocab_size": rng.choice([32, 48, 80, 128]),
        "mtp_num_layers": rng.choice([0, 0, 1]),
    }


def _gqa(rng, args, gate):
    heads = args["num_attention_heads"]
    grouped = rng.random() < 0.7
    args.update(group_query_attention=grouped, attention_output_gate=gate)
    if grouped:
        args["num_query_groups"] = rng.choice([g for g in range(1, heads + 1) if heads % g == 0])


def _mla(rng, args, q_lora):
    args.pop("kv_channels")
    args.update(multi_latent_attention=True, q_lora_rank=rng.choice([8, 12, 20]) if q_lora else None,
                 kv_lora_rank=rng.choice([8, 12, 16]), qk_head_dim=rng.choice([4, 6, 8]),
                 qk_pos_emb_head_dim=rng.choice([2, 4]), v_head_dim=rng.choice([4, 6, 8]))


def _dsa(rng, args, topk, pool=1):
    _mla(rng, args, q_lora=rng.random() < 0.6)
    args.update(experimental_attention_variant="dsa", dsa_indexer_n_heads=rng.choice([2, 3, 4]),
                dsa_indexer_head_dim=rng.choice([4, 8]), dsa_indexer_topk=topk,
                dsa_indexer_topk_freq=rng.choice([1, 1, 2, 3]), dsa_indexer_skip_topk_offset=rng.choice([0, 0, 1, 2, 3]))
    if pool > 1:
        args["dsa_kpool_size"] = pool


def _moe(rng, args, shared, latent):
    layers = args["num_layers"]
    experts = rng.choice([2, 4, 6, 8])
    if rng.random() < 0.5:
        frequency = rng.choice([1, 2])
    else:
        frequency = [rng.randint(0, 1) for _ in range(layers)]
        frequency[rng.randrange(layers)] = 1  # at least one MoE layer
    args.update(num_experts=experts, moe_router_topk=rng.randint(1, min(3, experts)),
                moe_ffn_hidden_size=rng.choice([8, 12, 16, 24]), moe_layer_freq=frequency,
                moe_shared_expert_intermediate_size=rng.choice([8, 16, 24]) if shared else None,
                moe_latent_size=rng.choice([8, 12]) if latent else None)


def _gqa_case(rng, index):
    args = _base(rng)
    _gqa(rng, args, gate=index % 2 == 0)
    return args, _documents(rng)


def _mla_case(rng, index):
    args = _base(rng)
    _mla(rng, args, q_lora=index % 2 == 0)
    return args, _documents(rng)


GRAD_MODE_SPELLINGS = {
    # The grad mode, set explicitly, or derived from the indexer loss (docs/accounting.md, 2).
    "off": [{"dsa_indexer_grad_mode": "off"}, {}],
    "detached": [{"dsa_indexer_grad_mode": "detached"}, {"dsa_indexer_loss_coeff": 0.01}],
    "sparse": [{"dsa_indexer_grad_mode": "sparse"},
               {"dsa_indexer_loss_coeff": 0.01, "dsa_indexer_use_sparse_loss": True}],
    "full": [{"dsa_indexer_grad_mode": "full", "dsa_indexer_loss_coeff": 0.01}],
}


def _dsa_case(rng, index):
    args = _base(rng, layers=rng.randint(1, 4))
    docs = _documents(rng)
    longest = max(docs)
    # Per grad mode, alternately a top-k below the longest document (sparse
    # rows) and one at or above it (every row keeps all its keys).
    topk = rng.randint(1, max(1, longest - 1)) if index // 4 % 2 == 0 else rng.randint(longest, longest + 8)
    _dsa(rng, args, topk)
    mode = list(GRAD_MODE_SPELLINGS)[index % 4]
    args.update(rng.choice(GRAD_MODE_SPELLINGS[mode]))
    args["mtp_num_layers"] = rng.choice([0, 1, 2])
    return args, docs


def _kpool_case(rng, index):
    args = _base(rng, layers=rng.randint(1, 3))
    docs = _documents(rng)
    pool = (2, 4, 8)[index // 3 % 3]
    _dsa(rng, args, topk=pool * rng.randint(1, 3), pool=pool)
    args["dsa_kpool_tail"] = index % 2 == 0
    args.update(rng.choice(GRAD_MODE_SPELLINGS["off"]))
    return args, docs


def _mlp_case(rng, index):
    args = _base(rng)
    args["swiglu"] = index % 2 == 0
    (_gqa if index < 2 else _mla)(rng, args, rng.random() < 0.5)
    return args, _documents(rng)


def _moe_case(rng, index):
    args = _base(rng, layers=rng.randint(1, 4))
    _moe(rng, args, shared=index % 2 == 0, latent=index % 4 >= 2)
    attention = rng.choice(["gqa", "mla", "dsa"])
    docs = _documents(rng)
    if attention == "gqa":
        _gqa(rng, args, gate=rng.random() < 0.5)
    elif attention == "mla":
        _mla(rng, args, q_lora=rng.random() < 0.5)
    else:
        _dsa(rng, args, topk=rng.randint(1, 12))
        args.update(rng.choice(rng.choice(list(GRAD_MODE_SPELLINGS.values()))))
    return args, docs


def _mtp_case(rng, index):
    args = _base(rng)
    args["mtp_num_layers"] = index % 3 + 1
    if index % 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    _gqa(rng, args, gate=rng.random() < 0.5)
    return args, _documents(rng)


def _packed_case(rng, index):
    args = _base(rng)
    docs = _documents(rng, max_docs=10, max_length=16, max_tokens=80)
    docs = docs + (1,) * (index % 2)  # single-token documents: a query that sees only itself
    if index % 2:
        _gqa(rng, args, gate=False)
    else:
        _dsa(rng, args, topk=rng.randint(1, 6))
        args.update(rng.choice(GRAD_MODE_SPELLINGS["sparse"]))
    return args, docs


def _block_sparse_case(rng, index):
    """GQA layers attending blocks: alternately blocks of 1 (top-k of keys)
    and larger ones, with K below and at or above the longest document's blocks."""
    args = _base(rng, layers=rng.randint(1, 3))
    _gqa(rng, args, gate=rng.random() < 0.5)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    docs = _documents(rng)
    size = 1 if index % 4 == 0 else rng.choice([2, 3, 4, 8])
    blocks = -(-max(docs) // size)
    topk = rng.randint(1, max(1, blocks - 1)) if index % 2 == 0 else rng.randint(blocks, blocks + 2)
    block_sparse = {"type": "block_sparse", "indexer_num_heads": rng.choice([1, 2, 3]),
                    "indexer_head_dim": rng.choice([4, 8]),
                    "block_size": size, "topk_blocks": topk, "init_blocks": rng.randint(0, topk - 1)}
    return args, docs, block_sparse


def _qsa_case(rng, index):
    """QSA on GQA: blocks of several keys, a budget below and at or above
    the longest document's complete blocks, indexer key heads shared by
    groups of query heads (one key head for all, one for each pair, one each)."""
    args = _base(rng, layers=rng.randint(1, 3))
    _gqa(rng, args, gate=rng.random() < 0.5)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    docs = _documents(rng)
    size = rng.choice([2, 3, 4, 8])
    blocks = max(docs) // size
    budget_blocks = rng.randint(1, max(1, blocks - 1)) if index % 2 == 0 else rng.randint(max(blocks, 1), blocks + 2)
    query_heads = rng.choice([2, 4])
    key_heads = (1, 2, query_heads)[index % 3]
    qsa = {"type": "qsa", "indexer_num_heads": query_heads, "indexer_key_heads": key_heads,
           "indexer_head_dim": rng.choice([4, 8]), "block_size": size, "budget": budget_blocks * size}
    return args, docs, qsa


def _kda_case(rng, index):
    """Kimi Delta Attention in place of the attention (the GQA arguments give
    the rest of the model): full-rank and low-rank output gates, packed
    documents, dense MLP or MoE, with and without MTP; the delta rule in
    chunks of 1 to 16 tokens, documents of several chunks and a partial last
    one."""
    args = _base(rng)
    _gqa(rng, args, gate=False)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    head_dim = rng.choice([4, 6, 8])
    kda = {"type": "kda", "num_heads": rng.choice([1, 2, 3]), "head_dim": head_dim,
           "conv_kernel_dim": rng.choice([2, 3, 4]), "forget_gate_rank": rng.choice([2, 3, head_dim]),
           "output_gate_rank": rng.choice([2, head_dim]) if index % 2 else None,
           "chunk_size": rng.choice([1, 3, 4, 8, 16])}
    return args, _documents(rng), kda


def _gdn_case(rng, index):
    """The gated delta net in place of the attention: keys and values of
    different widths, one key head per value head or shared by two or three
    (as Qwen3-Next's 16 key heads serve 32 value heads), packed documents,
    dense MLP or MoE, with and without MTP; the delta rule in chunks of 1 to
    16 tokens, documents of several chunks and a partial last one."""
    args = _base(rng)
    _gqa(rng, args, gate=False)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    key_heads = rng.choice([1, 2])
    key_dim = rng.choice([2, 4, 6])
    gdn = {"type": "gdn", "key_head_dim": key_dim, "value_head_dim": rng.choice([d for d in (3, 4, 8) if d != key_dim]),
           "num_key_heads": key_heads, "num_value_heads": key_heads * (1, 2, 3)[index % 3],
           "conv_kernel_dim": rng.choice([2, 3, 4]), "chunk_size": rng.choice([1, 3, 4, 8, 16])}
    return args, _documents(rng), gdn


def _csa2_case(rng, index):
    """DeepSeek-V4.1 attention in place of the attention: a window-only
    layer, a layer that writes the cache and runs an indexer, then layers
    that read it and run their own indexer or reuse the last one's choice;
    every third case two-level top-k (a candidate source, then consumers);
    top-k below and at or above the longest document's entries; an MTP
    layer with its own cache. Two-level cases draw top-k around the
    (K - 1) B + 1 entries that K candidate blocks of B always hold (the
    query's own block may be partial), and above them: a consumer selects
    min(k, its candidates)."""
    args = _base(rng, layers=rng.randint(3, 4))
    _gqa(rng, args, gate=False)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    docs = _documents(rng)
    ratio = rng.choice([r for r in (1, 2, 4) if r <= max(docs)])
    heads = rng.choice([2, 4])
    common = {"num_heads": heads, "head_dim": rng.choice([4, 8]), "q_lora_rank": rng.choice([8, 12]),
              "o_groups": rng.choice([1, 2]), "o_lora_rank": rng.choice([4, 8]), "window": rng.choice([1, 3, 8, 16])}
    entries = max(docs) // ratio
    topk = rng.randint(1, max(1, entries - 1)) if index % 2 == 0 else rng.randint(entries, entries + 3)
    indexer = {"indexer_num_heads": rng.choice([1, 2, 4]), "indexer_head_dim": rng.choice([4, 8])}
    cache = {**common, "compress_ratio": ratio, "topk": topk}
    two_level = index % 3 == 1
    candidates = {"candidate_blocks": rng.randint(2, 3), "candidate_block_size": rng.randint(1, 3)}
    if two_level:
        always_held = (candidates["candidate_blocks"] - 1) * candidates["candidate_block_size"] + 1
        all_blocks = candidates["candidate_blocks"] * candidates["candidate_block_size"]
        cache["topk"] = (rng.randint(max(1, always_held - 1), always_held) if index % 2
                         else rng.randint(always_held + 1, all_blocks + 2))
    writer = {**cache, **indexer, "writes_cache": True, "runs_indexer": True}
    if two_level:
        writer.update(candidates="source", **candidates)
    layers = [common, writer]
    for number in range(3, args["num_layers"] + 1):
        if rng.random() < 0.5 or (two_level and number == 3):
            layers.append({**cache, **indexer, "runs_indexer": True,
                           **({"candidates": "consumer", **candidates} if two_level else {})})
        else:
            layers.append(cache)
    if index == 0:
        args["mtp_num_layers"] = 1
    mtp = {**cache, **indexer, "writes_cache": True, "runs_indexer": True} if args["mtp_num_layers"] else None
    return args, docs, {"type": "csa2", "layers": layers, "mtp": mtp}


def _mhc_case(rng, index):
    """mHC around GQA or MLA, a dense MLP or MoE, with and without MTP."""
    args = _base(rng)
    args.update(enable_hyper_connections=True, num_residual_streams=[4, 2, 1, 3][index % 4])
    if index % 2:
        _mla(rng, args, q_lora=rng.random() < 0.5)
    else:
        _gqa(rng, args, gate=rng.random() < 0.5)
    if index % 3 == 1:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    if index == 0:
        args["mtp_num_layers"] = 1
    return args, _documents(rng)


def _attnres_case(rng, index):
    """Attention residuals (Kimi K3's) around GQA, or around KDA as in
    Kimi K3, dense MLP or MoE, with and without MTP (a plain residual):
    blocks of one layer, of several (the last one partial or full), and one
    block of more layers than the model has."""
    kind = index % 4
    if kind == 0:
        block_size, layers = 1, rng.randint(2, 7)
    elif kind == 3:
        layers = rng.randint(2, 6)
        block_size = layers + rng.randint(1, 2)
    else:
        block_size = rng.randint(2, 3)
        layers = block_size * rng.randint(1, 2) + (rng.randint(1, block_size - 1) if kind == 1 else 0)
    args = _base(rng, layers=layers)
    _gqa(rng, args, gate=rng.random() < 0.5)
    if index % 3 == 2:
        _moe(rng, args, shared=rng.random() < 0.5, latent=False)
    if index == 0:
        args["mtp_num_layers"] = 1
    kda = None
    if index % 3 == 1:
        head_dim = rng.choice([4, 8])
        kda = {"type": "kda", "num_heads": rng.choice([1, 2]), "head_dim": head_dim, "conv_kernel_dim": 4,
               "forget_gate_rank": head_dim, "output_gate_rank": head_dim, "chunk_size": rng.choice([4, 8, 16])}
    return args, _documents(rng), kda, block_size


# family -> (number of cases, builder(rng, index) -> (args, docs), (args, docs, native_mixer)
# or (args, docs, native_mixer, attention residuals' block size))
FAMILIES = {
    "gqa": (8, _gqa_case),
    "mla": (6, _mla_case),
    "dsa": (20, _dsa_case),
    "kpool": (9, _kpool_case),
    "mlp": (4, _mlp_case),
    "moe": (10, _moe_case),
    "mtp": (6, _mtp_case),
    "packed": (4, _packed_case),
    "block-sparse": (8, _block_sparse_case),
    "qsa": (6, _qsa_case),
    "kda": (6, _kda_case),
    "gdn": (6, _gdn_case),
    "csa2": (6, _csa2_case),
    "mhc": (6, _mhc_case),
    "attnres": (8, _attnres_case),
}


def generate(seed):
    """Every case, in a fixed order. Recompute policies rotate within each family."""
    cases = []
    for family, (count, build) in FAMILIES.items():
        for index in range(count):
            name = f"{family}-{index + 1}"
            rng = random.Random(f"{seed}/{name}")
            args, docs, *native = build(rng, index)
            recompute = RECOMPUTE[(index + index // 3) % 3]  # not in step with index % 2 or % 3
            cases.append(Case(name, args, docs, recompute, rng.randrange(2**31), *native))
    return cases
