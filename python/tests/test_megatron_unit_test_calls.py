"""Every call Megatron-LM's own test file (tests/unit_tests/test_num_floating_point_operations.py)
makes of num_floating_point_operations, with what Megatron-LM's function returned, replayed against the
drop-in: tests/data/megatron_unit_test_calls.json, recorded by scripts/megatron-unit-tests from Megatron-LM's
source at the commits it names (main, and dev with the DSA FLOPs fix). trainflops.megatron follows main, and
the DSA calls of the dev branch's file (standard path), whose fix it carries. The same script reruns the test
file itself with the drop-in patched in, given a checkout."""
import json
import pathlib
import types

import pytest

import trainflops
from trainflops.megatron import num_floating_point_operations

DATA = json.loads((pathlib.Path(__file__).parents[2] / "tests" / "data" / "megatron_unit_test_calls.json").read_text())


def dsa_standard_path(call):
    return call["args"].get("experimental_attention_variant") == "dsa" and not call["args"].get("hybrid_layer_pattern")


CALLS = [("main", i, call) for i, call in enumerate(DATA["main"]["calls"])]
CALLS += [("dev", i, call) for i, call in enumerate(DATA["dev"]["calls"]) if dsa_standard_path(call)]


def test_the_records_hold_both_refs():
    assert DATA["main"]["commit"].startswith("d98e8a64")
    assert DATA["dev"]["commit"].startswith("34515063")
    assert len(DATA["main"]["calls"]) == 27
    assert sum(ref == "dev" for ref, _, _ in CALLS) >= 10


@pytest.mark.parametrize("ref,index,call", CALLS, ids=[f"{ref}-{index}" for ref, index, _ in CALLS])
def test_megatron_lm_test_file_calls(ref, index, call):
    args = types.SimpleNamespace(**call["args"])
    parameters = (call["batch_size"], call["seqlen_squared_sum_in_batch"], call["total_real_tokens_in_batch"])
    if "raises" in call:
        with pytest.raises(trainflops.TrainflopsError):
            num_floating_point_operations(args, *parameters)
        return
    assert num_floating_point_operations(args, *parameters).hex() == call["flops"]
