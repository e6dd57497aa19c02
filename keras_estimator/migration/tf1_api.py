"""Which TensorFlow API a Python file imports, and the TF1-only names it uses on TF 2's one.

`import tensorflow.compat.v1 as tf` is the TF1 API: `tf.logging`, `tf.Session`,
`tf.train.Optimizer` exist there. `import tensorflow as tf` (or `import tensorflow`,
`from tensorflow import ...`) is TensorFlow 2's API, which lacks them: a TF1 script written
for `tensorflow` 1.x fails on its first `tf.logging.set_verbosity`. This module finds those
names statically (from `tf1_only_names.json`, written from the installed TensorFlow by
tests/fixtures/make_tf1_only_names.py); it imports no TensorFlow and runs nothing.

Bindings are read flow-insensitively: a name ever bound to `tensorflow.compat.v1` (the
`try: import tensorflow.compat.v1 as tf / except ImportError: import tensorflow as tf`
idiom, or `tf = tf.compat.v1`) is the TF1 API everywhere in the file.

Example:

    >>> uses_tf1_api("import tensorflow as tf\\ntf.logging.set_verbosity(tf.logging.INFO)\\n")
    True
    >>> uses_tf1_api("import tensorflow.compat.v1 as tf\\ntf.logging.info('hi')\\n")
    False
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass, field
from functools import cache

NAMES_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf1_only_names.json")

V1_ROOT = "tensorflow.compat.v1"
V2_EXPLICIT_ROOT = "tensorflow.compat.v2"
_NAMESPACE_ROOTS = ("tensorflow", V1_ROOT, V2_EXPLICIT_ROOT)
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


@dataclass
class TensorFlowUse:
    """One reference to a TensorFlow name: an attribute chain, or an import of a name.

    `namespace` is `"v1"` (through `tensorflow.compat.v1`), `"v2"` (TF 2's `tensorflow`,
    which `keras-estimator run`'s TF1 mode turns into compat.v1) or `"compat.v2"`
    (`tensorflow.compat.v2`, TF 2 in every mode). `path` is the name below that namespace
    (`"logging.info"`); `tf1_only` the TF1-only prefix of `path` (`"logging"`) when the
    namespace is a TF 2 one and the name exists only in compat.v1, else None.
    """

    line: int
    col: int
    dotted: str  # the full import path: "tensorflow.logging.info"
    namespace: str  # "v1" | "v2" | "compat.v2" | "" (not below a namespace: tensorflow.python...)
    path: str
    tf1_only: str | None = None
    node: ast.AST | None = field(default=None, repr=False, compare=False)


@cache
def tf1_only_names() -> frozenset[str]:
    """Paths below `tf` that exist in `tf.compat.v1` and not in TF 2's `tensorflow`."""
    with open(NAMES_PATH, encoding="utf-8") as f:
        return frozenset(json.load(f)["names"])


def tf1_only_prefix(path: str) -> str | None:
    """The TF1-only prefix of `path` (a name below `tf`), or None.

    `"logging.info"` -> `"logging"`; `"train.Optimizer.minimize"` -> `"train.Optimizer"`;
    `"train.Checkpoint"` -> None (TF 2 has it).
    """
    names = tf1_only_names()
    parts = path.split(".") if path else []
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if prefix in names:
            return prefix
    return None


def split_namespace(dotted: str) -> tuple[str, str] | None:
    """`"tensorflow.compat.v1.logging"` -> `("v1", "logging")`; None when not TensorFlow."""
    for root, namespace in ((V1_ROOT, "v1"), (V2_EXPLICIT_ROOT, "compat.v2")):
        if dotted == root:
            return namespace, ""
        if dotted.startswith(root + "."):
            return namespace, dotted[len(root) + 1 :]
    if dotted == "tensorflow":
        return "v2", ""
    if dotted.startswith("tensorflow."):
        rest = dotted[len("tensorflow.") :]
        if rest in ("compat", "python") or rest.startswith(("compat.", "python.")):
            return "", rest  # tensorflow.compat (the package) / TensorFlow's internals
        return "v2", rest
    return None


def parse(source: str, filename: str = "<source>") -> ast.Module:
    """`ast.parse`, for `source` that is not trusted: raises only SyntaxError or ValueError.

    A RecursionError, MemoryError or OverflowError of the parser (a 200,000-term
    expression, thousands of nested brackets) is a ValueError saying so.
    """
    try:
        return ast.parse(source, filename=filename)
    except (SyntaxError, ValueError):
        raise
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise ValueError(
            f"the parser gave up ({type(exc).__name__}): nesting or length beyond what "
            "Python parses"
        ) from None


def _chain(node: ast.Attribute) -> tuple[ast.AST, list[str], list[ast.Attribute]]:
    """(root, attribute names from the root outwards, the inner Attribute nodes)."""
    names, inner = [], []
    current: ast.AST = node
    while isinstance(current, ast.Attribute):
        names.append(current.attr)
        if current is not node:
            inner.append(current)
        current = current.value
    names.reverse()
    return current, names, inner


def import_bindings(tree: ast.AST, nodes: list[ast.AST] | None = None) -> dict[str, str]:
    """Local name -> the dotted path it is bound to by imports (and `tf = tf.compat.v1`).

    A name bound to `tensorflow.compat.v1` anywhere in the file keeps that binding; other
    names keep their first binding. `nodes`: `list(ast.walk(tree))`, when already made.
    """
    bindings: dict[str, list[str]] = {}

    def bind(name: str, dotted: str) -> bool:
        known = bindings.setdefault(name, [])
        if dotted in known:
            return False
        known.append(dotted)
        return True

    assignments = []
    for node in ast.walk(tree) if nodes is None else nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bind(alias.asname, alias.name)
                else:
                    top = alias.name.split(".")[0]
                    bind(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bind(alias.asname or alias.name, f"{node.module}.{alias.name}")
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Attribute | ast.Name)
        ):
            assignments.append(node)
    # `tf = tf.compat.v1`, `tf1 = tensorflow.compat.v1`: a namespace under another name.
    for _ in range(3):
        changed = False
        for node in assignments:
            resolved = resolve(node.value, _effective(bindings))
            if resolved in _NAMESPACE_ROOTS:
                changed |= bind(node.targets[0].id, resolved)  # type: ignore[attr-defined]
        if not changed:
            break
    return _effective(bindings)


def _effective(bindings: dict[str, list[str]]) -> dict[str, str]:
    effective = {}
    for name, paths in bindings.items():
        v1 = [p for p in paths if p == V1_ROOT or p.startswith(V1_ROOT + ".")]
        effective[name] = (v1 or paths)[0]
    return effective


def resolve(node: ast.AST, bindings: dict[str, str]) -> str | None:
    """The dotted path a name or attribute chain refers to through `bindings` (imports):
    `np.load` -> "numpy.load"; None when its root is not bound by an import."""
    if isinstance(node, ast.Name):
        return bindings.get(node.id)
    if isinstance(node, ast.Attribute):
        root, names, _ = _chain(node)
        if isinstance(root, ast.Name) and root.id in bindings:
            return ".".join([bindings[root.id], *names])
    return None


def _use(node: ast.AST, dotted: str, imported: str, roots: tuple[str, ...]) -> TensorFlowUse | None:
    """The use of `dotted`, reached through the import of `imported`."""
    split = split_namespace(dotted)
    if split is None:
        if dotted.split(".")[0] not in roots:
            return None
        split = ("", dotted)
    namespace, path = split
    tf1_only = tf1_only_prefix(path) if namespace in ("v2", "compat.v2") else None
    if tf1_only == "contrib" and imported.startswith("tensorflow.contrib"):
        tf1_only = None  # `import tensorflow.contrib.x`: install() provides the module itself
    line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
    return TensorFlowUse(line, col, dotted, namespace, path, tf1_only, node)


def tensorflow_uses(
    tree: ast.AST,
    bindings: dict[str, str] | None = None,
    roots: tuple[str, ...] = ("tensorflow",),
    nodes: list[ast.AST] | None = None,
) -> list[TensorFlowUse]:
    """Every TensorFlow name the file refers to, in source order.

    An attribute chain (`tf.train.AdamOptimizer`) is one use, as a whole; `from tensorflow
    import logging` is a use of `logging` at the import. Names below other top-level
    packages in `roots` (`tensorflow_estimator`) are uses with namespace `""`. Walks the
    tree without recursion (or goes through `nodes`, `list(ast.walk(tree))`, when given).
    """
    nodes = list(ast.walk(tree)) if nodes is None else nodes
    bindings = import_bindings(tree, nodes) if bindings is None else bindings
    uses: list[TensorFlowUse] = []
    inner: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    dotted = f"{node.module}.{alias.name}"
                    use = _use(node, dotted, dotted, roots)
                    if use is not None and use.path:
                        uses.append(use)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                use = _use(node, alias.name, alias.name, roots)
                if use is not None and use.path:
                    uses.append(use)
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            root, names, inner_nodes = _chain(node)
            inner.update(id(n) for n in inner_nodes)
            if isinstance(root, ast.Name) and root.id in bindings:
                imported = bindings[root.id]
                use = _use(node, ".".join([imported, *names]), imported, roots)
                if use is not None:
                    uses.append(use)
    uses.sort(key=lambda u: (u.line, u.col))
    return uses


def tf1_only_uses(source: str) -> list[TensorFlowUse]:
    """The uses of TF1-only names on TF 2's `tensorflow` (or compat.v2) in `source`.

    Source that does not parse has none (Python's own error comes first when it runs).
    """
    try:
        tree = parse(source)
    except _PARSE_ERRORS:
        return []
    return [use for use in tensorflow_uses(tree) if use.tf1_only]


def uses_tf1_api(source: str) -> bool:
    """True when `source` imports TF 2's `tensorflow` and uses names only TF1 had.

    `import tensorflow as tf` / `import tensorflow` / `from tensorflow import ...` followed
    by `tf.logging`, `tf.flags`, `tf.app`, `tf.gfile`, `tf.train.Optimizer`,
    `tf.get_variable`, `tf.layers`, `tf.contrib`, `tf.Session`, `tf.placeholder`, ...:
    such a file was written for TensorFlow 1.x and runs only with `tensorflow` read as
    `tensorflow.compat.v1` (`keras-estimator run`'s TF1 mode). A file on
    `tensorflow.compat.v1`, one using only TF 2 names, or one that does not parse: False.

    Example:

        >>> uses_tf1_api("import tensorflow as tf\\nopt = tf.train.AdamOptimizer(0.1)\\n")
        True
        >>> uses_tf1_api("import tensorflow as tf\\nopt = tf.keras.optimizers.Adam()\\n")
        False
    """
    return any(use.namespace == "v2" for use in tf1_only_uses(source))
