"""The drop-ins on the arguments of Megatron-LM's Kimi Delta Attention pull request
(tests/data/megatron_kda.json: KDA on the standard path and `K` layers on the hybrid path, with what
that branch's own function returns), bit for bit; and its refusals."""
import argparse
import json
from pathlib import Path

import pytest

import trainflops
from trainflops import megatron, megatron_dev

DATA = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "megatron_kda.json").read_text())
CASES = DATA["cases"]


def call(drop_in, case):
    workload = case["workload"]
    args = argparse.Namespace(**{**case["args"], "seq_length": workload.get("seq_length", case["args"]["seq_length"])},
                              kda_safe_gate=True, kda_lower_bound=-5.0,
                              gated_attention_proj_granularity="elementwise")
    return drop_in.num_floating_point_operations(args, workload["batch_size"], workload.get("seqlen_squared_sum"),
                                                 workload.get("total_real_tokens"))


@pytest.mark.parametrize("case", CASES, ids=[f"{c['name']}, {json.dumps(c['workload'])}" for c in CASES])
def test_the_dev_drop_in_returns_the_pull_requests_number(case):
    assert call(megatron_dev, case) == float.fromhex(case["flops"])


# Main's hybrid function has no MTP projection; elsewhere main counts KDA as the pull request does.
@pytest.mark.parametrize("case", [c for c in CASES if not ("hybrid_layer_pattern" in c["args"] and
                                                           "mtp_num_layers" in c["args"])],
                         ids=lambda c: f"{c['name']}, {json.dumps(c['workload'])}")
def test_the_main_drop_in_returns_the_pull_requests_number_without_hybrid_mtp(case):
    assert call(megatron, case) == float.fromhex(case["flops"])


@pytest.mark.parametrize("case", DATA["refused"], ids=lambda c: c["name"])
def test_the_drop_ins_raise_a_value_error_where_the_pull_request_does(case):
    assert case["raises"] == "ValueError"
    for drop_in in (megatron, megatron_dev):
        with pytest.raises(trainflops.TrainflopsError, match="Kimi Delta Attention needs as many value heads") as raised:
            call(drop_in, case)
        assert isinstance(raised.value, ValueError)
        assert not isinstance(raised.value, AssertionError)
