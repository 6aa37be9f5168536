"""The gated delta net (Qwen3-Next's and Qwen3.5's linear attention layers),
everything trained.

Per token: queries and keys (h x nk dk each), values and the output gate
(h x nv dv each), beta and the decay's input (h x nv each); the queries, keys
and values through a causal depthwise short convolution of K taps and a
SiLU; the gated norm of the delta rule's output, its gate the SiLU of the
output gate; the output projection nv dv x h.

The delta rule runs per document in the chunked form training runs
(flash-linear-attention's chunk_gated_delta_rule; its reference
naive_chunk_gated_delta_rule), in chunks of chunk_size tokens
(validation/delta_rule.py), over nv states of dk x dv: value head j reads
the keys and queries of key head j // (nv / nk), and one decay per head
applies to every channel.
"""

import types

import torch
import torch.nn.functional as F

from validation.delta_rule import delta_rule, short_convolution, unit
from validation.tensors import rms_norm

COMPONENT = "gated_delta_net"


def gdn_parameters(gdn, hidden_size, parameters):
    h, key_width = hidden_size, gdn.num_key_heads * gdn.key_head_dim
    value_width = gdn.num_value_heads * gdn.value_head_dim
    return types.SimpleNamespace(
        query=parameters.weight(key_width, h),
        key=parameters.weight(key_width, h),
        value=parameters.weight(value_width, h),
        gate=parameters.weight(value_width, h),
        beta=parameters.weight(gdn.num_value_heads, h),
        decay_input=parameters.weight(gdn.num_value_heads, h),
        convolutions=[parameters.tensor(width, gdn.conv_kernel_dim, scale=gdn.conv_kernel_dim ** -0.5)
                      for width in (key_width, key_width, value_width)],
        decay_rate=parameters.tensor(gdn.num_value_heads, scale=0.1),  # A_log: not a product
        output=parameters.weight(h, value_width),
    )


def _per_value_head(x, value_heads):
    """(T, nk, dk) -> (T, nv, dk): each key head's rows for the value heads of its group."""
    tokens, key_heads, width = x.shape
    return x.unsqueeze(2).expand(tokens, key_heads, value_heads // key_heads, width).reshape(tokens, value_heads, width)


def gated_delta_net(gdn, p, x, batch, tags):
    tokens, nk, nv = x.shape[0], gdn.num_key_heads, gdn.num_value_heads
    dk, dv = gdn.key_head_dim, gdn.value_head_dim
    with tags.scope(component=COMPONENT):
        q, k, v = (F.silu(short_convolution(F.linear(x, weight), taps, batch))
                   for weight, taps in zip((p.query, p.key, p.value), p.convolutions))
        q, k = (_per_value_head(unit(y.view(tokens, nk, dk)), nv) for y in (q, k))
        beta = torch.sigmoid(F.linear(x, p.beta))
        log_decay = -torch.exp(p.decay_rate) * F.softplus(F.linear(x, p.decay_input))  # (T, nv)
        out = delta_rule(q * dk ** -0.5, k, v.view(tokens, nv, dv), log_decay.unsqueeze(2).expand(tokens, nv, dk),
                         beta, batch, gdn.chunk_size)
        out = rms_norm(out).reshape(tokens, nv * dv) * F.silu(F.linear(x, p.gate))
        return F.linear(out, p.output)
