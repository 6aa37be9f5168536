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
chunks of chunk_size tokens (validation/delta_rule.py), each channel decayed
on its own.
"""

import types

import torch
import torch.nn.functional as F

from validation.delta_rule import delta_rule, short_convolution, unit
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


def kimi_delta_attention(kda, p, x, batch, tags):
    tokens, heads, d = x.shape[0], kda.num_heads, kda.head_dim
    with tags.scope(component=COMPONENT):
        q, k, v = (F.silu(short_convolution(F.linear(x, weight), taps, batch)).view(tokens, heads, d)
                   for weight, taps in zip((p.query, p.key, p.value), p.convolutions))
        beta = torch.sigmoid(F.linear(x, p.beta))
        forget = F.linear(F.linear(x, p.forget_down), p.forget_up).view(tokens, heads, d)
        log_decay = -torch.exp(p.decay_rate).unsqueeze(1) * F.softplus(forget)
        out = delta_rule(unit(q) * d ** -0.5, unit(k), v, log_decay, beta, batch, kda.chunk_size)
        gate = F.linear(x, p.gate) if p.gate is not None else F.linear(F.linear(x, p.gate_down), p.gate_up)
        out = rms_norm(out).reshape(tokens, heads * d) * torch.sigmoid(gate)
        return F.linear(out, p.output)
