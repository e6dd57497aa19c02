"""Functions of a script that nothing calls, read from the source alone.

Research scripts keep debugging helpers next to their `main()` (e.g. a `train_one_step`
that builds the model in a `tf.Session`), never called when the script runs. What fails
only inside them does not stop `keras-estimator run`, so `check` reports it as a caveat,
not as blocking. Only a script's functions count (a file with an
`if __name__ == "__main__":` block that no other checked file imports: the scanner undoes
the caveats of an imported one). `main` always counts as called (`tf.app.run()` calls it
without naming it), and nothing counts as uncalled in a script that looks functions up by
computed names (`globals()`, `getattr(module, name)`, `eval`, `fire.Fire()`).
"""

from __future__ import annotations

import ast
from collections.abc import Container, Iterable
from collections.abc import Set as AbstractSet

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _is_main_guard(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


# Calls that can reach a function without its name written anywhere in the script.
_DYNAMIC_LOOKUPS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__",
                              "import_module", "Fire"})  # fmt: skip


# The instance or class a method works on: looking names up on it finds its attributes and
# methods, never a module's functions (`vars(cls)` in a classmethod, `getattr(self, name)`).
_SELF_NAMES = frozenset({"self", "cls"})


def _looks_up_names(nodes: list[ast.AST]) -> bool:
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        on_self = bool(node.args) and getattr(node.args[0], "id", None) in _SELF_NAMES
        if name in _DYNAMIC_LOOKUPS and not (name == "vars" and on_self):
            return True
        computed = len(node.args) > 1 and not isinstance(node.args[1], ast.Constant)
        if name == "getattr" and computed and not on_self:
            return True
    return False


def _method_calls(trees: list[ast.AST]) -> set[int]:
    """Ids of the attributes `obj.f` that are a method of the program's classes, not a
    module's function `f`: `f` is a method of a class of the program, and `obj` a name its
    file neither imports nor assigns a name or attribute to (which may be a module:
    `m = metrics`). TF-Ranking's `loss.eval_metric(...)`, `loss` from a dict of its loss
    objects, calls their `def eval_metric(self, ...)`, not `metrics.eval_metric`."""
    methods = {
        item.name
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, _Function)
    }
    found: set[int] = set()
    for tree in trees:
        nodes = list(ast.walk(tree))
        imported = {
            (alias.asname or alias.name).split(".")[0]
            for node in nodes
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        for node in nodes:  # `m = module`: m is a module too (assigned in any order)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name | ast.Attribute):
                imported |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in nodes:
            if isinstance(node, ast.Attribute) and node.attr in methods:
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id not in imported:
                    found.add(id(node))
    return found


def _referenced_names(
    nodes: Iterable[ast.AST],
    functions: Container[str],
    method_calls: AbstractSet[int] = frozenset(),
) -> set[str]:
    """The function names `nodes` use: `f()`, `obj.f`, `f` passed along, or a string naming
    it (`getattr(module, "f")`, `__all__`); not the attributes in `method_calls`."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and id(node) not in method_calls:
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in functions:
                names.add(node.value)
    return names


def uncalled_functions(tree: ast.AST) -> dict[int, str]:
    """`{id(node): function name}` for the nodes inside the script's top-level functions
    that nothing else in the script refers to by name (nor functions only those refer to);
    `{}` for a file that is not a script. Methods, nested functions and decorated functions
    are never counted: frameworks call them (a hook's `before_run`, a layer's `call`, what a
    decorator registers) without naming them."""
    body = getattr(tree, "body", [])
    if not any(_is_main_guard(n) for n in body) or _looks_up_names(list(ast.walk(tree))):
        return {}
    functions = {
        n.name: n
        for n in body
        if isinstance(n, _Function) and not n.decorator_list and n.name != "main"
    }
    inner = {name: [n for n in ast.walk(f) if n is not f] for name, f in functions.items()}
    outside = [n for top in body if getattr(top, "name", None) not in functions
               for n in ast.walk(top)]  # fmt: skip
    method_calls = _method_calls([tree])
    dead: set[str] = set()
    while True:  # a helper only dead functions call is dead too
        live = [n for name, nodes in inner.items() if name not in dead for n in nodes]
        used = _referenced_names(outside + live, functions, method_calls)
        newly = {name for name in functions if name not in used and name not in dead}
        if not newly:
            break
        dead |= newly
    return {id(n): name for name in dead for n in inner[name]}


def _program_dead_functions(trees: dict[str, ast.AST]) -> dict[tuple[str, str], _Function]:
    """`{(path, name): function node}` of the program's dead functions (see below)."""
    if any(_looks_up_names(list(ast.walk(tree))) for tree in trees.values()):
        return {}
    functions: dict[tuple[str, str], _Function] = {}
    outside: list[ast.AST] = []
    for path, tree in trees.items():
        for top in getattr(tree, "body", []):
            if isinstance(top, _Function) and not top.decorator_list and top.name != "main":
                functions[(path, top.name)] = top
            else:
                outside.extend(ast.walk(top))
    names = {name for _, name in functions}
    inner = {key: [n for n in ast.walk(f) if n is not f] for key, f in functions.items()}
    method_calls = _method_calls(list(trees.values()))
    dead: set[tuple[str, str]] = set()
    while True:  # a helper only dead functions name is dead too
        live = [n for key, nodes in inner.items() if key not in dead for n in nodes]
        used = _referenced_names(outside + live, names, method_calls)
        newly = {key for key in functions if key[1] not in used and key not in dead}
        if not newly:
            break
        dead |= newly
    return {key: functions[key] for key in dead}


def program_uncalled_nodes(trees: dict[str, ast.AST]) -> dict[str, set[int]]:
    """For a program of several files (a script and the modules of its tree it imports):
    `{path: ids of the nodes inside its top-level functions that nothing in the program
    refers to}`.

    Every file's module-level code runs (the script as `__main__`, the others on import);
    a top-level, undecorated function other than `main` is live when a name, attribute or
    string anywhere in that code, or in a live function, names it (`model.train(...)` in
    the script keeps `train` of every file alive), and dead otherwise, as are helpers only
    dead functions name. Nothing is dead in a program that looks names up by computed
    strings (see `_DYNAMIC_LOOKUPS`).
    """
    result: dict[str, set[int]] = {path: set() for path in trees}
    for (path, _), function in _program_dead_functions(trees).items():
        result[path].update(id(n) for n in ast.walk(function) if n is not function)
    return result


def program_uncalled_spans(trees: dict[str, ast.AST]) -> dict[str, list[tuple[str, int, int]]]:
    """`{path: [(function name, first line, last line)]}` of the functions
    `program_uncalled_nodes` finds dead (for findings that carry lines, not nodes)."""
    result: dict[str, list[tuple[str, int, int]]] = {path: [] for path in trees}
    for (path, name), function in _program_dead_functions(trees).items():
        first, last = function.lineno, getattr(function, "end_lineno", function.lineno)
        result[path].append((name, first, last or first))
    return result


def runs_as_a_program(tree: ast.AST) -> bool:
    """Whether a file is a script (a top-level `if __name__ == "__main__":` block): what it
    and the modules it imports hold is a program whose uncalled functions do not run."""
    return any(_is_main_guard(node) for node in getattr(tree, "body", []))
