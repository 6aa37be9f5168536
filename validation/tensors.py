"""Building blocks shared by the references: the packed batch, random
parameters, and the non-product arithmetic of a transformer (norms, RoPE)."""

import dataclasses
import math

import torch


@dataclasses.dataclass(frozen=True)
class Batch:
    """Documents packed into one sequence of T tokens (THD layout)."""

    lengths: tuple

    @property
    def tokens(self):
        return sum(self.lengths)

    def documents(self):
        """(start, length) of each document in the packed sequence."""
        start = 0
        for length in self.lengths:
            yield start, length
            start += length

    def positions(self):
        """Each token's 0-based position inside its document."""
        return torch.cat([torch.arange(length) for length in self.lengths])


class Parameters:
    """Random trainable tensors from one seeded generator."""

    def __init__(self, seed):
        self.generator = torch.Generator().manual_seed(seed)

    def weight(self, out_features, in_features):
        """An nn.Linear weight (out, in), scaled so activations stay O(1)."""
        return self.tensor(out_features, in_features, scale=1 / math.sqrt(in_features))

    def tensor(self, *shape, scale=1.0):
        return (torch.randn(*shape, generator=self.generator) * scale).requires_grad_()


def rms_norm(x, eps=1e-6):
    """RMSNorm without its elementwise weight: no product (docs/accounting.md, 1)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def rope(x, positions):
    """Rotary position embedding of x (T, ..., d) at doc-local positions (T,):
    elementwise rotations, no product (docs/accounting.md, 1)."""
    half = x.shape[-1] // 2
    inverse_frequency = torch.pow(10000.0, -torch.arange(half) / half)
    angles = (positions.unsqueeze(1) * inverse_frequency).view(x.shape[0], *([1] * (x.dim() - 2)), half)
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
