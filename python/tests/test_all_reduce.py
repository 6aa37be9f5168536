"""SeqStats across data-parallel ranks: torch.distributed (gloo), one all_reduce(SUM).

Each rank adds different documents from its own cu_seqlens (a CPU tensor, as a
packed-sequence data loader yields it), all-reduces vector(), and must find
the exact model-mode FLOPs of the whole global batch: equal to one process
that saw every document, and to count(..., docs=every document). Once with 4
ranks of ordinary documents, once with 5 ranks whose sums are just below the
per-rank limit of 2^94, where a representation with 32-bit headroom would
overflow int64 in the all-reduce.
"""
import datetime
import os
import random
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import trainflops
from test_seq_stats import DSA_ARGS

# The longest document whose causal pairs, L(L+1)/2, stay below 2^94.
NEAR_LIMIT_LENGTH = 199_032_864_766_429
SCENARIOS = {
    # name: (ranks, the documents of a rank, int32 cu_seqlens)
    "mixed": (4, lambda rank: [random.Random(1000 + rank).randrange(1, 9000) for _ in range(5 + 3 * rank)], True),
    "near the limit": (5, lambda rank: [NEAR_LIMIT_LENGTH - rank], False),
}


def run_rank(rank, scenario, port, results):
    """One rank; sends (rank, flops, tokens) to `results`, the numbers as text (exact ints of any size)."""
    world_size, rank_documents, narrow = SCENARIOS[scenario]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # A rank that fails stops the others within seconds, not gloo's default 30 minutes.
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=30))
    try:
        stats = trainflops.SeqStats(DSA_ARGS)
        dtype = torch.int32 if narrow else torch.int64
        stats.add_cu_seqlens(torch.cumsum(torch.tensor([0] + rank_documents(rank), dtype=dtype), 0, dtype=dtype))
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


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_ranks_all_reduce_to_the_exact_global_count(scenario):
    world_size, rank_documents, _ = SCENARIOS[scenario]
    # A fork server that imported torch once starts the ranks in a second. (Forking
    # pytest itself is unsafe once other tests have run torch's thread pools.)
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "torch.distributed", "trainflops", __name__])
    results = context.SimpleQueue()
    mp.start_processes(run_rank, args=(scenario, free_port(), results), nprocs=world_size, join=True,
                       start_method="forkserver")
    results = {rank: (flops, tokens) for rank, flops, tokens in (results.get() for _ in range(world_size))}
    every_document = [length for rank in range(world_size) for length in rank_documents(rank)]
    single = trainflops.SeqStats(DSA_ARGS)
    if scenario == "near the limit":
        # One process cannot hold them all: its own sums would pass the limit.
        with pytest.raises(trainflops.CountOverflowError):
            single.add_lengths(every_document)
        expected_flops = trainflops.count(DSA_ARGS, docs=every_document, mode="model").total
    else:
        single.add_lengths(every_document)
        expected_flops = single.flops()
        assert expected_flops == trainflops.count(DSA_ARGS, docs=every_document, mode="model").total
    assert results == {rank: (str(expected_flops), str(sum(every_document))) for rank in range(world_size)}
