"""Every reference vector of tests/data through the Python module.

megatron records through the Megatron-LM drop-in, called as Megatron-LM's
training loop calls it (an argparse.Namespace; batch_size, or the packed
aggregates), within relative 1e-12 of Megatron-LM's own number; model records
through count(..., mode="model"), equal to the exact integer; error records
rejected with TrainflopsError.
"""
import argparse
import copy
import json
from pathlib import Path

import pytest

import trainflops
from trainflops.megatron import num_floating_point_operations

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
FILES = {"megatron_main.jsonl": 600, "megatron_dsa.jsonl": 200, "dsa.jsonl": 300, "dsv4.jsonl": 100}


def records():
    for name, expected in FILES.items():
        lines = [line for line in (DATA / name).read_text().splitlines() if line.strip()]
        assert len(lines) == expected, name
        for index, line in enumerate(lines):
            yield pytest.param(json.loads(line), id=f"{name.split('.')[0]}:{index}")


def skip_unsupported(record):
    if record["args"].get("experimental_attention_variant") == "dsv4_hybrid":
        pytest.skip("DeepSeek-V4 compressed sparse attention (dsv4_hybrid) is not supported yet")


def drop_in(record):
    """Megatron-LM's call: the Namespace, the batch size, and the aggregates of a packed batch."""
    args = argparse.Namespace(**record["args"])
    before = copy.deepcopy(vars(args))
    if "batch_size" in record:
        flops = num_floating_point_operations(args, record["batch_size"])
    else:
        docs = record.get("docs") or []
        total = record.get("total_real_tokens", sum(docs))
        squares = record.get("seqlen_squared_sum", sum(length * length for length in docs))
        flops = num_floating_point_operations(args, 1, seqlen_squared_sum_in_batch=squares,
                                              total_real_tokens_in_batch=total)
    assert vars(args) == before, "the drop-in changed the args namespace"
    return flops


@pytest.mark.parametrize("record", records())
def test_reference_vector(record):
    skip_unsupported(record)
    if record["mode"] == "megatron":
        if record["flops"] is None:
            with pytest.raises(trainflops.TrainflopsError):
                drop_in(record)
            return
        flops = drop_in(record)
        assert isinstance(flops, float)
        assert abs(flops - record["flops"]) <= 1e-12 * abs(record["flops"])
        return
    if "batch_size" in record:
        workload = {"batch_size": record["batch_size"]}
    elif record.get("docs") is not None:
        workload = {"docs": record["docs"]}
    else:  # an error record whose args are invalid: any workload
        workload = {"batch_size": 1}
    if record["flops"] is None:
        with pytest.raises(trainflops.TrainflopsError):
            trainflops.count(record["args"], mode=record["mode"], **workload)
        return
    report = trainflops.count(record["args"], mode=record["mode"], **workload)
    assert report.total == int(record["flops"])
