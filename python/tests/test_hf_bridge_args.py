"""Megatron mode from a Hugging Face config: the number Megatron-LM's own function gives on the
arguments Megatron-Bridge's provider sets for it, or where that function refuses them, the number
Megatron-Bridge's own function gives (tests/data/megatron_bridge_args.json), bit for bit."""
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
    refused = "raises" in case["main"]
    expected = case["bridge_function"] if refused else case["main"]
    assert trainflops.count(model, mode="megatron", **case["workload"]).total == float.fromhex(expected["flops"])
    says_bridge = [s for s in model.assumed if s.startswith("Megatron-Bridge's function for megatron mode")]
    assert len(says_bridge) == refused
