"""Runs the validation suite: every case through the PyTorch reference and
through `trainflops count --mode executed`, compared exactly.

Usage: /usr/bin/python3 -m validation [--cli build/trainflops] [--seed N]
           [--only NAME[,NAME...]] [--jobs N]
Prints one line per check and case, then `N passed, M failed`; exits with 1
when anything failed.
"""

import argparse
import collections
import concurrent.futures
import json
import multiprocessing
import os
import sys
import time
import traceback

import torch

from validation.cases import generate
from validation.compare import differences
from validation.config import BlockSparse, Csa2Stack, Gdn, Gqa, Kda, Moe, Qsa
from validation.counting import Tags
from validation.coverage import missing
from validation.model import train_step
from validation.selfcheck import CHECKS
from validation.tensors import Batch
from validation.trainflops_cli import executed_count, report_flops

DEFAULT_SEED = 1


def summary(case):
    """A one-line description of the case's model."""
    config = case.config()
    a, ix, native = config.attention, config.indexer, config.native_mixer
    if isinstance(native, Csa2Stack):
        def csa2_layer(layer):
            if not layer.compress_ratio:
                return f"w{layer.window}"
            # W: writes the cache, I: runs an indexer, S / C: candidate source / consumer.
            role = {"source": "S", "consumer": "C", None: ""}[layer.candidates]
            return (f"r{layer.compress_ratio}k{layer.topk}" + ("W" if layer.writes_cache else "")
                    + ("I" if layer.runs_indexer else "") + role)
        first = native.layers[0]
        attention = (f"csa2 {first.num_heads}x{first.head_dim} [{' '.join(map(csa2_layer, native.layers))}]"
                     + (f" mtp [{csa2_layer(native.mtp)}]" if native.mtp else ""))
    elif isinstance(native, Kda):
        attention = (f"kda {native.num_heads}x{native.head_dim} conv {native.conv_kernel_dim} "
                     f"forget rank {native.forget_gate_rank} output gate "
                     + (f"rank {native.output_gate_rank}" if native.output_gate_rank else "full")
                     + f" chunks of {native.chunk_size}")
    elif isinstance(native, Gdn):
        attention = (f"gdn keys {native.num_key_heads}x{native.key_head_dim} values "
                     f"{native.num_value_heads}x{native.value_head_dim} conv {native.conv_kernel_dim} "
                     f"chunks of {native.chunk_size}")
    elif isinstance(a, Gqa):
        attention = f"gqa {a.num_heads}/{a.num_groups} heads" + (" gated" if a.output_gate else "")
        if isinstance(native, BlockSparse):
            attention += f" block-sparse b={native.block_size} k={native.topk_blocks} init={native.init_blocks}"
        elif isinstance(native, Qsa):
            attention += (f" qsa r={native.block_size} budget={native.budget} "
                          f"indexer {native.indexer_num_heads}/{native.indexer_key_heads}")
    elif ix is None:
        attention = "mla" + (" q-lora" if a.q_lora_rank else "")
    elif ix.pool_size > 1:
        attention = f"kpool p={ix.pool_size} k={ix.topk}" + (" tail" if ix.pool_tail else " no-tail")
    else:
        attention = f"dsa {ix.grad_mode} k={ix.topk}"
        if ix.topk_freq > 1 or ix.skip_topk_offset > 1:
            attention += f" freq={ix.topk_freq} offset={ix.skip_topk_offset}"
    mixers = []
    for mixer in dict.fromkeys(config.channel_mixers):
        if isinstance(mixer, Moe):
            mixers.append(f"moe {mixer.num_experts}x top-{mixer.topk}" + (" shared" if mixer.shared else "")
                          + (f" latent {mixer.latent_size}" if mixer.latent_size else ""))
        else:
            mixers.append("swiglu" if mixer.gated else "mlp")
    mtp = f", mtp {config.mtp_depths}" if config.mtp_depths else ""
    layers = len(config.channel_mixers)
    residuals = f", attnres blocks of {config.attention_residuals}" if config.attention_residuals else ""
    return (f"{attention} + {'/'.join(mixers)}, {layers} layer{'s' if layers > 1 else ''}{mtp}{residuals}, "
            f"h={config.hidden_size}; {case.describe()}")


def run_case(cli, case):
    """(passed, FLOPs, lines to print on failure, seconds)."""
    started = time.monotonic()
    try:
        config = case.config()
        fmas = train_step(config, Batch(case.docs), case.recompute, case.seed, Tags())
        reference = collections.Counter({key: 2 * value for key, value in fmas.items()})
        total, trainflops = report_flops(executed_count(cli, case))
        lines = differences(reference, total, trainflops)
        return not lines, sum(reference.values()), lines, time.monotonic() - started
    except Exception:  # a failing case reports why, and the suite goes on
        return False, 0, traceback.format_exc().rstrip().splitlines(), time.monotonic() - started


def _worker_init():
    torch.set_num_threads(1)  # the processes run in parallel; tiny GEMMs gain nothing from threads


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m validation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", default="build/trainflops", help="the trainflops executable")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="draws every case's sizes and data")
    parser.add_argument("--only", help="comma-separated case names (e.g. dsa-3,kpool-1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="cases run in parallel")
    options = parser.parse_args(argv)
    if not os.access(options.cli, os.X_OK):
        print(f"validation: --cli {options.cli}: not an executable file (build trainflops first)", file=sys.stderr)
        return 2

    cases = generate(options.seed)
    if options.only:
        wanted = options.only.split(",")
        unknown = sorted(set(wanted) - {case.name for case in cases})
        if unknown:
            print(f"validation: --only {','.join(unknown)}: no such case", file=sys.stderr)
            return 2
        cases = [case for case in cases if case.name in wanted]
    print(f"validation: {len(cases)} case{'s' if len(cases) != 1 else ''} (seed {options.seed}) against `{options.cli} count --mode executed`",
          flush=True)

    passed = failed = 0
    checks = {} if options.only else CHECKS
    for name, check in checks.items():
        try:
            check()
            passed += 1
            print(f"ok    {name}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL  {name}\n" + traceback.format_exc(), flush=True)
    uncovered = [] if options.only else missing(cases)
    if uncovered:
        failed += 1
        print(f"FAIL  coverage: no case covers {', '.join(uncovered)}", flush=True)

    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(options.jobs, mp_context=context, initializer=_worker_init) as pool:
        results = pool.map(run_case, [options.cli] * len(cases), cases)
        for case, (ok, flops, lines, seconds) in zip(cases, results):
            status = "ok  " if ok else "FAIL"
            print(f"{status}  {case.name:<10} {seconds:5.2f}s  {flops:>12} FLOPs  {summary(case)}", flush=True)
            if ok:
                passed += 1
                continue
            failed += 1
            for line in lines:
                print(f"      {line}")
            print(f"      args {json.dumps(case.args, sort_keys=True)}")
            print(f"      reproduce: /usr/bin/python3 -m validation --cli {options.cli} --seed {options.seed} "
                  f"--only {case.name}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
