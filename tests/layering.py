"""Checks that the library's layers depend one way, through the includes:
  - every file of src/<layer>/ includes only headers of its own layer and of
    the layers below it;
  - a public header (include/trainflops/X.h) belongs to the layer whose folder
    holds X.cc (one without a .cc is named in HEADER_ONLY), includes only
    public headers, and only of its own and lower layers; since every file is
    checked, so is everything a file reaches through public headers;
  - the front ends (python/, tools/) include public headers and their own
    files only; an internal header they still include is listed in
    FRONT_END_EXCEPTIONS with the reason, and an exception that no longer
    holds must be removed from the list, so that it only shrinks.

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
HEADER_ONLY = {}
FRONT_ENDS = ("python", "tools")
# (front-end file, internal header): why it is still included.
FRONT_END_EXCEPTIONS = {
    ("python/model_binding.cc", "base/input_file.h"):
        "reads a file of Megatron-LM arguments or a trainflops config to tell them apart, before resolve_model",
    ("python/convert.cc", "base/json_text.h"):
        "reads JSON text with the library's limits and messages, which no public header offers",
    ("python/model_binding.cc", "base/json_text.h"):
        "tells a JSON file of Megatron-LM arguments from a trainflops config before resolve_model reads it",
    ("python/megatron_binding.cc", "accounting/counter_internals.h"):
        "the drop-in counts Megatron-LM's aggregates (CounterInternals::megatron_total), which the public "
        "FlopsCounter does not offer",
    ("python/model_binding.cc", "inputs/megatron_args_json.h"):
        "turns Python values that are not plain (NumPy scalars, tensors) into Megatron-LM arguments through "
        "their JSON form, before resolve_model builds the model from them",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LIBRARY_HEADER = re.compile(r"(trainflops|base|model|accounting|inputs|report)/(\w+)\.h")


def includes(path):
    return INCLUDE.findall(path.read_text())


def check(root, exceptions):
    """The problems of the tree at `root`, given the front ends' `exceptions`."""
    problems = []
    for layer, allowed in BELOW.items():
        for lower in allowed:
            if not BELOW[lower] <= allowed:
                problems.append(f"BELOW: {layer} may use {lower}, so it must also allow {sorted(BELOW[lower] - allowed)}")

    public = dict(HEADER_ONLY)
    headers = sorted((root / "include" / "trainflops").glob("*.h"))
    for header in headers:
        homes = [source.parent.name for source in (root / "src").glob(f"*/{header.stem}.cc")]
        if header.stem not in public:
            if len(homes) != 1:
                problems.append(f"include/trainflops/{header.name}: no single src/<layer>/{header.stem}.cc says its "
                                "layer")
                continue
            public[header.stem] = homes[0]

    def layer_of(included):
        """The layer of a library header and whether it is public; None for other files."""
        match = LIBRARY_HEADER.fullmatch(included)
        if not match:
            return None
        folder, name = match.groups()
        if folder == "trainflops":
            return public.get(name), True
        return folder, False

    # Every file of a layer, public headers among them.
    files = [(f"include/trainflops/{h.name}", h, public[h.stem], True) for h in headers if h.stem in public]
    for layer in BELOW:
        folder = root / "src" / layer
        for source in sorted(folder.iterdir()) if folder.is_dir() else []:
            if source.suffix in (".cc", ".h") and not source.stem.endswith("_test"):
                files.append((f"src/{layer}/{source.name}", source, layer, False))
    for name, path, layer, is_public in files:
        for included in includes(path):
            placed = layer_of(included)
            if placed is None:
                if is_public:
                    problems.append(f"{name} includes \"{included}\": a public header includes public headers only")
                continue
            used, used_public = placed
            if used is None:
                problems.append(f"{name} includes {included}, which is not a public header")
            elif is_public and not used_public:
                problems.append(f"{name} includes internal {included}: a public header includes public headers only")
            elif used not in BELOW[layer]:
                problems.append(f"{name} (layer {layer}) includes {included} of layer {used}")

    used_exceptions = set()
    for front_end in FRONT_ENDS:
        for path in sorted((root / front_end).glob("*")):
            if path.suffix not in (".cc", ".h"):
                continue
            name = f"{front_end}/{path.name}"
            for included in includes(path):
                placed = layer_of(included)
                if placed is None:
                    if "/" in included:
                        problems.append(f"{name} includes \"{included}\", neither a public header nor its own file")
                    continue
                used, used_public = placed
                if used is None:
                    problems.append(f"{name} includes {included}, which is not a public header")
                elif not used_public:
                    if (name, included) in exceptions:
                        used_exceptions.add((name, included))
                    else:
                        problems.append(f"{name} includes internal {included}: front ends use public headers only "
                                        "(or list it in FRONT_END_EXCEPTIONS with the reason)")
    for name, included in sorted(set(exceptions) - used_exceptions):
        problems.append(f"FRONT_END_EXCEPTIONS lists {name} including {included}, which it no longer does: "
                        "remove the exception")
    return problems


def main():
    problems = check(Path(sys.argv[1]), FRONT_END_EXCEPTIONS)
    if problems:
        sys.exit("layers depend one way (" + ", ".join(f"{k} on {sorted(v)}" for k, v in BELOW.items()) + "):\n" +
                 "\n".join(problems))
    print("every layer and public header includes only its own and lower layers; front ends include public headers "
          f"and {len(FRONT_END_EXCEPTIONS)} listed internal ones")


if __name__ == "__main__":
    main()
