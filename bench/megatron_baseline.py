"""Megatron-LM's own num_floating_point_operations, for timing beside the
drop-in: read at run time from the source of a Megatron-LM checkout (the
MEGATRON_LM environment variable), never copied into trainflops.

Only the function and what it uses are executed: the module-level functions,
classes and constants it names, followed across `from megatron... import`
lines into the files that define them. Other imports (operator, typing, ...)
are imported as usual. No torch, no GPU libraries: training.py as a whole
imports them, its accounting does not.
"""
import ast
import builtins
import importlib
import os
import subprocess

ENTRY = ("megatron/training/training.py", "num_floating_point_operations")


class _Module:
    """One source file: its top-level definitions and imports, executed on demand."""

    def __init__(self, checkout, relative):
        self.checkout, self.path = checkout, os.path.join(checkout, relative)
        with open(self.path) as source:
            tree = ast.parse(source.read(), self.path)
        self.definitions, self.imports = {}, {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.definitions[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.definitions[target.id] = node
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
        self.namespace = {"__name__": "megatron_baseline." + relative, "__builtins__": builtins}
        self.resolving = set()


class _Loader:
    def __init__(self, checkout):
        self.checkout, self.modules = checkout, {}

    def module(self, relative):
        if relative not in self.modules:
            self.modules[relative] = _Module(self.checkout, relative)
        return self.modules[relative]

    def source_file(self, dotted):
        """The checkout's file for a megatron module, or None."""
        base = os.path.join(*dotted.split("."))
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.exists(os.path.join(self.checkout, candidate)):
                return candidate
        return None

    def resolve(self, module, name):
        """Defines `name` in `module.namespace` (if it can) and returns whether it did."""
        if name in module.namespace or name in module.resolving:
            return name in module.namespace
        module.resolving.add(name)
        if name in module.definitions:
            node = module.definitions[name]
            for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {name}:
                if not hasattr(builtins, used):
                    self.resolve(module, used)
            exec(compile(ast.Module([node], type_ignores=[]), module.path, "exec"), module.namespace)
        elif name in module.imports:
            source, attribute = module.imports[name]
            file = self.source_file(source) if source.split(".")[0] == "megatron" else None
            if file is not None and attribute is not None:
                other = self.module(file)
                if self.resolve(other, attribute):
                    module.namespace[name] = other.namespace[attribute]
            elif file is None:
                imported = importlib.import_module(source)
                module.namespace[name] = getattr(imported, attribute) if attribute else imported
        return name in module.namespace


def load(checkout):
    """(the function, the names of the args attributes it reads, a description
    of the checkout: its commit when it is a git tree). Megatron-LM's args
    namespace has every argument, None when unset: give the function a
    namespace with each of those names."""
    loader = _Loader(checkout)
    entry = loader.module(ENTRY[0])
    if not loader.resolve(entry, ENTRY[1]):
        raise RuntimeError(f"{entry.path}: no {ENTRY[1]}")
    read = sorted({node.attr for node in ast.walk(entry.definitions[ENTRY[1]])
                   if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args"})
    try:
        commit = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "not a git checkout"
    return entry.namespace[ENTRY[1]], read, f"Megatron-LM {commit} ({checkout})"
