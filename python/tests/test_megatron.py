"""trainflops.megatron.num_floating_point_operations as Megatron-LM's training loop calls it."""
import argparse
import copy
import inspect
import json
import types
from pathlib import Path

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


def test_integers_of_any_type_count_as_plain_ints():
    # Plain ints, floats, bools, strs and lists are read directly, anything else through the general
    # conversion: numpy integers, tuples and int subclasses give the same count.
    numpy = pytest.importorskip("numpy")

    class Width(int):
        pass

    plain = num_floating_point_operations(namespace(), 8)
    assert plain == 1655709892608.0  # what Megatron-LM's own function (d98e8a6) returns for these args
    assert num_floating_point_operations(namespace(num_layers=numpy.int64(4), hidden_size=numpy.int32(512),
                                                   ffn_hidden_size=Width(2048), moe_layer_freq=(1, 1, 1, 1)),
                                         8) == plain


def test_a_changed_namespace_is_counted_afresh():
    # The module remembers the models of recent argument sets; a change is a new set.
    args = namespace()
    four_layers = num_floating_point_operations(args, 8)
    args.num_layers = 8
    assert num_floating_point_operations(args, 8) > four_layers
    args.num_layers = 4
    assert num_floating_point_operations(args, 8) == four_layers
    args.iteration = 7  # a name trainflops does not read: the same model
    assert num_floating_point_operations(args, 8) == four_layers



def test_a_dict_is_refused_as_megatron_lm_refuses_it():
    # Megatron-LM's function reads args.seq_length: a dict raises there (trainflops.count() takes dicts).
    with pytest.raises(trainflops.TrainflopsError) as raised:
        num_floating_point_operations(vars(namespace()), 8)
    assert str(raised.value) == (
        "args = a dict: Megatron-LM reads its arguments as attributes (args.seq_length); give the "
        "argparse.Namespace, or argparse.Namespace(**the_dict)")


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


def test_a_list_before_the_changed_name_is_still_watched():
    # A new namespace sharing the previous one's list and differing in a later name (moe_ffn_hidden_size
    # is read after moe_layer_freq): that list must still be checked for changes in place on the next call.
    moe = dict(num_experts=4, moe_router_topk=2)
    first = namespace(**moe, moe_layer_freq=[1, 1, 1, 1], moe_ffn_hidden_size=256)
    num_floating_point_operations(first, 8)
    second = namespace(**moe, moe_layer_freq=first.moe_layer_freq, moe_ffn_hidden_size=512)
    all_moe = num_floating_point_operations(second, 8)
    second.moe_layer_freq[0] = 0
    one_dense = num_floating_point_operations(second, 8)
    assert one_dense != all_moe
    assert one_dense == num_floating_point_operations(
        namespace(**moe, moe_layer_freq=[0, 1, 1, 1], moe_ffn_hidden_size=512), 8)


def test_a_name_unset_after_the_first_change_counts_as_unset():
    # A call converts its arguments from the first one that changed on, over the previous call's: a name set then
    # and None or absent now is unset.
    without_mtp = num_floating_point_operations(namespace(), 8)
    assert num_floating_point_operations(namespace(mtp_num_layers=1), 8) > without_mtp
    assert num_floating_point_operations(namespace(mtp_num_layers=None), 8) == without_mtp
    num_floating_point_operations(namespace(mtp_num_layers=1), 8)
    absent = namespace()
    del absent.mtp_num_layers
    assert num_floating_point_operations(absent, 8) == without_mtp


def test_each_call_counts_its_own_values(tmp_path):
    # A call converts only the values that differ from the previous call's (the others are taken from it), and finds
    # the models of recent arguments by a hash of their scalars; each count must still be that of a JSON file of the
    # same arguments, which is read whole. An int subclass is not a plain value: it is converted the general way when
    # it changes, and taken over when it does not.

    class Width(int):
        pass

    odd_width = Width(2048)
    moe = dict(num_experts=4, moe_router_topk=2, moe_ffn_hidden_size=256, moe_layer_freq=[0, 1, 1, 1])
    steps = [moe,
             dict(moe, moe_ffn_hidden_size=512),
             dict(moe, moe_ffn_hidden_size=512, hidden_size=1024),
             dict(moe, hidden_size=1024, mtp_num_layers=1),
             dict(moe, mtp_num_layers=1, num_layers=8, moe_layer_freq=[0, 1, 1, 1, 0, 1, 1, 1]),
             dict(moe, ffn_hidden_size=odd_width),
             dict(moe, ffn_hidden_size=odd_width, moe_router_topk=3),
             dict(moe, ffn_hidden_size=odd_width, moe_router_topk=3, swiglu=False),
             # Equal scalars, other lists: recent models must be told apart by their lists too.
             dict(moe, moe_layer_freq=[1, 1, 1, 0]),
             moe,
             dict(moe, moe_layer_freq=[1, 1, 1, 0]),
             {}]
    for step, changes in enumerate(steps):
        path = tmp_path / ("%d.json" % step)
        path.write_text(json.dumps({**ARGS, **changes}))
        expected = num_floating_point_operations(trainflops.Model(str(path)), 8)
        assert num_floating_point_operations(namespace(**changes), 8) == expected, step


def test_any_namespace_reads_the_same_arguments():
    # However many other attributes a namespace holds, only the names trainflops reads are looked up.
    expected = num_floating_point_operations(namespace(), 8)
    large = namespace()
    for i in range(300):
        setattr(large, "unrelated_%d" % i, i)
    assert num_floating_point_operations(large, 8) == expected
    assert num_floating_point_operations(namespace(num_layers=8), 8) != expected
    large.num_layers = 8
    assert num_floating_point_operations(large, 8) == num_floating_point_operations(namespace(num_layers=8), 8)


def test_a_prepared_model_gives_the_same_number():
    args = namespace()
    model = trainflops.Model(args)
    assert num_floating_point_operations(model, 8, 12345, 678) == num_floating_point_operations(args, 8, 12345, 678)


def test_the_first_count_of_new_arguments_is_the_later_ones():
    # New arguments are counted once without preparing a counter, and again with the counter their second call
    # prepares: the same number, bit for bit, with widths whose products pass 2^53 (where the order in which the
    # terms are added shows in some of the sums) on layers of several kinds.
    for step in range(16):
        wide = dict(hidden_size=1_000_000_007 + 2 * step, ffn_hidden_size=999_999_937, kv_channels=977,
                    num_experts=4, moe_router_topk=2, moe_ffn_hidden_size=123_456_791, moe_layer_freq=[0, 1, 0, 1],
                    mtp_num_layers=1)
        counts = [num_floating_point_operations(namespace(**wide), 8, 12345, 678)]
        args = namespace(**wide)
        counts += [num_floating_point_operations(args, 8, 12345, 678) for _ in range(3)]
        model = trainflops.Model(args)
        counts += [num_floating_point_operations(model, 8, 12345, 678) for _ in range(2)]
        counts.append(trainflops.count(args, total_real_tokens=678, seqlen_squared_sum=12345, mode="megatron").total)
        assert counts == [counts[0]] * len(counts), step


# Megatron-LM's own values for a small DSA model (its dev branch at commit
# 85902ef, the DSA fix as merged), computed with its function by a third party.
DSA_ARGS = dict(num_layers=4, hidden_size=512, ffn_hidden_size=1536, num_attention_heads=8, swiglu=True,
                padded_vocab_size=4096, seq_length=1024, kv_channels=64, multi_latent_attention=True, q_lora_rank=128,
                kv_lora_rank=64, qk_head_dim=48, qk_pos_emb_head_dim=16, v_head_dim=64,
                experimental_attention_variant="dsa", dsa_indexer_n_heads=4, dsa_indexer_head_dim=32,
                dsa_indexer_topk=256, dsa_indexer_loss_coeff=0.01)
PACKED_DOCS = (768, 512, 384, 256)
PACKED = dict(seqlen_squared_sum_in_batch=sum(length * length for length in PACKED_DOCS),
              total_real_tokens_in_batch=sum(PACKED_DOCS))
MEGATRON_DSA_VALUES = [
    ("packed, loss 0.01", {}, None, PACKED, 168692461883.07693),
    ("packed, loss off", {"dsa_indexer_loss_coeff": None}, None, PACKED, 167067169083.07693),
    ("packed, loss 0", {"dsa_indexer_loss_coeff": 0.0}, None, PACKED, 167067169083.07693),
    ("bshd 4096", {"seq_length": 4096}, 1, {}, 387941662720.0),
    ("shared top-k", {"num_layers": 8, "dsa_indexer_topk_freq": 4, "dsa_indexer_skip_topk_offset": 1}, 2, {},
     333583482880.0),
]


@pytest.mark.parametrize("changes,batch_size,aggregates,expected",
                         [case[1:] for case in MEGATRON_DSA_VALUES], ids=[case[0] for case in MEGATRON_DSA_VALUES])
def test_dsa_equals_megatron_lm_exactly(changes, batch_size, aggregates, expected):
    args = types.SimpleNamespace(**{**DSA_ARGS, **changes})
    assert num_floating_point_operations(args, batch_size, **aggregates) == expected


def test_batch_size_is_not_read_when_both_aggregates_are_given():
    # Megatron-LM's docstring: batch_size is irrelevant with both aggregates, and None is accepted there.
    args = namespace()
    with_batch = num_floating_point_operations(args, 8, 12345, 678)
    assert num_floating_point_operations(args, None, 12345, 678) == with_batch
    assert num_floating_point_operations(args, 3, 12345, 678) == with_batch
    assert num_floating_point_operations(namespace(seq_length=None), None, 12345, 678) == with_batch


ERRORS = [
    ((namespace(), None), "batch_size = None: give the batch size, or both seqlen_squared_sum_in_batch and "
                          "total_real_tokens_in_batch"),
    ((namespace(), None, 12345), "batch_size = None: give the batch size, or both seqlen_squared_sum_in_batch and "
                                 "total_real_tokens_in_batch"),
    ((namespace(num_query_groups=3), 8), "layers[0].mixer.num_query_groups = 3: must divide num_heads = 8"),
    ((namespace(seq_length=None), 8), "args.seq_length is missing: Megatron-LM counts batch_size x seq_length"),
    ((namespace(), "8"), "batch_size = '8': must be a number"),
    ((namespace(num_layers="4"), 8), "args.num_layers = '4': must be a whole number"),
    ((namespace(hidden_size=512.5), 8), "args.hidden_size = 512.5: must be a whole number"),
    ((namespace(num_experts=4, moe_router_topk=2, moe_layer_freq=(1, 1, 1, 1)), 8),
     "args.moe_layer_freq = (1, 1, 1, 1): Megatron-LM takes an int or a list (its function raises for anything "
     "else)"),
    ((namespace(num_experts=4, moe_router_topk=2, num_layers=4.0), 8),
     "args.num_layers and args.mtp_num_layers: must be ints here (Megatron-LM's function runs range() over the "
     "layers)"),
]


def test_forms_megatron_lm_accepts_count_as_their_values():
    # Megatron-LM multiplies what it is given: whole floats, 0, S2 < T, bools and ints as flags all count.
    expected = num_floating_point_operations(namespace(), 8)
    assert num_floating_point_operations(namespace(), 8.0) == expected
    assert num_floating_point_operations(namespace(num_layers=4.0, swiglu=1, group_query_attention=1), 8) == expected
    assert num_floating_point_operations(namespace(), 0) == 0.0
    assert num_floating_point_operations(namespace(), 8, 0.0, 0.0) == 0.0
    assert num_floating_point_operations(namespace(), 8, 10, 100) > 0


@pytest.mark.parametrize("call,message", ERRORS, ids=[message[:40] for _, message in ERRORS])
def test_invalid_arguments_raise_trainflops_error(call, message):
    with pytest.raises(trainflops.TrainflopsError) as raised:
        num_floating_point_operations(*call)
    assert str(raised.value) == message


def test_arguments_by_position_or_by_keyword_as_megatron_lm_passes_them():
    args = namespace()
    expected = num_floating_point_operations(args, 8, 12345, 678)
    assert num_floating_point_operations(args, 8, seqlen_squared_sum_in_batch=12345,
                                         total_real_tokens_in_batch=678) == expected
    assert num_floating_point_operations(total_real_tokens_in_batch=678, seqlen_squared_sum_in_batch=12345,
                                         batch_size=8, args=args) == expected
    built = "".join(["batch", "_size"])  # a keyword built at run time
    assert num_floating_point_operations(args, **{built: 8}) == num_floating_point_operations(args, 8)
    assert str(inspect.signature(num_floating_point_operations)) == (
        "(args, batch_size, seqlen_squared_sum_in_batch=None, total_real_tokens_in_batch=None)")


def megatron_signature(args, batch_size, seqlen_squared_sum_in_batch=None, total_real_tokens_in_batch=None):
    """Megatron-LM's signature: a wrong call raises what Python raises for it."""


WRONG_CALLS = [((), {}), ((namespace(),), {}), ((namespace(), 8, 1, 1, 1), {}), ((namespace(),), {"batch": 8}),
               ((namespace(), 8), {"batch_size": 8})]


@pytest.mark.parametrize("args,keywords", WRONG_CALLS)
def test_a_call_with_wrong_arguments_raises_type_error(args, keywords):
    with pytest.raises(TypeError) as expected:
        megatron_signature(*args, **keywords)
    with pytest.raises(TypeError) as raised:
        num_floating_point_operations(*args, **keywords)
    assert str(raised.value) == str(expected.value).replace("megatron_signature", "num_floating_point_operations")


def test_a_python_error_while_reading_an_argument_is_raised_as_it_is():
    class FailingIndex:
        def __index__(self):
            raise KeyError("no index")

    with pytest.raises(KeyError, match="no index"):
        num_floating_point_operations(namespace(), FailingIndex())


class ComputedArgs:
    """Arguments computed on each read, as a property or __getattr__ serves them: reading them runs
    Python code, which lets other threads run in the middle of a call."""

    def __init__(self, layers):
        self._layers = layers

    @property
    def num_layers(self):
        return self._layers

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        value = ARGS.get(name)
        return list(value) if isinstance(value, list) else value


def test_threads_with_computed_arguments_get_their_own_count():
    import sys
    import threading
    serial = {layers: num_floating_point_operations(ComputedArgs(layers), 8) for layers in (1, 2, 3, 4)}
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    wrong = []

    def worker(index):
        for call in range(300):
            layers = 1 + (index + call) % 4
            got = num_floating_point_operations(ComputedArgs(layers), 8)
            if got != serial[layers]:
                wrong.append((layers, got))

    try:
        threads = [threading.Thread(target=worker, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch_interval)
    assert wrong == []


def test_the_dev_branch_charges_the_sparse_loss_as_the_dense_one():
    """Megatron-LM's dev branch (its DSA fix) does not model the sparse KL
    loss: its own function's numbers on GLM-5.2 with each loss
    (tests/data/compare/framework_functions.jsonl)."""
    root = Path(__file__).resolve().parents[2]
    preset = json.loads((root / "presets" / "glm-5.2.json").read_text())["args"]
    records = [json.loads(line) for line in (root / "tests/data/compare/framework_functions.jsonl").open()]
    checked = 0
    for record in records:
        if record["framework"] != "megatron-lm-dsa-fix" or record["options"][:2] != ["--preset", "glm-5.2"] \
                or len(record["options"]) != 4:
            continue
        args = argparse.Namespace(**{**preset, "seq_length": record["seq_length"], "dsa_indexer_loss_coeff": 0.001,
                                     "dsa_indexer_use_sparse_loss": record["options"][3] == "sparse"})
        assert trainflops.megatron_dev.num_floating_point_operations(args, 1) == record["flops"]
        checked += 1
    assert checked == 6
