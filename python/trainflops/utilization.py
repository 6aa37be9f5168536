"""MFU and throughput: TFLOP/s per GPU and model FLOPs utilization from a step time.

The peaks are the vendors' dense (no sparsity) tensor-core rates; peak_table()
lists them with their sources, and docs/mfu.md explains them.
"""
from trainflops import _core

__all__ = ["Mfu", "mfu", "peak_table"]


def peak_table():
    """Every dense peak: a list of dicts of gpu, product, dtype, dense_tflops (per GPU) and source."""
    return _core.peak_table()


class Mfu:
    """Throughput and utilization of one training iteration (immutable).

    flops: model FLOPs of the iteration; step_time: seconds; num_gpus;
    peak_tflops: dense peak per GPU, TFLOP/s; peak_source: the table entry's
    product and source, or "peak_tflops="; tflops_per_gpu: flops / step_time /
    num_gpus / 1e12; mfu: tflops_per_gpu / peak_tflops, a fraction; with
    executed FLOPs, executed_flops, executed_tflops_per_gpu and hfu
    (executed_tflops_per_gpu / peak_tflops), else None.
    """
    # A plain class rather than a dataclass: importing dataclasses would
    # double the time `import trainflops` takes.
    __slots__ = ("flops", "step_time", "num_gpus", "peak_tflops", "peak_source", "tflops_per_gpu", "mfu",
                 "executed_flops", "executed_tflops_per_gpu", "hfu")

    def __init__(self, *, flops, step_time, num_gpus, peak_tflops, peak_source, tflops_per_gpu, mfu,
                 executed_flops=None, executed_tflops_per_gpu=None, hfu=None):
        for name, value in zip(self.__slots__, (flops, step_time, num_gpus, peak_tflops, peak_source,
                                                tflops_per_gpu, mfu, executed_flops, executed_tflops_per_gpu, hfu)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Mfu is immutable: cannot set {name}")

    def __eq__(self, other):
        return type(other) is Mfu and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self):
        return hash(tuple(getattr(self, n) for n in self.__slots__))

    def __repr__(self):
        return "Mfu(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"

    def __str__(self):
        text = (f"{self.tflops_per_gpu:.1f} TFLOP/s per GPU, MFU {100 * self.mfu:.2f}% "
                f"of {self.peak_tflops:g} TFLOP/s")
        if self.hfu is not None:
            text += f", HFU {100 * self.hfu:.2f}%"
        return text


def _number(value, name, kind):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise _core.TrainflopsError(f"{name} = {value!r}: must be {kind}") from None


def _flops(value, name):
    """A number of FLOPs, or the total of a Report."""
    return _number(value.total if isinstance(value, _core.Report) else value, name,
                   "a number of FLOPs or a trainflops.Report")


def mfu(flops, step_time, num_gpus, gpu=None, dtype="bf16", peak_tflops=None, executed_flops=None):
    """TFLOP/s per GPU and MFU of one training iteration, as an Mfu.

    flops: the iteration's model FLOPs, a number or a Report (its total). An
        executed-mode Report gives both: its model_total for MFU and its total
        for HFU.
    step_time: seconds per iteration; num_gpus: GPUs the iteration ran on.
    gpu, dtype: the dense peak from the table ("h100-sxm", "b200", "bf16", "fp8"; see
        peak_table()); an alias such as "H100 SXM" or "hgx-b200" works too, and an
        ambiguous one ("h100") says in peak_source what it was taken as.
    peak_tflops: the dense peak per GPU in TFLOP/s, overriding the table.
    executed_flops: FLOPs the hardware executed in the iteration (recomputation
        included), a number or a Report; with it, HFU is reported too.
    """
    if isinstance(flops, _core.Report) and flops.model_total is not None:
        if executed_flops is not None:
            raise _core.TrainflopsError("executed_flops: an executed-mode report already gives them (its total)")
        flops, executed_flops = flops.model_total, flops.total
    if peak_tflops is None:
        if gpu is None:
            raise _core.TrainflopsError("gpu is missing: give the GPU type (see peak_table()) or peak_tflops=")
        peak = _core.find_peak(gpu, dtype)
        peak_tflops, source = peak["dense_tflops"], f"{peak['product']}, {peak['dtype']}, dense: {peak['source']}"
        if peak["assumed"]:
            source = f"{peak['assumed']}; {source}"
    else:
        peak_tflops, source = _number(peak_tflops, "peak_tflops", "a number of TFLOP/s"), "peak_tflops="
    model_flops = _flops(flops, "flops")
    executed = None if executed_flops is None else _flops(executed_flops, "executed_flops")
    step_time = _number(step_time, "step_time", "a number of seconds")
    use = _core.utilization(model_flops, step_time, num_gpus, peak_tflops, executed)
    return Mfu(flops=model_flops, step_time=step_time, num_gpus=num_gpus, peak_tflops=peak_tflops,
               peak_source=source, tflops_per_gpu=use["tflops_per_gpu"], mfu=use["mfu"],
               executed_flops=executed, executed_tflops_per_gpu=use["executed_tflops_per_gpu"], hfu=use["hfu"])
