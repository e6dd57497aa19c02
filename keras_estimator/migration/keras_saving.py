"""Keras weight files a tf.keras 2 program names that Keras 3 refuses.

tf.keras 2's `model.save_weights(path)` wrote a TensorFlow checkpoint to a path without a
suffix (and HDF5 to `.h5`, or as `save_format=` said); `load_weights` read either back.
Keras 3, which `tf.keras` is on TensorFlow 2.21 (under `keras-estimator run` as under plain
Python), writes weights only to a `.weights.h5` file (`.weights.json` when sharded) and reads
only `.weights.h5`, `.weights.json`, `.keras` and legacy `.h5` / `.hdf5` files:

- `save_weights("./weights/my_model")` raises ValueError "The filename must end in
  `.weights.h5`" (TensorFlow's r1 Keras guide does this);
- `save_weights(path, save_format="h5")` raises TypeError (no `save_format` argument);
- `load_weights("./weights/my_model")` raises ValueError "File format not supported".

Judged from the path's text where the code shows how it ends: a string, an f-string or a
`+` ending in text, `os.path.join(..., "name")`. A path computed otherwise is not judged.
Nothing is imported or run.
"""

from __future__ import annotations

import ast
import os

from keras_estimator.migration import tf1_api
from keras_estimator.migration.data_access import Use

SAVE_SUFFIX = ".weights.h5"
SHARDED_SUFFIXES = ("weights.h5", "weights.json")  # with max_shard_size (Keras 3's test)
LOAD_SUFFIXES = (".weights.h5", ".weights.json", ".keras", ".h5", ".hdf5")
_FUNCTIONS = ("keras.saving.save_weights", "keras.saving.load_weights")  # (model, filepath)
_OLD_SUFFIXES = (".h5", ".hdf5", ".ckpt", ".tf")


def _trailing_text(node: ast.AST | None) -> tuple[str, bool] | None:
    """(how the path `node` builds ends, whether that is the whole path), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.JoinedStr) and node.values:
        last = _trailing_text(node.values[-1])
        return None if last is None else (last[0], False)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        last = _trailing_text(node.right)
        return None if last is None else (last[0], False)
    if isinstance(node, ast.Call) and node.args and _called(node) == "join":
        last = _trailing_text(node.args[-1])
        return None if last is None else (last[0], False)
    return None


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _suggested(text: str) -> str:
    for old in _OLD_SUFFIXES:
        if text.endswith(old):
            return text[: -len(old)] + SAVE_SUFFIX
    return text + SAVE_SUFFIX


def _path_argument(call: ast.Call, bindings: dict[str, str]) -> ast.AST | None:
    """The filepath of `model.save_weights(path)` or `keras.saving.save_weights(model, path)`."""
    keyword = next((k.value for k in call.keywords if k.arg == "filepath"), None)
    if keyword is not None:
        return keyword
    dotted = tf1_api.resolve(call.func, bindings) or ""
    position = 1 if dotted.endswith(_FUNCTIONS) else 0
    return call.args[position] if len(call.args) > position else None


def _save_weights(call: ast.Call, path: ast.AST | None) -> Use | None:
    keywords = {k.arg for k in call.keywords if k.arg}
    problems, fixes = [], []
    if "save_format" in keywords:  # checked first: Python refuses the call's arguments
        problems.append(
            "Keras 3's save_weights has no save_format argument: TypeError \"got an "
            "unexpected keyword argument 'save_format'\""
        )
        fixes.append("no save_format (the file's suffix says the format)")
    text = _trailing_text(path)
    if text is not None:
        suffixes = SHARDED_SUFFIXES if "max_shard_size" in keywords else (SAVE_SUFFIX,)
        if not text[0].endswith(suffixes):
            shown = repr(text[0]) if text[1] else f"a path ending {text[0]!r}"
            problems.append(
                f"Keras 3 writes weights only to a `{SAVE_SUFFIX}` file: save_weights({shown}) "
                f'raises ValueError "The filename must end in `{SAVE_SUFFIX}`" (tf.keras 2 '
                "wrote a TensorFlow checkpoint there, or HDF5 for `.h5`)"
            )
            example = f" (e.g. {_suggested(text[0])!r})" if text[1] else ""
            folder = os.path.dirname(text[0]) if text[1] else ""
            if folder not in ("", "."):  # a checkpoint made its folder; an .h5 file does not
                example += f" in a folder that exists (os.makedirs({folder!r}, exist_ok=True))"
            fixes.append(
                f"a path ending in `{SAVE_SUFFIX}`{example}, the same in the load_weights that "
                "reads it back; for a TensorFlow checkpoint, "
                "tf.train.Checkpoint(model=model).write(path)"
            )
    if not problems:
        return None
    return Use(call.lineno, "Model.save_weights", "unsupported", "; ".join(problems),
               "; ".join(fixes))  # fmt: skip


def _load_weights(call: ast.Call, path: ast.AST | None) -> Use | None:
    text = _trailing_text(path)
    if text is None or text[0].endswith(LOAD_SUFFIXES):
        return None
    shown = repr(text[0]) if text[1] else f"a path ending {text[0]!r}"
    example = f" (e.g. {_suggested(text[0])!r})" if text[1] else ""
    return Use(
        call.lineno,
        "Model.load_weights",
        "unsupported",
        "Keras 3 reads weights only from `.weights.h5`, `.weights.json`, `.keras` or legacy "
        f'`.h5` / `.hdf5` files: load_weights({shown}) raises ValueError "File format not '
        'supported" (tf.keras 2 read a TensorFlow checkpoint there)',
        f"the `{SAVE_SUFFIX}` file save_weights wrote{example}; for a TensorFlow checkpoint "
        "that tf.train.Checkpoint(model=model).write(path) wrote, the same object's read(path)",
    )


def uses(nodes: list[ast.AST], bindings: dict[str, str]) -> list[Use]:
    """The save_weights / load_weights calls of a file that uses Keras (through TensorFlow
    or `keras`) whose path Keras 3 refuses. A file on `tf_keras` (Keras 2) is not judged."""
    roots = {dotted.split(".")[0] for dotted in bindings.values()}
    if "tf_keras" in roots or not roots & {"tensorflow", "keras"}:
        return []
    found = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        if name == "save_weights":
            use = _save_weights(node, _path_argument(node, bindings))
        elif name == "load_weights":
            use = _load_weights(node, _path_argument(node, bindings))
        else:
            continue
        if use is not None:
            found.append(use)
    return found
