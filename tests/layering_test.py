"""The rules of layering.py, each on a small tree that breaks it once."""
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("layering", Path(__file__).with_name("layering.py"))
layering = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layering)

# A tree that keeps every rule: path -> includes.
CLEAN = {
    "include/trainflops/result.h": [],
    "src/base/result.cc": ["trainflops/result.h"],
    "src/base/json_text.h": ["trainflops/result.h"],
    "include/trainflops/model.h": ["trainflops/result.h"],
    "src/model/model.cc": ["trainflops/model.h", "base/json_text.h"],
    "include/trainflops/count.h": ["trainflops/model.h"],
    "src/accounting/count.cc": ["trainflops/count.h"],
    "src/accounting/count_test.cc": ["inputs/presets.h"],  # tests may include anything
    "include/trainflops/presets.h": ["trainflops/model.h"],
    "src/inputs/presets.cc": ["trainflops/presets.h", "base/json_text.h"],
    "include/trainflops/render.h": ["trainflops/count.h", "trainflops/presets.h"],
    "src/report/render.cc": ["trainflops/render.h"],
    "tools/command.h": ["trainflops/result.h"],
    "tools/count_command.cc": ["command.h", "trainflops/render.h"],
    "python/bindings.cc": ["trainflops/count.h", "base/json_text.h"],
}
EXCEPTIONS = {("python/bindings.cc", "base/json_text.h"): "a reason"}

CASES = [
    ("clean", {}, EXCEPTIONS, []),
    ("a layer includes a higher layer's header", {"src/model/model.cc": ["trainflops/count.h"]}, EXCEPTIONS,
     ["src/model/model.cc (layer model) includes trainflops/count.h of layer accounting"]),
    ("a layer includes a sibling's internal header", {"src/accounting/count.cc": ["inputs/hf_models.h"]}, EXCEPTIONS,
     ["src/accounting/count.cc (layer accounting) includes inputs/hf_models.h of layer inputs"]),
    ("a public header includes a higher layer's public header",
     {"include/trainflops/presets.h": ["trainflops/count.h"]}, EXCEPTIONS,
     ["include/trainflops/presets.h (layer inputs) includes trainflops/count.h of layer accounting"]),
    ("a public header includes an internal header", {"include/trainflops/model.h": ["base/json_text.h"]}, EXCEPTIONS,
     ["include/trainflops/model.h includes internal base/json_text.h: a public header includes public headers "
      "only"]),
    ("a public header includes a file of no layer", {"include/trainflops/count.h": ["term.h"]}, EXCEPTIONS,
     ['include/trainflops/count.h includes "term.h": a public header includes public headers only']),
    ("a public header without a home", {"include/trainflops/orphan.h": []}, EXCEPTIONS,
     ["include/trainflops/orphan.h: no single src/<layer>/orphan.cc says its layer"]),
    ("an unknown public header", {"src/report/render.cc": ["trainflops/nowhere.h"]}, EXCEPTIONS,
     ["src/report/render.cc includes trainflops/nowhere.h, which is not a public header"]),
    ("a front end includes an unlisted internal header", {"tools/count_command.cc": ["accounting/terms.h"]},
     EXCEPTIONS,
     ["tools/count_command.cc includes internal accounting/terms.h: front ends use public headers only (or list it "
      "in FRONT_END_EXCEPTIONS with the reason)"]),
    ("a front end includes a file of another folder", {"python/bindings.cc": ["base/json_text.h", "../tools/x.h"]},
     EXCEPTIONS, ['python/bindings.cc includes "../tools/x.h", neither a public header nor its own file']),
    ("an exception that no longer holds", {"python/bindings.cc": ["trainflops/count.h"]}, EXCEPTIONS,
     ["FRONT_END_EXCEPTIONS lists python/bindings.cc including base/json_text.h, which it no longer does: remove "
      "the exception"]),
]


def write_tree(root, files):
    for path, included in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f'#include "{header}"\n' for header in included) + "#include <vector>\n")


@pytest.mark.parametrize("name,changes,exceptions,expected", CASES, ids=[case[0] for case in CASES])
def test_rule(tmp_path, name, changes, exceptions, expected):
    write_tree(tmp_path, {**CLEAN, **changes})
    assert layering.check(tmp_path, exceptions) == expected

