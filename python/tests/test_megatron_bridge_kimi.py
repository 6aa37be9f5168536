"""The Python drop-in on Megatron-Bridge's Kimi K3 fields (kimi_kda_layers, kimi_linear_*) in Megatron's args
namespace: the number Bridge's own function gives on them (tests/data/megatron_bridge_kimi.json, run from its
source), bit for bit, and its refusal of layer numbers outside the decoder."""
import argparse
import json
from pathlib import Path

import pytest

import trainflops
from trainflops.megatron import num_floating_point_operations

DATA = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "megatron_bridge_kimi.json").read_text())
RECORDS = DATA["records"]


@pytest.mark.parametrize("record", RECORDS, ids=[f"{r['name']}, {r['seq_length']}" for r in RECORDS])
def test_counts_what_bridges_function_returns(record):
    args = argparse.Namespace(**record["args"], seq_length=record["seq_length"])
    assert num_floating_point_operations(args, DATA["batch_size"]) == record["flops"]


def test_refuses_layer_numbers_bridge_refuses():
    raises = DATA["raises"]
    args = argparse.Namespace(**raises["args"], seq_length=raises["seq_length"])
    with pytest.raises(trainflops.TrainflopsError) as raised:
        num_floating_point_operations(args, DATA["batch_size"])
    assert "kimi_kda_layers: layer numbers outside [1, 8]: [0, 9]" in str(raised.value)
