"""Static scan of Python files and notebooks for estimator / TF1 / tf.contrib API uses.

Imports are followed (`import tensorflow.compat.v1 as tf`, `from tensorflow.contrib import
tpu`, `import tensorflow_estimator`, ...) so that each attribute chain in the code gets a
canonical name (`tf.estimator.DNNClassifier`, `tf.contrib.layers.layer_norm`), which is
looked up in the support table (`support_table.json`). Nothing is imported or run.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

TABLE_PATH = os.path.join(os.path.dirname(__file__), "support_table.json")
_ESTIMATOR_ROOTS = ("tensorflow_estimator.python.estimator", "tensorflow.python.estimator")


@dataclass
class Finding:
    """One use of a legacy API: where, what, and what keras_estimator makes of it."""

    path: str
    line: int
    api: str
    status: str  # supported | caveat | unsupported | error
    note: str = ""
    replacement: str = ""
    cell: int | None = None  # notebook cell (1-based), with `line` inside the cell

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None)}


@cache
def support_table() -> list[dict[str, Any]]:
    with open(TABLE_PATH, encoding="utf-8") as f:
        return json.load(f)["entries"]


def _legacy_module_names() -> set[str]:
    from keras_estimator.compat.install import legacy_module_suffixes

    return {part for suffix in legacy_module_suffixes() for part in suffix.split(".") if part}


def canonical(dotted: str) -> str | None:
    """`tensorflow.compat.v1.estimator.X` -> `tf.estimator.X`; None when not TensorFlow.

    Paths into `tensorflow_estimator.python.estimator` (or `tensorflow.python.estimator`)
    name their object by its tf.estimator name (`...canned.dnn.DNNClassifier` ->
    `tf.estimator.DNNClassifier`); an import of a module there is `tensorflow_estimator`.
    """
    for root in _ESTIMATOR_ROOTS:
        if dotted == root or dotted.startswith(root + "."):
            parts = dotted[len(root) + 1 :].split(".") if dotted != root else []
            modules = _legacy_module_names()
            if not parts or parts[-1] in modules:
                return "tensorflow_estimator"
            section = ".export" if "export" in parts[:-1] else ".tpu" if "tpu" in parts[:-1] else ""
            return f"tf.estimator{section}.{parts[-1]}"
    if dotted == "tensorflow_estimator" or dotted.startswith("tensorflow_estimator.python"):
        return "tensorflow_estimator"
    if dotted.startswith("tensorflow_estimator.estimator"):
        return "tf.estimator" + dotted[len("tensorflow_estimator.estimator") :]
    for prefix in ("tensorflow.compat.v1", "tensorflow.compat.v2", "tensorflow"):
        if dotted == prefix:
            return "tf"
        if dotted.startswith(prefix + "."):
            return "tf." + dotted[len(prefix) + 1 :]
    return None


def lookup(api: str) -> dict[str, Any] | None:
    """The most specific support-table entry for `api`, or None when none applies."""
    table = support_table()
    exact = {entry["api"]: entry for entry in table if "*" not in entry["api"]}
    parts = api.split(".")
    for end in range(len(parts), 1, -1):  # tf.estimator.ModeKeys.TRAIN -> ...ModeKeys
        entry = exact.get(".".join(parts[:end]))
        if entry is not None:
            return entry
    if api in exact:
        return exact[api]
    matches = [e for e in table if "*" in e["api"] and fnmatch.fnmatchcase(api, e["api"])]
    if not matches:
        return None
    return max(matches, key=lambda e: len(e["api"].replace("*", "")))


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> dotted module/object path
        self.uses: list[tuple[int, str]] = []

    # -- imports ---------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:  # noqa: N802
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.aliases[top] = top
            self._report_import(node.lineno, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802
        if not node.module or node.level:
            return
        for alias in node.names:
            dotted = f"{node.module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = dotted
            self._report_import(node.lineno, dotted)

    def _report_import(self, line: int, dotted: str) -> None:
        name = canonical(dotted)
        if name is None:
            return
        if name == "tensorflow_estimator" or name.startswith(("tf.estimator.", "tf.contrib")):
            self.uses.append((line, name))

    # -- uses ------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        chain = []
        current: ast.AST = node
        while isinstance(current, ast.Attribute):
            chain.append(current.attr)
            current = current.value
        if isinstance(current, ast.Name) and current.id in self.aliases:
            dotted = ".".join([self.aliases[current.id], *reversed(chain)])
            name = canonical(dotted)
            if name is not None and name != "tf":
                self.uses.append((node.lineno, name))
            return  # the chain is reported once, as a whole
        self.generic_visit(node)


def _notebook_source(path: str) -> tuple[str, list[tuple[int, int]]]:
    """The code cells as one program (they share one namespace), and for each of its
    lines the (cell number, line in cell) it came from."""
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    program, origin = [], []
    for index, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        for number, line in enumerate(text.split("\n"), start=1):
            # IPython magics and shell escapes are not Python: blank them.
            program.append("" if line.lstrip().startswith(("%", "!")) else line)
            origin.append((index, number))
    return "\n".join(program), origin


def scan_source(source: str, path: str, cell: int | None = None) -> list[Finding]:
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return [Finding(path, exc.lineno or 0, "<syntax>", "error",
                        note=f"could not parse: {exc.msg}", cell=cell)]  # fmt: skip
    visitor = _Visitor()
    visitor.visit(tree)
    findings = []
    for line, api in visitor.uses:
        entry = lookup(api)
        if entry is None:
            continue  # a TensorFlow API outside the estimator / TF1 training surface
        findings.append(Finding(path, line, api, entry["status"], entry.get("note", ""),
                                entry.get("replacement", ""), cell))  # fmt: skip
    return findings


def _files(paths: list[str]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                for name in sorted(names):
                    if name.endswith((".py", ".ipynb")):
                        yield os.path.join(root, name)
        else:
            yield path


def scan_paths(paths: list[str]) -> list[Finding]:
    """Findings for every .py / .ipynb file in `paths` (files or directories)."""
    findings: list[Finding] = []
    for path in _files(paths):
        if not os.path.exists(path):
            raise FileNotFoundError(f"No such file or directory: {path!r}")
        if path.endswith(".ipynb"):
            source, origin = _notebook_source(path)
            for finding in scan_source(source, path):
                finding.cell, finding.line = origin[max(finding.line - 1, 0)] if origin else (1, 1)
                findings.append(finding)
        else:
            with open(path, encoding="utf-8") as f:
                findings += scan_source(f.read(), path)
    return findings
