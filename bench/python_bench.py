#!/usr/bin/python3
"""The Python-side figures of `make bench`, run after the C++ benchmarks.

- the Megatron-LM drop-in, trainflops.megatron.num_floating_point_operations,
  per call for the GLM-5-class model of bench/data/glm-5.args.json (DSA, MTP)
  on aggregates, with a prepared trainflops.Model, with the argparse
  namespace Megatron-LM passes (read on every call), and with a new namespace
  on every call (nothing cached), beside Megatron-LM's own function timed on
  the same namespaces (the new namespaces in alternation with it, the ratio
  the median of the rounds'): its source is read from the checkout that the
  MEGATRON_LM environment variable names (bench/megatron_baseline.py);
  without it, that baseline is reported as not measured. The same with a new
  namespace on every call for a hybrid model (Nemotron-3-Nano's preset:
  Mamba, attention and MoE layers), which Megatron-LM counts in its hybrid
  branch, with the same result;
- `trainflops batch` (the command line that TRAINFLOPS_CLI names) over 10,000
  records of distinct models, whole process, beside a Python process that
  parses the same lines and calls Megatron-LM's function on each;
- `trainflops sweep` over 10,000 context lengths, whole process, beside a
  Python process that calls Megatron-LM's function for each length;
- `trainflops count --cu-seqlens` on a .npy of 10 million documents (80 MB),
  whole process, its time and peak memory beside a Python process that
  loads the file with NumPy and sums it (what a user would run instead);
- `import trainflops`, timed inside fresh interpreters, beside the time of
  `python3 -c pass`;
- SeqStats.add_cu_seqlens over the same million documents as the C++
  benchmark's distribution (lengths 0..4000), from int64 and int32 NumPy
  arrays, beside NumPy computing only sum(L) and sum(L^2) from the same array,
  and a plain NumPy sum of it.

Usage: PYTHONPATH=build-release/python /usr/bin/python3 bench/python_bench.py
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import trainflops
from trainflops.megatron import num_floating_point_operations

import megatron_baseline

HERE = os.path.dirname(os.path.abspath(__file__))
DOCUMENTS = 1 << 20
BATCH_RECORDS = 10000
SWEEP_LENGTHS = [1024 + 8 * i for i in range(10000)]

# What a user would run instead of `trainflops batch`: a Python loop over the
# same JSON lines calling Megatron-LM's function (its args hold every name it
# reads, None when unset).
MEGATRON_LOOP = """
import argparse, json, sys
sys.path.insert(0, sys.argv[1])
import megatron_baseline
function, read, _ = megatron_baseline.load(sys.argv[2])
unset = dict.fromkeys(read)
with open(sys.argv[3]) as lines:
    for line in lines:
        record = json.loads(line)
        args = argparse.Namespace(**{**unset, **record["args"]})
        print(json.dumps({"flops": function(args, record["batch_size"])}))
"""


def seconds_per_call(function, number, repeat=7):
    """The median over `repeat` runs of `number` calls, per call."""
    times = sorted(timeit.repeat(function, number=number, repeat=repeat))
    return times[len(times) // 2] / number


def import_seconds(repeat=21):
    """The median time `import trainflops` takes in a fresh interpreter, timed
    inside it: what the import adds to a process, without the interpreter's
    own start-up, which on a shared machine varies by more than the import
    costs."""
    timer = "import time; start = time.perf_counter(); import trainflops; print(time.perf_counter() - start)"
    times = sorted(float(subprocess.run([sys.executable, "-c", timer], check=True, capture_output=True, text=True,
                                        env=dict(os.environ)).stdout) for _ in range(repeat))
    return times[repeat // 2]


def process_seconds(command, stdin_path=None, repeat=7):
    """The median wall time of `command` as a fresh process, its output discarded."""
    times = []
    for _ in range(repeat):
        stdin = open(stdin_path) if stdin_path else subprocess.DEVNULL
        start = timeit.default_timer()
        subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
        times.append(timeit.default_timer() - start)
        if stdin_path:
            stdin.close()
    return sorted(times)[repeat // 2]


# What a user would run instead of `trainflops sweep`: Megatron-LM's function
# per context length, one sequence each, per token.
MEGATRON_SWEEP = """
import argparse, json, sys
sys.path.insert(0, sys.argv[1])
import megatron_baseline
function, read, _ = megatron_baseline.load(sys.argv[2])
args = argparse.Namespace(**{**dict.fromkeys(read), **json.load(open(sys.argv[3]))})
for length in map(int, sys.argv[4].split(",")):
    args.seq_length = length
    print(length, function(args, 1) / length)
"""


def sweep_rows(checkout):
    """`trainflops sweep` of GLM-5 over 10k lengths beside Megatron-LM's function in a loop."""
    cli = os.environ.get("TRAINFLOPS_CLI")
    if not cli:
        return [("trainflops sweep, 10k lengths", "not measured", "set TRAINFLOPS_CLI to the command line", "")]
    lengths = ",".join(map(str, SWEEP_LENGTHS))
    args_path = os.path.join(HERE, "data", "glm-5.args.json")
    ours = process_seconds([cli, "sweep", "--args", args_path, "--seq-lengths", lengths])
    measured = "%.2f us/length" % (ours / len(SWEEP_LENGTHS) * 1e6)
    if not checkout:
        return [("trainflops sweep, 10k lengths, whole process", measured,
                 "Megatron-LM loop not measured (MEGATRON_LM)", "<= 1 us/length")]
    loop = process_seconds([sys.executable, "-c", MEGATRON_SWEEP, HERE, checkout, args_path, lengths])
    return [("Python loop: Megatron-LM's function per length", "%.2f us/length" % (loop / len(SWEEP_LENGTHS) * 1e6),
             "whole process, 10k lengths", ""),
            ("trainflops sweep, 10k lengths, whole process", measured,
             "%.2fx the Megatron-LM loop's time" % (ours / loop), "<= 1 us/length")]


def process_seconds_and_peak(command, repeat=7):
    """The median wall time of `command` as a fresh process and its largest peak resident memory (bytes).

    The peak is read by /usr/bin/time, whose own child it is: a process forked
    from this interpreter and exec'd would report the interpreter's peak as its own."""
    times, peak = [], 0
    with tempfile.NamedTemporaryFile(mode="r", suffix=".rss") as rss:
        for _ in range(repeat):
            start = timeit.default_timer()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *command], stdout=subprocess.DEVNULL,
                           check=True)
            times.append(timeit.default_timer() - start)
            rss.seek(0)
            peak = max(peak, int(rss.read().split()[-1]) * 1024)
    return sorted(times)[repeat // 2], peak


NUMPY_SUM = """
import sys
import numpy as np
offsets = np.load(sys.argv[1])
print(int(offsets[-1]), int(offsets.sum()))
"""


def cu_seqlens_file_rows():
    """`trainflops count --cu-seqlens` on 10M documents beside NumPy loading and summing the same file."""
    cli = os.environ.get("TRAINFLOPS_CLI")
    if not cli:
        return [("trainflops count --cu-seqlens, 10M docs", "not measured", "set TRAINFLOPS_CLI to the command line",
                 "")]
    rng = np.random.default_rng(20260102)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(0, 4001, size=10_000_000))]).astype(np.int64)
    with tempfile.NamedTemporaryFile(suffix=".npy", delete=False) as f:
        np.save(f, offsets)
    try:
        size = os.path.getsize(f.name)
        ours, our_peak = process_seconds_and_peak(
            [cli, "count", "--preset", "glm-5", "--cu-seqlens", f.name, "--format", "json"])
        theirs, their_peak = process_seconds_and_peak([sys.executable, "-c", NUMPY_SUM, f.name])
        return [("python3: numpy.load + sum, 10M-doc .npy", "%.0f ms" % (theirs * 1e3),
                 "whole process, peak %.0f MB, file %.0f MB" % (their_peak / 1e6, size / 1e6), ""),
                ("trainflops count --cu-seqlens, 10M-doc .npy", "%.0f ms" % (ours * 1e3),
                 "%.2fx numpy's time; peak %.0f MB = %.2f x the file" % (ours / theirs, our_peak / 1e6,
                                                                         our_peak / size),
                 "<= 1x numpy, peak < 0.5 x file")]
    finally:
        os.unlink(f.name)


def batch_rows(args, checkout):
    """`trainflops batch` on distinct models beside the Megatron-LM loop."""
    cli = os.environ.get("TRAINFLOPS_CLI")
    if not cli:
        return [("trainflops batch, 10k distinct models", "not measured", "set TRAINFLOPS_CLI to the command line", "")]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as records:
        for i in range(BATCH_RECORDS):
            distinct = dict(args, hidden_size=4096 + 1024 * (i % 4), moe_ffn_hidden_size=1024 + 8 * (i // 4))
            records.write(json.dumps({"args": distinct, "mode": "megatron", "batch_size": 1 + i % 1024}) + "\n")
    try:
        ours = process_seconds([cli, "batch"], stdin_path=records.name)
        measured = "%.1f us/record" % (ours / BATCH_RECORDS * 1e6)
        if not checkout:
            return [("trainflops batch, 10k distinct models, whole process", measured,
                     "Megatron-LM loop not measured (MEGATRON_LM)", "<= 1x Megatron-LM loop")]
        loop = process_seconds([sys.executable, "-c", MEGATRON_LOOP, HERE, checkout, records.name])
        return [("Python loop: json.loads + Megatron-LM's function", "%.1f us/record" % (loop / BATCH_RECORDS * 1e6),
                 "whole process, 10k records", ""),
                ("trainflops batch, 10k distinct models, whole process", measured,
                 "%.2fx the Megatron-LM loop's time" % (ours / loop), "<= 1x Megatron-LM loop")]
    finally:
        os.unlink(records.name)


def count_rows(args, cu64):
    """trainflops.count(cu_seqlens=) over a million documents: NumPy, torch and a list, beside SeqStats over the
    same array and NumPy's own conversion of the list."""
    model = trainflops.Model(args)
    stats = trainflops.SeqStats(model)

    def seq_stats():
        stats.reset()
        stats.add_cu_seqlens(cu64)

    rows = []
    sources = [("int64 NumPy array", cu64)]
    try:
        import torch
        sources.append(("CPU torch tensor", torch.from_numpy(cu64)))
    except ImportError:
        rows.append(("count(cu_seqlens=) torch tensor", "not measured", "torch is not installed", ""))
    for name, source in sources:
        # Timed in alternation with SeqStats, 20 calls a turn: runs of a few milliseconds, which a busy moment of a
        # shared machine disturbs less, and a drift in its speed slows both alike.
        counted, _, ratio = side_by_side(lambda: trainflops.count(model, cu_seqlens=source, mode="model"), seq_stats,
                                         20)
        rows.append((f"count(cu_seqlens=) {name}, 1M docs, GLM-5 DSA", "%.2f ns/doc" % (counted / DOCUMENTS * 1e9),
                     "%.2fx SeqStats' time over the same array" % ratio, "<= 1.2x SeqStats"))
    as_list = cu64.tolist()
    listed = seconds_per_call(lambda: trainflops.count(model, cu_seqlens=as_list, mode="model"), 3)
    converted = seconds_per_call(lambda: np.asarray(as_list), 3)
    rows.append(("count(cu_seqlens=) Python list, 1M docs", "%.1f ns/doc" % (listed / DOCUMENTS * 1e9),
                 "%.2fx numpy.asarray(list)'s time" % (listed / converted), "<= 1x numpy's conversion"))
    return rows


# The drop-in's workload: aggregates of a 1024-sequence batch.
TOKENS = 4194304
SQUARES = TOKENS * 6000


def distinct_namespaces(args, read=None):
    """64 namespaces of distinct models (expert widths), to be taken in turn:
    no call finds its model among the few the drop-in keeps. With `read`, as
    Megatron-LM's args: every name its function reads, None when unset."""
    unset = dict.fromkeys(read or ())
    return [argparse.Namespace(**{**unset, **args, "moe_ffn_hidden_size": args["moe_ffn_hidden_size"] + 8 * i})
            for i in range(64)]


def calls_in_turn(function, namespaces):
    """A call of `function` on the next of `namespaces`, round and round."""
    calls = iter(range(1 << 62))
    return lambda: function(namespaces[next(calls) % len(namespaces)], 1024, SQUARES, TOKENS)


def side_by_side(ours, theirs, number, rounds=21):
    """Per-call seconds of two functions timed in alternation, each the median
    over `rounds`, and the median of the rounds' ratios ours / theirs: a
    machine whose speed drifts slows both sides of a round alike."""
    times = []
    for _ in range(rounds):
        mine = timeit.timeit(ours, number=number) / number
        other = timeit.timeit(theirs, number=number) / number
        times.append((mine, other, mine / other))
    return [sorted(column)[rounds // 2] for column in zip(*times)]


def drop_in_rows(args, megatron):
    """The drop-in on GLM-5 (prepared, same namespace, a new model per call)
    and a new hybrid model per call, each beside Megatron-LM's function on
    the same namespaces; `megatron` is (function, names read, source) or None."""
    namespace = argparse.Namespace(**args)
    model = trainflops.Model(namespace)
    fresh = distinct_namespaces(args)

    def call_prepared():
        return num_floating_point_operations(model, 1024, SQUARES, TOKENS)

    def call_namespace():
        return num_floating_point_operations(namespace, 1024, SQUARES, TOKENS)

    assert call_prepared() == call_namespace() == num_floating_point_operations(fresh[0], 1024, SQUARES, TOKENS)
    prepared = seconds_per_call(call_prepared, 20000)
    from_args = seconds_per_call(call_namespace, 2000)
    with open(os.path.join(HERE, "..", "presets", "nemotron-3-nano-30b-a3b.json")) as f:
        # Megatron-LM's argument parser sets ffn_hidden_size to 4 h when it is
        # unset, and its hybrid branch reads it even without dense MLP layers.
        hybrid = json.load(f)["args"]
    hybrid["ffn_hidden_size"] = 4 * hybrid["hidden_size"]
    hybrid_fresh = distinct_namespaces(hybrid)
    glm5_ours = calls_in_turn(num_floating_point_operations, fresh)
    hybrid_ours = calls_in_turn(num_floating_point_operations, hybrid_fresh)
    if not megatron:
        from_fresh = seconds_per_call(glm5_ours, 500)
        hybrid_seconds = seconds_per_call(hybrid_ours, 500)
        return [("Megatron-LM's function", "not measured", "set MEGATRON_LM to a Megatron-LM checkout", ""),
                ("drop-in per call, GLM-5 (DSA), prepared Model", "%.2f us" % (prepared * 1e6), "not measured",
                 "<= 1x Megatron-LM"),
                ("drop-in per call, GLM-5 (DSA), same args namespace", "%.2f us" % (from_args * 1e6), "not measured",
                 "<= 1x Megatron-LM"),
                ("drop-in per call, GLM-5 (DSA), a new model each call", "%.2f us" % (from_fresh * 1e6),
                 "not measured", "<= 10x Megatron-LM"),
                ("drop-in per call, Nemotron-3-Nano, a new model each call", "%.2f us" % (hybrid_seconds * 1e6),
                 "not measured", "<= 10x Megatron-LM")]

    function, read, source = megatron
    hybrid_megatron = distinct_namespaces(hybrid, read)
    theirs = function(hybrid_megatron[0], 1024, SQUARES, TOKENS)
    ours = num_floating_point_operations(hybrid_fresh[0], 1024, SQUARES, TOKENS)
    assert math.isclose(theirs, ours, rel_tol=1e-12), (theirs, ours)
    # Each new-model figure is timed in alternation with Megatron-LM's function
    # on the same namespaces, and its ratio is the median of the rounds'.
    same_megatron = distinct_namespaces(args, read)[0]
    from_args, baseline, same_ratio = side_by_side(
        call_namespace, lambda: function(same_megatron, 1024, SQUARES, TOKENS), 2000)
    from_fresh, _, fresh_ratio = side_by_side(
        glm5_ours, calls_in_turn(function, distinct_namespaces(args, read)), 500)
    hybrid_seconds, hybrid_baseline, hybrid_ratio = side_by_side(
        hybrid_ours, calls_in_turn(function, hybrid_megatron), 500)

    def times(ratio):
        return "%.2fx Megatron-LM's time" % ratio

    return [("Megatron-LM's function, same args (no DSA on main)", "%.2f us" % (baseline * 1e6), source, ""),
            ("Megatron-LM's function, Nemotron-3-Nano (hybrid)", "%.2f us" % (hybrid_baseline * 1e6),
             "same FLOPs as the drop-in's", ""),
            ("drop-in per call, GLM-5 (DSA), prepared Model", "%.2f us" % (prepared * 1e6),
             times(prepared / baseline), "<= 1x Megatron-LM"),
            ("drop-in per call, GLM-5 (DSA), same args namespace", "%.2f us" % (from_args * 1e6),
             times(same_ratio) + ", side by side", "<= 1x Megatron-LM"),
            ("drop-in per call, GLM-5 (DSA), a new model each call", "%.2f us" % (from_fresh * 1e6),
             times(fresh_ratio) + ", side by side", "<= 10x Megatron-LM"),
            ("drop-in per call, Nemotron-3-Nano, a new model each call", "%.2f us" % (hybrid_seconds * 1e6),
             times(hybrid_ratio) + ", side by side", "<= 10x Megatron-LM")]


def main():
    with open(os.path.join(HERE, "data", "glm-5.args.json")) as f:
        args = json.load(f)
    checkout = os.environ.get("MEGATRON_LM")
    megatron = megatron_baseline.load(checkout) if checkout else None
    rows = drop_in_rows(args, megatron)

    rows.extend(batch_rows(args, checkout))
    rows.extend(cu_seqlens_file_rows())
    rows.extend(sweep_rows(checkout))

    imported = import_seconds()
    bare = process_seconds([sys.executable, "-c", "pass"], repeat=21)
    rows.append(("import trainflops, in a fresh python3", "%.1f ms" % (imported * 1e3),
                 "python3 -c pass takes %.1f ms" % (bare * 1e3), "<= 5 ms"))

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
    rows.extend(count_rows(args, cu64))
    print("\nFigures through the Python module (README, Performance)")
    print("%-58s %-14s %-58s %s" % ("figure", "measured", "ratio (same run)", "target"))
    for row in rows:
        print("%-58s %-14s %-58s %s" % row)


if __name__ == "__main__":
    main()
