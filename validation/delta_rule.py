"""The pieces linear attention layers share: the causal short convolution
and the delta rule in the chunked form training runs
(flash-linear-attention's chunk_gated_delta_rule and chunk_kda; their
references naive_chunk_gated_delta_rule and naive_chunk_kda).

The convolution runs as a batched product of each channel's windows with its
K taps (K FMAs per channel and token); each document starts from zeros, as a
varlen convolution kernel does, and its first tokens' windows hold them.

The delta rule runs per document in chunks of chunk_size tokens, the last
one of a document partial, over one dk x dv state per head. Per chunk of c
tokens and head: the key-key and query-key scores, each pair's product
through the decay between them (c x c x dk each); the unit triangular
key-key matrix inverted by forward substitution (row j a j x j product);
the transformed keys (c x c x dk) and values (c x c x dv); the new values,
the keys' read of the state taken off (c x dk x dv); the output, the
queries' read of the state (c x dk x dv) and the scores' read of the new
values (c x c x dv); the state decayed and updated (c x dk x dv). Every
document's state starts from zeros that take a gradient, and its final
state joins the output weighted zero: the kernels run every chunk's products
and their backward alike, the first and last chunk's included (autograd
would skip the gradient of a constant zero state, and the backward of a
state nothing reads).
"""

import torch


def short_convolution(y, taps, batch):
    """Causal depthwise convolution of y (T, P) with taps (P, K), per document."""
    channels, k = taps.shape
    windows = []
    for start, length in batch.documents():
        padded = torch.cat([y.new_zeros(k - 1, channels), y[start:start + length]])
        windows.append(torch.stack([padded[j:j + length] for j in range(k)], dim=-1))  # (L, P, K)
    windows = torch.cat(windows).permute(1, 0, 2)  # (P, T, K)
    return torch.bmm(windows, taps.unsqueeze(2)).squeeze(2).t()


def unit(x):
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
    """query, key, log_decay (T, heads, dk); value (T, heads, dv); beta (T, heads). Returns (T, heads, dv)."""
    tokens, heads, d = query.shape
    outputs = []
    for start, length in batch.documents():
        state = query.new_zeros(heads, d, value.shape[2]).requires_grad_()  # (heads, key channel, value channel)
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
