"""megatron_baseline reads a function and the helpers it calls from a
checkout's source, across megatron imports, without running the rest."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import megatron_baseline  # noqa: E402


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_reads_the_function_and_what_it_calls(tmp_path):
    write(tmp_path, "megatron/training/training.py", '''
import torch  # not installed anywhere: must not run
from operator import itemgetter
from megatron.core.counts import layer_counts, Symbols
SCALE = 2

def unrelated():
    return torch.zeros(1)

def num_floating_point_operations(args, batch_size):
    dense, moe = itemgetter("dense", "moe")(layer_counts(args.pattern))
    return SCALE * batch_size * (dense * args.hidden_size + moe * Symbols.MOE_WEIGHT)
''')
    write(tmp_path, "megatron/core/counts.py", '''
import torch  # likewise
class Symbols:
    MOE_WEIGHT = 10

def layer_counts(pattern):
    return {"dense": pattern.count("-"), "moe": pattern.count("E")}
''')
    function, read, source = megatron_baseline.load(str(tmp_path))
    assert read == ["hidden_size", "pattern"]
    assert source == f"Megatron-LM not a git checkout ({tmp_path})"
    assert function(argparse.Namespace(pattern="--E", hidden_size=3), 5) == 2 * 5 * (2 * 3 + 1 * 10)


def test_an_import_inside_the_function(tmp_path):
    # The import runs once, when the function is read: the package's
    # __init__ (which would import torch) is never imported.
    write(tmp_path, "megatron/__init__.py", "import torch\n")
    write(tmp_path, "megatron/training/training.py", '''
def num_floating_point_operations(args, batch_size):
    if args.pattern:
        from operator import itemgetter
        from megatron.core.counts import layer_counts as counts, Symbols
        return batch_size * itemgetter("moe")(counts(args.pattern)) * Symbols.MOE_WEIGHT
    return 0
''')
    write(tmp_path, "megatron/core/counts.py", '''
import torch
class Symbols:
    MOE_WEIGHT = 10

def layer_counts(pattern):
    return {"moe": pattern.count("E")}
''')
    function, read, _ = megatron_baseline.load(str(tmp_path))
    assert read == ["pattern"]
    assert function(argparse.Namespace(pattern="-EE"), 3) == 3 * 2 * 10
    assert "megatron" not in sys.modules


def test_a_checkout_without_the_function(tmp_path):
    write(tmp_path, "megatron/training/training.py", "def other():\n    return 1\n")
    try:
        megatron_baseline.load(str(tmp_path))
    except RuntimeError as error:
        assert str(error).endswith("training.py: no num_floating_point_operations")
    else:
        raise AssertionError("no error")


def test_functions_across_checkouts_with_names_not_installed(tmp_path):
    # A framework importing another's package, an annotation from a package
    # not installed here, and an enum the caller must compare with.
    write(tmp_path / "bridge", "megatron/bridge/flops.py", '''
import enum
from megatron.core.shapes import width
from not_installed_anywhere import Config

class Block(enum.Enum):
    DENSE = "dense"
    MOE = "moe"

def flops(cfg: Config, tokens):
    return 6 * tokens * width(cfg.hidden) * (2 if cfg.block == Block.MOE else 1)

def unused():
    return Config.missing
''')
    write(tmp_path / "core", "megatron/core/shapes.py", "def width(h):\n    return h * h\n")
    function, read, namespace = megatron_baseline.load_function(
        [str(tmp_path / "bridge"), str(tmp_path / "core")], "megatron/bridge/flops.py", "flops", also=("unused",))
    assert read == ["block", "hidden"]
    moe = argparse.Namespace(hidden=3, block=namespace["Block"].MOE)
    assert function(moe, 2) == 6 * 2 * 9 * 2
    try:
        namespace["unused"]()
    except RuntimeError as error:
        assert "not available: not_installed_anywhere.Config" in str(error)
    else:
        raise AssertionError("no error")


def test_files_loaded_together_share_what_they_import(tmp_path):
    # MaxText's Gemma 4 small function compares the layer types a helper of
    # another file returns with the enum it imports itself: one loader must
    # read both, or the two enums differ and no comparison holds.
    write(tmp_path, "pkg/types.py", "import enum\nclass Kind(enum.Enum):\n    GLOBAL = 1\n    LOCAL = 2\n")
    write(tmp_path, "pkg/utils.py", '''
from pkg.types import Kind

def count_global(kinds):
    return sum(kind == Kind.GLOBAL for kind in kinds)
''')
    write(tmp_path, "pkg/model.py", '''
import torch  # not installed: must not run
from pkg.types import Kind

def layer_kinds(layers):
    return tuple(Kind.GLOBAL if i % 2 else Kind.LOCAL for i in range(layers))
''')
    utils, model = megatron_baseline.load_functions(
        [str(tmp_path)], [("pkg/utils.py", ["count_global"]), ("pkg/model.py", ["layer_kinds"])])
    assert utils["count_global"](model["layer_kinds"](5)) == 2
    # Loaded apart, the enums are two classes.
    _, _, apart = megatron_baseline.load_function([str(tmp_path)], "pkg/model.py", "layer_kinds")
    assert utils["count_global"](apart["layer_kinds"](5)) == 0
