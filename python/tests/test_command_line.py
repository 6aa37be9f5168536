"""`python -m trainflops`: the command line inside the package, as a pip install's `trainflops` command runs it."""
import json
import subprocess
import sys

import trainflops


def run(*arguments):
    return subprocess.run([sys.executable, "-m", "trainflops", *arguments], capture_output=True, text=True)


def test_python_m_trainflops_runs_the_command_line():
    counted = run("count", "--preset", "llama-3.1-8b", "--global-batch-size", "2", "--format", "json")
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout)["total"]["flops"] == trainflops.count(preset="llama-3.1-8b", batch_size=2).total
    assert run("--version").stdout.startswith("trainflops ")


def test_errors_keep_their_exit_status():
    failed = run("count", "--preset", "glm-6", "--global-batch-size", "1")
    assert failed.returncode == 2
    assert failed.stderr.startswith('trainflops: preset = "glm-6": unknown')
