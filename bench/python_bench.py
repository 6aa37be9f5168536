#!/usr/bin/python3
"""The Python-side figures of `make bench`, run after the C++ benchmarks.

- the Megatron-LM drop-in, trainflops.megatron.num_floating_point_operations,
  per call for the GLM-5-class model of bench/data/glm-5.args.json (DSA, MTP)
  on aggregates, with a prepared trainflops.Model and with the argparse
  namespace Megatron-LM passes (read on every call);
- SeqStats.add_cu_seqlens over the same million documents as the C++
  benchmark's distribution (lengths 0..4000), from int64 and int32 NumPy
  arrays, beside NumPy computing only sum(L) and sum(L^2) from the same array,
  and a plain NumPy sum of it.

Usage: PYTHONPATH=build-release/python /usr/bin/python3 bench/python_bench.py
"""
import argparse
import json
import os
import timeit

import numpy as np

import trainflops
from trainflops.megatron import num_floating_point_operations

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENTS = 1 << 20


def seconds_per_call(function, number, repeat=7):
    """The median over `repeat` runs of `number` calls, per call."""
    times = sorted(timeit.repeat(function, number=number, repeat=repeat))
    return times[len(times) // 2] / number


def main():
    with open(os.path.join(HERE, "data", "glm-5.args.json")) as f:
        args = json.load(f)
    namespace = argparse.Namespace(**args)
    model = trainflops.Model(namespace)
    tokens = 4194304
    squares = tokens * 6000
    rows = []

    def call_prepared():
        return num_floating_point_operations(model, 1024, squares, tokens)

    def call_namespace():
        return num_floating_point_operations(namespace, 1024, squares, tokens)

    assert call_prepared() == call_namespace()
    prepared = seconds_per_call(call_prepared, 20000)
    from_args = seconds_per_call(call_namespace, 2000)
    rows.append(("drop-in per call, GLM-5 (DSA), prepared Model", "%.2f us" % (prepared * 1e6),
                 "%.2f of the 2 us budget; %.1fx faster than Megatron-LM's 3.4 us" % (prepared / 2e-6, 3.4e-6 / prepared),
                 "< 2 us"))
    rows.append(("drop-in per call, GLM-5 (DSA), args namespace", "%.2f us" % (from_args * 1e6),
                 "%.1fx Megatron-LM's 3.4 us (no DSA there)" % (from_args / 3.4e-6), ""))

    rng = np.random.default_rng(20260101)
    lengths = rng.integers(0, 4001, size=DOCUMENTS)
    cu64 = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cu32 = cu64.astype(np.int32)
    kpool_args = dict(args, dsa_kpool_size=4)
    for name, spec in (("DSA+KPool", kpool_args), ("DSA", args)):
        stats = trainflops.SeqStats(trainflops.Model(spec))
        for cu in (cu64, cu32):
            width = str(cu.dtype)

            def add():
                stats.add_cu_seqlens(cu)

            def numpy_sums():
                doc_lengths = np.diff(cu).astype(np.int64, copy=False)
                return int(doc_lengths.sum()), int(np.dot(doc_lengths, doc_lengths))

            def numpy_plain_sum():
                return int(cu.sum(dtype=np.int64))

            stats.reset()
            stats.add_cu_seqlens(cu)
            total, squared = numpy_sums()
            assert stats.tokens() == total
            ours = DOCUMENTS / seconds_per_call(add, 3)
            numpy_rate = DOCUMENTS / seconds_per_call(numpy_sums, 3)
            plain = DOCUMENTS / seconds_per_call(numpy_plain_sum, 3)
            if name == "DSA+KPool":
                rows.append(("numpy sum(L), sum(L^2) from cu_seqlens, " + width, "%.2f G docs/s" % (numpy_rate / 1e9),
                             "%.2f of numpy's plain sum (%.2f G/s)" % (numpy_rate / plain, plain / 1e9), ""))
            rows.append(("SeqStats.add_cu_seqlens %s, 1M docs, GLM-5 %s" % (width, name),
                         "%.2f G docs/s" % (ours / 1e9),
                         "%.2fx numpy's sum(L), sum(L^2)" % (ours / numpy_rate), "> numpy"))
    print("\nFigures through the Python module (README, Performance)")
    print("%-52s %-14s %-58s %s" % ("figure", "measured", "ratio (same run)", "target"))
    for row in rows:
        print("%-52s %-14s %-58s %s" % row)


if __name__ == "__main__":
    main()
