"""trainflops: the FLOPs of one LLM training iteration, from Python.

    import trainflops
    report = trainflops.count(args, batch_size=1024)        # args: argparse.Namespace, dict or path
    report.total, report.per_token, report.breakdown, report.layers

    stats = trainflops.SeqStats(args)                       # exact packed statistics, per rank
    stats.add_cu_seqlens(cu_seqlens)
    ...all_reduce(stats.vector())..., stats.set_vector(summed), stats.flops()

    trainflops.mfu(report, step_time=12.5, num_gpus=1024, gpu="h100-sxm")

    comparison = trainflops.compare(preset="deepseek-v3", seq_length=4096)  # every framework's number

trainflops.megatron.num_floating_point_operations is a drop-in for Megatron-LM's
function (its main branch); trainflops.megatron_dev's for its dev branch's.
Every error is a trainflops.TrainflopsError (a ValueError) with the
library's message; its subclass says what kind: InvalidInputError,
InputFileError (also an OSError), CountOverflowError (also an OverflowError),
UnsupportedError (also a NotImplementedError) or FailedAssertionError (an
InvalidInputError that is also an AssertionError: arguments Megatron-LM's
function refuses with an assert). docs/python.md in the source tree has the details.
"""
from trainflops._core import (Comparison, CountOverflowError, FailedAssertionError, FrameworkCount, InputFileError,
                              InvalidInputError, Layer, Model, Report, TrainflopsError, UnsupportedError)
from trainflops import _core, megatron, megatron_dev
from trainflops.seq_stats import SeqStats
from trainflops.utilization import Mfu, mfu, peak_table


__all__ = ["compare", "Comparison", "count", "CountOverflowError", "FailedAssertionError", "FrameworkCount",
           "InputFileError", "InvalidInputError", "Layer", "megatron", "megatron_dev", "Mfu", "mfu", "Model", "peak_table", "Report",
           "SeqStats", "TrainflopsError", "UnsupportedError"]


def count(model=None, *, preset=None, hf=None, batch_size=None, seq_length=None, docs=None, cu_seqlens=None,
          total_real_tokens=None, seqlen_squared_sum=None, mode="megatron", recompute="none",
          dsa_indexer_grad_mode=None, strict=False, allow_unknown_flags=False):
    """The FLOPs of one training iteration (forward and backward), as a Report.

    model: Megatron-LM arguments (an argparse.Namespace or a dict with Megatron-LM's
        names, as vars(args) holds them), Megatron-LM flags (a list of strings), a
        trainflops config (a dict with "layers"), the path of a JSON file holding
        arguments or a config, or a trainflops.Model.
    preset, hf: instead of model, a built-in model by name ("glm-5"; trainflops
        presets lists them) or a Hugging Face config.json (or its directory).
    One workload:
        batch_size: BSHD, batch_size sequences of seq_length tokens; seq_length
            defaults to the arguments' (or the preset's) seq_length.
        docs: packed document lengths (a list, NumPy array or CPU torch tensor).
        cu_seqlens: packed documents by cumulative offsets (0 first).
        total_real_tokens with seqlen_squared_sum: Megatron-LM's aggregates
            T = sum L and S2 = sum L^2 (megatron mode only).
    mode: "megatron" (Megatron-LM's num_floating_point_operations), "model"
        (exact per document, in integers) or "executed" (what the kernels
        execute, exactly; the report's model_total holds the model-mode total).
    recompute: executed mode's activation recomputation: "none", "selective"
        (core attention) or "full" (every layer).
    dsa_indexer_grad_mode: how every DSA indexer trains, whatever the model
        says: "off" (no indexer loss), "detached" (dense KL loss), "sparse"
        (sparse KL loss) or "full" (inputs not detached); None keeps the model's.
    strict: with hf=, a config field trainflops does not know is an error
        (InvalidInputError) instead of a UserWarning.
    allow_unknown_flags: with Megatron-LM flags, a flag Megatron-LM's parser
        does not accept is a UserWarning (the model is counted without it)
        instead of an InvalidInputError.

    Raises TrainflopsError for invalid input, naming the field, value and rule.
    """
    return _core.count(model, preset, hf, mode, recompute, batch_size, seq_length, docs, cu_seqlens,
                       total_real_tokens, seqlen_squared_sum, dsa_indexer_grad_mode, strict,
                       allow_unknown_flags)


def compare(model=None, *, preset=None, hf=None, seq_length=None, batch_size=None, dsa_indexer_grad_mode=None,
            strict=False, allow_unknown_flags=False):
    """Every framework's FLOPs for the model, as a Comparison: what Megatron-LM
    (main, and with its DSA fix), Megatron-Bridge, MaxText, torchtitan,
    NeMo-RL and NeMo Automodel would each report for one iteration of batch_size sequences of
    seq_length tokens, beside trainflops' model and executed counts, each
    framework's difference from model mode split by convention.

    model, preset, hf, dsa_indexer_grad_mode, strict, allow_unknown_flags: as
        for count().
    seq_length: tokens per sequence; defaults to the model source's.
    batch_size: sequences per iteration; defaults to the source's global batch
        size, else 1.

    A framework that cannot express the model has flops None and a reason.
    """
    return _core.compare(model, preset, hf, seq_length, batch_size, dsa_indexer_grad_mode, strict,
                         allow_unknown_flags)
