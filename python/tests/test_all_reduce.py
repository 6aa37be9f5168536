"""SeqStats across 4 data-parallel ranks: torch.distributed (gloo), one all_reduce(SUM).

Each rank adds different documents from its own cu_seqlens (a CPU tensor, as a
packed-sequence data loader yields it), all-reduces vector(), and must find
the exact model-mode FLOPs of the whole global batch: equal to one process
that saw every document, and to count(..., docs=every document).
"""
import datetime
import os
import random
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import trainflops
from test_seq_stats import DSA_ARGS

WORLD_SIZE = 4


def rank_documents(rank):
    rng = random.Random(1000 + rank)
    return [rng.randrange(1, 9000) for _ in range(5 + 3 * rank)]


def run_rank(rank, port, results):
    """One rank; sends (rank, flops, tokens) to `results`, the numbers as text (exact ints of any size)."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # A rank that fails stops the others within seconds, not gloo's default 30 minutes.
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=datetime.timedelta(seconds=30))
    try:
        stats = trainflops.SeqStats(DSA_ARGS)
        docs = rank_documents(rank)
        stats.add_cu_seqlens(torch.cumsum(torch.tensor([0] + docs, dtype=torch.int32), 0, dtype=torch.int32))
        vector = torch.tensor(stats.vector(), dtype=torch.int64)
        dist.all_reduce(vector, op=dist.ReduceOp.SUM)
        stats.set_vector(vector)
        results.put((rank, str(stats.flops()), str(stats.tokens())))
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_four_ranks_all_reduce_to_the_exact_global_count():
    # A fork server that imported torch once starts the ranks in a second. (Forking
    # pytest itself is unsafe once other tests have run torch's thread pools.)
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed", "trainflops", __name__])
    results = context.SimpleQueue()
    mp.start_processes(run_rank, args=(free_port(), results), nprocs=WORLD_SIZE, join=True,
                       start_method="forkserver")
    results = {rank: (flops, tokens) for rank, flops, tokens in (results.get() for _ in range(WORLD_SIZE))}
    every_document = [length for rank in range(WORLD_SIZE) for length in rank_documents(rank)]
    single = trainflops.SeqStats(DSA_ARGS)
    single.add_lengths(every_document)
    expected = (str(single.flops()), str(sum(every_document)))
    assert results == {rank: expected for rank in range(WORLD_SIZE)}
    assert single.flops() == trainflops.count(DSA_ARGS, docs=every_document, mode="model").total
