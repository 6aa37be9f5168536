"""trainflops' executed-mode count of a case, through the command line."""

import collections
import json
import os
import subprocess
import tempfile

from validation.config import native_config


class CliError(RuntimeError):
    """The command line failed or printed something that is not a report."""


def executed_count(cli, case):
    """Runs `trainflops count --mode executed` on the case (its Megatron-LM
    arguments, or with a native mixer or attention residuals its native
    config); returns its JSON report."""
    native = case.native_mixer is not None or case.attention_residuals is not None
    model = native_config(case.config()) if native else case.args
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix=f"{case.name}-", delete=False) as args_file:
        json.dump(model, args_file)
    source = "--config" if native else "--args"
    command = [cli, "count", source, args_file.name, "--docs", ",".join(map(str, case.docs)),
               "--mode", "executed", "--recompute", case.recompute, "--format", "json"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        os.unlink(args_file.name)
    if result.returncode != 0:
        raise CliError(f"{' '.join(command)} exited with {result.returncode}: {result.stderr.strip()}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise CliError(f"{' '.join(command)} printed no JSON report ({error})") from error


def report_flops(report):
    """(total, Counter of FLOPs per (layer, component)) of a report, exact integers."""
    flops = collections.Counter()
    for layer in report["layers"]:
        for component, value in layer["breakdown"].items():
            flops[(layer["name"], component)] += int(value["exact"])
    return int(report["total"]["exact"]), flops
