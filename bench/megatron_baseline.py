"""Megatron-LM's own num_floating_point_operations, for timing beside the
drop-in: read at run time from the source of a Megatron-LM checkout (the
MEGATRON_LM environment variable), never copied into trainflops. The same
reader (load_function) takes other frameworks' FLOPs functions from their
checkouts (validation/framework_functions.py).

Only the function and what it uses are executed: the module-level functions,
classes and constants it names, followed across imports into the files of the
checkouts that define them. An import inside a function from those files
(Megatron-LM's hybrid branch imports its pattern parser so) is resolved the
same way once, when the function is read, and the statement dropped: the
function then skips the per-call import lookup Megatron-LM pays, which can
only make its time shorter. Other imports (operator, typing, ...) are imported
as usual. No torch, no GPU libraries: training.py as a whole imports them, its
accounting does not.
"""
import ast
import builtins
import copy
import importlib
import os
import subprocess

ENTRY = ("megatron/training/training.py", "num_floating_point_operations")


class _Unavailable:
    """A name whose module cannot be imported here: fails when used."""

    def __init__(self, why):
        self.why = why

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"not available: {self.why}")

    def __getattr__(self, attribute):
        raise RuntimeError(f"not available: {self.why} (.{attribute})")


class _Module:
    """One source file: its top-level definitions and imports, executed on demand."""

    def __init__(self, path):
        self.path = path
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
        self.namespace = {"__name__": "megatron_baseline." + path, "__builtins__": builtins}
        self.resolving = set()


class _Loader:
    def __init__(self, roots):
        self.roots, self.modules = roots, {}

    def module(self, path):
        if path not in self.modules:
            self.modules[path] = _Module(path)
        return self.modules[path]

    def source_file(self, dotted):
        """The file of a module in the first root that has it, or None."""
        base = os.path.join(*dotted.split("."))
        for root in self.roots:
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.exists(os.path.join(root, candidate)):
                    return os.path.join(root, candidate)
        return None

    def resolve(self, module, name):
        """Defines `name` in `module.namespace` (if it can) and returns whether it did."""
        if name in module.namespace or name in module.resolving:
            return name in module.namespace
        module.resolving.add(name)
        if name in module.definitions:
            node = module.definitions[name]
            if isinstance(node, ast.FunctionDef):
                node = self.without_inner_imports(module, node)
            for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {name}:
                if not hasattr(builtins, used):
                    self.resolve(module, used)
            try:
                exec(compile(ast.Module([node], type_ignores=[]), module.path, "exec"), module.namespace)
            except Exception as error:  # a definition that needs what is not installed here
                module.namespace[name] = _Unavailable(f"{module.path}: {name}: {error}")
        elif name in module.imports:
            source, attribute = module.imports[name]
            file = self.source_file(source)
            if file is not None and attribute is not None:
                other = self.module(file)
                if self.resolve(other, attribute):
                    module.namespace[name] = other.namespace[attribute]
            elif file is None:
                try:
                    imported = importlib.import_module(source)
                    module.namespace[name] = getattr(imported, attribute) if attribute else imported
                except (ImportError, AttributeError) as error:
                    # Named (an annotation, a branch not taken) but not installed
                    # (or not in this Python's version of the module):
                    # an error only if the function really uses it.
                    module.namespace[name] = _Unavailable(f"{source}.{attribute or ''}: {error}")
        return name in module.namespace

    def without_inner_imports(self, module, function):
        """`function` with each `from <module of the checkouts> import ...` in
        its body replaced by the names it imports, defined in `module`."""
        loader = self

        class Inline(ast.NodeTransformer):
            def visit_ImportFrom(self, node):
                file = loader.source_file(node.module) if node.module and node.level == 0 else None
                if file is None:
                    return node
                other = loader.module(file)
                for alias in node.names:
                    if not loader.resolve(other, alias.name):
                        if loader.source_file(f"{node.module}.{alias.name}") is None:
                            raise RuntimeError(f"{file}: no {alias.name}")
                        # A submodule (MaxText's gemma4_small): not loaded; an
                        # error only if the function really calls into it.
                        module.namespace[alias.asname or alias.name] = _Unavailable(
                            f"{node.module}.{alias.name}: a module the loader does not load")
                        continue
                    bound = alias.asname or alias.name
                    if module.namespace.get(bound, other.namespace[alias.name]) is not other.namespace[alias.name]:
                        raise RuntimeError(f"{module.path}: {function.name} imports {bound}, a name its module defines")
                    module.namespace[bound] = other.namespace[alias.name]
                return ast.copy_location(ast.Pass(), node)

        return ast.fix_missing_locations(Inline().visit(copy.deepcopy(function)))


def load_function(roots, relative, name, also=()):
    """(the function `name` of the file `relative` in roots[0], the names of
    the attributes it reads of its first parameter, the file's namespace: what
    the function sees, e.g. the enum it compares a parameter with). Imports
    are looked up in `roots` in order (directories holding top-level
    packages), then imported as usual. The names in `also` are defined in
    that namespace too."""
    loader = _Loader(roots)
    entry = loader.module(os.path.join(roots[0], relative))
    for wanted in (name, *also):
        if not loader.resolve(entry, wanted):
            raise RuntimeError(f"{entry.path}: no {wanted}")
    node = entry.definitions[name]
    first = node.args.args[0].arg
    read = sorted({n.attr for n in ast.walk(node)
                   if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == first})
    return entry.namespace[name], read, entry.namespace


def load_functions(roots, wanted):
    """For each (relative, names) of `wanted`, the namespace of that file with
    those names defined, as load_function defines them; one loader reads them
    all, so the files share the modules they import (an enum that one file's
    function compares with what another file's function returns)."""
    loader = _Loader(roots)
    namespaces = []
    for relative, names in wanted:
        entry = loader.module(os.path.join(roots[0], relative))
        for name in names:
            if not loader.resolve(entry, name):
                raise RuntimeError(f"{entry.path}: no {name}")
        namespaces.append(entry.namespace)
    return namespaces


def describe_checkout(checkout, project):
    """"Megatron-LM d98e8a6 (/path)": the commit when it is a git tree."""
    try:
        commit = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "not a git checkout"
    return f"{project} {commit} ({checkout})"


def load(checkout):
    """(the function, the names of the args attributes it reads, a description
    of the checkout: its commit when it is a git tree). Megatron-LM's args
    namespace has every argument, None when unset: give the function a
    namespace with each of those names."""
    function, read, _ = load_function([checkout], ENTRY[0], ENTRY[1])
    return function, read, describe_checkout(checkout, "Megatron-LM")
