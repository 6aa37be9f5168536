"""Megatron mode from a Hugging Face config: the number Megatron-LM's own function gives on the
arguments Megatron-Bridge's provider sets for it (tests/data/megatron_bridge_args.json), bit for bit."""
import json
from pathlib import Path

import pytest

import trainflops

DATA = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "megatron_bridge_args.json").read_text())
CASES = DATA["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['name']}, {c['workload']['seq_length']}" for c in CASES])
def test_megatron_mode_counts_the_arguments_bridge_sets(case, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(case["hf_config"]))
    model = trainflops.Model(hf=path)
    workload = case["workload"]
    expected = case["main"]
    if "raises" in expected:
        with pytest.raises(trainflops.TrainflopsError) as raised:
            trainflops.count(model, mode="megatron", **workload)
        assert str(raised.value).startswith(
            "megatron mode counts the Megatron-LM arguments Megatron-Bridge sets for this config, which Megatron-LM's "
            "function refuses (model mode counts the config as it is): linear_attention_freq: the list has 48 entries")
    else:
        assert trainflops.count(model, mode="megatron", **workload).total == float.fromhex(expected["flops"])
