"""TF1 tensor shapes (`shape[-1].value`, `tf.Dimension`) for the legacy code that wants them.

TF 1.x code reads `tensor.shape[-1].value`; TensorFlow 2 gives an `int` there. The process-
wide switch, `tf.compat.v1.disable_v2_tensorshape()`, is not safe here: keras_estimator's
own code (canned heads: `shape[-1] in {1, n}`, unhashable `Dimension`) and Keras read
shapes as TF2's. So TF1 shapes are given by caller: a `TensorShape` indexed or iterated
by a module that asked for them gets `Dimension`s, everything else `int`s.

Who asked: the files of a script tree in TF1 mode (`keras-estimator run`), a script tree
that called `disable_v2_tensorshape()` / `disable_v2_behavior()`, and, after `install()`
outside `run`, the module that made such a call.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_trees: dict[int, dict] = {}  # id(builtins of a script tree) -> that dict
_builtins_wanting: dict[int, dict] = {}  # the trees reading TF1 shapes
_globals_wanting: dict[int, dict] = {}  # id(globals of a module) -> that dict


def wants_tf1_shapes(frame: Any) -> bool:
    """Whether the code running in `frame` reads TF1 shapes."""
    return id(frame.f_builtins) in _builtins_wanting or id(frame.f_globals) in _globals_wanting


def register_tree(tree_builtins: dict) -> None:
    """The modules run with `tree_builtins` are one script tree (`dropin.tf1_scripts`)."""
    with _lock:
        _trees[id(tree_builtins)] = tree_builtins


def give_tf1_shapes_to_tree(tree_builtins: dict) -> None:
    """Every module run with `tree_builtins` (a script tree) reads TF1 shapes."""
    register_tree(tree_builtins)
    with _lock:
        _builtins_wanting[id(tree_builtins)] = tree_builtins


def give_tf1_shapes_to_caller(frame: Any) -> str:
    """The code of `frame` asked for TF1 shapes: its whole script tree when it is part of
    one, else its module. Says which."""
    with _lock:
        if id(frame.f_builtins) in _trees:
            _builtins_wanting[id(frame.f_builtins)] = frame.f_builtins
            return "the script and the modules of its folder"
        _globals_wanting[id(frame.f_globals)] = frame.f_globals
    return f"module {frame.f_globals.get('__name__', '?')}"


def forget_all() -> None:
    """No code reads TF1 shapes any more (`uninstall()`)."""
    with _lock:
        _builtins_wanting.clear()
        _globals_wanting.clear()
