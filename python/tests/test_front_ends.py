"""One table of inputs through the three front ends: the command line
(`trainflops count`), the Python module (trainflops.count) and `trainflops
batch`. Each must give the same total, or the same error text, and the same
warnings, since all three resolve models through the same library code."""
import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest

import trainflops

PYTHON_DIR = Path(trainflops.__file__).resolve().parents[1]
CLI = Path(os.environ.get("TRAINFLOPS_CLI", PYTHON_DIR.parent / "trainflops"))
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"

LLAMA_FLAGS = ["--num-layers", "2", "--hidden-size", "256", "--ffn-hidden-size", "512", "--num-attention-heads", "4",
               "--group-query-attention", "--num-query-groups", "2", "--swiglu", "--vocab-size", "1000",
               "--seq-length", "64"]


class Case:
    """A model source and a workload, as each front end spells them."""

    def __init__(self, name, source, workload, mode="megatron", grad_mode=None, allow_unknown_flags=False):
        self.name, self.source, self.workload, self.mode, self.grad_mode = name, source, workload, mode, grad_mode
        self.allow_unknown_flags = allow_unknown_flags

    def cli(self):
        kind, value = self.source
        words = ["count", "--mode", self.mode, "--format", "json"]
        if self.grad_mode:
            words += ["--dsa-indexer-grad-mode", self.grad_mode]
        if self.allow_unknown_flags:
            words.append("--allow-unknown-flags")
        for key, item in self.workload.items():
            flag = {"batch_size": "--global-batch-size", "seq_length": "--seq-length", "docs": "--docs"}[key]
            words += [flag, ",".join(map(str, item)) if key == "docs" else str(item)]
        if kind == "flags":
            return words + ["--megatron", "--"] + value
        return words + ["--" + kind, str(value)]

    def python(self):
        kind, value = self.source
        model = {"flags": dict(model=value), "args": dict(model=str(value)), "preset": dict(preset=value),
                 "hf": dict(hf=value)}[kind]
        return dict(model, mode=self.mode, dsa_indexer_grad_mode=self.grad_mode,
                    allow_unknown_flags=self.allow_unknown_flags, **self.workload)

    def record(self):
        kind, value = self.source
        record = {"mode": self.mode, **self.workload}
        if self.grad_mode:
            record["dsa_indexer_grad_mode"] = self.grad_mode
        if self.allow_unknown_flags:
            record["allow_unknown_flags"] = True
        if kind == "args":
            record["args"] = json.loads(Path(value).read_text())
        else:
            record[kind] = str(value) if kind != "flags" else value
        return record


CASES = [
    Case("preset, its seq_length", ("preset", "glm-5"), {"batch_size": 2}),
    Case("preset, packed, model mode, trained indexer", ("preset", "deepseek-v3.2"), {"docs": [100, 4000, 3]},
         mode="executed", grad_mode="detached"),
    Case("Hugging Face config", ("hf", DATA / "hf" / "llama-3.1-8b.json"), {"batch_size": 1, "seq_length": 4096},
         mode="model"),
    Case("Hugging Face directory", ("hf", DATA / "front_ends" / "llama-3.1-8b"), {"batch_size": 1, "seq_length": 512}),
    Case("Megatron-LM flags", ("flags", LLAMA_FLAGS), {"batch_size": 4}, mode="model"),
    Case("Megatron-LM flags, an unknown one allowed", ("flags", LLAMA_FLAGS + ["--ffn-size", "3"]), {"batch_size": 4},
         mode="model", allow_unknown_flags=True),
    Case("Megatron-LM arguments", ("args", DATA / "front_ends" / "args.json"), {"docs": [7, 9]}),
    # Errors: the same text everywhere.
    Case("unknown preset", ("preset", "glm-6"), {"batch_size": 1}),
    Case("grad mode misspelt", ("preset", "glm-5"), {"batch_size": 1}, grad_mode="dense"),
    Case("grad mode without DSA", ("preset", "llama-3.1-8b"), {"batch_size": 1}, grad_mode="full"),
    Case("KPool trains no indexer", ("args", DATA / "front_ends" / "kpool.json"), {"batch_size": 1},
         grad_mode="sparse"),
    Case("missing Hugging Face file", ("hf", "/nonexistent/config.json"), {"batch_size": 1, "seq_length": 8}),
    Case("flag misspelt", ("flags", ["--num-layer", "2"]), {"batch_size": 1}),
    Case("flag unknown", ("flags", LLAMA_FLAGS + ["--ffn-size", "3"]), {"batch_size": 1}),
    Case("documents with a sequence length", ("preset", "glm-5"), {"docs": [10, 20], "seq_length": 999}),
    Case("two workloads", ("preset", "glm-5"), {"docs": [10, 20], "batch_size": 2}),
    Case("no sequence length", ("hf", DATA / "hf" / "llama-3.1-8b.json"), {"batch_size": 2}),
    Case("packed, an empty document", ("preset", "glm-5"), {"docs": [10, 0, 3]}, mode="model"),
] + [
    # Every release config of tests/data/hf, as released.
    Case("release " + config.stem, ("hf", config), {"batch_size": 2, "seq_length": 8192}, mode="model")
    for config in sorted((DATA / "hf").glob("*.json"))
]


WARNING = "trainflops: warning: "


def through_cli(case):
    run = subprocess.run([str(CLI)] + case.cli(), capture_output=True, text=True)
    if run.returncode != 0:
        assert run.stderr.startswith("trainflops: "), run.stderr
        return "error", run.stderr[len("trainflops: "):].rstrip("\n"), []
    total = json.loads(run.stdout)["total"]
    warned = [line[len(WARNING):] for line in run.stderr.splitlines() if line.startswith(WARNING)]
    return "total", int(total["exact"]) if "exact" in total else total["flops"], warned


def through_python(case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            total = trainflops.count(**case.python()).total
        except trainflops.TrainflopsError as error:
            return "error", str(error), []
    return "total", total, [str(warning.message) for warning in caught]


def through_batch(case):
    run = subprocess.run([str(CLI), "batch"], input=json.dumps(case.record()) + "\n", capture_output=True, text=True)
    answer = json.loads(run.stdout)
    if "error" in answer:
        assert answer["error"].startswith("line 1: ")
        return "error", answer["error"][len("line 1: "):], []
    return "total", int(answer["exact"]) if "exact" in answer else answer["flops"], answer.get("warnings", [])


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_front_end_gives_the_same_answer(case):
    assert CLI.is_file(), f"no trainflops executable at {CLI}: build it, or set TRAINFLOPS_CLI"
    cli, python, batch = through_cli(case), through_python(case), through_batch(case)
    assert cli == python == batch
    expect_error = case.name in {"unknown preset", "grad mode misspelt", "grad mode without DSA",
                                 "KPool trains no indexer", "missing Hugging Face file", "flag misspelt", "flag unknown",
                                 "documents with a sequence length", "two workloads", "no sequence length"}
    assert (cli[0] == "error") == expect_error, cli


def test_an_allowed_unknown_flag_is_a_warning_and_counted_as_absent():
    allowed = next(case for case in CASES if case.name == "Megatron-LM flags, an unknown one allowed")
    plain = next(case for case in CASES if case.name == "Megatron-LM flags")
    kind, total, warned = through_python(allowed)
    assert (kind, total) == through_python(plain)[:2]
    assert warned == ["unknown flag --ffn-size: Megatron-LM's parser has no such option; did you mean "
                      "--ffn-hidden-size? (counted without it: --ffn-size 3)"]
