"""trainflops.SeqStats across data-parallel ranks: torch.distributed with gloo,
2 to 8 processes, each adding its share of a batch as CPU tensors (the path a
GPU tensor takes), the vectors summed by all_reduce, as a training loop merges
them. The merged count equals the single-process count of the whole batch."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402

import trainflops  # noqa: E402

ARGS = {"num_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "ffn_hidden_size": 1024, "kv_channels": 64,
        "padded_vocab_size": 1024, "seq_length": 512, "multi_latent_attention": True, "q_lora_rank": 64,
        "kv_lora_rank": 32, "qk_head_dim": 32, "qk_pos_emb_head_dim": 16, "v_head_dim": 32,
        "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 4, "dsa_indexer_head_dim": 32,
        "dsa_indexer_topk": 64}
DOCS = [1, 7, 64, 65, 200, 0, 513, 3, 128, 1000, 2, 77, 300, 64, 5, 9]

RANK = r"""
import json, sys
import torch, torch.distributed as dist
import trainflops
rank, world, init, args, docs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
stats = trainflops.SeqStats(args)
share = docs[rank::world]
for start in range(0, len(share), 2):  # micro-batches of two documents
    micro = share[start:start + 2]
    stats.add_cu_seqlens(torch.cumsum(torch.tensor([0] + micro, dtype=torch.int32), 0, dtype=torch.int32))
stats.add_cu_seqlens(None)
stats.add_cu_seqlens(torch.tensor([0], dtype=torch.int32))
vector = torch.tensor(stats.vector(), dtype=torch.int64)
dist.all_reduce(vector)
stats.set_vector(vector)
print(json.dumps([stats.flops(), stats.tokens()]))
dist.destroy_process_group()
"""


@pytest.mark.parametrize("world", [2, 8])
def test_ranks_merged_by_all_reduce_count_the_whole_batch(world, tmp_path):
    init = "file://" + str(tmp_path / "rendezvous")
    environment = dict(os.environ, OMP_NUM_THREADS="1")
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(rank), str(world), init, json.dumps(ARGS),
                               json.dumps(DOCS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=environment) for rank in range(world)]
    outputs = [rank.communicate(timeout=240) for rank in ranks]
    assert [rank.returncode for rank in ranks] == [0] * world, [error for _, error in outputs]
    whole = trainflops.count(ARGS, docs=DOCS, mode="model")
    assert [json.loads(out) for out, _ in outputs] == [[whole.total, sum(DOCS)]] * world
