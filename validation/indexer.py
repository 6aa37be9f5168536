"""The lightning indexer of DSA layers, and KPool's pooled variant.

Per token the indexer projects queries (nh heads of hd, from the query
latent, or from the hidden state without q LoRA), one shared key (hd) and
per-head weights (nh). A (query, key) pair scores
sum_h weight[h] * relu(q[h] . k): nh * hd FMAs for the dot products and nh
for the head weighting. Each query keeps its top-k keys (a selection: no
product). Scoring runs one query row at a time over the keys it sees (a
causal kernel skips masked pairs).

What trains comes from autograd, not from constants (`dsa_indexer_grad_mode`):
- off: the indexer runs under no_grad;
- detached: detached inputs, a dense KL loss against the main attention's
  distribution over every causal key (its logits computed for the loss):
  weight gradients of the projections, full backward of the scoring;
- sparse: detached inputs, a KL loss over the selected pairs only, through
  SparseIndexerRow, whose backward touches only those pairs, against the
  main attention's distribution over the selected keys;
- full: inputs attached, dense KL loss: everything trains.
KPool (grad mode off) pools the keys of complete pools with a gate and
selects pools instead of keys.
"""

import contextlib
import types

import torch
import torch.nn.functional as F

from validation.tensors import rms_norm


def indexer_parameters(indexer, hidden_size, query_input_size, parameters):
    nh, hd = indexer.num_heads, indexer.head_dim
    return types.SimpleNamespace(
        query=parameters.weight(nh * hd, query_input_size),
        key=parameters.weight(hd, hidden_size),
        head_weights=parameters.weight(nh, hidden_size),
        pool_gate=parameters.weight(hd, hidden_size) if indexer.pool_size > 1 else None,
    )


class SparseIndexerRow(torch.autograd.Function):
    """One query row of indexer scores over all its causal keys, and their top-k.

    The forward scores every key (top-k needs them all); the backward
    receives gradients for the selected scores only and computes the
    gradients of the queries, head weights and keys from those pairs alone,
    as a sparse-KL indexer kernel does.
    """

    @staticmethod
    def forward(ctx, query, head_weights, keys, topk, tags):
        # query (nh, hd), head_weights (nh,), keys (s, hd).
        relu = torch.relu(torch.mm(query, keys.t()))
        scores = torch.mm(head_weights.unsqueeze(0), relu).squeeze(0)
        selected = torch.topk(scores, min(topk, scores.numel()))
        ctx.tag = tags.current
        ctx.tags = tags
        ctx.keys_shape = keys.shape
        ctx.save_for_backward(query, head_weights, keys.index_select(0, selected.indices), selected.indices,
                              relu.index_select(1, selected.indices))
        ctx.mark_non_differentiable(selected.indices)
        return selected.values, selected.indices

    @staticmethod
    def backward(ctx, grad_scores, _):
        query, head_weights, selected_keys, indices, selected_relu = ctx.saved_tensors
        need_query, need_weights, need_keys = ctx.needs_input_grad[:3]
        grad_query = grad_weights = grad_keys = None
        with ctx.tags.scope(*ctx.tag):
            grad = grad_scores.unsqueeze(0)  # (1, k)
            if need_weights:
                grad_weights = torch.mm(selected_relu, grad.t()).squeeze(1)
            if need_query or need_keys:
                grad_logits = torch.mm(head_weights.unsqueeze(1), grad) * (selected_relu > 0)  # (nh, k)
            if need_query:
                grad_query = torch.mm(grad_logits, selected_keys)
            if need_keys:
                grad_keys = query.new_zeros(ctx.keys_shape).index_add(0, indices, torch.mm(grad_logits.t(), query))
        return grad_query, grad_weights, grad_keys, None, None


class Selection(types.SimpleNamespace):
    """What an indexer chose, per token: `rows[t]` holds doc-local key
    positions (DSA) or pool numbers (KPool). Layers that share the top-k
    reuse this object, rows tensors included."""


def _score_row(query, head_weights, keys):
    relu = torch.relu(torch.mm(query, keys.t()))
    return torch.mm(head_weights.unsqueeze(0), relu).squeeze(0)


def run_indexer(indexer, p, x, query_latent, batch, tags):
    """One indexer execution. Returns the Selection and a function from the
    teacher (the main attention's distribution over given keys of each row)
    to the indexer's KL loss (None when the indexer does not train)."""
    mode = indexer.grad_mode
    query_input = x if query_latent is None else query_latent
    key_input = x
    if mode in ("detached", "sparse"):
        query_input, key_input = query_input.detach(), key_input.detach()
    tokens, nh, hd = x.shape[0], indexer.num_heads, indexer.head_dim
    grad = torch.no_grad() if mode == "off" else contextlib.nullcontext()
    with grad:
        with tags.scope(component="indexer_projections"):
            query = F.linear(query_input, p.query).view(tokens, nh, hd)
            key = rms_norm(F.linear(key_input, p.key))
            head_weights = F.linear(key_input, p.head_weights)
        if indexer.pool_size > 1:
            return _select_pools(indexer, p, x, query, key, head_weights, batch, tags), None
        rows, scores = [], []
        with tags.scope(component="indexer_scoring"):
            for start, length in batch.documents():
                for i in range(length):
                    t = start + i
                    keys = key[start:t + 1]  # the row's causal keys only: masked pairs are not scored
                    if mode == "sparse":
                        selected_scores, selected = SparseIndexerRow.apply(
                            query[t], head_weights[t], keys, indexer.topk, tags)
                        scores.append(selected_scores)
                    else:
                        row_scores = _score_row(query[t], head_weights[t], keys)
                        selected = torch.topk(row_scores.detach(), min(indexer.topk, i + 1)).indices
                        scores.append(row_scores)
                    rows.append(selected)
    selection = Selection(rows=rows, pooled=False)
    if mode == "off":
        return selection, None
    # The KL loss compares the indexer's scores with the main attention's
    # distribution over the same keys: every causal key for a dense loss,
    # the selected keys for a sparse one.
    if mode == "sparse":
        target_rows = attended_keys(selection, indexer, batch)
    else:
        target_rows = [torch.arange(start, start + i + 1) for start, length in batch.documents() for i in range(length)]
    return selection, lambda teacher: _kl_loss(scores, teacher(target_rows))


def _kl_loss(scores, teachers):
    """KL(teacher || indexer) up to the teacher's entropy, summed over rows.
    The loss's arithmetic is no product; the teacher's logits are."""
    total = 0
    for row_scores, teacher in zip(scores, teachers):
        total = total - (teacher * torch.log_softmax(row_scores, dim=0)).sum()
    return total


def _select_pools(indexer, p, x, query, key, head_weights, batch, tags):
    """KPool, forward only: a per-channel gate weights the p keys of each
    complete pool into one pooled key (hd FMAs per key); each query scores
    the complete pools it sees and keeps the top k/p."""
    pool, pools_per_query, hd = indexer.pool_size, indexer.topk // indexer.pool_size, indexer.head_dim
    with tags.scope(component="kpool_gate"):
        gate = F.linear(x, p.pool_gate)
    rows = []
    for start, length in batch.documents():
        complete = length // pool
        end = start + complete * pool
        with tags.scope(component="kpool_pooling"):
            weights = torch.softmax(gate[start:end].view(complete, pool, hd), dim=1)
            pooled = torch.einsum("jpc,jpc->jc", weights, key[start:end].view(complete, pool, hd))
        with tags.scope(component="indexer_scoring"):
            for i in range(length):
                visible = (i + 1) // pool  # complete pools at or before the query
                if visible == 0:
                    rows.append(torch.zeros(0, dtype=torch.long))
                    continue
                row_scores = _score_row(query[start + i], head_weights[start + i], pooled[:visible])
                rows.append(torch.topk(row_scores, min(pools_per_query, visible)).indices)
    return Selection(rows=rows, pooled=True)


def attended_keys(selection, indexer, batch):
    """Token indices each query attends: its selected keys (DSA), or the keys
    of its selected pools plus, with the tail, its own incomplete pool (KPool)."""
    keys = []
    pool = indexer.pool_size
    for start, length in batch.documents():
        for i in range(length):
            selected = selection.rows[start + i]
            if not selection.pooled:
                keys.append(selected + start)
                continue
            parts = [(selected * pool + start).unsqueeze(1) + torch.arange(pool)]
            tail_start = (i + 1) // pool * pool
            if indexer.pool_tail and tail_start <= i:
                parts.append(torch.arange(start + tail_start, start + i + 1))
            keys.append(torch.cat([part.reshape(-1) for part in parts]))
    return keys
