"""trainflops.plot and `trainflops sweep --plot`: pictures from the CLI's JSON, and their errors.

The CLI is the `trainflops` executable beside the python/ directory the package
is imported from (build/trainflops for build/python/trainflops), or the one the
environment variable TRAINFLOPS_CLI names.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trainflops.plot
from trainflops.plot import PlotError, plot_layers, plot_sweep

PYTHON_DIR = Path(trainflops.plot.__file__).resolve().parents[1]
CLI = Path(os.environ.get("TRAINFLOPS_CLI", PYTHON_DIR.parent / "trainflops"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SWEEP_SCHEMA = 'not the JSON of `trainflops sweep --format json` (no "points")'
COUNT_SCHEMA = 'not the JSON of `trainflops count --format json` (no "layers")'

# Two context lengths of a made-up model: mtp and logits are thin (< 1% of the
# tallest stack), so they are drawn together as "other".
SMALL_SWEEP = {
    "mode": "model", "model": "tiny: 2 layers",
    "points": [
        {"seq_length": 1024, "per_token": 1000.0, "dense_per_token": 1500.0,
         "components_per_token": {"core_attention": 200.0, "mlp": 790.0, "mtp": 5.0, "logits": 5.0}},
        {"seq_length": 4096, "per_token": 1600.0, "dense_per_token": 3000.0,
         "components_per_token": {"core_attention": 800.0, "mlp": 790.0, "mtp": 5.0, "logits": 5.0}},
    ],
}
SMALL_COUNT = {
    "mode": "model", "model": "tiny: 2 layers", "workload": {"description": "BSHD, 1 x 8", "tokens": "8"},
    "layers": [
        {"name": "decoder.1", "kind": "gqa+mlp", "flops": 30.0,
         "breakdown": {"core_attention": {"flops": 10.0}, "mlp": {"flops": 20.0}}},
        {"name": "decoder.2", "kind": "gqa+mlp", "flops": 30.0,
         "breakdown": {"core_attention": {"flops": 10.0}, "mlp": {"flops": 20.0}}},
        {"name": "logits", "kind": "logits", "flops": 40.0, "breakdown": {"logits": {"flops": 40.0}}},
    ],
}


def cli(*arguments, env=None):
    assert CLI.is_file(), f"no trainflops executable at {CLI}: build it, or set TRAINFLOPS_CLI"
    return subprocess.run([str(CLI), *arguments], capture_output=True, text=True, env=env, check=False)


def cli_json(*arguments):
    result = cli(*arguments, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def plot_module(*arguments, stdin=""):
    """`python3 -m trainflops.plot <arguments>` with this test's package."""
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    return subprocess.run([sys.executable, "-m", "trainflops.plot", *arguments], input=stdin, capture_output=True,
                          text=True, env=env, check=False)


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert 10_000 < len(data) < 150_000, len(data)  # a real picture, small enough for the README


def test_sweep_of_the_cli_as_png_and_svg(tmp_path):
    data = cli_json("sweep", "--preset", "glm-5", "--seq-lengths", "4k,32k,256k")
    plot_sweep(data, tmp_path / "sweep.png")
    assert_png(tmp_path / "sweep.png")
    plot_sweep(data, str(tmp_path / "sweep.svg"))
    svg = (tmp_path / "sweep.svg").read_text()
    assert "<svg" in svg
    for text in ("256k", "dense-attention accounting", "indexer scoring", "GLM-5: 78 layers",
                 "this model alone, at its own scale"):  # the zoomed panel: dense is 7.5x at 256k
        assert text in svg, text


def test_layers_of_the_cli_as_png_and_svg(tmp_path):
    data = cli_json("count", "--preset", "glm-5", "--global-batch-size", "1", "--seq-length", "4096")
    plot_layers(data, tmp_path / "layers.png")
    assert_png(tmp_path / "layers.png")
    plot_layers(data, tmp_path / "layers.svg")
    svg = (tmp_path / "layers.svg").read_text()
    for text in ("<svg", "mtp1.projection", "logits", "moe routed", "TFLOPs per layer"):
        assert text in svg, text


def test_small_handcrafted_json(tmp_path):
    plot_sweep(SMALL_SWEEP, tmp_path / "sweep.svg")
    svg = (tmp_path / "sweep.svg").read_text()
    assert "other (mtp, logits)" in svg
    assert "1.88x this model" in svg  # dense over this model at the last point
    assert "this model alone" not in svg  # 3000 < 2 x 1600: one panel is enough
    plot_layers(SMALL_COUNT, tmp_path / "layers.svg")
    svg = (tmp_path / "layers.svg").read_text()
    assert "FLOPs per layer" in svg and "kFLOPs" not in svg
    assert "core attention" in svg and "other" not in svg


def test_module_reads_stdin_and_files(tmp_path):
    result = plot_module("sweep", "-", "-o", str(tmp_path / "a.png"), stdin=json.dumps(SMALL_SWEEP))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert_png(tmp_path / "a.png")
    (tmp_path / "count.json").write_text(json.dumps(SMALL_COUNT))
    result = plot_module("layers", str(tmp_path / "count.json"), "-o", str(tmp_path / "b.SVG"))
    assert result.returncode == 0, result.stderr
    assert "<svg" in (tmp_path / "b.SVG").read_text()


@pytest.mark.parametrize("kind,stdin,output,message", [
    ("sweep", SMALL_SWEEP, "out.jpg", 'out.jpg: extension ".jpg" is not .png or .svg (the picture format comes from it)'),
    ("sweep", SMALL_SWEEP, "out", 'out: extension "" is not .png or .svg (the picture format comes from it)'),
    ("sweep", SMALL_COUNT, "out.png", "stdin: " + SWEEP_SCHEMA),
    ("layers", SMALL_SWEEP, "out.png", "stdin: " + COUNT_SCHEMA),
    ("layers", [1, 2], "out.png", "stdin: " + COUNT_SCHEMA),
    ("sweep", "{oops", "out.png",
     "stdin: not valid JSON (line 1, column 2: Expecting property name enclosed in double quotes)"),
    ("sweep", {**SMALL_SWEEP, "points": []}, "out.png", "stdin: points = []: must be a non-empty list"),
    ("sweep", {**SMALL_SWEEP, "points": [{**SMALL_SWEEP["points"][0], "seq_length": 0}]}, "out.png",
     "stdin: points[0].seq_length = 0: must be a positive integer"),
    ("sweep", {**SMALL_SWEEP, "points": SMALL_SWEEP["points"][::-1]}, "out.png",
     "stdin: points: seq_length = [4096, 1024]: must increase from point to point"),
    ("sweep", {**SMALL_SWEEP, "points": [{**SMALL_SWEEP["points"][0], "components_per_token": {"mlp": "7"}}]},
     "out.png", 'stdin: points[0].components_per_token.mlp = "7": must be a number'),
    ("layers", {key: value for key, value in SMALL_COUNT.items() if key != "model"}, "out.png",
     "stdin: model is missing"),
    ("layers", {**SMALL_COUNT, "layers": [{**SMALL_COUNT["layers"][0], "breakdown": {"mlp": {}}}]}, "out.png",
     "stdin: layers[0].breakdown.mlp.flops is missing"),
])
def test_module_errors(tmp_path, kind, stdin, output, message):
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    result = plot_module(kind, "-", "-o", str(tmp_path / output), stdin=text)
    expected = message.replace(output, str(tmp_path / output), 1) if message.startswith(output) else message
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"trainflops.plot: {expected}\n")
    assert list(tmp_path.iterdir()) == []


def test_module_names_the_input_file(tmp_path):
    result = plot_module("sweep", str(tmp_path / "missing.json"), "-o", str(tmp_path / "out.png"))
    assert result.returncode == 2
    assert result.stderr == f"trainflops.plot: {tmp_path}/missing.json: cannot read: No such file or directory\n"
    (tmp_path / "count.json").write_text(json.dumps(SMALL_COUNT))
    result = plot_module("sweep", str(tmp_path / "count.json"), "-o", str(tmp_path / "out.png"))
    assert result.stderr == f"trainflops.plot: {tmp_path}/count.json: {SWEEP_SCHEMA}\n"


def test_functions_raise_plot_error(tmp_path):
    with pytest.raises(PlotError, match=r'^not the JSON of `trainflops sweep --format json` \(no "points"\)$'):
        plot_sweep({}, tmp_path / "out.png")
    with pytest.raises(PlotError, match=r'^layers\[2\].flops = true: must be a number$'):
        bad = [*SMALL_COUNT["layers"][:2], {**SMALL_COUNT["layers"][2], "flops": True}]
        plot_layers({**SMALL_COUNT, "layers": bad}, tmp_path / "out.png")
    assert issubclass(PlotError, ValueError)


SWEEP_ARGUMENTS = ["sweep", "--preset", "glm-5", "--seq-lengths", "4k,64k"]


def test_cli_sweep_plot(tmp_path):
    table = cli(*SWEEP_ARGUMENTS)
    assert table.returncode == 0, table.stderr
    result = cli(*SWEEP_ARGUMENTS, "--plot", str(tmp_path / "sweep.png"))
    assert (result.returncode, result.stdout) == (0, table.stdout)
    assert result.stderr == f"wrote {tmp_path}/sweep.png\n"
    assert_png(tmp_path / "sweep.png")


def test_cli_sweep_plot_failure(tmp_path):
    result = cli(*SWEEP_ARGUMENTS, "--plot", str(tmp_path / "it's.jpg"))
    assert (result.returncode, result.stdout) == (2, "")
    bad = tmp_path / "it's.jpg"
    assert result.stderr == (
        f'trainflops.plot: {bad}: extension ".jpg" is not .png or .svg (the picture format comes from it)\n'
        f"trainflops: --plot {bad}: /usr/bin/python3 -m trainflops.plot failed with exit status 2\n")


def test_cli_finds_the_module_on_pythonpath(tmp_path):
    moved = tmp_path / "bin" / "trainflops"  # no python/ beside it
    moved.parent.mkdir()
    shutil.copy(CLI, moved)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    arguments = [str(moved), *SWEEP_ARGUMENTS, "--plot", str(tmp_path / "sweep.svg")]
    lost = subprocess.run(arguments, capture_output=True, text=True, env=env, check=False)
    assert (lost.returncode, lost.stdout) == (2, "")
    assert lost.stderr == (f"trainflops: --plot {tmp_path}/sweep.svg: the Python module trainflops.plot is neither "
                           f"in {tmp_path}/bin/python nor on PYTHONPATH (build the CMake target "
                           "trainflops_python_package)\n")
    found = subprocess.run(arguments, capture_output=True, text=True, check=False,
                           env={**env, "PYTHONPATH": f"{tmp_path}/nothing:{PYTHON_DIR}"})
    assert found.returncode == 0, found.stderr
    assert "<svg" in (tmp_path / "sweep.svg").read_text()
