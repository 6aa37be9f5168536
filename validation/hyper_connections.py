"""Manifold-constrained hyper-connections (mHC), as Megatron-LM's
HyperConnectionModule and DeepSeek-V4 compute them: the residual stream is
`n` streams of the hidden size; around each sublayer one projection of the
normalized, flattened streams gives `n` read weights, `n` write weights and
an `n x n` mixing matrix (Sinkhorn-normalized); a learned head reads the
streams once more before the output layer.

The reads, writes and mixing run as batched products (as the fused kernels
compute them), so the counter sees every multiply-add: per token n h to
read, n h to write, n^2 h to mix, and n h (n^2 + 2n) to project.
"""

import torch
import torch.nn.functional as F

from validation.tensors import rms_norm

SINKHORN_ITERATIONS = 4


def sublayer_parameters(streams, hidden_size, parameters):
    return parameters.weight(streams * streams + 2 * streams, streams * hidden_size)


def head_parameters(streams, hidden_size, parameters):
    return parameters.weight(streams, streams * hidden_size)


def expand(x, streams):
    """One stream to `streams` copies: no product."""
    return x.unsqueeze(1).expand(-1, streams, -1).contiguous()


def _sinkhorn(logits):
    matrix = logits.exp()
    for _ in range(SINKHORN_ITERATIONS):
        matrix = matrix / matrix.sum(dim=-1, keepdim=True)
        matrix = matrix / matrix.sum(dim=-2, keepdim=True)
    return matrix


def sublayer(mapping, streams_x, function, tags):
    """streams_x: (tokens, n, h). Runs `function` on the read input and
    returns the streams after the write and the mixing."""
    tokens, n, h = streams_x.shape
    with tags.scope(component="hyper_connections"):
        coefficients = F.linear(rms_norm(streams_x.reshape(tokens, n * h)), mapping)
        read = torch.sigmoid(coefficients[:, :n])
        write = 2 * torch.sigmoid(coefficients[:, n:2 * n])
        mixing = _sinkhorn(coefficients[:, 2 * n:].reshape(tokens, n, n))
        layer_input = torch.bmm(read.unsqueeze(1), streams_x).squeeze(1)
    out = function(layer_input)
    with tags.scope(component="hyper_connections"):
        written = torch.bmm(write.unsqueeze(2), out.unsqueeze(1))
        return torch.bmm(mixing, streams_x) + written


def head(weights, streams_x, tags):
    """The final read before an output layer: (tokens, n, h) -> (tokens, h)."""
    tokens, n, h = streams_x.shape
    with tags.scope(component="hyper_connections"):
        read = torch.sigmoid(F.linear(rms_norm(streams_x.reshape(tokens, n * h)), weights))
        return torch.bmm(read.unsqueeze(1), streams_x).squeeze(1)
