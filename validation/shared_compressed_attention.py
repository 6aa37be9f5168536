"""DeepSeek-V4.1 attention (CSA2; docs/deepseek-v4.1.md).

Single-latent heads: the queries come through a LoRA (h -> q_lora -> n dv),
every head scores and reads one dv-wide latent per key (2 n dv FMAs per
key), and the output leaves through o_groups grouped projections of rank
o_lora. Each query attends its window (the last `window` keys, its own
included) and, with a compression ratio r, the top-k entries of a
compressed cache that an earlier layer (its KV source) or the layer itself
wrote: an entry pools r tokens of the compressor's projection (h -> dv)
with a softmax gate of the same size (no gate at r = 1), a weighted sum:
elementwise, no product. A query sees the entries complete at or before it.

The selection has no gradient. An index source projects indexer queries
from the query LoRA and head weights from the hidden state, and scores
every entry its query sees: per entry, nh hd FMAs for the heads' dot
products and nh for their weighted sum; the KV source that runs an indexer
projects each entry it writes to an index key (dv x hd). A layer that runs
no indexer attends the last index source's choice. A candidate source keeps,
per query, the candidate_blocks best blocks of candidate_block_size entries
(its own, last, block always); a candidate consumer scores every entry and
chooses its top-k among the last source's candidates only.

The cache's entries cross layers as a tensor argument (`entries`), so that
the gradients of the layers that read them reach the compressor through
activation checkpointing.
"""

import types

import torch
import torch.nn.functional as F

from validation.tensors import rms_norm


class Selection(types.SimpleNamespace):
    """What CSA2 layers share besides the entries: each document's first
    entry (`offsets`), the index keys, and per query the entries chosen
    (`rows`) and, from a candidate source on, the candidates."""


def csa2_parameters(layer, hidden_size, parameters):
    h, n, dv, r = hidden_size, layer.num_heads, layer.head_dim, layer.compress_ratio
    group_width = n * dv // layer.o_groups
    writes, indexes = layer.writes_cache, layer.runs_indexer
    nh, hd = layer.indexer_num_heads, layer.indexer_head_dim
    return types.SimpleNamespace(
        layer=layer,
        query_down=parameters.weight(layer.q_lora_rank, h),
        query_up=parameters.weight(n * dv, layer.q_lora_rank),
        latent=parameters.weight(dv, h),
        output_down=parameters.tensor(layer.o_groups, group_width, layer.o_lora_rank, scale=group_width ** -0.5),
        output_up=parameters.weight(h, layer.o_groups * layer.o_lora_rank),
        compressor=parameters.weight(dv, h) if writes else None,
        compressor_gate=parameters.weight(dv, h) if writes and r > 1 else None,
        indexer_query=parameters.weight(nh * hd, layer.q_lora_rank) if indexes else None,
        indexer_weights=parameters.weight(nh, h) if indexes else None,
        index_key=parameters.weight(hd, dv) if indexes and writes else None,
    )


def _compress(layer, p, x, batch, tags):
    """The entries (sum over documents of floor(L/r), dv) and each document's first."""
    r, dv = layer.compress_ratio, layer.head_dim
    with tags.scope(component="kv_compressor"):
        projected = F.linear(x, p.compressor)
        gate = F.linear(x, p.compressor_gate) if p.compressor_gate is not None else None
    entries, offsets, count = [], [], 0
    for start, length in batch.documents():
        complete = length // r
        offsets.append(count)
        count += complete
        tokens = projected[start:start + complete * r].view(complete, r, dv)
        if gate is None:
            entries.append(tokens.reshape(complete, dv))
        else:
            weights = torch.softmax(gate[start:start + complete * r].view(complete, r, dv), dim=1)
            entries.append((weights * tokens).sum(dim=1))
    return rms_norm(torch.cat(entries)), offsets


def _candidates(layer, scores):
    """The entries of the candidate_blocks best blocks (block score: its best entry), the last block always."""
    size, count = layer.candidate_block_size, scores.shape[0]
    blocks = -(-count // size)
    best = torch.stack([scores[b * size:(b + 1) * size].max() for b in range(blocks)])
    best = best.masked_fill(torch.arange(blocks) == blocks - 1, float("inf"))
    kept = torch.topk(best, min(layer.candidate_blocks, blocks)).indices
    return torch.cat([torch.arange(b * size, min((b + 1) * size, count)) for b in kept.tolist()])


def _select(layer, p, x, query_latent, batch, entries, shared, tags):
    """The index source's Selection: every query's top-k entries (global entry indices)."""
    r, nh, hd, tokens = layer.compress_ratio, layer.indexer_num_heads, layer.indexer_head_dim, x.shape[0]
    rows, candidates = [], []
    with torch.no_grad():
        with tags.scope(component="indexer_projections"):
            query = F.linear(query_latent, p.indexer_query).view(tokens, nh, hd)
            head_weights = F.linear(x, p.indexer_weights)
            index_keys = F.linear(entries, p.index_key) if layer.writes_cache else shared.index_keys
        for document, (start, length) in enumerate(batch.documents()):
            offset = shared.offsets[document]
            for i in range(length):
                t, seen = start + i, (i + 1) // r
                if seen == 0:
                    rows.append(torch.zeros(0, dtype=torch.long))
                    candidates.append(torch.zeros(0, dtype=torch.long))
                    continue
                with tags.scope(component="indexer_scoring"):
                    relu = torch.relu(torch.mm(query[t], index_keys[offset:offset + seen].t()))
                    scores = torch.mm(head_weights[t].unsqueeze(0), relu).squeeze(0)
                allowed = torch.arange(seen)
                if layer.candidates == "source":
                    candidates.append(_candidates(layer, scores))
                elif layer.candidates == "consumer":
                    allowed = shared.candidates[t]
                chosen = allowed[torch.topk(scores[allowed], min(layer.topk, allowed.shape[0])).indices]
                rows.append(chosen + offset)
    return Selection(offsets=shared.offsets, index_keys=index_keys, rows=rows,
                     candidates=candidates if layer.candidates == "source" else shared.candidates)


def _core(layer, query, latent, entries, rows, batch, tags):
    """Per query: softmax over its window's latents and its selected entries,
    then their weighted sum; the window's products in core_attention, the
    entries' in dsa_core_attention."""
    n, dv, window = layer.num_heads, layer.head_dim, layer.window
    outputs = []
    for start, length in batch.documents():
        for i in range(length):
            t = start + i
            keys = latent[max(start, t - window + 1):t + 1]
            with tags.scope(component="core_attention"):
                window_scores = torch.mm(query[t], keys.t())
            selected = None
            if rows is not None:
                selected = entries.index_select(0, rows[t])
                with tags.scope(component="dsa_core_attention"):
                    entry_scores = torch.mm(query[t], selected.t())
                scores = torch.cat([window_scores, entry_scores], dim=1)
            else:
                scores = window_scores
            probabilities = torch.softmax(scores * dv ** -0.5, dim=-1)
            with tags.scope(component="core_attention"):
                out = torch.mm(probabilities[:, :keys.shape[0]], keys)
            if selected is not None:
                with tags.scope(component="dsa_core_attention"):
                    out = out + torch.mm(probabilities[:, keys.shape[0]:], selected)
            outputs.append(out.reshape(n * dv))
    return torch.stack(outputs)


def csa2_attention(p, x, batch, shared, entries, tags, recompute_core):
    """One CSA2 layer. `shared` and `entries`: the Selection and entries the
    layers before it left (None before the first writer). Returns the
    output, the Selection the next layers see, and the entries this layer
    wrote (None when it writes none)."""
    layer = p.layer
    tokens, n, dv = x.shape[0], layer.num_heads, layer.head_dim
    with tags.scope(component="attention_projections"):
        query_latent = rms_norm(F.linear(x, p.query_down))
        query = F.linear(query_latent, p.query_up).view(tokens, n, dv)
        latent = rms_norm(F.linear(x, p.latent))
    written = None
    if layer.writes_cache:
        written, offsets = _compress(layer, p, x, batch, tags)
        entries = written
        shared = Selection(offsets=offsets, index_keys=None, rows=None, candidates=None)
    if layer.runs_indexer:
        shared = _select(layer, p, x, query_latent.detach(), batch, entries.detach(), shared, tags)
    rows = shared.rows if layer.compress_ratio else None
    core = recompute_core(lambda q, kv, cache: _core(layer, q, kv, cache, rows, batch, tags))
    out = core(query, latent, entries if layer.compress_ratio else None)
    groups = layer.o_groups
    with tags.scope(component="attention_projections"):
        grouped = torch.bmm(out.view(tokens, groups, -1).transpose(0, 1), p.output_down)  # (groups, T, o_lora)
        return F.linear(grouped.transpose(0, 1).reshape(tokens, -1), p.output_up), shared, written
