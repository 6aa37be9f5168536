"""Qwen3.8's sparse attention (QSA): GQA over the keys of the complete blocks
a forward-only indexer selects, and of the query's own incomplete block
(docs/qwen3.8.md). The attention itself is attention.selected_keys_attention.
"""

import types

import torch
import torch.nn.functional as F


def qsa_parameters(qsa, hidden_size, parameters):
    """The indexer: nh query heads and kh key heads of hd, from the hidden state."""
    hd = qsa.indexer_head_dim
    return types.SimpleNamespace(
        query=parameters.weight(qsa.indexer_num_heads * hd, hidden_size),
        key=parameters.weight(qsa.indexer_key_heads * hd, hidden_size),
    )


def qsa_key_rows(qsa, p, x, batch, tags):
    """Token indices each query attends. Without gradient (the selection is a
    top-k): the indexer projects every token; the index keys of each complete
    block of r are averaged (additions, no product); each query head scores
    the complete blocks at or before its query against its key head's pooled
    keys (nh hd FMAs per (query, block)); a block's score is its best head's.
    The query keeps the budget / r best blocks and, of its own incomplete
    block, the keys up to itself."""
    nh, kh, hd, r = qsa.indexer_num_heads, qsa.indexer_key_heads, qsa.indexer_head_dim, qsa.block_size
    tokens = x.shape[0]
    rows = []
    with torch.no_grad():
        with tags.scope(component="indexer_projections"):
            query = F.linear(x, p.query).view(tokens, kh, nh // kh, hd)
            key = F.linear(x, p.key).view(tokens, kh, hd)
        for start, length in batch.documents():
            complete = length // r
            pooled = key[start:start + complete * r].view(complete, r, kh, hd).mean(dim=1)
            for i in range(length):
                visible = (i + 1) // r  # complete blocks at or before the query
                parts = []
                if visible:
                    with tags.scope(component="indexer_scoring"):
                        scores = torch.bmm(query[start + i], pooled[:visible].permute(1, 2, 0))
                    best = scores.reshape(nh, visible).max(dim=0).values
                    chosen = torch.topk(best, min(qsa.budget // r, visible)).indices
                    parts.append(((chosen * r).unsqueeze(1) + torch.arange(r)).reshape(-1))
                parts.append(torch.arange(visible * r, i + 1))
                rows.append(torch.cat(parts) + start)
    return rows
