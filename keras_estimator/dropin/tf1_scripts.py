"""TF1 mode of `keras-estimator run`: a TensorFlow 1.x script runs as it is.

A script written for TensorFlow 1.x does `import tensorflow as tf` and uses the 1.x API
through it (`tf.logging`, `tf.flags`, `tf.app.run`, `tf.gfile`, `tf.train.Optimizer`,
`tf.layers`, `tf.get_variable`, `tf.contrib`, `shape[-1].value`). In TF1 mode the script
and the modules it imports from its own folder (the "script tree") see
`tensorflow.compat.v1` under the name `tensorflow`, while TensorFlow, Keras, keras_estimator
and every installed package keep TensorFlow 2's API.

How it is scoped: each module of the script tree runs with builtins of its own whose
`__import__` answers `import tensorflow` / `from tensorflow import x` with
`tensorflow.compat.v1` (a dotted `import tensorflow.compat.v1` is left as it is). The
script gets them through `runpy`'s globals, the modules it imports through a meta-path
finder that loads the files under the script's folder (not installed packages, not
keras_estimator) with those builtins. Nothing else's imports change.

The script tree also reads TF1 shapes (`shape[-1]` is a `tf.compat.v1.Dimension` with
`.value`), and only it: `dropin.tf1_shapes` (TF1 shapes process-wide break Keras 3 and
keras_estimator code that compares or hashes dimensions).

In TF2 mode the script tree is loaded the same way with `import` left as it is, so that a
`disable_v2_tensorshape()` / `disable_v2_behavior()` call gives TF1 shapes to the whole tree.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Iterator
from typing import Any

from keras_estimator.dropin.tf1_shapes import give_tf1_shapes_to_tree, register_tree

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # keras_estimator/


def _is_installed_package(path: str) -> bool:
    parts = set(os.path.normpath(path).split(os.sep))
    return bool(parts & {"site-packages", "dist-packages"})


class ScriptTree:
    """The files of a script's own folder, loaded with builtins of their own; with
    `tf1=True` they see `tensorflow` as `tensorflow.compat.v1` and read TF1 shapes.

    Example:
        >>> tree = ScriptTree("/path/to/bert", tf1=True)
        >>> with tree.active():
        ...     runpy.run_path(script, init_globals=tree.script_globals(), run_name="__main__")
    """

    def __init__(self, root: str, tf1: bool) -> None:
        self.root = os.path.realpath(root)
        self.builtins = dict(vars(builtins))
        self._real_import = builtins.__import__
        self._finder = _ScriptTreeFinder(self)
        register_tree(self.builtins)
        if tf1:
            self.builtins["__import__"] = self._import
            give_tf1_shapes_to_tree(self.builtins)

    def contains(self, path: str | None) -> bool:
        """Whether the file at `path` belongs to the script tree (read as TF1)."""
        if not path:
            return False
        path = os.path.realpath(path)
        if os.path.commonpath([path, self.root]) != self.root:
            return False
        if os.path.commonpath([path, _PACKAGE_DIR]) == _PACKAGE_DIR:
            return False  # a checkout of keras_estimator itself under the script's folder
        return not _is_installed_package(os.path.relpath(path, self.root))

    def script_globals(self) -> dict[str, Any]:
        """The `init_globals` that give a script run by `runpy` the TF1 builtins."""
        return {"__builtins__": self.builtins}

    def _import(
        self,
        name: str,
        globals: dict | None = None,  # noqa: A002  (the signature of __import__)
        locals: dict | None = None,  # noqa: A002
        fromlist: Any = (),
        level: int = 0,
    ) -> Any:
        module = self._real_import(name, globals, locals, fromlist, level)
        if level == 0 and name == "tensorflow":
            return module.compat.v1
        return module

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Modules of the script tree imported inside the block get the TF1 builtins."""
        sys.meta_path.insert(0, self._finder)
        try:
            yield
        finally:
            if self._finder in sys.meta_path:
                sys.meta_path.remove(self._finder)


class _ScriptTreeLoader(importlib.machinery.SourceFileLoader):
    """Loads a source file of the script tree with the tree's builtins."""

    def __init__(self, fullname: str, path: str, tree: ScriptTree) -> None:
        super().__init__(fullname, path)
        self._tree = tree

    def exec_module(self, module: Any) -> None:
        module.__builtins__ = self._tree.builtins
        super().exec_module(module)


class _ScriptTreeFinder(importlib.abc.MetaPathFinder):
    """Finds modules as Python would; those of the script tree get `_ScriptTreeLoader`."""

    def __init__(self, tree: ScriptTree) -> None:
        self._tree = tree

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (
            spec is None
            or spec.origin is None
            or type(spec.loader) is not importlib.machinery.SourceFileLoader
            or not self._tree.contains(spec.origin)
        ):
            return None
        spec.loader = _ScriptTreeLoader(fullname, spec.origin, self._tree)
        return spec
