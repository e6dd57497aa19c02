"""Static scan of Python files and notebooks for estimator / TF1 / tf.contrib API uses.

Per file, the imports say which TensorFlow API each name is (`import tensorflow.compat.v1
as tf`: TF1's; `import tensorflow as tf`: TF 2's, where `tf.logging` or
`tf.train.Optimizer` do not exist; see `tf1_api.py`). Each attribute chain gets a canonical
name (`tf.estimator.DNNClassifier`, `tf.contrib.layers.layer_norm`) looked up in the support
table (`support_table.json`: what `install()` and `keras-estimator run` provide). Also
flagged: TF1-only names on a TF 2 import (they run only in `run`'s TF1 mode), `.value` of a
TF 2 shape dimension, what needs the network, Cloud Storage or a TPU (`data_access.py`),
weight files Keras 3 refuses (`keras_saving.py`); `tf.Session` / `tf.placeholder` inside
`with tf.Graph().as_default():` are TensorFlow's own graph mode, which runs, and a
placeholder in an input_fn runs in the input_fn's own graph (`graph_contexts.py`). Nothing
is imported or run; a file that cannot be read is a finding of its own and the scan goes on.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from typing import Any

from keras_estimator.migration import (
    data_access,
    graph_contexts,
    keras_saving,
    local_imports,
    optional_packages,
    sources,
    tf1_api,
    v1_namespace,
)
from keras_estimator.migration.uncalled import (
    program_uncalled_spans,
    runs_as_a_program,
    uncalled_functions,
)
from keras_estimator.seam.legacy_paths import ESTIMATOR_MODULE_ROOTS

MAX_FOLLOWED_FILES = 200  # a program's own modules checked through its imports, at most
TABLE_PATH = os.path.join(os.path.dirname(__file__), "support_table.json")

# Finding statuses, from fine to blocking. `tf1_mode`: a TF1-only name on TF 2's `tensorflow`.
STATUSES = ("supported", "caveat", "tf1_mode", "unsupported", "error", "skipped")
_SEVERITY = {"supported": 0, "caveat": 1, "tf1_mode": 2, "unsupported": 3, "error": 4}
# What TensorFlow itself runs in a `with tf.Graph().as_default():` block (TF1 serving).
_GRAPH_MODE_APIS = (
    "tf.Session",
    "tf.InteractiveSession",
    "tf.placeholder",
    "tf.placeholder_with_default",
    "tf.sparse_placeholder",
    "tf.train.Saver",
)
_SESSIONS = ("Session", "InteractiveSession")
GRAPH_BLOCK_NOTE = "inside `with tf.Graph().as_default():`: TensorFlow's own TF1 graph mode"
SESSION_ON_A_GRAPH_NOTE = (
    "a session on a graph of its own (graph=): TensorFlow's own TF1 graph mode"
)
_VERDICT_RANK = {"no_tensorflow": 0, "ok": 0, "skipped": 1, "caveats": 1, "tf1_mode": 2,
                 "blocked": 3, "unreadable": 4}  # fmt: skip
_GRAPH_ONLY_APIS = ("tf.gradients", "tf.placeholder", "tf.sparse_placeholder",
                    "tf.placeholder_with_default")  # fmt: skip
TEST_SESSION_NOTE = (
    "a TF1 test session: in TF 2 its block runs eagerly, where TF1 test code fails "
    "(tf.gradients, Tensor.name, placeholders; 4 of 4 such tests in BERT and ALBERT)"
)
TEST_SESSION_FIX = "the test body in `with tf.Graph().as_default():`"
_PLACEHOLDERS = ("tf.placeholder", "tf.sparse_placeholder", "tf.placeholder_with_default")
EAGER_PLACEHOLDER_NOTE = (
    "outside a graph: TensorFlow 2 runs this eagerly, also under `keras-estimator run`, where "
    "tf.placeholder() is not compatible with eager execution"
)
EAGER_PLACEHOLDER_FIX = (
    "an input_fn returning a tf.data.Dataset (numpy_input_fn for in-memory arrays); "
    "placeholders only in a serving_input_receiver_fn or a `with tf.Graph().as_default():` block"
)
# tf.placeholder in an input_fn: TensorFlow refuses it eagerly, and the Estimator then calls
# the input_fn again in a graph of its own (runtime/queue_input.py), as 2.15's Estimator
# called every input_fn; tf.sparse_placeholder's refusal is another, not retried there.
INPUT_FN_PLACEHOLDER_NOTE = (
    "in an input_fn: the Estimator runs it in a graph of its own (placeholders cannot run "
    "eagerly), as tf.estimator 2.15 did; a hook's after_create_session feeds them there "
    "(session.run(iterator.initializer, feed_dict=...)), given to train / evaluate in hooks="
)
UNFED_PLACEHOLDER_NOTE = (
    "in an input_fn that builds no initializable iterator: the Estimator runs it in a graph "
    'of its own, where nothing feeds this placeholder ("You must feed a value for '
    'placeholder tensor", as in 2.15)'
)
UNFED_PLACEHOLDER_FIX = (
    "a dataset of the values themselves (tf.data.Dataset.from_tensor_slices(arrays), "
    "numpy_input_fn), or an initializable iterator whose initializer a hook runs with a "
    "feed_dict"
)
_ROOTS = ("tensorflow", "tensorflow_estimator")
_SHAPE_HOLDERS = ("shape", "dims")  # x.shape[i].value, x.shape.dims[i].value
TF1_MODE_NOTE = "TF1-only name on `import tensorflow`: runs under `keras-estimator run` (TF1 mode)"
TF1_MODE_FIX = "import tensorflow.compat.v1 as tf"
TF1_IN_NOTEBOOK_NOTE = (
    "TF1-only name on `import tensorflow`: fails in a notebook (no `keras-estimator run` "
    "TF1 mode there)"
)


@dataclass
class Finding:
    """One use of a legacy API: where, what, and what keras_estimator makes of it."""

    path: str
    line: int
    api: str
    status: str  # supported | caveat | tf1_mode | unsupported | error | skipped
    note: str = ""
    replacement: str = ""
    cell: int | None = None  # notebook cell (1-based, every cell counted), `line` inside it

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None)}


@dataclass
class FileReport:
    """What `check` found in one file, and its verdict.

    `verdict`: `ok` (every use supported), `caveats`, `tf1_mode` (TF1-only names on TF 2's
    `tensorflow`: runs under `keras-estimator run`, not with a plain `install()`), `blocked`
    (an unsupported use), `unreadable`, `skipped`, `no_tensorflow` (nothing to check).
    """

    path: str
    kind: str  # "python" | "notebook"
    findings: list[Finding] = field(default_factory=list)
    imports: dict[str, list[str]] = field(default_factory=dict)  # "v1"/"v2"/... -> local names
    references: int = 0  # TensorFlow names referred to (attribute chains and imports)
    reason: str = ""  # why unreadable / skipped
    modules: list[tuple[int, str]] = field(default_factory=list)  # (level, module) imported
    through: list[FileReport] = field(default_factory=list)  # scanned files it imports
    imported_by: str = ""  # not named on the command line: checked because this file imports it
    # (finding, namespace) of canned-estimator uses (`migration.v1_namespace`); not reported.
    canned_uses: list[tuple[Finding, str]] = field(default_factory=list, repr=False)
    # (caveat, blocking finding it replaced) for uses in functions the script never calls;
    # undone when another checked file imports this one (its functions may be called).
    uncalled_caveats: list[tuple[Finding, Finding]] = field(default_factory=list, repr=False)

    @property
    def own_verdict(self) -> str:
        """The verdict on this file's own code."""
        statuses = {f.status for f in self.findings}
        for status, verdict in (("skipped", "skipped"), ("error", "unreadable"),
                                ("unsupported", "blocked"), ("tf1_mode", "tf1_mode"),
                                ("caveat", "caveats"), ("supported", "ok")):  # fmt: skip
            if status in statuses:
                return verdict
        return "ok" if self.references else "no_tensorflow"

    @property
    def verdict(self) -> str:
        """The own verdict, made worse by the scanned files it imports (transitively)."""
        return max(
            [self.own_verdict, *self.imported_verdicts().values()], key=_VERDICT_RANK.__getitem__
        )

    def imported_verdicts(self) -> dict[str, str]:
        """Path -> own verdict of the scanned files this one imports, transitively, that are
        worse than this file's own (a blocked helper module blocks the script)."""
        own = _VERDICT_RANK[self.own_verdict]
        seen: dict[str, str] = {}
        stack = list(self.through)
        while stack:
            report = stack.pop()
            if report.path in seen or report is self:
                continue
            seen[report.path] = report.own_verdict
            stack += report.through
        return {p: v for p, v in seen.items() if _VERDICT_RANK[v] > max(own, 1)}

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "kind": self.kind, "verdict": self.verdict}
        data["own_verdict"] = self.own_verdict
        data["imported_verdicts"] = self.imported_verdicts()
        if self.reason:
            data["reason"] = self.reason
        if self.imported_by:
            data["imported_by"] = self.imported_by
        data["tensorflow_imports"] = self.imports
        data["references"] = self.references
        data["counts"] = dict(Counter(f.status for f in self.findings))
        return data


@cache
def support_table() -> list[dict[str, Any]]:
    with open(TABLE_PATH, encoding="utf-8") as f:
        return json.load(f)["entries"]


@cache
def _table_index() -> tuple[dict[str, dict[str, Any]], set[str], list[dict[str, Any]]]:
    """(exact entries, the exact entries that have member entries, the pattern entries)."""
    table = support_table()
    exact = {e["api"]: e for e in table if "*" not in e["api"]}
    patterns = [e for e in table if "*" in e["api"]]
    prefixes = {e["api"].rsplit(".", 1)[0] for e in table}
    parents = {api for api in exact if any(p == api or p.startswith(api + ".") for p in prefixes)}
    return exact, parents, patterns


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
            module_path = []
            while parts and parts[0] in modules:  # the module path; then the object chain
                module_path.append(parts.pop(0))
            if not parts:
                return "tensorflow_estimator"
            section = (
                ".export" if "export" in module_path else ".tpu" if "tpu" in module_path else ""
            )
            return f"tf.estimator{section}." + ".".join(parts)
    if dotted == "tensorflow_estimator" or dotted.startswith("tensorflow_estimator.python"):
        return "tensorflow_estimator"
    if dotted.startswith("tensorflow_estimator.estimator"):
        return "tf.estimator" + dotted[len("tensorflow_estimator.estimator") :]
    split = tf1_api.split_namespace(dotted)
    if split is None:
        return None
    namespace, path = split
    if not namespace:
        return "tensorflow." + path  # tensorflow.python.* (internals), tensorflow.compat
    return "tf." + path if path else "tf"


def lookup(api: str) -> dict[str, Any] | None:
    """The most specific support-table entry for `api`, or None when none applies.

    An exact entry wins; then the longest exact prefix that names a thing, not a module with
    entries of its own (`tf.estimator.ModeKeys.TRAIN` -> `tf.estimator.ModeKeys`, but
    `tf.contrib.data.parallel_interleave` is not `tf.contrib.data`); then the most specific
    pattern (`tf.contrib.data.*`).
    """
    exact, parents, patterns = _table_index()
    if api in exact:
        return exact[api]
    parts = api.split(".")
    for end in range(len(parts) - 1, 1, -1):
        prefix = ".".join(parts[:end])
        if prefix in exact and prefix not in parents:
            return exact[prefix]
    matches = [e for e in patterns if fnmatch.fnmatchcase(api, e["api"])]
    if not matches:
        return None
    entry = max(matches, key=lambda e: len(e["api"].replace("*", "")))
    if "members" in entry:  # `tf.layers.*`: exactly the names the port has
        member = api[len(entry["api"]) - 1 :].split(".")[0]
        if member not in entry["members"]:
            return {"api": entry["api"], **entry["other_members"]}
    if entry["api"] == "tf.estimator.*":
        return _estimator_name_entry(api)
    return entry


@cache
def _estimator_names() -> frozenset[str]:
    import keras_estimator  # the public face: its names load lazily, no TensorFlow here

    return frozenset(keras_estimator.__all__)


def _estimator_name_entry(api: str) -> dict[str, Any]:
    """`tf.estimator.X` without a row: what install()'s tf.estimator (keras_estimator) has."""
    name = api.split(".")[2]
    if name in _estimator_names():
        return {"api": api, "status": "supported",
                "note": f"install() provides it (keras_estimator.{name})"}  # fmt: skip
    return {
        "api": api,
        "status": "unsupported",
        "note": f"keras_estimator's tf.estimator has no {name}: an AttributeError",
        "replacement": "see the README's list of the supported tf.estimator API",
    }


def _is_method_call(expr: ast.AST, method: str, on: Any = None) -> bool:
    """Whether `expr` is `<x>.<method>()` (with `on(<x>)` true)."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == method
        and (on is None or on(expr.func.value))
    )


def _calls_method(node: ast.With | ast.AsyncWith, method: str, on: Any = None) -> bool:
    """Whether an item of `with` statement `node` is `<x>.<method>()` (`on(<x>)` true)."""
    return any(_is_method_call(item.context_expr, method, on) for item in node.items)


def _body_ids(node: ast.With | ast.AsyncWith) -> set[int]:
    """Ids of the nodes inside the body of `with` statement `node`."""
    return {id(n) for statement in node.body for n in ast.walk(statement)}


def _graph_block_nodes(nodes: list[ast.AST]) -> set[int]:
    """Ids of the nodes inside `with <graph>.as_default():` blocks, and in the items that
    follow it in the same `with` (entered in order: `with g.as_default(), tf.Session() as s:`
    opens the session on `g`)."""
    inside: set[int] = set()
    for node in nodes:
        if not isinstance(node, ast.With | ast.AsyncWith) or id(node) in inside:
            continue
        for index, item in enumerate(node.items):
            if _is_method_call(item.context_expr, "as_default", _is_graph):
                inside |= _body_ids(node)
                for later in node.items[index + 1 :]:
                    parts = [later.context_expr, later.optional_vars]
                    inside |= {id(n) for part in parts if part for n in ast.walk(part)}
                break
    return inside


def _sessions_on_a_graph(nodes: list[ast.AST]) -> set[int]:
    """Ids of the `tf.Session` names called with a graph of their own: `Session(graph=g)`,
    `Session(target, g)` (TensorFlow's TF1 graph mode, wherever the call is)."""
    found = set()
    for node in nodes:
        if not isinstance(node, ast.Call) or getattr(node.func, "attr", None) not in _SESSIONS:
            continue
        graph = node.args[1] if len(node.args) > 1 else None
        graph = next((k.value for k in node.keywords if k.arg == "graph"), graph)
        if graph is not None and not (isinstance(graph, ast.Constant) and graph.value is None):
            found.add(id(node.func))
    return found


def _test_session_blocks(nodes: list[ast.AST], in_graph: set[int]) -> tuple[list[int], set[int]]:
    """(lines of `with self.test_session():` outside graph blocks, ids of the nodes inside)."""
    lines, inside = [], set()
    for node in nodes:
        if (
            isinstance(node, ast.With)
            and id(node) not in in_graph
            and _calls_method(node, "test_session")
        ):
            lines.append(node.lineno)
            inside |= _body_ids(node)
    return lines, inside


def _is_graph(node: ast.AST) -> bool:
    """`tf.Graph()`, `graph`, `self.graph`: what `.as_default()` is called on for a graph."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name == "Graph"
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return "graph" in name.lower() or name == "g"


def _shape_value_lines(nodes: list[ast.AST]) -> list[int]:
    """Lines of `x.shape[i].value`, `x.get_shape()[i].value`, `x.shape.dims[i].value`."""
    lines = []
    for node in nodes:
        if not (isinstance(node, ast.Attribute) and node.attr == "value"):
            continue
        target = node.value
        if not isinstance(target, ast.Subscript):
            continue
        holder = target.value
        if isinstance(holder, ast.Attribute) and holder.attr in _SHAPE_HOLDERS:
            lines.append(node.lineno)
        elif (
            isinstance(holder, ast.Call)
            and isinstance(holder.func, ast.Attribute)
            and holder.func.attr == "get_shape"
        ):
            lines.append(node.lineno)
    return lines


def _calls_any(nodes: list[ast.AST], names: tuple[str, ...]) -> bool:
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in names:
                return True
    return False


def _finding_for(use: tf1_api.TensorFlowUse, api: str, graph_mode: str, report: FileReport,
                 cell: int | None) -> Finding | None:  # fmt: skip
    """`graph_mode`: why the use runs in TensorFlow's TF1 graph mode ("" where it does not)."""
    entry = lookup(api)
    status, note, replacement = None, "", ""
    if entry is not None:
        status, note = entry["status"], entry.get("note", "")
        replacement = entry.get("replacement", "")
        if graph_mode and any(api == g or api.startswith(g + ".") for g in _GRAPH_MODE_APIS):
            status, replacement, note = "supported", "", graph_mode
        unmet = optional_packages.unmet_need(entry)
        if unmet is not None:  # fails here, in the environment `check` runs in
            status, (note, replacement) = "unsupported", unmet
    elif api.startswith("tensorflow.python."):
        status = "caveat"
        note = "a TensorFlow internal module, not a public API: it may have moved or gone"
    if use.tf1_only:
        if use.namespace == "compat.v2":
            status = "unsupported"
            note = f"tf.{use.tf1_only} is TF1-only: not in tensorflow.compat.v2, in any mode"
            replacement = "tensorflow.compat.v1, or the TF 2 equivalent"
        elif report.kind == "notebook":
            status, replacement = "unsupported", TF1_MODE_FIX
            note = TF1_IN_NOTEBOOK_NOTE
        elif status is None or _SEVERITY[status] < _SEVERITY["unsupported"]:
            note = TF1_MODE_NOTE + (f"; {note}" if note and status != "supported" else "")
            status, replacement = "tf1_mode", ""
    if status is None:
        return None
    line = use.line
    return Finding(report.path, line, api, status, note, replacement, cell)


def _scan_tree(tree: ast.AST, nodes: list[ast.AST], report: FileReport, bindings: dict[str, str],
               cell: int | None) -> None:  # fmt: skip
    in_graph = _graph_block_nodes(nodes)
    in_graph |= graph_contexts.functions_called_in(nodes, in_graph)
    in_serving = graph_contexts.serving_function_nodes(nodes)
    session_lines, in_session = _test_session_blocks(nodes, in_graph)
    on_a_graph = _sessions_on_a_graph(nodes)
    in_input_fn = graph_contexts.input_function_nodes(nodes, in_graph | in_serving)
    uncalled = uncalled_functions(tree)
    for line in session_lines:
        report.findings.append(Finding(report.path, line, "TestCase.test_session", "unsupported",
                                       TEST_SESSION_NOTE, TEST_SESSION_FIX, cell))  # fmt: skip
    for use in tf1_api.tensorflow_uses(tree, bindings, _ROOTS, nodes):
        api = canonical(use.dotted)
        if api is None or api == "tf":
            continue
        report.references += 1
        graph_mode = GRAPH_BLOCK_NOTE if id(use.node) in in_graph else ""
        if not graph_mode and id(use.node) in on_a_graph:
            graph_mode = SESSION_ON_A_GRAPH_NOTE
        finding = _finding_for(use, api, graph_mode, report, cell)
        if id(use.node) in in_session and api in _GRAPH_ONLY_APIS:
            finding = Finding(report.path, use.line, api, "unsupported",
                              "graph-only, in a test session that runs eagerly in TF 2",
                              TEST_SESSION_FIX, cell)  # fmt: skip
        elif api in _PLACEHOLDERS and not {id(use.node)} & (in_graph | in_serving):
            fed = in_input_fn.get(id(use.node)) if api == "tf.placeholder" else None
            status, note, fix = {
                True: ("caveat", INPUT_FN_PLACEHOLDER_NOTE, ""),
                False: ("unsupported", UNFED_PLACEHOLDER_NOTE, UNFED_PLACEHOLDER_FIX),
                None: ("unsupported", EAGER_PLACEHOLDER_NOTE, EAGER_PLACEHOLDER_FIX),
            }[fed]
            finding = Finding(report.path, use.line, api, status, note, fix, cell)
        if finding is not None and finding.status == "unsupported" and id(use.node) in uncalled:
            blocking, finding = finding, _uncalled_caveat(finding, uncalled[id(use.node)])
            report.uncalled_caveats.append((finding, blocking))
        if finding is not None:
            report.findings.append(finding)
            if v1_namespace.is_v1_canned(api) and use.namespace in ("v1", "v2"):
                report.canned_uses.append((finding, use.namespace))
    for line in _shape_value_lines(nodes):
        report.findings.append(_shape_value_finding(report, nodes, line, cell))
    found = data_access.uses(tree, nodes, bindings)  # the network, Cloud Storage, a TPU
    found += keras_saving.uses(nodes, bindings)  # weight files Keras 3 refuses
    for found_use in found:
        report.findings.append(Finding(report.path, found_use.line, found_use.api,
                                       found_use.status, found_use.note, found_use.replacement,
                                       cell))  # fmt: skip
    report.findings.sort(key=lambda f: (f.cell or 0, f.line))


def _uncalled_caveat(finding: Finding, function: str, where: str = "script") -> Finding:
    """A blocking use inside a function the script never calls: `run` does not reach it."""
    note = f"in {function}(), which nothing in this {where} calls: `run` does not reach it"
    return replace(finding, status="caveat", note=f"{note}; if called: {finding.note}")


def _shape_value_finding(report: FileReport, nodes: list[ast.AST],
                         line: int, cell: int | None) -> Finding:  # fmt: skip
    api = "TensorShape[i].value"
    fix = "tf.compat.dimension_value(x.shape[i]), or x.shape[i] (an int or None in TF 2)"
    if _calls_any(nodes, ("disable_v2_tensorshape", "disable_v2_behavior")):
        return Finding(report.path, line, api, "supported", "TF1 shapes: the file turns them on",
                       cell=cell)  # fmt: skip
    if "v2" in report.imports and "v1" not in report.imports and report.kind == "python":
        return Finding(report.path, line, api, "tf1_mode",
                       "TF 2 shape dimensions are ints (AttributeError on .value); fine under "
                       "`keras-estimator run` (TF1 mode)", fix, cell)  # fmt: skip
    return Finding(report.path, line, api, "unsupported",
                   "TF 2 shape dimensions are ints, also through tensorflow.compat.v1: "
                   "AttributeError on .value",
                   fix + "; or `keras-estimator run --tf1` (TF1 shapes)", cell)  # fmt: skip


def _imports(bindings: dict[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, dotted in sorted(bindings.items()):
        split = tf1_api.split_namespace(dotted)
        if split is not None and split[0] and not split[1]:  # bound to a namespace itself
            found.setdefault(split[0], []).append(name)
    return found


def _parse(text: str, path: str, report: FileReport, cell: int | None,
           notebook: bool) -> ast.AST | None:  # fmt: skip
    try:
        if notebook:  # IPython runs top-level `await`
            flags = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
            try:
                return compile(text, path, "exec", flags=flags, dont_inherit=True)
            except (RecursionError, MemoryError, OverflowError):
                return tf1_api.parse(text, path)  # the same limits, said the same way
        return tf1_api.parse(text, path)
    except SyntaxError as exc:
        note = f"could not parse: {exc.msg}"
        report.findings.append(Finding(path, max(exc.lineno or 1, 1), "<syntax>", "error",
                                       note=note, cell=cell))  # fmt: skip
    except ValueError as exc:
        report.findings.append(Finding(path, 1, "<syntax>", "error",
                                       note=f"could not parse: {exc}", cell=cell))  # fmt: skip
    return None


def scan_source(source: str, path: str, cell: int | None = None) -> list[Finding]:
    """The findings for Python `source` (as if read from `path`)."""
    return _scan_parts(path, "python", [(cell, source)]).findings


def _scan_parts(path: str, kind: str, parts: list[tuple[int | None, str]]) -> FileReport:
    """One file's report from its Python parts (one for a .py file, a notebook's code cells).

    A notebook's cells share one namespace: the imports of every cell apply to all.
    """
    report = FileReport(path, kind)
    trees = []
    for cell, text in parts:
        tree = _parse(text, path, report, cell, kind == "notebook")
        if tree is not None:
            trees.append((cell, tree, list(ast.walk(tree))))
    bindings: dict[str, str] = {}
    for _, tree, nodes in trees:
        for name, dotted in tf1_api.import_bindings(tree, nodes).items():
            current = bindings.get(name)
            if current is None or dotted.startswith(tf1_api.V1_ROOT):
                bindings[name] = dotted
    report.imports = _imports(bindings)
    for cell, tree, nodes in trees:
        _scan_tree(tree, nodes, report, bindings, cell)
        report.modules += local_imports.imported_modules(nodes)
    _note_v1_canned(report)
    return report


def _note_v1_canned(report: FileReport) -> None:
    """Canned estimators that are tf.compat.v1.estimator's: through a compat.v1 import, or
    on TF 2's `tensorflow` in a file `run` runs in TF1 mode (a v2 import alone)."""
    tf1_mode = any(f.status == "tf1_mode" for f in report.findings) and "v1" not in report.imports
    for finding, namespace in report.canned_uses:
        if finding.status in ("supported", "caveat") and (namespace == "v1" or tf1_mode):
            own = f"{v1_namespace.V1_NOTE}; {v1_namespace.V1_FIX}"
            finding.note = "; ".join(n for n in (own, finding.note) if n)


def _link_local_imports(reports: list[FileReport]) -> None:
    """Each report's `through`: the scanned files its imports load (as `python script.py`
    would find them: beside the file, or in a package above it)."""
    by_path = {os.path.abspath(r.path): r for r in reports}
    for report in reports:
        here = os.path.dirname(os.path.abspath(report.path))
        found = []
        for level, module in report.modules:
            if level:
                bases = [here]
                for _ in range(level - 1):
                    bases = [os.path.dirname(bases[0])]
            else:
                bases, base = [here], here
                for _ in range(3):  # `from albert import modeling` run from inside albert/
                    base = os.path.dirname(base)
                    bases.append(base)
            relative = module.replace(".", os.sep)
            for base in bases:
                for candidate in (f"{relative}.py", os.path.join(relative, "__init__.py")):
                    target = by_path.get(os.path.join(base, candidate))
                    if target is not None and target is not report and target not in found:
                        found.append(target)
        report.through = found


def scan_file(path: str, max_size: int = sources.MAX_SOURCE_BYTES) -> FileReport:
    """The report for one file; never raises for what is in the file (it says so instead)."""
    kind = "notebook" if path.endswith(".ipynb") else "python"
    try:
        limit = max_size * (sources.NOTEBOOK_SIZE_FACTOR if kind == "notebook" else 1)
        data = sources.read_bytes(path, limit)
        parts: list[tuple[int | None, str]]
        if kind == "notebook":
            parts = [(c.number, c.text) for c in sources.notebook_cells(data, max_size)]
        else:
            parts = [(None, sources.decode_python(data))]
        return _scan_parts(path, kind, parts)
    except FileNotFoundError:
        raise
    except sources.SkippedFile as exc:
        status, api, reason = "skipped", "<skipped>", str(exc)
    except sources.UnreadableFile as exc:
        status, api, reason = "error", "<unreadable>", str(exc)
    except (OSError, RecursionError, MemoryError, ValueError, LookupError) as exc:
        status, api, reason = "error", "<unreadable>", f"{type(exc).__name__}: {exc}"
    report = FileReport(path, kind, reason=reason)
    report.findings.append(Finding(path, 0, api, status, note=reason))
    return report


def scan(paths: list[str], max_size: int = sources.MAX_SOURCE_BYTES) -> list[FileReport]:
    """A report for every .py / .ipynb file in `paths` (files or directories).

    Raises FileNotFoundError (before scanning) when a path does not exist.
    """
    for path in paths:
        if not os.path.lexists(path):
            raise FileNotFoundError(
                "No such file or directory. Fix: pass existing .py / .ipynb files or "
                f"directories to scan. Received: path={path!r}"
            )
    reports = []
    for path in sources.find_files(paths):
        try:
            reports.append(scan_file(path, max_size))
        except FileNotFoundError:  # gone since listed (a dangling link)
            report = FileReport(path, "python", reason="not found (a dangling link?)")
            report.findings.append(Finding(path, 0, "<skipped>", "skipped", note=report.reason))
            reports.append(report)
    reports += _follow_local_imports(reports, max_size)
    _link_local_imports(reports)
    _judge_imported_scripts_as_called(reports)
    _judge_what_the_program_never_calls(reports)
    return reports


def _judge_what_the_program_never_calls(reports: list[FileReport]) -> None:
    """When a script is among the checked files: a blocking or TF1-only use inside a
    function nothing in the checked program names (across its files: a trainer's unused
    TFRecord reader in model.py) is a caveat, as `run` decides from the code that runs
    (cli/run_command.py `tf1_evidence`). Without a script (a library) nothing changes."""
    trees: dict[str, ast.AST] = {}
    for report in reports:
        if report.kind != "python" or report.reason:
            continue  # a notebook, or a file that was skipped or could not be read
        try:  # read as the scan read it: regular files only, within the size limit
            data = sources.read_bytes(report.path, sources.MAX_SOURCE_BYTES)
            trees[report.path] = tf1_api.parse(sources.decode_python(data), report.path)
        except Exception:  # noqa: BLE001 - changed since the scan: judge nothing as uncalled
            return
    if not any(runs_as_a_program(tree) for tree in trees.values()):
        return
    spans = program_uncalled_spans(trees)
    for report in reports:
        changed = False
        for name, first, last in spans.get(report.path, []):
            for index, finding in enumerate(report.findings):
                if first <= finding.line <= last and finding.status in ("unsupported", "tf1_mode"):
                    report.findings[index] = _uncalled_caveat(finding, name, "program")
                    changed = True
        if changed and not any(f.status == "tf1_mode" for f in report.findings):
            # No longer a TF1-mode file: its canned estimators on `tensorflow` are v2's.
            own = f"{v1_namespace.V1_NOTE}; {v1_namespace.V1_FIX}"
            for finding, namespace in report.canned_uses:
                if namespace != "v1" and finding.note.startswith(own):
                    finding.note = finding.note[len(own) :].lstrip("; ")


def _judge_imported_scripts_as_called(reports: list[FileReport]) -> None:
    """A script another checked file imports is a module too: its functions may be called
    from there, so what they use blocks again."""
    imported = {id(t) for r in reports for t in r.through} | {
        id(r) for r in reports if r.imported_by
    }
    for report in reports:
        if id(report) not in imported:
            continue
        for caveat, blocking in report.uncalled_caveats:
            report.findings[report.findings.index(caveat)] = blocking
        report.uncalled_caveats.clear()


def _follow_local_imports(reports: list[FileReport], max_size: int) -> list[FileReport]:
    """Reports for the program's own modules that the scanned files import (transitively)
    and that were not named: `check trainer/task.py` also checks the `trainer/model.py` its
    `from . import model` or `from trainer import model` loads, as `run` would run it.

    Absolute imports are looked up beside the file, above its packages (where `python -m
    pkg.mod` starts) and in the current directory when the file is below it.
    """
    scanned = {os.path.abspath(r.path) for r in reports}
    cwd = os.path.abspath(os.getcwd())
    followed: list[FileReport] = []
    pending = [(r, r.path) for r in reports]
    while pending and len(followed) < MAX_FOLLOWED_FILES:
        report, path = pending.pop(0)
        absolute = os.path.abspath(path)
        top = local_imports.package_root(absolute)
        roots = [os.path.dirname(absolute), top]
        if absolute.startswith(cwd + os.sep):
            roots.append(cwd)
        roots = list(dict.fromkeys(roots))
        files = local_imports.module_files(absolute, report.modules, roots)
        files += local_imports.package_inits(absolute, top)
        for file in files:
            if os.path.abspath(file) in scanned or len(followed) >= MAX_FOLLOWED_FILES:
                continue
            scanned.add(os.path.abspath(file))
            shown = os.path.relpath(file) if file.startswith(cwd + os.sep) else file
            try:
                imported = scan_file(shown, max_size)
            except FileNotFoundError:
                continue
            imported.imported_by = report.path
            followed.append(imported)
            pending.append((imported, imported.path))
    return followed


def scan_paths(paths: list[str], max_size: int = sources.MAX_SOURCE_BYTES) -> list[Finding]:
    """Findings for every .py / .ipynb file in `paths` (files or directories)."""
    return [finding for report in scan(paths, max_size) for finding in report.findings]
