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
import tokenize
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from keras_estimator.seam.legacy_paths import ESTIMATOR_MODULE_ROOTS

TABLE_PATH = os.path.join(os.path.dirname(__file__), "support_table.json")


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
    from keras_estimator.dropin.install import legacy_module_suffixes

    return {part for suffix in legacy_module_suffixes() for part in suffix.split(".") if part}


def canonical(dotted: str) -> str | None:
    """`tensorflow.compat.v1.estimator.X` -> `tf.estimator.X`; None when not TensorFlow.

    Paths into the legacy estimator modules (`legacy_paths.ESTIMATOR_MODULE_ROOTS`)
    name their object by its tf.estimator name (`...canned.dnn.DNNClassifier` ->
    `tf.estimator.DNNClassifier`); an import of a module there is `tensorflow_estimator`.
    """
    for root in ESTIMATOR_MODULE_ROOTS:
        if dotted == root or dotted.startswith(root + "."):
            parts = dotted[len(root) + 1 :].split(".") if dotted != root else []
            modules = _legacy_module_names()
            path = []
            while parts and parts[0] in modules:  # the module path; then the object chain
                path.append(parts.pop(0))
            if not parts:
                return "tensorflow_estimator"
            section = ".export" if "export" in path else ".tpu" if "tpu" in path else ""
            return f"tf.estimator{section}." + ".".join(parts)
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


def _notebook_cells(path: str) -> list[tuple[int, str]]:
    """(cell number, source) of the code cells; magics and shell escapes blanked."""
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for index, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        if text.lstrip().startswith("%%"):  # a cell magic: the whole cell is not Python
            text = "\n" * text.count("\n")
        lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in text.split("\n")]
        cells.append((index, "\n".join(lines)))
    return cells


def _scan_notebook(path: str) -> list[Finding]:
    cells = _notebook_cells(path)
    program, origin = [], []
    for index, source in cells:
        for number, line in enumerate(source.split("\n"), start=1):
            program.append(line)
            origin.append((index, number))
    findings = scan_source("\n".join(program), path)
    if any(f.status == "error" for f in findings):
        # One cell that does not parse: scan the cells one by one (the imports of earlier
        # cells still apply, as they share the kernel's namespace).
        findings, prelude = [], ""
        for index, source in cells:
            for finding in scan_source(prelude + source, path, index):
                finding.line -= prelude.count("\n")
                findings.append(finding)
            if not any(f.status == "error" for f in scan_source(source, path)):
                prelude += source + "\n"
        return findings
    for finding in findings:
        finding.cell, finding.line = origin[max(finding.line - 1, 0)] if origin else (1, 1)
    return findings


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
            raise FileNotFoundError(
                "No such file or directory. Fix: pass existing .py / .ipynb files or "
                f"directories to scan. Received: path={path!r}"
            )
        try:
            if path.endswith(".ipynb"):
                findings += _scan_notebook(path)
            else:
                with tokenize.open(path) as f:  # honours a `# -*- coding: ... -*-` line
                    findings += scan_source(f.read(), path)
        except (UnicodeDecodeError, SyntaxError, ValueError, KeyError, TypeError) as exc:
            note = f"could not read: {type(exc).__name__}: {exc}"
            findings.append(Finding(path, 0, "<unreadable>", "error", note=note))
    return findings
