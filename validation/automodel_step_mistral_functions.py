"""NeMo Automodel's FLOPs functions for Step-3.5-Flash and Mistral Small 4,
run from their source, for tests/data/compare/nemo_automodel_step_mistral.jsonl.

`get_flops_formula_for_hf_config` (nemo_automodel/components/utils/flops_utils.py)
maps the config classes Step3p5Config to `step3_5_flash_flops` and
Mistral3Config (Mistral Small 4, which wraps its language model in
text_config) to `mla_moe_flops`. Those two functions and the helpers they
call are read from the file by name (validation/residual_machinery_functions.py's
`load`; nothing else of the framework is imported) and called on the small
configs of tests/data/compare/automodel/, one sequence at each length:

    /usr/bin/python3 -m validation.automodel_step_mistral_functions AUTOMODEL_FLOPS_UTILS_PY COMMIT OUT_JSONL

Each record names the config as `compare` takes it (`--hf FILE`) and holds
the function's number; tools/compare_command_test.cc reproduces each one as
compare's NeMo Automodel row.
"""

import json
import os
import sys

from validation.residual_machinery_functions import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = (1500, 4096, 131072)

# The function each top-level model_type's config class maps to.
FUNCTIONS = {"step3p5": "step3_5_flash_flops", "mistral3": "mla_moe_flops"}
HELPERS = {"attention_flops_calculator", "moe_mlp_flops_calculator", "loss_flops_calculator"}
CONFIGS = ("tests/data/compare/automodel/step3.5-small.json", "tests/data/compare/automodel/step3.5-small-plain.json",
           "tests/data/compare/automodel/mistral-small-4-small.json",
           "tests/data/compare/automodel/mistral-small-4-small-no-q-lora.json")


class Settings:
    """A config object as Transformers builds it: attributes as given, a
    nested text_config as a config object of its own, any other nested
    object (Step-3.5's attention_other_setting) a dict."""

    def __init__(self, values):
        for key, value in values.items():
            setattr(self, key, Settings(value) if key == "text_config" else value)


def main(argv):
    flops_utils, commit, out = argv
    functions = load(flops_utils, set(FUNCTIONS.values()) | HELPERS)
    with open(out, "w") as f:
        for path in CONFIGS:
            config = json.load(open(os.path.join(ROOT, path)))
            name = FUNCTIONS[config["model_type"]]
            for length in LENGTHS:
                record = {"options": ["--hf", path], "seq_length": length, "framework": "nemo-automodel",
                          "function": name, "source": "NVIDIA-NeMo/Automodel " + commit + " " +
                          "nemo_automodel/components/utils/flops_utils.py",
                          "flops": functions[name](Settings(config), 1, length)}
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
