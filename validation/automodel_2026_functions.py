"""NeMo Automodel's FLOPs functions for the 2026 architectures, run from their
source, for tests/data/compare/nemo_automodel_2026.jsonl.

`deepseek_v41_flops` and `qwen3_8_flash_next_flops`
(nemo_automodel/components/utils/flops_utils.py) are read from the file by
name with the helpers they call (validation/residual_machinery_functions.py's
`load`; nothing else of the framework is imported) and called on the release
configs of tests/data/hf and the small configs of
tests/data/compare/automodel/, one sequence at each length:

    /usr/bin/python3 -m validation.automodel_2026_functions AUTOMODEL_FLOPS_UTILS_PY COMMIT OUT_JSONL

Each record names the config as `compare` takes it (`--hf FILE`) and holds
the function's number; tools/compare_command_test.cc reproduces each one as
compare's NeMo Automodel row.
"""

import json
import os
import sys

from validation.residual_machinery_functions import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = (1, 5, 17, 64, 300, 4096, 131072)

# The function each inner model_type is counted by.
FUNCTIONS = {"deepseek_v41_text": "deepseek_v41_flops", "qwen4_exp_text": "qwen3_8_flash_next_flops"}
CONFIGS = ("tests/data/hf/deepseek-v4.1-flash.json", "tests/data/compare/automodel/deepseek-v41-small-candidates.json",
           "tests/data/compare/automodel/deepseek-v41-small-plain.json",
           "tests/data/compare/automodel/deepseek-v41-small-one-stream.json", "tests/data/hf/qwen3.8-flash-next.json",
           "tests/data/compare/automodel/qwen3.8-small-ple.json",
           "tests/data/compare/automodel/qwen3.8-small-two-blocks.json",
           "tests/data/compare/automodel/qwen3.8-small-one-stream.json")


class Settings:
    """A config object: attributes as given, nested objects as Settings.
    Automodel's Qwen3.8 function reads `layers_block_type` ("attention" or
    "linear_attention" per layer); a config.json names the layers in
    `layer_types` ("full_attention" or "linear_attention"), mapped here. On
    the release config this gives the 42.0 GFLOPs per token at 4096 tokens
    that the function's docstring states."""

    def __init__(self, values):
        for key, value in values.items():
            setattr(self, key, Settings(value) if isinstance(value, dict) else value)
        if values.get("model_type") == "qwen4_exp_text":
            self.layers_block_type = ["attention" if t == "full_attention" else t for t in values["layer_types"]]


def main(argv):
    flops_utils, commit, out = argv
    functions = load(flops_utils, set(FUNCTIONS.values()))
    with open(out, "w") as f:
        for path in CONFIGS:
            config = json.load(open(os.path.join(ROOT, path)))
            inner = config.get("text_config", config)
            name = FUNCTIONS[inner["model_type"]]
            for length in LENGTHS:
                record = {"options": ["--hf", path], "seq_length": length, "framework": "nemo-automodel",
                          "function": name, "source": "NVIDIA-NeMo/labs-molt " + commit + " " +
                          "nemo_automodel/components/utils/flops_utils.py",
                          "flops": functions[name](Settings(config), 1, length)}
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
