"""Where graph-only TF1 calls (`tf.placeholder`) can run, read from the source alone.

Outside a `with tf.Graph().as_default():` block TensorFlow 2 runs eagerly, also under
`keras-estimator run` (its TF1 mode keeps eager execution), and `tf.placeholder()` raises
"not compatible with eager execution". A placeholder still runs where a graph is being
built: in a serving input function (the export calls it in a graph of its own), and in a
function called from inside a graph block. This module finds those functions.
"""

from __future__ import annotations

import ast
import re

_SERVING_NAME = re.compile(r"serving|receiver", re.IGNORECASE)
# What a serving input function returns (tf.estimator.export's classes, TF 1.x's InputFnOps).
_RECEIVER_CLASSES = ("ServingInputReceiver", "TensorServingInputReceiver", "InputFnOps")
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _inside(function: ast.AST) -> set[int]:
    return {id(n) for n in ast.walk(function) if n is not function}


def _passed_to_exports(nodes: list[ast.AST]) -> tuple[set[str], set[int]]:
    """(names, lambda ids) given to an export call (`export_saved_model(dir, fn)`,
    `LatestExporter(name, fn)`) or as a `serving_input_*` / `*receiver*` keyword."""
    names, lambdas = set(), set()
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        exporting = "export" in _called_name(node).lower()
        values = [a for a in node.args if exporting]
        values += [k.value for k in node.keywords
                   if exporting or (k.arg and _SERVING_NAME.search(k.arg))]  # fmt: skip
        for value in values:
            if isinstance(value, ast.Name):
                names.add(value.id)
            elif isinstance(value, ast.Lambda):
                lambdas.add(id(value))
    return names, lambdas


def serving_function_nodes(nodes: list[ast.AST]) -> set[int]:
    """Ids of the nodes inside serving input functions: named so (`serving_input_fn`,
    `*_receiver_fn`), returning a ServingInputReceiver, or passed to an export."""
    exported, lambdas = _passed_to_exports(nodes)
    inside: set[int] = set()
    for node in nodes:
        if not isinstance(node, _Function) or id(node) in inside:
            continue
        name = getattr(node, "name", "")
        builds_receiver = any(
            isinstance(n, ast.Call) and _called_name(n) in _RECEIVER_CLASSES for n in ast.walk(node)
        )
        if (
            _SERVING_NAME.search(name)
            or name in exported
            or id(node) in lambdas
            or (builds_receiver)
        ):
            inside |= _inside(node)
    return inside


def functions_called_in(nodes: list[ast.AST], block_nodes: set[int]) -> set[int]:
    """Ids of the nodes inside the functions of this file called (by name) from the nodes
    in `block_nodes`, and from those functions in turn: they run in that block's graph."""
    functions = {n.name: n for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    inside, reached = set(block_nodes), set()
    pending = [n for n in nodes if id(n) in block_nodes]
    while pending:
        node = pending.pop()
        if not isinstance(node, ast.Call):
            continue
        function = functions.get(_called_name(node))
        if function is None or function.name in reached:
            continue
        reached.add(function.name)
        body = [n for n in ast.walk(function) if n is not function]
        inside |= {id(n) for n in body}
        pending += body
    return inside - block_nodes


# Where an input_fn is handed to an Estimator: `train(input_fn, ...)`, `TrainSpec(input_fn)`,
# or a keyword named so (`input_fn=`, `train_input_fn=`, `eval_input_fn=`).
_TAKES_AN_INPUT_FN = ("train", "evaluate", "predict", "TrainSpec", "EvalSpec")
_INPUT_FN_KEYWORD = re.compile(r"(?:^|_)input_fn$")
# What builds and feeds an initializable iterator: the one way placeholders in an input_fn
# get values (a hook's after_create_session runs `session.run(iterator.initializer,
# feed_dict=...)`, in 2.15 as under keras_estimator).
_INITIALIZERS = frozenset({"make_initializable_iterator", "initializer", "make_initializer"})


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of `function`'s body, not those of the functions or classes inside it."""
    found, pending = [], list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, _Function | ast.ClassDef):
            pending += ast.iter_child_nodes(node)
    return found


class _Functions:
    """Which functions of a file an expression evaluates to, read flow-insensitively: a
    function's name, a lambda, a name assigned one (also by tuple unpacking), what a
    function of the file returns when called, `functools.partial(f, ...)`."""

    def __init__(self, nodes: list[ast.AST]) -> None:
        self.defs: dict[str, list[ast.AST]] = {}
        self.values: dict[str, list[ast.AST]] = {}
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defs.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._assign(target, node.value)

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.values.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            same = isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts)
            for index, element in enumerate(target.elts):
                self._assign(element, value.elts[index] if same else value)  # type: ignore[attr-defined]

    def of(self, expr: ast.AST, seen: set[int] | None = None) -> list[ast.AST]:
        seen = set() if seen is None else seen
        if id(expr) in seen:
            return []
        seen.add(id(expr))
        if isinstance(expr, ast.Lambda):
            return [expr]
        if isinstance(expr, ast.Tuple | ast.List):
            return [f for element in expr.elts for f in self.of(element, seen)]
        if isinstance(expr, ast.Name):
            found = list(self.defs.get(expr.id, []))
            return found + [f for v in self.values.get(expr.id, []) for f in self.of(v, seen)]
        if isinstance(expr, ast.Call):
            name = _called_name(expr)
            if name == "partial" and expr.args:
                return self.of(expr.args[0], seen)
            returned = [
                node.value
                for function in self.defs.get(name, [])
                for node in _own_nodes(function)
                if isinstance(node, ast.Return) and node.value is not None
            ]
            return [f for value in returned for f in self.of(value, seen)]
        return []


def _input_fn_arguments(nodes: list[ast.AST]) -> list[ast.AST]:
    found: list[ast.AST] = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        if _called_name(node) in _TAKES_AN_INPUT_FN and node.args:
            found.append(node.args[0])
        found += [k.value for k in node.keywords if k.arg and _INPUT_FN_KEYWORD.search(k.arg)]
    return found


def _references(nodes: list[ast.AST], name: str) -> list[ast.AST]:
    return [
        n
        for n in nodes
        if (isinstance(n, ast.Name) and n.id == name)
        or (isinstance(n, ast.Attribute) and n.attr == name)
    ]


def input_function_nodes(nodes: list[ast.AST], in_graph: set[int]) -> dict[int, bool]:
    """`{id(node): fed}` for the nodes inside this file's input_fns and the functions only
    they call: the Estimator calls an input_fn, and keras_estimator (as 2.15) runs one that
    builds placeholders in a graph of its own. `fed`: the input_fn (with what it calls)
    builds an initializable iterator, whose initializer a hook runs with a feed_dict; the
    only way its placeholders get values.

    An input_fn is a function (or lambda) handed to `train` / `evaluate` / `predict`,
    `TrainSpec` / `EvalSpec`, or an `*input_fn=` keyword, also through a name it is
    assigned to or a function of the file that returns it (`fn, hook = get_inputs(...)`).
    One the file also calls itself, outside input_fns and graph blocks, runs eagerly there
    and is not counted.
    """
    functions = _Functions(nodes)
    roots: dict[int, ast.AST] = {}
    for argument in _input_fn_arguments(nodes):
        for function in functions.of(argument):
            roots[id(function)] = function
    inside = {id(n) for f in roots.values() for n in ast.walk(f) if n is not f}
    outside = [n for n in nodes if id(n) not in inside and id(n) not in in_graph]
    for key, function in list(roots.items()):
        name = getattr(function, "name", None)
        calls = [n for n in outside if isinstance(n, ast.Call) and _called_name(n) == name]
        if name is not None and calls:
            del roots[key]  # also called where it runs eagerly
    inside = {id(n) for f in roots.values() for n in ast.walk(f) if n is not f}
    helpers: dict[str, ast.AST] = {}
    while True:  # the functions only input_fns refer to run in their graphs too
        added = False
        for name, defs in functions.defs.items():
            if name in helpers or len(defs) != 1 or id(defs[0]) in roots:
                continue
            own = {id(n) for n in ast.walk(defs[0])}
            refs = [r for r in _references(nodes, name) if id(r) not in own]
            if refs and all(id(r) in inside or id(r) in in_graph for r in refs):
                if any(id(r) in inside for r in refs):
                    helpers[name] = defs[0]
                    inside |= own - {id(defs[0])}
                    added = True
        if not added:
            break
    fed: dict[int, bool] = {}
    for root in roots.values():
        reached = _reached(root, helpers)
        feeds = any(getattr(n, "attr", getattr(n, "id", None)) in _INITIALIZERS for n in reached)
        for node in reached:
            fed[id(node)] = fed.get(id(node), True) and feeds
    return fed


def _reached(root: ast.AST, helpers: dict[str, ast.AST]) -> list[ast.AST]:
    """The nodes of `root` and of the helpers it names (calls, passes on), transitively."""
    found = [n for n in ast.walk(root) if n is not root]
    done: set[str] = set()
    pending = list(found)
    while pending:
        node = pending.pop()
        name = getattr(node, "id", None) or getattr(node, "attr", None)
        if isinstance(name, str) and name in helpers and name not in done:
            done.add(name)
            body = [n for n in ast.walk(helpers[name]) if n is not helpers[name]]
            found += body
            pending += body
    return found
