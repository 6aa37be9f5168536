"""Counts the multiply-adds (FMAs) of every matrix product PyTorch executes.

`FmaCounter` is a TorchDispatchMode: it sees every aten op after autograd has
decomposed composite ops (F.linear, matmul, einsum, ...) into kernels, in the
forward, in the backward the autograd engine runs, and in forwards that
activation checkpointing re-executes during the backward. It counts the FMAs
of the product kernels (`mm`, `addmm`, `bmm`, ...), lets through the ops of an
explicit allowlist that compute no product (views, elementwise arithmetic,
reductions, softmax, top-k, gathers, ...), and fails on any other op, so a
product can never be counted as zero.

Every counted FMA is tagged with a (layer, component) pair: in the forward,
the one the reference code is running under (`Tags.scope`); in the backward,
the one that was current when the autograd node of the product saved its
tensors (a saved-tensor hook records it, and restores it when the engine
unpacks them, right before the node's backward runs its products).
"""

import collections
import contextlib
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


class CountingError(RuntimeError):
    """An op the counter cannot account for, or a product without a tag."""


def _mm_fmas(a, b):
    m, k = a.shape
    return m * k * b.shape[1]


def _bmm_fmas(a, b):
    batch, m, k = a.shape
    return batch * m * k * b.shape[2]


def _matmul_fmas(a, b):
    # torch.matmul semantics: 1-D operands gain a dimension, batch dims broadcast.
    a_shape = (1,) + tuple(a.shape) if a.dim() == 1 else tuple(a.shape)
    b_shape = tuple(b.shape) + (1,) if b.dim() == 1 else tuple(b.shape)
    batch = torch.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return math.prod(batch) * a_shape[-2] * a_shape[-1] * b_shape[-1]


def _linear_fmas(x, weight):
    out_features, in_features = weight.shape if weight.dim() == 2 else (1, weight.shape[0])
    return x.numel() // in_features * in_features * out_features


# Product kernels: op packet -> FMAs from its positional arguments. The
# additive operand of addmm/baddbmm/addmv is an addition, not a product.
# matmul and linear are composite in torch 1.13 and never reach the dispatch
# mode; they are counted should a torch build dispatch them whole.
PRODUCTS = {
    aten.mm: lambda a: _mm_fmas(a[0], a[1]),
    aten.addmm: lambda a: _mm_fmas(a[1], a[2]),
    aten.bmm: lambda a: _bmm_fmas(a[0], a[1]),
    aten.baddbmm: lambda a: _bmm_fmas(a[1], a[2]),
    aten.addbmm: lambda a: _bmm_fmas(a[1], a[2]),
    aten.mv: lambda a: a[0].shape[0] * a[0].shape[1],
    aten.addmv: lambda a: a[1].shape[0] * a[1].shape[1],
    aten.dot: lambda a: a[0].numel(),
    aten.vdot: lambda a: a[0].numel(),
    aten.matmul: lambda a: _matmul_fmas(a[0], a[1]),
    aten.linear: lambda a: _linear_fmas(a[0], a[1]),
}

# Ops that compute no product: every op the references, autograd's backward
# formulas and activation checkpointing execute besides the products above.
# An op missing here fails the run; add it only after checking that it
# computes no matrix product.
NON_PRODUCTS = frozenset(
    getattr(aten, name)
    for name in """
    _log_softmax _log_softmax_backward_data _reshape_alias _softmax _softmax_backward_data
    _to_copy _unsafe_view abs add add_ alias arange as_strided cat clamp clamp_min clone copy_ cos cumsum detach
    div embedding embedding_dense_backward empty empty_like empty_strided eq exp expand eye
    fill_ ge gather gelu gelu_backward gt index index_add index_put index_select is_same_size le log lt masked_fill
    max mean mul ne neg new_empty new_empty_strided new_zeros nll_loss_backward nll_loss_forward
    nonzero ones_like permute pow reciprocal relu roll rsqrt rsub scatter scatter_add select
    select_backward sigmoid sigmoid_backward silu silu_backward sin slice slice_backward softplus
    softplus_backward split
    split_with_sizes sqrt squeeze stack sub sum t threshold_backward topk transpose tril unbind flip
    unsqueeze view where zero_ zeros zeros_like
    """.split()
)


class Tags:
    """The (layer, component) that product FMAs are charged to."""

    def __init__(self):
        self.current = (None, None)

    @contextlib.contextmanager
    def scope(self, layer=None, component=None):
        """Runs the block under `layer` and/or `component` (None keeps the current one)."""
        previous = self.current
        self.current = (layer or previous[0], component or previous[1])
        try:
            yield
        finally:
            self.current = previous

    def bound(self, function):
        """`function`, run under the current tag whenever it is called: for the
        forwards that activation checkpointing re-executes during the backward."""
        tag = self.current

        def run_under_tag(*args):
            previous = self.current
            self.current = tag
            try:
                return function(*args)
            finally:
                self.current = previous

        return run_under_tag

    def _pack(self, tensor):
        return (self.current, tensor)

    def _unpack(self, packed):
        self.current = packed[0]
        return packed[1]

    def saved_tensor_hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)


class FmaCounter(TorchDispatchMode):
    """Sums product FMAs per (layer, component) into `fmas` (a Counter)."""

    def __init__(self, tags):
        super().__init__()
        self.tags = tags
        self.fmas = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = func.overloadpacket
        if packet in PRODUCTS:
            layer, component = self.tags.current
            if layer is None or component is None:
                raise CountingError(f"{func} ran outside any (layer, component) scope: its FMAs cannot be charged")
            self.fmas[(layer, component)] += PRODUCTS[packet](args)
        elif packet not in NON_PRODUCTS:
            raise CountingError(f"{func} is neither a known product nor an allowlisted non-product op")
        result = func(*args, **(kwargs or {}))
        if packet is aten.detach and not isinstance(result, torch.Tensor):
            # A saved scalar (x * 3.0 saves 3.0) is a wrapped-number tensor,
            # which torch 1.13 unwraps into a Python number on its way out of
            # the mode; the engine detaches it when saved-tensor hooks are on.
            return torch.tensor(result, dtype=args[0].dtype)
        return result


@contextlib.contextmanager
def counting(tags):
    """Counts every product executed in the block; yields the FmaCounter."""
    counter = FmaCounter(tags)
    with tags.saved_tensor_hooks(), counter:
        yield counter
