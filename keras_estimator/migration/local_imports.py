"""The files of a program's own tree that a module's imports load, found without importing.

`import modeling`, `from trainer import model`, `from . import model`, `from ..util import
io`: each names modules that Python finds beside the file, in a package above it, or in
the folder the program is started from (`python -m trainer.task`: the current directory).
Used by `keras-estimator run` (TF1 detection over the script's own modules) and by
`keras-estimator check` (the modules a checked file imports are checked too).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable


def imported_modules(nodes: Iterable[ast.AST]) -> list[tuple[int, str]]:
    """(level, dotted) of each import: `from . import x` -> (1, "x") and (1, ""), `import a.b`
    -> (0, "a.b"), `from a import b` -> (0, "a") and (0, "a.b")."""
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found.append((node.level, base))
            found += [(node.level, f"{base}.{a.name}".strip(".")) for a in node.names]
    return [(level, name) for level, name in found if name or level]


def module_files(path: str, modules: list[tuple[int, str]], roots: list[str]) -> list[str]:
    """The existing files `modules` (as `imported_modules` gives them, imported by `path`)
    load: absolute imports from `roots`, relative ones from the package folder their level
    names; `import a.b` loads `a/__init__.py` too."""
    files = []
    for level, name in modules:
        if level:
            folder = os.path.dirname(path)
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            bases = [folder]
        else:
            bases = roots
        if not name:
            continue
        parts = name.split(".")
        for base in bases:
            for depth in range(1, len(parts) + 1):
                module = os.path.join(base, *parts[:depth])
                for candidate in (module + ".py", os.path.join(module, "__init__.py")):
                    if os.path.isfile(candidate) and candidate not in files:
                        files.append(candidate)
    return files


def package_inits(module_file: str, root: str) -> list[str]:
    """The `__init__.py` files `python -m a.b.c` runs before `a/b/c.py` (from `root`)."""
    inits, folder = [], os.path.dirname(os.path.abspath(module_file))
    root = os.path.abspath(root)
    while folder.startswith(root + os.sep):
        init = os.path.join(folder, "__init__.py")
        if os.path.isfile(init) and init != os.path.abspath(module_file):
            inits.append(init)
        folder = os.path.dirname(folder)
    return inits


def package_root(path: str) -> str:
    """The folder above the outermost package `path` is in (its own folder when it is in
    none): where `python -m pkg.mod` is started from."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder
