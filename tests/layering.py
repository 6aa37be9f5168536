"""Checks that the library's layers depend one way: every file of src/<layer>/
includes only headers of its own layer and of the layers below it. A public
header (include/trainflops/X.h) belongs to the layer whose folder holds X.cc;
one without a .cc is named in HEADER_ONLY.

Usage: layering.py SOURCE_DIR"""
import re
import sys
from pathlib import Path

BELOW = {
    "base": {"base"},
    "model": {"base", "model"},
    "accounting": {"base", "model", "accounting"},
    "inputs": {"base", "model", "inputs"},
    "report": {"base", "model", "accounting", "inputs", "report"},
}
HEADER_ONLY = {"mode": "accounting"}
INCLUDE = re.compile(r'^#include "(trainflops|base|model|accounting|inputs|report)/(\w+)\.h"', re.M)


def main():
    root = Path(sys.argv[1])
    public = dict(HEADER_ONLY)
    for header in (root / "include" / "trainflops").glob("*.h"):
        homes = [source.parent.name for source in (root / "src").glob(f"*/{header.stem}.cc")]
        if header.stem not in public:
            if len(homes) != 1:
                sys.exit(f"include/trainflops/{header.name}: no single src/<layer>/{header.stem}.cc says its layer")
            public[header.stem] = homes[0]
    problems = []
    for layer, allowed in BELOW.items():
        for source in sorted((root / "src" / layer).iterdir()):
            if source.suffix not in (".cc", ".h") or source.stem.endswith("_test"):
                continue
            for folder, name in INCLUDE.findall(source.read_text()):
                used = public[name] if folder == "trainflops" else folder
                if used not in allowed:
                    problems.append(f"src/{layer}/{source.name} includes {folder}/{name}.h of layer {used}")
    if problems:
        sys.exit("layers depend one way (" + ", ".join(f"{k} on {sorted(v)}" for k, v in BELOW.items()) + "):\n" +
                 "\n".join(problems))
    print(f"{len(public)} public headers placed; every src/ layer includes only its own and lower layers")


if __name__ == "__main__":
    main()
