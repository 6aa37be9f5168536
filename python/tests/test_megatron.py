"""trainflops.megatron.num_floating_point_operations as Megatron-LM's training loop calls it."""
import argparse
import copy
import types

import pytest

import trainflops
from trainflops.megatron import num_floating_point_operations

# A dense GQA model as Megatron-LM's args after validate_args, with attributes
# that trainflops does not read (some not JSON-like).
ARGS = dict(num_layers=4, hidden_size=512, ffn_hidden_size=2048, num_attention_heads=8, group_query_attention=True,
            num_query_groups=2, kv_channels=64, swiglu=True, padded_vocab_size=32000, seq_length=1024,
            num_experts=None, moe_layer_freq=1, mtp_num_layers=None, multi_latent_attention=False,
            hybrid_layer_pattern=None)


def namespace(**changes):
    return argparse.Namespace(**{**ARGS, **changes}, lr=3e-4, params_dtype=object(), data_path=["a", "b"])


def test_bshd_is_the_packed_call_with_bshd_aggregates():
    # Megatron-LM's BSHD backward-compatibility tests: either aggregate left out
    # takes batch_size * seq_length (^2).
    args = namespace()
    bshd = num_floating_point_operations(args, 8)
    assert isinstance(bshd, float)
    assert num_floating_point_operations(args, 8, seqlen_squared_sum_in_batch=8 * 1024 * 1024) == bshd
    assert num_floating_point_operations(args, 8, total_real_tokens_in_batch=8 * 1024) == bshd
    assert num_floating_point_operations(args, 8, 8 * 1024 * 1024, 8 * 1024) == bshd


def test_only_the_core_attention_term_follows_the_squared_sum():
    # Doubling sum(L^2) adds one BSHD core-attention term: 6 * layers * (kv_channels * heads) * sum(L^2).
    args = namespace()
    squares = 8 * 1024 * 1024
    delta = (num_floating_point_operations(args, 8, seqlen_squared_sum_in_batch=2 * squares)
             - num_floating_point_operations(args, 8, seqlen_squared_sum_in_batch=squares))
    assert delta == 6 * 4 * 64 * 8 * squares


def test_reads_without_mutating_and_takes_missing_attributes_as_none():
    args = namespace()
    before = copy.deepcopy({k: v for k, v in vars(args).items() if k != "params_dtype"})
    num_floating_point_operations(args, 8)
    assert {k: v for k, v in vars(args).items() if k != "params_dtype"} == before
    # Without group_query_attention Megatron-LM sets num_query_groups = heads in place; trainflops does not.
    ungrouped = namespace(group_query_attention=False)
    num_floating_point_operations(ungrouped, 8)
    assert ungrouped.num_query_groups == 2
    # A namespace from an older Megatron-LM lacks newer names: they read as None.
    sparse = types.SimpleNamespace(**ARGS)
    assert num_floating_point_operations(sparse, 8) == num_floating_point_operations(namespace(), 8)


def test_a_changed_namespace_is_counted_afresh():
    # The module remembers the models of recent argument sets; a change is a new set.
    args = namespace()
    four_layers = num_floating_point_operations(args, 8)
    args.num_layers = 8
    assert num_floating_point_operations(args, 8) > four_layers
    args.num_layers = 4
    assert num_floating_point_operations(args, 8) == four_layers


def test_a_list_changed_in_place_is_counted_afresh():
    # The same list object, with other contents: the previous call's model must not be reused.
    args = namespace(num_experts=4, moe_router_topk=2, moe_ffn_hidden_size=256, moe_layer_freq=[1, 1, 1, 1])
    all_moe = num_floating_point_operations(args, 8)
    args.moe_layer_freq[0] = 0
    one_dense = num_floating_point_operations(args, 8)
    assert one_dense != all_moe
    assert one_dense == num_floating_point_operations(namespace(num_experts=4, moe_router_topk=2,
                                                                moe_ffn_hidden_size=256,
                                                                moe_layer_freq=[0, 1, 1, 1]), 8)


def test_a_prepared_model_gives_the_same_number():
    args = namespace()
    model = trainflops.Model(args)
    assert num_floating_point_operations(model, 8, 12345, 678) == num_floating_point_operations(args, 8, 12345, 678)


ERRORS = [
    ((namespace(num_query_groups=3), 8), "layers[0].mixer.num_query_groups = 3: must divide num_heads = 8"),
    ((namespace(seq_length=None), 8), "args.seq_length is missing: Megatron-LM counts batch_size x seq_length"),
    ((namespace(), 0), "batch_size = 0: must be a positive integer"),
    ((namespace(), 8, 10, 100), "seqlen_squared_sum = 10: must be at least total_real_tokens = 100 (every L^2 >= L)"),
    ((namespace(), 8.0), "batch_size = 8.0: must be an integer"),
    ((namespace(num_layers="4"), 8), 'num_layers = "4": must be an integer or null'),
]


@pytest.mark.parametrize("call,message", ERRORS, ids=[message[:40] for _, message in ERRORS])
def test_invalid_arguments_raise_trainflops_error(call, message):
    with pytest.raises(trainflops.TrainflopsError) as raised:
        num_floating_point_operations(*call)
    assert str(raised.value) == message
