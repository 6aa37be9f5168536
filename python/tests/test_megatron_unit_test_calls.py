"""Every call Megatron-LM's own test file (tests/unit_tests/test_num_floating_point_operations.py)
makes of num_floating_point_operations, with what Megatron-LM's function returned, replayed against the
drop-ins: tests/data/megatron_unit_test_calls.json, recorded by scripts/megatron-unit-tests from Megatron-LM's
source at the commits it names (main, and dev with the DSA FLOPs fix). trainflops.megatron replays main's
calls, trainflops.megatron_dev every call of the dev branch's file. The same script reruns the test file itself
with either drop-in patched in, given a checkout."""
import json
import pathlib
import types

import pytest

import trainflops
from trainflops import megatron, megatron_dev

DATA = json.loads((pathlib.Path(__file__).parents[2] / "tests" / "data" / "megatron_unit_test_calls.json").read_text())
DROP_INS = {"main": megatron.num_floating_point_operations, "dev": megatron_dev.num_floating_point_operations}
CALLS = [(ref, i, call) for ref in ("main", "dev") for i, call in enumerate(DATA[ref]["calls"])]


def test_the_records_hold_both_refs():
    assert DATA["main"]["commit"].startswith("d98e8a64")
    assert DATA["dev"]["commit"].startswith("34515063")
    assert len(DATA["main"]["calls"]) == 27
    assert len(DATA["dev"]["calls"]) == 78
    dev_hybrid = [call for call in DATA["dev"]["calls"] if call["args"].get("hybrid_layer_pattern")]
    assert len(dev_hybrid) == 29
    assert [call["raises"] for call in dev_hybrid if "raises" in call] == ["AssertionError"]


@pytest.mark.parametrize("ref,index,call", CALLS, ids=[f"{ref}-{index}" for ref, index, _ in CALLS])
def test_megatron_lm_test_file_calls(ref, index, call):
    num_floating_point_operations = DROP_INS[ref]
    args = types.SimpleNamespace(**call["args"])
    parameters = (call["batch_size"], call["seqlen_squared_sum_in_batch"], call["total_real_tokens_in_batch"])
    if "raises" in call:
        # Megatron-LM's test file expects its AssertionError where its function asserts.
        refusal = trainflops.FailedAssertionError if call["raises"] == "AssertionError" else trainflops.TrainflopsError
        with pytest.raises(refusal):
            num_floating_point_operations(args, *parameters)
        return
    assert num_floating_point_operations(args, *parameters).hex() == call["flops"]


def test_dsa_on_a_hybrid_pattern_fails_as_megatron_lm_asserts():
    # Megatron-LM's test_hybrid_dsa_rejected expects an AssertionError whose message names the hybrid-model path.
    call = next(call for call in DATA["dev"]["calls"] if "raises" in call)
    with pytest.raises(AssertionError, match="hybrid-model path") as raised:
        megatron_dev.num_floating_point_operations(types.SimpleNamespace(**call["args"]), call["batch_size"])
    assert isinstance(raised.value, trainflops.InvalidInputError)
    assert str(raised.value) == (
        "experimental_attention_variant = \"dsa\": Megatron-LM's dev branch counts DSA on the standard path only, not "
        "on the hybrid-model path (hybrid_layer_pattern); describe the model without a pattern")


def test_the_branches_differ_where_megatron_lm_does():
    # An MTP depth on a hybrid pattern: dev charges its projection, 6 (3h + 2h^2) T; main does not.
    args = types.SimpleNamespace(**{**DATA["dev"]["calls"][2]["args"], "hybrid_layer_pattern": "*M*M/*M",
                                    "mtp_num_layers": 1})
    h, tokens = args.hidden_size, 4 * args.seq_length
    difference = megatron_dev.num_floating_point_operations(args, 4) - megatron.num_floating_point_operations(args, 4)
    assert difference == 6 * (3 * h + 2 * h * h) * tokens
