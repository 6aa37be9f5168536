"""The drop-in against Megatron-LM's own function, form by form.

tests/data/megatron_argument_forms.json holds argument forms a training loop
passes (float aggregates, numpy scalars, 0-d tensors, None, ints as flags, a
tuple moe_layer_freq, ...) with what Megatron-LM's num_floating_point_operations
returned for each (as float.hex()) or the exception it raised;
scripts/megatron-argument-forms wrote it from Megatron-LM's source at the
commits the file names. The drop-in of the case's branch (trainflops.megatron
for main, trainflops.megatron_dev for dev) must return the same number bit for
bit, or raise a TrainflopsError; trainflops.megatron_dev must also return the
dev checkout's number for every case.
"""
import argparse
import json
import pathlib
import types

import numpy as np
import pytest

import trainflops
from trainflops import megatron_dev
from trainflops.megatron import num_floating_point_operations

torch = pytest.importorskip("torch")

DATA = json.loads((pathlib.Path(__file__).parents[2] / "tests" / "data" / "megatron_argument_forms.json").read_text())
CASES = DATA["cases"]


def evaluate(expression):
    return eval(expression, {"np": np, "torch": torch})  # the data's own expressions, e.g. "np.float64(8.0)"


def build_args(case):
    values = {name: None for name in DATA["arg_names"]}
    values.update(DATA["configs"][case["config"]])
    for name, expression in case["changes"].items():
        if expression == "ABSENT":
            del values[name]
        else:
            values[name] = evaluate(expression)
    kind = argparse.Namespace if case["namespace"] == "argparse" else types.SimpleNamespace
    return kind(**values)


def test_the_table_covers_what_it_should():
    outcomes = [case["expected"] for case in CASES]
    assert len(CASES) >= 42
    assert sum("raises" in outcome for outcome in outcomes) >= 8
    assert sum(outcome.get("raises") == "AssertionError" for outcome in outcomes) == 1
    assert len({case["config"] for case in CASES}) == 4


DROP_INS = {"main": num_floating_point_operations, "dev": megatron_dev.num_floating_point_operations}
RUNS = [(case, case["ref"], case["expected"]) for case in CASES]
RUNS += [(case, "dev", case["dev"]) for case in CASES if case["ref"] == "main"]


@pytest.mark.parametrize("case,ref,expected", RUNS, ids=[f"{case['name']} ({ref})" for case, ref, _ in RUNS])
def test_megatron_lm_number_or_refusal(case, ref, expected):
    num_floating_point_operations = DROP_INS[ref]
    args = build_args(case)
    call = {name: evaluate(expression) for name, expression in case["call"].items()}
    if "raises" in expected:
        # Where Megatron-LM asserts, the refusal is an AssertionError too, as code that catches one expects.
        refusal = trainflops.FailedAssertionError if expected["raises"] == "AssertionError" else trainflops.TrainflopsError
        with pytest.raises(refusal):
            num_floating_point_operations(args, **call)
        return
    result = num_floating_point_operations(args, **call)
    assert isinstance(result, float)
    assert result.hex() == expected["flops"], f"{result!r} != {float.fromhex(expected['flops'])!r}"


def test_a_refused_tuple_names_the_argument_and_the_rule():
    case = next(case for case in CASES if case["name"] == "moe_layer_freq tuple")
    with pytest.raises(trainflops.TrainflopsError) as raised:
        num_floating_point_operations(build_args(case), 8)
    assert str(raised.value) == ("args.moe_layer_freq = (1, 0, 1, 1): Megatron-LM takes an int or a list (its "
                                 "function raises for anything else)")


def test_a_list_changed_in_place_is_read_again():
    case = next(case for case in CASES if case["name"] == "moe_layer_freq list")
    args = build_args(case)
    before = num_floating_point_operations(args, 8)
    args.moe_layer_freq[1] = 1
    after = num_floating_point_operations(args, 8)
    assert after != before
    assert after == num_floating_point_operations(build_args(dict(case, changes={"moe_layer_freq": "[1, 1, 1, 1]"})), 8)
    args.moe_layer_freq[1] = 0
    assert num_floating_point_operations(args, 8) == before


def test_a_changed_attribute_is_read_again():
    args = build_args(CASES[0])
    before = num_floating_point_operations(args, 8)
    args.num_layers += 1
    assert num_floating_point_operations(args, 8) > before
    args.num_layers -= 1
    assert num_floating_point_operations(args, 8) == before
