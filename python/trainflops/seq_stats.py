"""trainflops.SeqStats: exact packed-sequence statistics of a training loop.

The C++ core (trainflops._core.SeqStats) sums the per-document statistics;
this class adds what a training loop needs around it: a missing or empty
cu_seqlens is nothing to add, as in Megatron-LM's own accumulator, and a torch
tensor, on the GPU or the CPU, is reduced on its own device. Every statistic
is made of a few moments of the documents (sum L, sum L^2 and, per threshold
and pool the model needs, sums of excesses and remainders and of their
squares: SeqStats::MomentSpec in trainflops/seq_stats.h); each call sums them
with int64 torch operations into a small accumulator on the tensor's device,
without a host synchronization, and vector(), flops(), tokens() and repr()
move the accumulator to the host once and add it exactly in 128 bits.

Exactness in int64: each value v (a length, an excess or a remainder, below
2^63) is split into three 21-bit limbs, so that v = sum_k x_k 2^(21k) and
v^2 = sum_(i,j) x_i x_j 2^(21(i+j)), i and j from 0 to 2; over at most 2^20
documents at a time the sums of the limbs and of their products stay below
2^62. The accumulator holds each such sum in a high and a low lane (the low
32 bits, carried after every addition), exact up to 2^95: 2^33 additions of
the largest sums between two reads. The host combines the lanes into Python
integers. (Moments of 2^100 and more, from documents of about 2^50 tokens,
are refused by the C++ with a message of its own, where lists name the
statistic past its limit.)
"""
from trainflops import _core

_LIMB_BITS = 21
_LIMBS = 3  # 63 bits: any length, excess or remainder
# Documents summed at a time (at most 2^20): a few hundred bytes of temporaries per document.
_CHUNK = 2**16
_LOW_BITS = 32
_LOW_MASK = 2**_LOW_BITS - 1


def _is_tensor(value):
    return type(value).__module__.startswith("torch") and hasattr(value, "device") and hasattr(value, "numel")


class _DeviceSums:
    """The moments summed on one device, and the first invalid call's error:
    [found, index, offset, previous offset]."""

    def __init__(self, torch, device, thresholds, pools):
        # Made by fills, not copied from the host: a copy to the GPU would synchronize.
        def column(values):
            return torch.cat([torch.full((1, 1), value, dtype=torch.int64, device=device) for value in values])

        self.thresholds = column(thresholds) if thresholds else None
        self.pool_sizes = column([size for size, _ in pools]) if pools else None
        self.pool_thresholds = column([threshold for _, threshold in pools]) if pools else None
        self.shifts = column([_LIMB_BITS * k for k in range(_LIMBS)]).reshape(_LIMBS, 1, 1)
        rows = 1 + len(thresholds) + len(pools)
        self.high = torch.zeros((_LIMBS + _LIMBS * _LIMBS) * rows, dtype=torch.int64, device=device)
        self.low = torch.zeros_like(self.high)
        self.error = torch.zeros(4, dtype=torch.int64, device=device)

    def add(self, torch, offsets):
        """Adds the moments of a call's documents, or records its error: torch
        operations only, all queued on the device."""
        lengths = offsets[1:] - offsets[:-1]
        # The first offset that breaks the rules, as the C++ checks them.
        bad = torch.cat([offsets[:1] != 0, lengths < 0])
        found = bad.any().reshape(1)
        index = bad.to(torch.uint8).argmax().reshape(1)
        record = torch.cat([found.to(torch.int64), index, offsets.index_select(0, index),
                            offsets.index_select(0, (index - 1).clamp(min=0))])
        self.error.copy_(torch.where(self.error[:1] != 0, self.error, record))
        valid = ~found
        for part in lengths.split(_CHUNK):
            self._add_sums(torch, part, valid)

    def _add_sums(self, torch, lengths, valid):
        rows = [lengths.unsqueeze(0)]
        if self.thresholds is not None:
            rows.append((lengths - self.thresholds).clamp(min=0))
        if self.pool_sizes is not None:
            rows.append((lengths % self.pool_sizes) * (lengths > self.pool_thresholds))
        values = torch.cat(rows)
        limbs = (values.unsqueeze(0) >> self.shifts) & (2**_LIMB_BITS - 1)  # [limb, row, document]
        products = (limbs.unsqueeze(1) * limbs.unsqueeze(0)).sum(3)  # [limb, limb, row]
        sums = torch.cat([limbs.sum(2).reshape(-1), products.reshape(-1)])
        sums *= valid  # an invalid call adds nothing
        self.low += sums & _LOW_MASK
        self.high += sums >> _LOW_BITS
        self.high += self.low >> _LOW_BITS
        self.low &= _LOW_MASK

    def take(self, torch):
        """(moments, error) on the host, in one transfer; the device sums start again from zero."""
        on_host = torch.cat([self.high, self.low, self.error]).tolist()
        size = self.high.numel()
        for tensor in (self.high, self.low, self.error):
            tensor.zero_()
        sums = [(high << _LOW_BITS) + low for high, low in zip(on_host[:size], on_host[size:2 * size])]
        rows = size // (_LIMBS + _LIMBS * _LIMBS)

        def at(part, row):  # part: a limb k, or _LIMBS + the pair (i, j) as i * _LIMBS + j
            return sums[part * rows + row]

        moments = []
        for row in range(rows):
            moments.append(sum(at(k, row) << (_LIMB_BITS * k) for k in range(_LIMBS)))
            moments.append(sum(at(_LIMBS + i * _LIMBS + j, row) << (_LIMB_BITS * (i + j))
                               for i in range(_LIMBS) for j in range(_LIMBS)))
        return moments, on_host[2 * size:]


class SeqStats(_core.SeqStats):
    __doc__ = _core.SeqStats.__doc__

    def __init__(self, model=None, **options):
        super().__init__(model, **options)
        self._device_sums = {}  # per device

    def add_cu_seqlens(self, cu_seqlens):
        """Adds the documents of cumulative offsets (0 first, non-decreasing):
        a list, a NumPy array or a torch tensor (any device) of integers.
        None, or fewer than two offsets, adds nothing. A tensor is reduced on
        its device without a host synchronization; an invalid one adds
        nothing, and its error is raised when the totals are next read (the
        first such error, once). Anything else is added now, and on error
        nothing is added."""
        if cu_seqlens is None:
            return
        if _is_tensor(cu_seqlens):
            self._add_tensor(cu_seqlens)
            return
        if getattr(cu_seqlens, "ndim", 1) == 1 and len(cu_seqlens) < 2:
            return
        super().add_cu_seqlens(cu_seqlens)

    def _add_tensor(self, cu_seqlens):
        import torch
        if cu_seqlens.dtype.is_floating_point or cu_seqlens.dtype.is_complex or cu_seqlens.dtype == torch.bool:
            raise _core.InvalidInputError(
                f"cu_seqlens holds {cu_seqlens.dtype} elements, not integers: give int32 or int64 values")
        if cu_seqlens.numel() < 2:
            return
        offsets = cu_seqlens.detach().reshape(-1).to(torch.int64)
        sums = self._device_sums.get(offsets.device)
        if sums is None:
            thresholds, pools = self._moment_spec()
            sums = self._device_sums[offsets.device] = _DeviceSums(torch, offsets.device, thresholds, pools)
        sums.add(torch, offsets)

    def _add_device_sums(self):
        if not self._device_sums:
            return
        import torch
        errors = []
        for sums in self._device_sums.values():
            moments, error = sums.take(torch)
            self._add_moments(moments)
            if error[0]:
                errors.append(error[1:])
        if errors:
            self._raise_offsets_error(*errors[0])

    def _raise_offsets_error(self, index, offset, previous):
        # The C++ words the error: offsets that fail where the tensor's did, at the same index.
        import numpy
        offsets = numpy.zeros(max(index + 1, 2), dtype=numpy.int64)
        offsets[index] = offset
        if index > 0:
            offsets[index - 1] = previous
        super().add_cu_seqlens(offsets)

    def vector(self):
        self._add_device_sums()
        return super().vector()

    def set_vector(self, summed):
        self._device_sums = {}
        super().set_vector(summed)

    def reset(self):
        self._device_sums = {}
        super().reset()

    def flops(self):
        self._add_device_sums()
        return super().flops()

    def tokens(self):
        self._add_device_sums()
        return super().tokens()

    def __repr__(self):
        self._add_device_sums()
        return super().__repr__()
