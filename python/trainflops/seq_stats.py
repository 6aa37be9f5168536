"""trainflops.SeqStats: exact packed-sequence statistics of a training loop.

The C++ core (trainflops._core.SeqStats) sums the per-document statistics;
this class adds what a training loop needs around it: a missing or empty
cu_seqlens is nothing to add, as in Megatron-LM's own accumulator, and a
torch tensor, on the GPU or the CPU, stays on its device until the totals are
read: each call keeps a copy made on that device (no host synchronization);
vector(), flops() and tokens() move every kept tensor to the host in one
transfer and add them.
"""
from trainflops import _core


def _is_tensor(value):
    return type(value).__module__.startswith("torch") and hasattr(value, "device") and hasattr(value, "numel")


class SeqStats(_core.SeqStats):
    __doc__ = _core.SeqStats.__doc__

    def __init__(self, model=None, **options):
        super().__init__(model, **options)
        self._kept = []  # cu_seqlens tensors not yet added, on their devices

    def add_cu_seqlens(self, cu_seqlens):
        """Adds the documents of cumulative offsets (0 first, non-decreasing):
        a list, a NumPy array or a torch tensor (any device) of integers.
        None, or fewer than two offsets, adds nothing. A tensor is kept on its
        device and added when the totals are read (its errors are raised then);
        anything else is added now, and on error nothing is added."""
        if cu_seqlens is None:
            return
        if _is_tensor(cu_seqlens):
            if cu_seqlens.numel() >= 2:
                self._kept.append(cu_seqlens.detach().reshape(-1).clone())  # the caller may reuse its buffer
            return
        if getattr(cu_seqlens, "ndim", 1) == 1 and len(cu_seqlens) < 2:
            return
        super().add_cu_seqlens(cu_seqlens)

    def _add_kept(self):
        if not self._kept:
            return
        kept, self._kept = self._kept, []
        import torch
        sizes = [offsets.numel() for offsets in kept]
        on_host = torch.cat([offsets.to(device=kept[0].device, dtype=torch.int64) for offsets in kept]).cpu()
        for offsets in torch.split(on_host, sizes):
            super().add_cu_seqlens(offsets)

    def vector(self):
        self._add_kept()
        return super().vector()

    def set_vector(self, summed):
        self._kept = []
        super().set_vector(summed)

    def reset(self):
        self._kept = []
        super().reset()

    def flops(self):
        self._add_kept()
        return super().flops()

    def tokens(self):
        self._add_kept()
        return super().tokens()

    def __repr__(self):
        self._add_kept()
        return super().__repr__()
