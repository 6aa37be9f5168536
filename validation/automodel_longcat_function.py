"""NeMo Automodel's FLOPs function for LongCat-Flash, run from its source,
for tests/data/compare/nemo_automodel_longcat.jsonl.

Automodel maps Transformers' LongcatFlashConfig to `mla_moe_flops`
(nemo_automodel/components/utils/flops_utils.py), read here from the file
by name with the helpers it calls (validation/residual_machinery_functions.py's
`load`; nothing else of the framework is imported):

    /usr/bin/python3 -m validation.automodel_longcat_function AUTOMODEL_FLOPS_UTILS_PY COMMIT OUT_JSONL

The function reads the config through LongcatFlashConfig, whose
attribute_map (Transformers, src/transformers/models/longcat_flash/
configuration_longcat_flash.py) answers num_experts_per_tok with moe_topk
and intermediate_size with ffn_hidden_size, and whose num_hidden_layers is
56 (two blocks for each of the 28 layers) when config.json does not name
it; `LongcatSettings` presents the config.json that way.
"""

import json
import os
import sys

from validation.residual_machinery_functions import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = (1, 1500, 4096, 131072)
CONFIGS = ("tests/data/hf/longcat-flash-transformers-defaults.json",)


class LongcatSettings:
    """config.json as Transformers' LongcatFlashConfig presents it."""

    ATTRIBUTE_MAP = {"num_local_experts": "n_routed_experts", "num_experts_per_tok": "moe_topk",
                     "intermediate_size": "ffn_hidden_size"}

    def __init__(self, values):
        self.__dict__.update(values)
        if "num_hidden_layers" not in values:
            self.num_hidden_layers = 56

    def __getattr__(self, name):
        if name in LongcatSettings.ATTRIBUTE_MAP:
            return getattr(self, LongcatSettings.ATTRIBUTE_MAP[name])
        raise AttributeError(name)


def main(argv):
    flops_utils, commit, out = argv
    functions = load(flops_utils, {"mla_moe_flops"})
    with open(out, "w") as f:
        for path in CONFIGS:
            config = json.load(open(os.path.join(ROOT, path)))
            for length in LENGTHS:
                record = {"options": ["--hf", path], "seq_length": length, "framework": "nemo-automodel",
                          "function": "mla_moe_flops", "source": "NVIDIA-NeMo/Automodel " + commit + " " +
                          "nemo_automodel/components/utils/flops_utils.py",
                          "flops": functions["mla_moe_flops"](LongcatSettings(config), 1, length)}
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
