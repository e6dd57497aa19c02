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
