"""trainflops.mfu(): TFLOP/s per GPU, MFU and HFU against the dense peak table."""
import numpy as np
import pytest

import trainflops

LLAMA_ARGS = {"num_layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "num_attention_heads": 32,
              "group_query_attention": True, "num_query_groups": 8, "kv_channels": 128, "swiglu": True,
              "padded_vocab_size": 128256, "seq_length": 4096}


def test_arithmetic():
    # 4.2e18 FLOPs in 10 s on 1,024 GPUs: 410.15625 TFLOP/s per GPU.
    result = trainflops.mfu(4.2e18, step_time=10, num_gpus=1024, gpu="h100-sxm")
    assert result.tflops_per_gpu == pytest.approx(410.15625, rel=1e-15)
    assert result.mfu == pytest.approx(410.15625 / 989.5, rel=1e-15)
    assert result.peak_tflops == 989.5
    assert result.hfu is None
    assert result.peak_source.startswith("NVIDIA H100 SXM5, bf16, dense: NVIDIA H100 Tensor Core GPU datasheet")
    assert str(result) == "410.2 TFLOP/s per GPU, MFU 41.45% of 989.5 TFLOP/s"

    recomputed = trainflops.mfu(4.2e18, 10, 1024, gpu="h100-sxm", executed_flops=5.6e18)
    assert recomputed.executed_tflops_per_gpu == pytest.approx(546.875, rel=1e-15)
    assert recomputed.hfu == pytest.approx(546.875 / 989.5, rel=1e-15)
    assert str(recomputed).endswith(", HFU 55.27%")


@pytest.mark.parametrize("gpu,dtype,peak", [
    ("a100", "bf16", 312), ("h100-pcie", "fp8", 1513), ("h200", "fp16", 989.5), ("B200", "bf16", 2250),
    ("gb200", "fp8", 5000), ("mi300x", "bf16", 1307.4), ("mi355x", "FP8", 5033.2), ("gb300", "fp4", 15000),
    ("NVIDIA H100 SXM", "bf16", 989.5), ("hgx-b200", "fp8", 4500),
])
def test_table_peaks(gpu, dtype, peak):
    assert trainflops.mfu(peak * 1e12, 1, 1, gpu=gpu, dtype=dtype).mfu == pytest.approx(1, rel=1e-15)


def test_a_report_and_an_override():
    report = trainflops.count(LLAMA_ARGS, batch_size=8)
    result = trainflops.mfu(report, step_time=2, num_gpus=4, gpu="a100", peak_tflops=250)
    assert result.flops == report.total
    assert result.tflops_per_gpu == pytest.approx(report.total / 8e12, rel=1e-15)
    assert result.mfu == pytest.approx(report.total / 8e12 / 250, rel=1e-15)
    assert result.peak_source == "peak_tflops="


def test_an_executed_mode_report_gives_mfu_and_hfu():
    executed = trainflops.count(LLAMA_ARGS, batch_size=8, mode="executed", recompute="full")
    model = trainflops.count(LLAMA_ARGS, batch_size=8, mode="model")
    assert executed.recompute == "full"
    assert executed.model_total == model.total
    assert executed.total > model.total
    result = trainflops.mfu(executed, step_time=2, num_gpus=4, gpu="h100-sxm")
    assert result.mfu == trainflops.mfu(model, step_time=2, num_gpus=4, gpu="h100-sxm").mfu
    assert result.hfu == pytest.approx(executed.total / 8e12 / 989.5, rel=1e-15)
    with pytest.raises(trainflops.TrainflopsError) as raised:
        trainflops.mfu(executed, step_time=2, num_gpus=4, gpu="h100-sxm", executed_flops=1e15)
    assert str(raised.value) == "executed_flops: an executed-mode report already gives them (its total)"
    assert model.model_total is None


def test_peak_table_has_every_gpu_with_a_source():
    table = trainflops.peak_table()
    assert sorted({entry["gpu"] for entry in table}) == sorted(
        ["a100", "h100-sxm", "h100-pcie", "h200", "h20", "b200", "gb200", "b300", "gb300", "mi300x", "mi325x",
         "mi355x"])
    assert all("https://" in entry["source"] for entry in table)
    assert {entry["dtype"] for entry in table} == {"bf16", "fp16", "fp8", "fp4"}


def test_an_ambiguous_gpu_name_says_what_it_was_taken_as():
    result = trainflops.mfu(4.2e18, step_time=10, num_gpus=1024, gpu="h100")
    assert result.peak_tflops == 989.5
    assert result.peak_source.startswith("h100 taken as h100-sxm (NVIDIA H100 SXM5, the part of most training "
                                         "clusters); the PCIe card is h100-pcie; NVIDIA H100 SXM5, bf16, dense")


ERRORS = [
    (dict(flops=1e15, step_time=1, num_gpus=8), "gpu is missing: give the GPU type (see peak_table()) or peak_tflops="),
    (dict(flops=1e15, step_time=1, num_gpus=8, gpu="h1000"),
     '"h1000": unknown GPU; did you mean h100? one of a100, h100-sxm, h100-pcie, h200, h20, b200, gb200, b300, gb300, '
     'mi300x, mi325x, mi355x (trainflops gpus lists them), or give the peak with --peak-tflops / peak_tflops='),
    (dict(flops=4e15, step_time=1, num_gpus=2, gpu="h100-sxm"),
     "MFU = 202.12% is above the peak: 4.0000e+15 FLOPs in 1 s on 2 GPUs is 2000.0 TFLOP/s per GPU, more than the "
     "989.5 of the peak; check the step time, the GPU count and the GPU type"),
    (dict(flops=1e15, step_time=1, num_gpus=8, gpu="a100", dtype="fp8"),
     "a100: no fp8 tensor-core rate in its datasheet; give the peak with --peak-tflops / peak_tflops="),
    (dict(flops=1e15, step_time=1, num_gpus=8, gpu="a100", dtype="int8"), '"int8": must be one of bf16, fp16, fp8, fp4'),
    (dict(flops=1e15, step_time=0, num_gpus=8, gpu="a100"),
     "step_time_s = 0: must be a positive, finite number of seconds"),
    (dict(flops=1e15, step_time="1s", num_gpus=8, gpu="a100"), "step_time = '1s': must be a number of seconds"),
    (dict(flops=1e15, step_time=1, num_gpus=0, gpu="a100"), "num_gpus = 0: must be >= 1"),
    (dict(flops=1e15, step_time=1, num_gpus=2.5, gpu="a100"), "num_gpus = 2.5: must be an integer"),
    (dict(flops=None, step_time=1, num_gpus=8, gpu="a100"),
     "flops = None: must be a number of FLOPs or a trainflops.Report"),
    (dict(flops=1e15, step_time=1, num_gpus=8, peak_tflops=-3), "peak_tflops = -3: must be a positive, finite "
     "number of TFLOP/s per GPU"),
    (dict(flops=1e15, step_time=1, num_gpus=8, gpu=5), "gpu = 5: must be a str"),
    (dict(flops=1e15, step_time=1, num_gpus=8, gpu="a100", dtype=None), "dtype = None: must be a str"),
    (dict(flops=1e15, step_time=1, num_gpus=np.bool_(True), gpu="a100"),
     f"num_gpus = {np.bool_(True)!r}: must be an integer"),
]


@pytest.mark.parametrize("call,message", ERRORS, ids=[message[:40] for _, message in ERRORS])
def test_errors(call, message):
    with pytest.raises(trainflops.TrainflopsError) as raised:
        trainflops.mfu(**call)
    assert str(raised.value) == message
