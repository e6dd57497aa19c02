"""The README's architecture map matches the package, and imports only go downward."""

import ast
import os
import re

from helpers import ROOT

PACKAGE = os.path.join(ROOT, "keras_estimator")


def _map_from_readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    block = text.split("<!-- architecture -->", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    return re.findall(r"^  ([a-z0-9_]+)/", block, flags=re.M)


def _folders():
    return sorted(
        name
        for name in os.listdir(PACKAGE)
        if os.path.isfile(os.path.join(PACKAGE, name, "__init__.py"))
    )


def test_the_readme_map_names_every_folder_of_the_package_once():
    rooms = _map_from_readme()
    assert len(rooms) == len(set(rooms))
    assert sorted(rooms) == _folders()


def _imported_rooms(path):
    """(line, room) for each `keras_estimator.<room>` a module imports, at any depth."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("keras_estimator"):
            parts = node.module.split(".")
            for room in [parts[1]] if len(parts) > 1 else [a.name for a in node.names]:
                yield node.lineno, room
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("keras_estimator."):
                    yield node.lineno, alias.name.split(".")[1]


def test_every_import_goes_down_the_map():
    order = _map_from_readme()
    rank = {room: i for i, room in enumerate(order)}
    rank["_version"] = -1  # the version module imports nothing
    upward = []
    for folder, _, files in os.walk(PACKAGE):
        relative = os.path.relpath(folder, PACKAGE).split(os.sep)
        if relative[0] not in rank:
            continue  # the package root: the public face may import every room
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            for line, room in _imported_rooms(path):
                if room in rank and rank[room] > rank[relative[0]]:
                    upward.append(f"{os.path.relpath(path, ROOT)}:{line} imports {room}")
    assert upward == []
