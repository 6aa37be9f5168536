#!/usr/bin/python3
"""The Python-side figures of `make bench`, run after the C++ benchmarks.

- the Megatron-LM drop-in, trainflops.megatron.num_floating_point_operations,
  per call for the GLM-5-class model of bench/data/glm-5.args.json (DSA, MTP)
  on aggregates, with a prepared trainflops.Model, with the argparse
  namespace Megatron-LM passes (read on every call), and with a new namespace
  on every call (nothing cached), beside Megatron-LM's own function timed on
  the same namespaces: its source is read from the checkout that the
  MEGATRON_LM environment variable names (bench/megatron_baseline.py);
  without it, that baseline is reported as not measured;
- `import trainflops` beside `python3 -c pass`;
- SeqStats.add_cu_seqlens over the same million documents as the C++
  benchmark's distribution (lengths 0..4000), from int64 and int32 NumPy
  arrays, beside NumPy computing only sum(L) and sum(L^2) from the same array,
  and a plain NumPy sum of it.

Usage: PYTHONPATH=build-release/python /usr/bin/python3 bench/python_bench.py
"""
import argparse
import json
import os
import subprocess
import sys
import timeit

import numpy as np

import trainflops
from trainflops.megatron import num_floating_point_operations

import megatron_baseline

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENTS = 1 << 20


def seconds_per_call(function, number, repeat=7):
    """The median over `repeat` runs of `number` calls, per call."""
    times = sorted(timeit.repeat(function, number=number, repeat=repeat))
    return times[len(times) // 2] / number


def startup_seconds(code, repeat=21):
    """The median wall time of a fresh interpreter running `code`."""
    times = []
    for _ in range(repeat):
        start = timeit.default_timer()
        subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
        times.append(timeit.default_timer() - start)
    return sorted(times)[repeat // 2]


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

    # Distinct namespaces, so that no call finds the previous one's model.
    fresh = [argparse.Namespace(**args) for _ in range(64)]
    fresh_calls = iter(range(1 << 62))

    def call_fresh():
        return num_floating_point_operations(fresh[next(fresh_calls) % 64], 1024, squares, tokens)

    assert call_prepared() == call_namespace() == call_fresh()
    prepared = seconds_per_call(call_prepared, 20000)
    from_args = seconds_per_call(call_namespace, 2000)
    from_fresh = seconds_per_call(call_fresh, 500)
    checkout = os.environ.get("MEGATRON_LM")
    baseline = None
    if checkout:
        megatron_function, read, source = megatron_baseline.load(checkout)
        # Megatron-LM's args hold every argument (None when unset).
        megatron_fresh = [argparse.Namespace(**{**dict.fromkeys(read), **args}) for _ in range(64)]
        megatron_calls = iter(range(1 << 62))

        def call_megatron():
            return megatron_function(megatron_fresh[next(megatron_calls) % 64], 1024, squares, tokens)

        baseline = seconds_per_call(call_megatron, 2000)
        rows.append(("Megatron-LM's function, same args (no DSA on main)", "%.2f us" % (baseline * 1e6), source, ""))
    else:
        rows.append(("Megatron-LM's function", "not measured", "set MEGATRON_LM to a Megatron-LM checkout", ""))

    def against_megatron(seconds):
        return "not measured" if baseline is None else "%.2fx Megatron-LM's time" % (seconds / baseline)

    rows.append(("drop-in per call, GLM-5 (DSA), prepared Model", "%.2f us" % (prepared * 1e6),
                 against_megatron(prepared), "<= 0.6 us"))
    rows.append(("drop-in per call, GLM-5 (DSA), same args namespace", "%.2f us" % (from_args * 1e6),
                 against_megatron(from_args), "<= 0.6 us"))
    rows.append(("drop-in per call, GLM-5 (DSA), a new namespace", "%.2f us" % (from_fresh * 1e6),
                 against_megatron(from_fresh), "<= 1x Megatron-LM"))

    bare = startup_seconds("pass")
    imported = startup_seconds("import trainflops")
    rows.append(("import trainflops, above python3 -c pass", "%.1f ms" % ((imported - bare) * 1e3),
                 "python3 -c pass: %.1f ms" % (bare * 1e3), "<= 5 ms"))

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
