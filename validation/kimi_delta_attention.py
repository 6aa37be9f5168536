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

The delta rule runs per document over one head_dim x head_dim state per head,
token by token, in the four products executed mode counts: the state decays
(elementwise), the key reads the state, the read is erased and the value
written (two rank-one updates), and the query reads the state out. FLA's
kernels group these products differently (docs/kimi.md): the check is that
executed mode counts this program, not theirs. Each
document's state starts from zeros that take a gradient: the kernels run
every step's products and their backward alike, the first step's included
(autograd would skip the gradient of a constant zero state).
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


def delta_rule(query, key, value, decay, beta, batch):
    """query, key, value, decay (T, heads, d); beta (T, heads). Returns (T, heads, d)."""
    tokens, heads, d = query.shape
    outputs = []
    for start, length in batch.documents():
        state = query.new_zeros(heads, d, d).requires_grad_()  # (heads, value channel, key channel)
        for t in range(start, start + length):
            k = key[t].unsqueeze(2)  # (heads, d, 1)
            state = state * decay[t].unsqueeze(1)
            read = torch.bmm(state, k)
            step = beta[t].view(heads, 1, 1)
            state = state - torch.bmm(step * read, k.transpose(1, 2))
            state = state + torch.bmm(step * value[t].unsqueeze(2), k.transpose(1, 2))
            outputs.append(torch.bmm(state, query[t].unsqueeze(2)).squeeze(2))
    return torch.stack(outputs)


def kimi_delta_attention(kda, p, x, batch, tags):
    tokens, heads, d = x.shape[0], kda.num_heads, kda.head_dim
    with tags.scope(component=COMPONENT):
        q, k, v = (F.silu(short_convolution(F.linear(x, weight), taps, batch)).view(tokens, heads, d)
                   for weight, taps in zip((p.query, p.key, p.value), p.convolutions))
        beta = torch.sigmoid(F.linear(x, p.beta))
        forget = F.linear(F.linear(x, p.forget_down), p.forget_up).view(tokens, heads, d)
        decay = torch.exp(-torch.exp(p.decay_rate).unsqueeze(1) * F.softplus(forget))
        out = delta_rule(_unit(q) * d ** -0.5, _unit(k), v, decay, beta, batch)
        gate = F.linear(x, p.gate) if p.gate is not None else F.linear(F.linear(x, p.gate_down), p.gate_up)
        out = rms_norm(out).reshape(tokens, heads * d) * torch.sigmoid(gate)
        return F.linear(out, p.output)
