"""Attention references: GQA (with or without output gate, dense or over
the keys an indexer selects: block-sparse here, QSA in
compressed_block_sparse.py), dense MLA, and the absorbed-MLA sparse
attention of DSA and KPool layers.

Core attention runs one query row at a time over exactly the keys that row
sees: a causal kernel skips masked (query, key) pairs, so the reference never
computes them either, and a query sees itself (L(L+1)/2 pairs per document).
"""

import types

import torch
import torch.nn.functional as F

from validation.config import Gqa
from validation.tensors import rms_norm, rope


def gqa_parameters(attention, hidden_size, parameters):
    q = attention.num_heads * attention.head_dim
    kv = attention.num_groups * attention.head_dim
    return types.SimpleNamespace(
        query=parameters.weight(q, hidden_size),
        key=parameters.weight(kv, hidden_size),
        value=parameters.weight(kv, hidden_size),
        gate=parameters.weight(q, hidden_size) if attention.output_gate else None,
        output=parameters.weight(hidden_size, q),
    )


def mla_parameters(attention, hidden_size, parameters):
    n, qk, rope_dim, v = attention.num_heads, attention.qk_head_dim, attention.rope_dim, attention.v_head_dim
    q_lora = attention.q_lora_rank
    return types.SimpleNamespace(
        query_down=parameters.weight(q_lora, hidden_size) if q_lora else None,
        query_up=parameters.weight(n * (qk + rope_dim), q_lora or hidden_size),
        # The down projection yields the kv latent and the shared RoPE key together.
        kv_down=parameters.weight(attention.kv_lora_rank + rope_dim, hidden_size),
        kv_up=parameters.weight(n * (qk + v), attention.kv_lora_rank),
        output=parameters.weight(hidden_size, n * v),
    )


def attention_parameters(attention, hidden_size, parameters):
    if isinstance(attention, Gqa):
        return gqa_parameters(attention, hidden_size, parameters)
    return mla_parameters(attention, hidden_size, parameters)


def causal_core_attention(query, key, value, batch, tags):
    """softmax(q K^T) V per document, one query row at a time.

    query (T, n, d); key (T, g, d) and value (T, g, dv) with g dividing n
    (g = n without grouping). Returns (T, n * dv).
    """
    tokens, n, d = query.shape
    g = key.shape[1]
    rows = []
    with tags.scope(component="core_attention"):
        for start, length in batch.documents():
            for i in range(length):
                t = start + i
                # Keys start..t only: the masked pairs of the row are skipped, not computed.
                q_row = query[t].reshape(g, n // g, d)
                keys = key[start:t + 1].permute(1, 2, 0)  # (g, d, i+1)
                probabilities = torch.softmax(torch.bmm(q_row, keys) * d ** -0.5, dim=-1)
                values = value[start:t + 1].permute(1, 0, 2)  # (g, i+1, dv)
                rows.append(torch.bmm(probabilities, values).reshape(-1))
    return torch.stack(rows)


def latent_core_attention(query, key, latent, key_rows, tags):
    """Absorbed-MLA attention over the keys each query row selected.

    query (T, n, c + r): queries absorbed into the kv latent, then their RoPE
    part; key (T, c + r): the kv latent and the shared RoPE key; latent
    (T, c): the values, in the latent space. key_rows[t] holds the token
    indices query t attends (only those pairs are computed). Returns the
    latent outputs (T, n, c).
    """
    tokens, n, _ = query.shape
    rows = []
    with tags.scope(component="dsa_core_attention"):
        for t in range(tokens):
            # A row may attend no key (KPool without tail, before the first
            # complete pool): empty products, a zero output, 0 FMAs.
            keys = key_rows[t]
            scores = torch.mm(query[t], key.index_select(0, keys).t()) * query.shape[2] ** -0.5
            probabilities = torch.softmax(scores, dim=-1)
            rows.append(torch.mm(probabilities, latent.index_select(0, keys)))
    return torch.stack(rows)


def teacher_distributions(query, key, key_rows, tags):
    """The indexer's KL target: per row, the main attention's distribution
    over the keys of key_rows[t] (every causal key for a dense loss, the
    selected ones for a sparse loss), summed over heads and normalized.

    The attention kernel returns outputs, not probabilities, so training
    computes these logits again, in the absorbed form (n (c + r) FMAs per
    pair), without gradient: a target does not train.
    """
    teachers = []
    with torch.no_grad(), tags.scope(component="indexer_teacher"):
        for t, keys in enumerate(key_rows):
            scores = torch.mm(query[t], key.index_select(0, keys).t()) * query.shape[2] ** -0.5
            teacher = torch.softmax(scores, dim=-1).sum(0)
            teachers.append(teacher / teacher.sum())
    return teachers


def gqa_attention(attention, p, x, batch, tags, recompute_core):
    positions = batch.positions()
    tokens, n, g, d = x.shape[0], attention.num_heads, attention.num_groups, attention.head_dim
    with tags.scope(component="attention_projections"):
        query = F.linear(x, p.query).view(tokens, n, d)
        key = F.linear(x, p.key).view(tokens, g, d)
        value = F.linear(x, p.value).view(tokens, g, d)
        gate = F.linear(x, p.gate) if p.gate is not None else None
    core = recompute_core(lambda q, k, v: causal_core_attention(q, k, v, batch, tags))
    out = core(rope(query, positions), rope(key, positions), value)
    if gate is not None:
        out = out * torch.sigmoid(gate)
    with tags.scope(component="attention_projections"):
        return F.linear(out, p.output)


def mla_projections(attention, p, x, batch, tags):
    """The token-wise MLA projections: query latent (or None), the query's
    no-RoPE and RoPE parts (T, n, qk) and (T, n, r), kv latent (T, c) and
    shared RoPE key (T, r). The LoRA norms are not products (their `+1`
    terms in Megatron-LM's count are not executed FMAs)."""
    positions = batch.positions()
    tokens, n = x.shape[0], attention.num_heads
    with tags.scope(component="attention_projections"):
        query_latent = None
        if p.query_down is not None:
            query_latent = rms_norm(F.linear(x, p.query_down))
            query = F.linear(query_latent, p.query_up)
        else:
            query = F.linear(x, p.query_up)
        kv_latent, rope_key = F.linear(x, p.kv_down).split([attention.kv_lora_rank, attention.rope_dim], dim=-1)
    query = query.view(tokens, n, attention.qk_head_dim + attention.rope_dim)
    query_nope, query_rope = query.split([attention.qk_head_dim, attention.rope_dim], dim=-1)
    return (query_latent, query_nope, rope(query_rope, positions), rms_norm(kv_latent),
            rope(rope_key, positions))


def mla_attention(attention, p, x, batch, tags, recompute_core):
    """Dense MLA: keys and values up-projected per token, core attention over
    every causal pair with n (qk + r) + n v FMAs per pair."""
    tokens, n, qk, v = x.shape[0], attention.num_heads, attention.qk_head_dim, attention.v_head_dim
    query_latent, query_nope, query_rope, kv_latent, rope_key = mla_projections(attention, p, x, batch, tags)
    with tags.scope(component="attention_projections"):
        key_nope, value = F.linear(kv_latent, p.kv_up).view(tokens, n, qk + v).split([qk, v], dim=-1)
    query = torch.cat([query_nope, query_rope], dim=-1)
    key = torch.cat([key_nope, rope_key.unsqueeze(1).expand(tokens, n, attention.rope_dim)], dim=-1)
    core = recompute_core(lambda q, k, val: causal_core_attention(q, k, val, batch, tags))
    out = core(query, key, value)
    with tags.scope(component="attention_projections"):
        return F.linear(out, p.output)


class _LossOnOutput(torch.autograd.Function):
    """The output, carrying the indexer's loss as Megatron-LM's DSA carries
    it: the output's backward starts the loss's (gradient 1), so the loss
    trains in whichever forward built the output's graph."""

    @staticmethod
    def forward(ctx, output, loss):
        ctx.save_for_backward(loss)
        return output.view_as(output)

    @staticmethod
    def backward(ctx, grad_output):
        loss, = ctx.saved_tensors
        return grad_output, torch.ones_like(loss)


def absorbed_mla_attention(attention, p, x, batch, key_rows_of, tags, recompute_core):
    """DSA / KPool attention in absorbed-MLA form, as sparse MLA kernels run it:
    the query is absorbed into the kv latent (W_UK per token), scores cost
    n (c + r) and the value product n c per attended pair, and the output
    leaves the latent space through W_UV per token. `key_rows_of(query_latent)`
    runs the indexer (or reuses a selection) and returns the keys of each row
    and the indexer's loss closure, which takes the teacher: a function from
    the keys of each row to the main attention's distribution over them.

    As in Megatron-LM, the loss (and so its teacher) is computed only where
    gradients are enabled: the first forward of a fully recomputed layer runs
    without them, and its recomputation in the backward computes the loss.
    The loss rides on the output (_LossOnOutput)."""
    tokens, n, qk, v = x.shape[0], attention.num_heads, attention.qk_head_dim, attention.v_head_dim
    c = attention.kv_lora_rank
    query_latent, query_nope, query_rope, kv_latent, rope_key = mla_projections(attention, p, x, batch, tags)
    key_rows, indexer_loss = key_rows_of(query_latent)
    up = p.kv_up.view(n, qk + v, c)
    with tags.scope(component="attention_projections"):
        absorbed = torch.bmm(query_nope.transpose(0, 1), up[:, :qk])  # (n, T, c): W_UK
    query = torch.cat([absorbed.transpose(0, 1), query_rope], dim=-1)
    key = torch.cat([kv_latent, rope_key], dim=-1)
    core = recompute_core(lambda q, k, lat: latent_core_attention(q, k, lat, key_rows, tags))
    latent_out = core(query, key, kv_latent)
    with tags.scope(component="attention_projections"):
        out = torch.bmm(latent_out.transpose(0, 1), up[:, qk:].transpose(1, 2))  # (n, T, v): W_UV
        output = F.linear(out.transpose(0, 1).reshape(tokens, n * v), p.output)
    if indexer_loss is None or not torch.is_grad_enabled():
        return output
    loss = indexer_loss(lambda target_rows: teacher_distributions(query, key, target_rows, tags))
    return _LossOnOutput.apply(output, loss)


def block_sparse_parameters(block_sparse, hidden_size, parameters):
    """The indexer of a block-sparse layer: nh query heads and one shared key, hd wide."""
    return types.SimpleNamespace(
        query=parameters.weight(block_sparse.indexer_num_heads * block_sparse.indexer_head_dim, hidden_size),
        key=parameters.weight(block_sparse.indexer_head_dim, hidden_size),
    )


def block_sparse_key_rows(block_sparse, p, x, batch, tags):
    """Token indices each query attends. Without gradient (the selection is a
    top-k): the indexer projects every token, scores each query's causal keys
    (nh hd FMAs per pair), takes each block's best score, and keeps the
    query's own block, the first init_blocks, and the best others up to
    topk_blocks; of its own block, the keys up to itself."""
    nh, hd, size = block_sparse.indexer_num_heads, block_sparse.indexer_head_dim, block_sparse.block_size
    rows = []
    with torch.no_grad():
        with tags.scope(component="indexer_projections"):
            query = F.linear(x, p.query).view(x.shape[0], nh, hd)
            key = F.linear(x, p.key)
        for start, length in batch.documents():
            for i in range(length):
                with tags.scope(component="indexer_scoring"):
                    scores = torch.mm(query[start + i], key[start:start + i + 1].t()).max(dim=0).values
                own = i // size
                best = torch.stack([scores[b * size:(b + 1) * size].max() for b in range(own + 1)])
                blocks = torch.arange(own + 1)
                forced = best.masked_fill(blocks == own, float("inf"))
                forced = forced.masked_fill(blocks < block_sparse.init_blocks, float("inf"))
                chosen = torch.topk(forced, min(block_sparse.topk_blocks, own + 1)).indices
                keys = (chosen * size).unsqueeze(1) + torch.arange(size)
                keys = keys.reshape(-1)
                rows.append(keys[keys <= i] + start)
    return rows


def sparse_core_attention(query, key, value, key_rows, tags):
    """softmax(q K^T) V per query row over the keys of key_rows[t] only.

    query (T, n, d), key and value (T, g, d) with g dividing n. Returns (T, n * d).
    """
    tokens, n, d = query.shape
    g = key.shape[1]
    rows = []
    with tags.scope(component="core_attention"):
        for t in range(tokens):
            keys = key_rows[t]
            q_row = query[t].reshape(g, n // g, d)
            probabilities = torch.softmax(torch.bmm(q_row, key.index_select(0, keys).permute(1, 2, 0)) * d ** -0.5,
                                          dim=-1)
            rows.append(torch.bmm(probabilities, value.index_select(0, keys).permute(1, 0, 2)).reshape(-1))
    return torch.stack(rows)


def selected_keys_attention(attention, p, x, batch, key_rows, tags, recompute_core):
    """GQA whose core attends, for each query t, the token indices key_rows[t]
    a forward-only indexer selected (block-sparse attention, QSA)."""
    positions = batch.positions()
    tokens, n, g, d = x.shape[0], attention.num_heads, attention.num_groups, attention.head_dim
    with tags.scope(component="attention_projections"):
        query = F.linear(x, p.query).view(tokens, n, d)
        key = F.linear(x, p.key).view(tokens, g, d)
        value = F.linear(x, p.value).view(tokens, g, d)
        gate = F.linear(x, p.gate) if p.gate is not None else None
    core = recompute_core(lambda q, k, v: sparse_core_attention(q, k, v, key_rows, tags))
    out = core(rope(query, positions), rope(key, positions), value)
    if gate is not None:
        out = out * torch.sigmoid(gate)
    with tags.scope(component="attention_projections"):
        return F.linear(out, p.output)
