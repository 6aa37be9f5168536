"""The drop-in on the arguments of Megatron-LM's DSA-over-GQA pull request (tests/data/megatron_dsa_gqa.json:
the 8B example of that branch and variants, with what the branch's own function returns), bit for bit."""
import argparse
import json
from pathlib import Path

import pytest

from trainflops.megatron import num_floating_point_operations

DATA = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "megatron_dsa_gqa.json").read_text())
CASES = DATA["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['name']}, {json.dumps(c['workload'])}" for c in CASES])
def test_the_drop_in_returns_the_branchs_number(case):
    workload = case["workload"]
    args = argparse.Namespace(**{**case["args"], "seq_length": workload.get("seq_length", case["args"]["seq_length"])},
                              dsa_gqa_kernel="min_memory", dsa_min_memory_use_triton=True, lr=1.5e-4)
    flops = num_floating_point_operations(args, workload["batch_size"], workload.get("seqlen_squared_sum"),
                                          workload.get("total_real_tokens"))
    assert flops == float.fromhex(case["flops"])
