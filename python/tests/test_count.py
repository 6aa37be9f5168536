"""trainflops.count(): the model forms, the report, the workloads, and errors as TrainflopsError."""
import argparse
import json
from pathlib import Path

import numpy as np
import pytest
import torch

import trainflops

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Llama-3.1-8B as Megatron-LM arguments (vars(args) after validation, in part).
LLAMA_ARGS = {
    "num_layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "num_attention_heads": 32,
    "group_query_attention": True, "num_query_groups": 8, "kv_channels": 128, "swiglu": True,
    "padded_vocab_size": 128256, "seq_length": 4096,
}
LLAMA_FLAGS = ["--num-layers", "32", "--hidden-size", "4096", "--ffn-hidden-size", "14336",
               "--num-attention-heads", "32", "--group-query-attention", "--num-query-groups", "8", "--swiglu",
               "--padded-vocab-size", "128256", "--seq-length", "4096", "--global-batch-size", "8", "--lr", "3e-4"]
# The same model as a trainflops config (examples/llama-3.1-8b.json without its comment).
LLAMA_CONFIG = {
    "name": "Llama-3.1-8B", "hidden_size": 4096, "vocab_size": 128256,
    "mixers": {"attention": {"type": "gqa", "num_heads": 32, "num_query_groups": 8, "head_dim": 128}},
    "channel_mixers": {"swiglu": {"type": "mlp", "ffn_hidden_size": 14336, "gated": True}},
    "layers": [{"mixer": "attention", "channel_mixer": "swiglu", "repeat": 32}],
}
# `trainflops count --megatron -- <LLAMA_FLAGS>`, megatron mode, 8 x 4096 tokens.
LLAMA_BSHD_8x4096 = 1581029001265152.0


def test_every_model_form_gives_the_same_count(tmp_path):
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({**LLAMA_ARGS, "lr": 3e-4}))
    forms = {
        "namespace": argparse.Namespace(**LLAMA_ARGS, lr=3e-4, params_dtype=torch.bfloat16),
        "dict": {**LLAMA_ARGS, "params_dtype": torch.bfloat16},  # only the names trainflops reads are looked at
        "flags": LLAMA_FLAGS,
        "args file": str(args_file),
        "args path": args_file,
        "model": trainflops.Model(LLAMA_ARGS),
    }
    for name, model in forms.items():
        assert trainflops.count(model, batch_size=8).total == LLAMA_BSHD_8x4096, name
    exact = {trainflops.count(model, batch_size=8, seq_length=4096, mode="model").total
             for model in (LLAMA_ARGS, LLAMA_CONFIG, EXAMPLES / "llama-3.1-8b.json")}
    assert len(exact) == 1


def test_model_remembers_its_source():
    model = trainflops.Model(LLAMA_FLAGS)
    assert model.seq_length == 4096
    assert model.global_batch_size == 8
    assert model.ignored == ["--lr 3e-4"]
    assert model.summary == "32 layers (32 gqa+mlp), hidden 4096, vocab 128256"
    assert trainflops.count(model).total == LLAMA_BSHD_8x4096  # the flags' global batch


def test_report_parts_sum_to_the_total():
    report = trainflops.count(LLAMA_ARGS, docs=[4096, 17, 1000, 3], mode="model")
    assert isinstance(report.total, int)
    assert report.mode == "model"
    assert report.tokens == 5116
    assert report.per_token == pytest.approx(report.total / 5116, rel=1e-15)
    assert list(report.breakdown) == ["attention_projections", "core_attention", "mlp", "logits"]
    assert sum(report.breakdown.values()) == report.total
    assert sum(layer.flops for layer in report.layers) == report.total
    assert [layer.name for layer in report.layers[:2]] == ["decoder.1", "decoder.2"]
    assert report.layers[-1].name == "logits"
    assert report.layers[0].kind == "gqa+mlp"
    assert sum(report.layers[0].breakdown.values()) == report.layers[0].flops
    assert json.loads(report.render("json"))["total"]["exact"] == str(report.total)
    assert str(report).startswith("trainflops: model mode, one training iteration\n")

    megatron = trainflops.count(LLAMA_ARGS, batch_size=8)
    assert isinstance(megatron.total, float)
    assert sum(megatron.breakdown.values()) == pytest.approx(megatron.total, rel=1e-15)


def test_the_report_gives_the_parameters_beside_six_n_d():
    report = trainflops.count(LLAMA_ARGS, docs=[4096, 17, 1000, 3], mode="model")
    # Llama-3.1-8B's released checkpoint holds 8,030,261,248 parameters: its
    # products' weights, the embedding table (128256 x 4096, a lookup, not
    # among the active parameters) and 2 x 32 + 1 RMSNorm weights of 4096,
    # which cost no FLOPs per token.
    total = 8030261248
    table, norms = 128256 * 4096, 65 * 4096
    active = total - table
    assert report.parameters == {"total": total, "active": active, "embedding": table,
                                 "costing_flops": total - table - norms, "not_costing_flops": table + norms,
                                 "six_n_d": 6 * active * 5116}
    assert json.loads(report.render("json"))["parameters"]["six_n_d"] == str(report.parameters["six_n_d"])
    assert ("\nparameters 8.03B total, 7.50B active per token, 525M embedding; 7.50B in products, 526M not (tables, "
            "routers, norms, biases)\n" in str(report))


def test_megatron_mode_lists_what_megatron_lm_leaves_out():
    # Kimi K3 at 1 x 4096: compare's Megatron-Bridge row (checked against
    # Bridge's own function) leaves out its MLA output gate and attention
    # residuals, these many model-mode FLOPs.
    report = trainflops.count(preset="kimi-k3", batch_size=1, seq_length=4096)
    assert report.megatron_omissions == [
        {"convention": "mla_output_gate", "title": "MLA output gate", "choice": "not counted",
         "flops": -51951924412416},
        {"convention": "attention_residuals", "title": "attention residuals", "choice": "not counted",
         "flops": -529539268608},
    ]
    assert json.loads(report.render("json"))["megatron_omissions"][0]["exact"] == "-51951924412416"
    # Offsets counted in place list them too, per document; so do T and S2, without sizes.
    offsets = np.array([0, 4096, 8192], dtype=np.int64)
    packed = trainflops.count(preset="kimi-k3", cu_seqlens=offsets)
    assert [o["flops"] for o in packed.megatron_omissions] == [-2 * 51951924412416, -2 * 529539268608]
    aggregates = trainflops.count(preset="kimi-k3", total_real_tokens=8192, seqlen_squared_sum=2 * 4096**2)
    assert [(o["convention"], o["flops"]) for o in aggregates.megatron_omissions] == [
        ("mla_output_gate", None), ("attention_residuals", None)]
    # The exact modes count every feature: nothing is listed.
    assert trainflops.count(preset="kimi-k3", batch_size=1, seq_length=4096, mode="model").megatron_omissions == []
    assert trainflops.count(LLAMA_ARGS, batch_size=1, seq_length=4096).megatron_omissions == []


def test_workload_forms_agree():
    docs = [4096, 17, 1000, 3]
    offsets = np.cumsum([0] + docs)
    forms = [
        {"docs": docs},
        {"docs": np.array(docs, dtype=np.int32)},
        {"docs": np.array(docs, dtype=np.int64)[::-1][::-1]},  # a strided view
        {"docs": torch.tensor(docs, dtype=torch.int32)},
        {"docs": tuple(np.int64(length) for length in docs)},
        {"cu_seqlens": offsets.tolist()},
        {"cu_seqlens": offsets.astype(np.int32)},
        {"cu_seqlens": torch.tensor(offsets, dtype=torch.int64)},
        {"cu_seqlens": np.repeat(offsets, 2)[::2]},  # strided: converted, as a list is
    ]
    for mode in ("megatron", "model", "executed"):
        reports = {str(trainflops.count(LLAMA_ARGS, mode=mode, **form)) for form in forms}
        assert len(reports) == 1, mode
    squares = sum(length * length for length in docs)
    assert (trainflops.count(LLAMA_ARGS, total_real_tokens=5116, seqlen_squared_sum=squares).total
            == trainflops.count(LLAMA_ARGS, docs=docs).total)


class FakeCudaTensor:
    """What the module sees of a torch tensor on a GPU."""
    device = torch.device("cuda", 0)
    is_cpu = False

    def numpy(self):
        raise AssertionError("must not be copied")


ONE_WORKLOAD = "batch_size (with seq_length), docs, cu_seqlens, or total_real_tokens with seqlen_squared_sum"
ERRORS = [
    (dict(model=LLAMA_ARGS, batch_size=0), "batch_size = 0: must be a positive integer"),
    (dict(model=LLAMA_ARGS), "no workload: give " + ONE_WORKLOAD),
    (dict(model=LLAMA_ARGS, batch_size=1, docs=[3]), "give one workload: " + ONE_WORKLOAD),
    (dict(model=LLAMA_ARGS, docs=[3], seq_length=5),
     "seq_length = 5: goes with batch_size (BSHD); docs, cu_seqlens and the aggregates carry their own lengths"),
    (dict(model=LLAMA_CONFIG, batch_size=2),
     "seq_length is missing: required with batch_size (BSHD); the model's source gives none"),
    (dict(model=LLAMA_ARGS, total_real_tokens=5), "total_real_tokens and seqlen_squared_sum come together"),
    (dict(model=LLAMA_ARGS, total_real_tokens=5, seqlen_squared_sum=4),
     "seqlen_squared_sum = 4: must be at least total_real_tokens = 5 (every L^2 >= L)"),
    (dict(model=LLAMA_ARGS, batch_size=True), "batch_size = True: must be an integer"),
    (dict(model=LLAMA_ARGS, batch_size=2**70), "batch_size = 1180591620717411303424: does not fit in 64 bits"),
    (dict(model=LLAMA_ARGS, docs=[1, -2]), "docs[1] = -2: a document length must be >= 0"),
    (dict(model=LLAMA_ARGS, docs=[1, 2.0]), "docs[1] = 2.0: must be an integer"),
    (dict(model=LLAMA_ARGS, docs="12"), "docs = '12': must be a list, a NumPy array or a CPU torch tensor of integers"),
    (dict(model=LLAMA_ARGS, docs=np.array([1.5])),
     "docs holds elements of buffer format 'd', not integers: give int32 or int64 values"),
    (dict(model=LLAMA_ARGS, docs=np.zeros((2, 3), dtype=np.int64)), "docs has 2 dimensions: must be one-dimensional"),
    (dict(model=LLAMA_ARGS, docs=FakeCudaTensor()),
     "docs is a tensor on cuda:0: copy it to the CPU first (docs.cpu())"),
    (dict(model=LLAMA_ARGS, docs=torch.ones(2, requires_grad=True)),
     "docs holds elements of buffer format 'f', not integers: give int32 or int64 values"),
    (dict(model=LLAMA_ARGS, cu_seqlens=[0, 0, 0]),
     "cu_seqlens: the batch holds no tokens (the last offset must be positive)"),
    (dict(model=LLAMA_ARGS, cu_seqlens=np.zeros(3, dtype=np.int32), mode="model"),
     "cu_seqlens: the batch holds no tokens (the last offset must be positive)"),
    (dict(model=LLAMA_ARGS, cu_seqlens=[0, 5, 3]), "cu_seqlens[2] = 3: must not be smaller than the previous offset 5"),
    (dict(model={**LLAMA_ARGS, "num_query_groups": 3}, batch_size=1),
     "layers[0].mixer.num_query_groups = 3: must divide num_heads = 32"),
    (dict(model={**LLAMA_ARGS, "num_layers": "32"}, batch_size=1), 'num_layers = "32": must be an integer or null'),
    (dict(model={**LLAMA_ARGS, "spec": {1, 2}}, batch_size=1),
     "args.spec = {1, 2}: must be None, a bool, a number, a string, a list or a dict"),
    (dict(model={**LLAMA_ARGS, "num_layers": float("inf")}, batch_size=1),
     "num_layers = inf: must be an integer or null"),
    (dict(model={**LLAMA_ARGS, "num_layers": float("nan")}, batch_size=1),
     "num_layers = nan: must be an integer or null"),
    (dict(model={**LLAMA_ARGS, "num_layers": np.bool_(True)}, batch_size=1),
     "num_layers = true: must be an integer or null"),
    (dict(model=LLAMA_ARGS, batch_size=np.bool_(True)), f"batch_size = {np.bool_(True)!r}: must be an integer"),
    (dict(model=LLAMA_ARGS, docs=[3, np.bool_(False)]), f"docs[1] = {np.bool_(False)!r}: must be an integer"),
    (dict(model=LLAMA_ARGS, batch_size=1, mode=None), "mode = None: must be a str"),
    (dict(model=LLAMA_ARGS, batch_size=1, recompute=1), "recompute = 1: must be a str"),
    (dict(model=LLAMA_ARGS, batch_size=1, strict="yes"), "strict = 'yes': must be True or False"),
    (dict(model=LLAMA_ARGS, batch_size=1, allow_unknown_flags=None),
     "allow_unknown_flags = None: must be True or False"),
    (dict(model=["--num-layers", "2\ud800"], batch_size=1),
     "model[1] = '2\\ud800': must be text UTF-8 can hold (a lone surrogate cannot be encoded)"),
    (dict(model={**LLAMA_ARGS, "spec": "x\udc80"}, batch_size=1),
     "args.spec = 'x\\udc80': must be text UTF-8 can hold (a lone surrogate cannot be encoded)"),
    (dict(preset="glm\ud800", batch_size=1),
     "preset = 'glm\\ud800': must be text UTF-8 can hold (a lone surrogate cannot be encoded)"),
    (dict(hf=5, batch_size=1), "hf = 5: must be a path (a str or os.PathLike)"),
    (dict(model=["--num-layer", "2"], batch_size=1),
     "unknown flag --num-layer: Megatron-LM's parser has no such option; did you mean --num-layers? "
     "(allow unknown flags to count the model without it)"),
    (dict(model="/nonexistent/args.json", batch_size=1),
     "/nonexistent/args.json: cannot open (No such file or directory)"),
]


@pytest.mark.parametrize("call,message", ERRORS, ids=[message[:40] for _, message in ERRORS])
def test_errors_carry_the_library_message(call, message):
    with pytest.raises(trainflops.TrainflopsError) as raised:
        trainflops.count(**call)
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)


def _contains_itself():
    items = [1]
    items.append(items)
    return items


# Each error's class says what kind it is, and derives from the Python exception that fits.
ERROR_CLASSES = [
    (dict(model={**LLAMA_ARGS, "num_query_groups": 3}, batch_size=1), trainflops.InvalidInputError, ValueError),
    (dict(model="/nonexistent/args.json", batch_size=1), trainflops.InputFileError, OSError),
    (dict(model="/", batch_size=1), trainflops.InputFileError, OSError),
    (dict(model=LLAMA_ARGS, batch_size=2**70), trainflops.CountOverflowError, OverflowError),
    (dict(model=LLAMA_ARGS, batch_size=2**62, seq_length=2**62, mode="model"), trainflops.CountOverflowError,
     OverflowError),
    (dict(model={**LLAMA_ARGS, "moe_layer_freq": _contains_itself()}, batch_size=1), trainflops.InvalidInputError,
     ValueError),
]


@pytest.mark.parametrize("call,error_class,python_class", ERROR_CLASSES,
                         ids=[c.__name__ + str(i) for i, (_, c, _) in enumerate(ERROR_CLASSES)])
def test_error_classes_follow_the_error_code(call, error_class, python_class):
    with pytest.raises(error_class) as raised:
        trainflops.count(**call)
    assert isinstance(raised.value, trainflops.TrainflopsError)
    assert isinstance(raised.value, python_class)
    assert type(raised.value).__module__ == "trainflops"


def test_a_value_that_contains_itself_is_an_error_not_a_crash():
    with pytest.raises(trainflops.InvalidInputError) as raised:
        trainflops.count({**LLAMA_ARGS, "moe_layer_freq": _contains_itself()}, batch_size=1)
    assert str(raised.value).startswith("args.moe_layer_freq[1][1]")
    assert str(raised.value).endswith(": nested deeper than 100 levels (a list or dict that contains itself?)")


class _InterruptedArgs:
    """Megatron-LM arguments whose reading is interrupted (Ctrl-C while getattr runs)."""

    def __getattr__(self, name):
        if name == "hidden_size":
            raise KeyboardInterrupt
        if name in LLAMA_ARGS:
            return LLAMA_ARGS[name]
        raise AttributeError(name)


def test_an_interrupt_while_reading_arguments_propagates():
    with pytest.raises(KeyboardInterrupt):
        trainflops.count(_InterruptedArgs(), batch_size=1)
    with pytest.raises(KeyboardInterrupt):
        trainflops.Model(_InterruptedArgs())


def test_flags_of_every_entry_point_must_be_bools():
    for make in (lambda: trainflops.Model(LLAMA_ARGS, strict=1), lambda: trainflops.SeqStats(LLAMA_ARGS, strict=1),
                 lambda: trainflops.compare(LLAMA_ARGS, strict=1)):
        with pytest.raises(trainflops.InvalidInputError) as raised:
            make()
        assert str(raised.value) == "strict = 1: must be True or False"
    with pytest.raises(trainflops.InvalidInputError, match="^format = 3: must be a str$"):
        trainflops.count(LLAMA_ARGS, batch_size=1).render(3)


def test_unknown_model_forms_and_modes():
    with pytest.raises(trainflops.TrainflopsError, match=r"^model = 5: give Megatron-LM arguments"):
        trainflops.count(5, batch_size=1)
    with pytest.raises(trainflops.TrainflopsError, match=r"^model = Namespace\(\): give Megatron-LM arguments"):
        trainflops.count(argparse.Namespace(), batch_size=1)
    with pytest.raises(trainflops.TrainflopsError, match=r'^mode = "exact": must be one of megatron, model'):
        trainflops.count(LLAMA_ARGS, batch_size=1, mode="exact")
    with pytest.raises(trainflops.TrainflopsError, match=r'^format = "xml": must be one of table, json, csv$'):
        trainflops.count(LLAMA_ARGS, batch_size=1).render("xml")


# A small DSA model without an indexer loss: its indexer does not train unless told.
DSA_ARGS = {
    "num_layers": 2, "hidden_size": 64, "ffn_hidden_size": 96, "num_attention_heads": 2, "swiglu": True,
    "padded_vocab_size": 100, "seq_length": 64, "multi_latent_attention": True, "q_lora_rank": 16,
    "kv_lora_rank": 8, "qk_head_dim": 8, "qk_pos_emb_head_dim": 4, "v_head_dim": 8,
    "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 2, "dsa_indexer_head_dim": 8,
    "dsa_indexer_topk": 16,
}


@pytest.mark.parametrize("grad_mode,equivalent_args", [
    ("detached", {"dsa_indexer_loss_coeff": 0.01}),
    ("sparse", {"dsa_indexer_loss_coeff": 0.01, "dsa_indexer_use_sparse_loss": True}),
    ("full", {"dsa_indexer_grad_mode": "full"}),
    ("off", {}),
])
def test_the_grad_mode_keyword_trains_the_indexer_as_the_arguments_would(grad_mode, equivalent_args):
    for mode in ("megatron", "model", "executed"):
        expected = trainflops.count({**DSA_ARGS, **equivalent_args}, docs=[40, 3, 17], mode=mode).total
        assert trainflops.count(DSA_ARGS, docs=[40, 3, 17], mode=mode, dsa_indexer_grad_mode=grad_mode).total == expected
        model = trainflops.Model(DSA_ARGS, dsa_indexer_grad_mode=grad_mode)
        assert trainflops.count(model, docs=[40, 3, 17], mode=mode).total == expected
    # Only a trained indexer has a KL loss, whose teacher executed mode counts.
    executed = trainflops.count(DSA_ARGS, docs=[40, 3, 17], mode="executed", dsa_indexer_grad_mode=grad_mode)
    assert ("indexer_teacher" in executed.breakdown) == (grad_mode != "off")


def test_the_grad_mode_keyword_leaves_the_given_model_alone():
    model = trainflops.Model(DSA_ARGS)
    before = trainflops.count(model, docs=[40], mode="executed").total
    trainflops.count(model, docs=[40], mode="executed", dsa_indexer_grad_mode="full")
    assert trainflops.count(model, docs=[40], mode="executed").total == before


GRAD_MODE_ERRORS = [
    (DSA_ARGS, "dense", 'dsa_indexer_grad_mode = "dense": must be one of off, detached, sparse, full'),
    (DSA_ARGS, 1, "dsa_indexer_grad_mode = 1: must be a str or None"),
    (LLAMA_ARGS, "full", 'dsa_indexer_grad_mode = "full": the model has no DSA layer, so no indexer to train'),
    ({**DSA_ARGS, "dsa_kpool_size": 4}, "sparse",
     "layers[0].mixer.indexer.pool_size = 4: KPool requires the indexer loss disabled (grad mode off, got sparse)"),
]


@pytest.mark.parametrize("args,grad_mode,message", GRAD_MODE_ERRORS, ids=[m[:30] for _, _, m in GRAD_MODE_ERRORS])
def test_grad_mode_errors(args, grad_mode, message):
    with pytest.raises(trainflops.TrainflopsError) as raised:
        trainflops.count(args, batch_size=1, dsa_indexer_grad_mode=grad_mode)
    assert str(raised.value) == message


def test_an_unknown_hugging_face_field_warns_or_with_strict_fails(tmp_path):
    config = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "hf" / "llama-3.1-8b.json").read_text())
    config["new_field"] = 1
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    message = (f"{path}: new_field = 1: not a field trainflops knows for model_type \"llama\", so it cannot tell "
               "whether it changes FLOPs (docs/hf-import.md lists the known fields)")
    with pytest.warns(UserWarning) as warned:
        counted = trainflops.count(hf=path, batch_size=1, seq_length=4096).total
    assert [str(warning.message) for warning in warned] == [message]
    with pytest.warns(UserWarning):  # the directory holding it: the same count
        assert counted == trainflops.count(hf=path.parent, batch_size=1, seq_length=4096).total
    with pytest.raises(trainflops.InvalidInputError) as raised:
        trainflops.count(hf=path, batch_size=1, seq_length=4096, strict=True)
    assert str(raised.value) == message
