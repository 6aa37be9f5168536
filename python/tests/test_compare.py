"""trainflops.compare(): every framework's FLOPs, reconciled with model mode."""
import json
import subprocess
import sys

import pytest

import trainflops

LLAMA_ARGS = {"num_layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "num_attention_heads": 32,
              "group_query_attention": True, "num_query_groups": 8, "kv_channels": 128, "swiglu": True,
              "padded_vocab_size": 128256, "seq_length": 4096}


def test_rows_and_exact_reconciliation():
    comparison = trainflops.compare(LLAMA_ARGS, batch_size=2)
    assert (comparison.seq_length, comparison.sequences) == (4096, 2)
    names = [f.name for f in comparison.frameworks]
    assert names == ["trainflops-model", "trainflops-executed", "megatron-lm", "megatron-lm-dsa-fix",
                     "megatron-bridge", "maxtext", "torchtitan", "nemo-rl", "nemo-automodel"]
    model = trainflops.count(LLAMA_ARGS, batch_size=2, mode="model").total
    assert comparison.model_flops == model == comparison.frameworks[0].flops
    assert comparison.frameworks[2].flops == trainflops.count(LLAMA_ARGS, batch_size=2).total
    for framework in comparison.frameworks:
        assert isinstance(framework.flops, int)
        assert sum(flops for _, _, flops in framework.differences) == framework.flops - model
    # Llama: Megatron-LM charges L^2/2 causal pairs where model mode charges L(L+1)/2:
    # 32 layers x 3 x 2 x 2 (QK, AV) x 4096 (n hd) x L/2 per sequence, 2 sequences.
    assert comparison.frameworks[2].differences == [("causal_pairs", "L^2/2 pairs", -2 * 32 * 12 * 4096 * 4096 // 2)]


def test_a_framework_that_cannot_express_the_model():
    comparison = trainflops.compare(preset="glm-5", seq_length=4096)
    torchtitan = comparison.frameworks[6]
    assert torchtitan.flops is None
    assert torchtitan.reason == "torchtitan has no DeepSeek Sparse Attention model"
    assert torchtitan.differences == []


def test_render_is_the_command_line_output():
    comparison = trainflops.compare(preset="deepseek-v3", seq_length=4096)
    printed = subprocess.run([sys.executable, "-m", "trainflops", "compare", "--preset", "deepseek-v3", "--seq-length",
                              "4096", "--format", "json"], capture_output=True, text=True, check=True).stdout
    assert comparison.render("json") == printed
    assert json.loads(comparison.render("json"))["model_flops"] == str(comparison.model_flops)
    assert str(comparison).startswith("DeepSeek-V3: 61 layers")


def test_errors():
    with pytest.raises(trainflops.InvalidInputError, match="^seq_length = 0: must be at least 1$"):
        trainflops.compare(preset="glm-5", seq_length=0)
    with pytest.raises(trainflops.InvalidInputError, match="^seq_length is missing: give seq_length="):
        trainflops.compare({k: v for k, v in LLAMA_ARGS.items() if k != "seq_length"})
    with pytest.raises(trainflops.InvalidInputError, match="format"):
        trainflops.compare(preset="glm-5", seq_length=16).render("yaml")
