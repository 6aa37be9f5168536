"""Kimi Delta Attention (KDA; docs/kimi.md), everything trained.

Per token: queries, keys and values (h x P each, P = heads x head_dim), each
through a causal depthwise short convolution of K taps and a SiLU; beta, the
delta rule's step size (h x heads, sigmoid); the forget gate, one decay per
channel, through a low-rank projection h -> rank -> P; the output gate, full
rank (h x P) or low rank (h -> rank -> P), on the per-head norm of the delta
rule's output; the output projection P x h.

The convolution runs as a batched product of each channel's windows with its
K taps (K P FMAs per token); each document starts from zeros, as a varlen
convolution kernel does, and its first tokens' windows hold them.

The delta rule runs per document in the chunked form training runs
(flash-linear-attention's chunk_kda; its reference naive_chunk_kda), in
chunks of chunk_size tokens, the last one of a document partial. Per chunk
of c tokens and head: the key-key and query-key scores, each pair's product
through the decay between them (c x c x d each); the unit triangular
key-key matrix inverted by forward substitution (row j a j x j product);
the transformed keys and values (c x c x d each); the new values, the keys'
read of the state taken off (c x d x d); the output, the queries' read of
the state (c x d x d) and the scores' read of the new values (c x c x d);
the state decayed and updated (c x d x d). Every document's state starts
from zeros that take a gradient, and its final state joins the output
weighted zero: the kernels run every chunk's products and their backward
alike, the first and last chunk's included (autograd would skip the
gradient of a constant zero state, and the backward of a state nothing
reads).
"""

import types

import torch
import torch.nn.functional as F

from validation.tensors import rms_norm

COMPONENT = "kimi_delta_attention"


def kda_parameters(kda, hidden_size, parameters):
    h, heads, rank = hidden_size, kda.num_heads, kda.forget_gate_rank
    width = kda.num_heads * kda.head_dim
    gate_rank = kda.output_gate_rank
    return types.SimpleNamespace(
        query=parameters.weight(width, h),
        key=parameters.weight(width, h),
        value=parameters.weight(width, h),
        convolutions=[parameters.tensor(width, kda.conv_kernel_dim, scale=kda.conv_kernel_dim ** -0.5)
                      for _ in range(3)],
        beta=parameters.weight(heads, h),
        forget_down=parameters.weight(rank, h),
        forget_up=parameters.weight(width, rank),
        decay_rate=parameters.tensor(heads, scale=0.1),  # A_log: not a product
        gate=None if gate_rank else parameters.weight(width, h),
        gate_down=parameters.weight(gate_rank, h) if gate_rank else None,
        gate_up=parameters.weight(width, gate_rank) if gate_rank else None,
        output=parameters.weight(h, width),
    )


def short_convolution(y, taps, batch):
    """Causal depthwise convolution of y (T, P) with taps (P, K), per document."""
    channels, k = taps.shape
    windows = []
    for start, length in batch.documents():
        padded = torch.cat([y.new_zeros(k - 1, channels), y[start:start + length]])
        windows.append(torch.stack([padded[j:j + length] for j in range(k)], dim=-1))  # (L, P, K)
    windows = torch.cat(windows).permute(1, 0, 2)  # (P, T, K)
    return torch.bmm(windows, taps.unsqueeze(2)).squeeze(2).t()


def _unit(x):
    """L2-normalized over the last dimension (the kernels normalize q and k)."""
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + 1e-6)


def _pair_scores(left, key, log_decay):
    """(heads, c, c): row i, column j the product of left_i and key_j through exp(log_decay_i - log_decay_j)."""
    return torch.stack([torch.bmm(left * (log_decay - log_decay[:, j:j + 1]).exp(), key[:, j].unsqueeze(2)).squeeze(2)
                        for j in range(key.shape[1])], dim=2)


def _unit_triangular_inverse(a):
    """(I - a)^-1 - I of strictly lower triangular (heads, c, c) a, by forward
    substitution: row i adds its i entries times the rows above, already done."""
    for i in range(1, a.shape[1]):
        row = a[:, i:i + 1, :i] + torch.bmm(a[:, i:i + 1, :i], a[:, :i, :i])
        a = torch.cat([a[:, :i], torch.cat([row, a[:, i:i + 1, i:]], dim=2), a[:, i + 1:]], dim=1)
    return a


def delta_rule(query, key, value, log_decay, beta, batch, chunk_size):
    """query, key, value, log_decay (T, heads, d); beta (T, heads). Returns (T, heads, d)."""
    tokens, heads, d = query.shape
    outputs = []
    for start, length in batch.documents():
        state = query.new_zeros(heads, d, d).requires_grad_()  # (heads, key channel, value channel)
        for first in range(start, start + length, chunk_size):
            c = min(chunk_size, start + length - first)
            q, k, v = (x[first:first + c].transpose(0, 1) for x in (query, key, value))  # (heads, c, d)
            g = log_decay[first:first + c].transpose(0, 1).cumsum(1)  # decay since the chunk's start
            step = beta[first:first + c].t().unsqueeze(2)  # (heads, c, 1)
            a = _unit_triangular_inverse(-(_pair_scores(k, k, g) * step).tril(-1))
            a = (a + torch.eye(c)) * step.transpose(1, 2)
            keys, values = torch.bmm(a, g.exp() * k), torch.bmm(a, v)
            new_values = values - torch.bmm(keys, state)
            outputs.append((torch.bmm(q * g.exp(), state)
                            + torch.bmm(_pair_scores(q, k, g).tril(), new_values)).transpose(0, 1))
            last = g[:, -1:]  # (heads, 1, d)
            state = (state * last.transpose(1, 2).exp()
                     + torch.bmm(((last - g).exp() * k).transpose(1, 2), new_values))
        # The kernels run the last chunk's state update and its backward as
        # every other chunk's; autograd would skip the backward of a state
        # nothing reads, so the final state joins the output, weighted zero.
        outputs[-1] = outputs[-1] + 0 * state.sum()
    return torch.cat(outputs)


def kimi_delta_attention(kda, p, x, batch, tags):
    tokens, heads, d = x.shape[0], kda.num_heads, kda.head_dim
    with tags.scope(component=COMPONENT):
        q, k, v = (F.silu(short_convolution(F.linear(x, weight), taps, batch)).view(tokens, heads, d)
                   for weight, taps in zip((p.query, p.key, p.value), p.convolutions))
        beta = torch.sigmoid(F.linear(x, p.beta))
        forget = F.linear(F.linear(x, p.forget_down), p.forget_up).view(tokens, heads, d)
        log_decay = -torch.exp(p.decay_rate).unsqueeze(1) * F.softplus(forget)
        out = delta_rule(_unit(q) * d ** -0.5, _unit(k), v, log_decay, beta, batch, kda.chunk_size)
        gate = F.linear(x, p.gate) if p.gate is not None else F.linear(F.linear(x, p.gate_down), p.gate_up)
        out = rms_norm(out).reshape(tokens, heads * d) * torch.sigmoid(gate)
        return F.linear(out, p.output)
