"""What the cases cover, and what they must: a suite that silently stopped
exercising a grad mode or a pool size would still print `0 failed`."""

from validation.config import GRAD_MODES, Gqa, Moe, config_from_args, with_block_sparse
from validation.model import RECOMPUTE

REQUIRED = frozenset(
    ["gqa", "gqa output gate", "mha", "mla", "mla q-lora", "mla without q-lora", "dense mlp", "swiglu mlp",
     "moe", "moe shared expert", "moe latent", "mtp depth 1", "mtp depth 2", "mtp depth 3",
     "packed documents", "single-token document", "dsa top-k below a document",
     "dsa top-k at or above every document", "dsa index sharing", "dsa in mtp",
     "block-sparse blocks of 1", "block-sparse blocks of several keys", "block-sparse k below a document",
     "block-sparse k at or above every document", "block-sparse init blocks", "block-sparse in mtp",
     "mhc", "mhc in mtp", "mhc with moe"]
    + [f"recompute {r}" for r in RECOMPUTE]
    + [f"dsa {mode}, recompute {r}" for mode in GRAD_MODES for r in RECOMPUTE]
    + [f"kpool p={p}, {tail}" for p in (2, 4, 8) for tail in ("tail", "no tail")]
)


def features(case):
    """The covered features of one case, as REQUIRED names them."""
    config = with_block_sparse(config_from_args(case.args), case.block_sparse)
    found = {f"recompute {case.recompute}"}
    sparse = config.block_sparse
    if sparse is not None:
        found.add("block-sparse blocks of 1" if sparse.block_size == 1 else "block-sparse blocks of several keys")
        blocks = -(-max(case.docs) // sparse.block_size)
        found.add("block-sparse k below a document" if sparse.topk_blocks < blocks
                  else "block-sparse k at or above every document")
        if sparse.init_blocks:
            found.add("block-sparse init blocks")
        if config.mtp_depths:
            found.add("block-sparse in mtp")
    attention = config.attention
    if isinstance(attention, Gqa):
        found.add("gqa")
        if attention.output_gate:
            found.add("gqa output gate")
        if attention.num_groups == attention.num_heads:
            found.add("mha")
    elif config.indexer is None:
        found |= {"mla", "mla q-lora" if attention.q_lora_rank else "mla without q-lora"}
    indexer = config.indexer
    if indexer is not None and indexer.pool_size > 1:
        found.add(f"kpool p={indexer.pool_size}, {'tail' if indexer.pool_tail else 'no tail'}")
    elif indexer is not None:
        found.add(f"dsa {indexer.grad_mode}, recompute {case.recompute}")
        found.add("dsa top-k below a document" if indexer.topk < max(case.docs)
                  else "dsa top-k at or above every document")
        if any(not indexer.runs_at(j) for j in range(1, len(config.channel_mixers) + 1)):
            found.add("dsa index sharing")
        if config.mtp_depths:
            found.add("dsa in mtp")
    mixers = list(config.channel_mixers) + ([config.mtp_channel_mixer] if config.mtp_depths else [])
    for mixer in mixers:
        if isinstance(mixer, Moe):
            found.add("moe")
            if mixer.shared:
                found.add("moe shared expert")
            if mixer.latent_size:
                found.add("moe latent")
        else:
            found.add("swiglu mlp" if mixer.gated else "dense mlp")
    if config.mtp_depths:
        found.add(f"mtp depth {config.mtp_depths}")
    if config.residual_streams:
        found.add("mhc")
        if config.mtp_depths:
            found.add("mhc in mtp")
        if any(isinstance(mixer, Moe) for mixer in mixers):
            found.add("mhc with moe")
    if len(case.docs) > 1:
        found.add("packed documents")
    if 1 in case.docs:
        found.add("single-token document")
    return found


def missing(cases):
    """REQUIRED features no case covers."""
    covered = set().union(*(features(case) for case in cases))
    return sorted(REQUIRED - covered)
