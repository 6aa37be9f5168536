"""What the cases cover, and what they must: a suite that silently stopped
exercising a grad mode or a pool size would still print `0 failed`."""

from validation.config import GRAD_MODES, BlockSparse, Csa2Stack, Gdn, Gqa, Kda, Moe, Qsa
from validation.model import RECOMPUTE

REQUIRED = frozenset(
    ["gqa", "gqa output gate", "mha", "mla", "mla q-lora", "mla without q-lora", "dense mlp", "swiglu mlp",
     "moe", "moe shared expert", "moe latent", "mtp depth 1", "mtp depth 2", "mtp depth 3",
     "packed documents", "single-token document", "dsa top-k below a document",
     "dsa top-k at or above every document", "dsa index sharing", "dsa in mtp",
     "block-sparse blocks of 1", "block-sparse blocks of several keys", "block-sparse k below a document",
     "block-sparse k at or above every document", "block-sparse init blocks", "block-sparse in mtp",
     "qsa budget below a document", "qsa budget at or above every document", "qsa indexer key heads shared",
     "qsa an indexer key head per query head", "qsa document without a complete block", "qsa in mtp",
     "kda full-rank output gate", "kda low-rank output gate", "kda packed documents",
     "kda document of several chunks", "kda partial last chunk", "kda with moe", "kda in mtp",
     "gdn a key head per value head", "gdn key heads shared", "gdn packed documents",
     "gdn document of several chunks", "gdn partial last chunk", "gdn with moe", "gdn in mtp",
     "csa2 window-only layer", "csa2 ratio 1", "csa2 ratio above 1", "csa2 reader running its own indexer",
     "csa2 reader reusing the selection", "csa2 candidate source and consumer",
     "csa2 consumer top-k above its fewest candidates", "csa2 top-k below a document",
     "csa2 top-k at or above every document", "csa2 in mtp",
     "mhc", "mhc in mtp", "mhc with moe",
     "attnres blocks of 1 layer", "attnres blocks of several layers, the last partial",
     "attnres blocks of several layers, the last full", "attnres one block of more layers than the model",
     "attnres around kda", "attnres with moe", "attnres in mtp", "attnres packed documents"]
    + [f"recompute {r}" for r in RECOMPUTE]
    + [f"{kind}, recompute {r}" for kind in ("qsa", "kda", "gdn", "csa2", "attnres") for r in RECOMPUTE]
    + [f"dsa {mode}, recompute {r}" for mode in GRAD_MODES for r in RECOMPUTE]
    + [f"kpool p={p}, {tail}" for p in (2, 4, 8) for tail in ("tail", "no tail")]
)


def features(case):
    """The covered features of one case, as REQUIRED names them."""
    config = case.config()
    found = {f"recompute {case.recompute}"}
    sparse = config.native_mixer
    if isinstance(sparse, BlockSparse):
        found.add("block-sparse blocks of 1" if sparse.block_size == 1 else "block-sparse blocks of several keys")
        blocks = -(-max(case.docs) // sparse.block_size)
        found.add("block-sparse k below a document" if sparse.topk_blocks < blocks
                  else "block-sparse k at or above every document")
        if sparse.init_blocks:
            found.add("block-sparse init blocks")
        if config.mtp_depths:
            found.add("block-sparse in mtp")
    elif isinstance(sparse, Qsa):
        blocks = max(case.docs) // sparse.block_size
        found.add("qsa budget below a document" if sparse.budget // sparse.block_size < blocks
                  else "qsa budget at or above every document")
        found.add("qsa indexer key heads shared" if sparse.indexer_key_heads < sparse.indexer_num_heads
                  else "qsa an indexer key head per query head")
        found.add(f"qsa, recompute {case.recompute}")
        if min(case.docs) < sparse.block_size:
            found.add("qsa document without a complete block")
        if config.mtp_depths:
            found.add("qsa in mtp")
    elif isinstance(sparse, Kda):
        found.add("kda low-rank output gate" if sparse.output_gate_rank else "kda full-rank output gate")
        found |= _delta_rule_features("kda", sparse.chunk_size, case, config)
    elif isinstance(sparse, Gdn):
        found.add("gdn key heads shared" if sparse.num_value_heads > sparse.num_key_heads
                  else "gdn a key head per value head")
        found |= _delta_rule_features("gdn", sparse.chunk_size, case, config)
    elif isinstance(sparse, Csa2Stack):
        found |= _csa2_features(sparse, case)
    # KDA, the gated delta net and CSA2 replace the arguments' attention.
    attention = None if isinstance(sparse, (Kda, Gdn, Csa2Stack)) else config.attention
    if isinstance(attention, Gqa):
        found.add("gqa")
        if attention.output_gate:
            found.add("gqa output gate")
        if attention.num_groups == attention.num_heads:
            found.add("mha")
    elif attention is not None and config.indexer is None:
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
    if config.attention_residuals:
        found |= _attention_residual_features(config, case, mixers)
    if len(case.docs) > 1:
        found.add("packed documents")
    if 1 in case.docs:
        found.add("single-token document")
    return found


def _delta_rule_features(name, chunk_size, case, config):
    """What a case exercises of a chunked delta rule (KDA's or the gated delta net's)."""
    found = {f"{name}, recompute {case.recompute}"}
    if len(case.docs) > 1:
        found.add(f"{name} packed documents")
    if any(length > chunk_size for length in case.docs):
        found.add(f"{name} document of several chunks")
    if any(length % chunk_size for length in case.docs):
        found.add(f"{name} partial last chunk")
    if any(isinstance(mixer, Moe) for mixer in config.channel_mixers):
        found.add(f"{name} with moe")
    if config.mtp_depths:
        found.add(f"{name} in mtp")
    return found


def _attention_residual_features(config, case, mixers):
    found = {f"attnres, recompute {case.recompute}"}
    block_size, layers = config.attention_residuals, len(config.channel_mixers)
    if block_size == 1:
        found.add("attnres blocks of 1 layer")
    elif block_size > layers:
        found.add("attnres one block of more layers than the model")
    else:
        found.add("attnres blocks of several layers, the last " + ("partial" if layers % block_size else "full"))
    if isinstance(config.native_mixer, Kda):
        found.add("attnres around kda")
    if any(isinstance(mixer, Moe) for mixer in mixers):
        found.add("attnres with moe")
    if config.mtp_depths:
        found.add("attnres in mtp")
    if len(case.docs) > 1:
        found.add("attnres packed documents")
    return found


def _csa2_features(stack, case):
    found = {f"csa2, recompute {case.recompute}"}
    if stack.mtp:
        found.add("csa2 in mtp")
    for number, layer in enumerate(stack.layers):
        ratio = layer.compress_ratio
        if not ratio:
            found.add("csa2 window-only layer")
            continue
        found.add("csa2 ratio 1" if ratio == 1 else "csa2 ratio above 1")
        found.add("csa2 top-k below a document" if layer.topk < max(case.docs) // ratio
                  else "csa2 top-k at or above every document")
        if not layer.writes_cache:
            found.add("csa2 reader running its own indexer" if layer.runs_indexer
                      else "csa2 reader reusing the selection")
        if layer.candidates == "consumer":
            found.add("csa2 candidate source and consumer")
            held = layer.candidate_blocks * layer.candidate_block_size
            if layer.topk > held - layer.candidate_block_size + 1 and max(case.docs) // ratio > held:
                found.add("csa2 consumer top-k above its fewest candidates")
    return found


def missing(cases):
    """REQUIRED features no case covers."""
    covered = set().union(*(features(case) for case in cases))
    return sorted(REQUIRED - covered)
