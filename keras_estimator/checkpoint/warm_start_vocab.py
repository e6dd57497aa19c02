"""Vocabulary remapping for warm starts (`VocabInfo`): rows or columns follow their token.

Rows (axis 0) or columns (axis 1) of words present in both vocabularies are copied from
their old position; new words and out-of-vocabulary buckets get `backup_initializer`
values (zeros without one), filled in the order and shapes TF's remapping used.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np
import tensorflow as tf

logger = logging.getLogger("keras_estimator")


def _read_vocab(path: str, name: str) -> list[str]:
    try:
        with tf.io.gfile.GFile(os.fsdecode(path), "rb") as f:
            text = f.read().decode("utf-8")
    except (tf.errors.OpError, OSError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"Could not read vocabulary file {path!r} for {name}: {exc}. Expected a UTF-8 text "
            "file with one token per line. Fix: check the path in the VocabInfo of this "
            f"variable. Received: path={path!r}"
        ) from exc
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    tokens = [line[:-1] if line.endswith("\r") else line for line in lines]
    if "" in tokens:
        raise ValueError(
            f"Invalid content in {path}: empty line found (line {tokens.index('') + 1}). "
            f"Vocabulary files hold one non-empty token per line (warm-starting {name}). Fix: "
            f"remove the empty line. Received: path={path!r}"
        )
    return tokens


def _vocab_remapping(info: Any, count: int, name: str) -> tuple[np.ndarray, int]:
    """Old index (or -1) of each of the first `count` new-vocabulary entries."""
    new_tokens = _read_vocab(info.new_vocab, name)
    if len(new_tokens) < count:
        raise ValueError(
            f"Vocabulary {info.new_vocab} has {len(new_tokens)} entries, fewer than the "
            f"{count} that warm-starting {name} needs. Fix: set new_vocab_size to at most "
            f"{len(new_tokens)}, or use the vocabulary file the model was built with. "
            f"Received: new_vocab_size={info.new_vocab_size}, new_vocab={info.new_vocab!r}"
        )
    old_tokens = _read_vocab(info.old_vocab, name)
    old_size = info.old_vocab_size
    if info.axis == 1 and old_size is not None and old_size > 0:
        logger.warning("old_vocab_size is ignored for axis=1 (as in tf.estimator): %s", name)
        old_size = -1
    if old_size is not None and old_size > 0:
        if old_size > len(old_tokens):
            raise ValueError(
                f"Invalid vocab_size in {info.old_vocab}: expected {old_size} but got "
                f"{len(old_tokens)} (old_vocab_size for {name}). Fix: set old_vocab_size to "
                f"at most {len(old_tokens)}, or -1 for the whole file. "
                f"Received: old_vocab_size={old_size}, old_vocab={info.old_vocab!r}"
            )
        old_tokens = old_tokens[:old_size]
    old_index: dict[str, int] = {}
    for i, token in enumerate(old_tokens):
        if token in old_index:
            raise ValueError(
                f"Vocabulary {info.old_vocab} lists {token!r} twice (lines "
                f"{old_index[token] + 1} and {i + 1}); cannot warm-start {name}. Expected "
                f"unique tokens. Fix: deduplicate the file. Received: old_vocab={info.old_vocab!r}"
            )
        old_index[token] = i
    remap = np.array([old_index.get(t, -1) for t in new_tokens[:count]], dtype=np.int64)
    present = remap[remap >= 0]
    if len(np.unique(present)) != len(present):
        raise ValueError(
            f"Vocabulary {info.new_vocab} lists a token of {info.old_vocab} more than once "
            f"among its first {count} entries; cannot warm-start {name}. Expected unique "
            f"tokens. Fix: deduplicate the file. Received: new_vocab={info.new_vocab!r}"
        )
    return remap, len(present)


def _backup_values(initializer: Any, shape: list[int], dtype: np.dtype, name: str) -> np.ndarray:
    if initializer is None:
        return np.zeros(shape, dtype)
    values = np.asarray(tf.convert_to_tensor(initializer(shape)))
    if values.size != int(np.prod(shape)):
        raise ValueError(
            f"backup_initializer for {name} returned the wrong shape. Expected {shape}. Fix: "
            "return initializer(shape) values of the shape asked for (e.g. "
            "tf.compat.v1.zeros_initializer()). "
            f"Received: backup_initializer(...).shape={list(values.shape)}"
        )
    return values.reshape(shape).astype(dtype)


def remap_with_vocab(
    name: str, var_shape: list[int], dtype: np.dtype, old: np.ndarray, info: Any, prev: str
) -> np.ndarray:
    """The new value of a vocabulary-backed matrix, as tf.estimator's remapping builds it."""
    if not (info.new_vocab and info.new_vocab_size and info.old_vocab):
        raise ValueError(
            "Invalid args: Must provide all of [current_vocab_path, "
            f"current_vocab_size, prev_ckpt, prev_vocab_path}}. (VocabInfo of {name}) Fix: set "
            "new_vocab, new_vocab_size and old_vocab in its VocabInfo. "
            f"Received: new_vocab={info.new_vocab!r}, new_vocab_size={info.new_vocab_size!r}, "
            f"old_vocab={info.old_vocab!r}"
        )
    initializer = info.backup_initializer
    if initializer is not None and not callable(initializer):
        raise TypeError(
            f"initializer must be callable, instead of being {initializer} of type "
            f"{type(initializer)}. Fix: pass backup_initializer=an initializer such as "
            "tf.compat.v1.zeros_initializer(), or None. "
            f"Received: backup_initializer={initializer!r}"
        )
    oov = info.num_oov_buckets
    if oov is None or oov < 0:
        raise ValueError(
            f"num_oov_buckets must be >= 0, but received {oov} (VocabInfo of {name}). Fix: pass "
            f"num_oov_buckets=0 or more. Received: num_oov_buckets={oov!r}"
        )
    vector = len(var_shape) == 1 and info.axis == 0  # a bias: one column
    shape = [var_shape[0], 1] if vector else list(var_shape)
    old = old.reshape(-1, 1) if vector and old.ndim == 1 else old
    if len(shape) != 2 or old.ndim != 2:
        raise ValueError(
            f"Warm-starting {name} with a vocabulary needs a matrix, but it is not one. "
            "Expected a 2-D variable and checkpoint tensor (or a 1-D bias with axis=0). Fix: "
            "give VocabInfo only for embedding / weight matrices. "
            f"Received: variable shape={list(var_shape)}, {prev} shape={list(old.shape)}"
        )
    rows, cols = shape
    if info.axis == 0:
        if rows > info.new_vocab_size + oov:
            raise ValueError(
                f"Variable {name} has {rows} rows, more than new_vocab_size "
                f"({info.new_vocab_size}) + num_oov_buckets ({oov}) = "
                f"{info.new_vocab_size + oov}. Fix: set new_vocab_size and num_oov_buckets to "
                f"the sizes the variable was built with. Received: rows={rows}"
            )
        loaded = min(rows, info.new_vocab_size)
        row_map, rows_present = _vocab_remapping(info, loaded, name)
        col_map, cols_present, oov_rows, oov_cols = np.arange(cols), cols, rows - loaded, 0
    else:
        if cols != info.new_vocab_size + oov:
            raise ValueError(
                f"Expected 2nd dim of shape to be new_col_vocab_size ({info.new_vocab_size}) + "
                f"num_col_oov_buckets ({oov}) = {info.new_vocab_size + oov}, but received "
                f"shape: {list(var_shape)} (variable {name}). Fix: set new_vocab_size and "
                "num_oov_buckets to the sizes the variable was built with. "
                f"Received: columns={cols}"
            )
        loaded = rows
        col_map, cols_present = _vocab_remapping(info, info.new_vocab_size, name)
        row_map, rows_present, oov_rows, oov_cols = np.arange(rows), rows, 0, oov
    if info.axis == 0 and old.shape[1] != cols:
        raise ValueError(
            f"Tensor {prev} has shape {list(old.shape)}, where the size of its 2nd dimension "
            f"is {old.shape[1]} instead of being equal to num_cols={cols} (variable {name}). "
            "Fix: check that the checkpoint was written by this model (or map the name with "
            f"var_name_to_prev_var_name). Received: {prev} shape={list(old.shape)}"
        )
    if old.shape[0] <= row_map.max(initial=-1) or old.shape[1] <= col_map.max(initial=-1):
        raise ValueError(
            f"Checkpoint tensor {prev} has shape {list(old.shape)}, too small for the "
            f"vocabulary remapping of variable {name} {list(var_shape)} (axis={info.axis}). "
            "Expected old_vocab to be the vocabulary this checkpoint was trained with. Fix: "
            "pass that file as old_vocab (and old_vocab_size). "
            f"Received: old_vocab={info.old_vocab!r}, {prev} shape={list(old.shape)}"
        )
    core = np.zeros([loaded, len(col_map)], dtype)
    hit = (row_map >= 0)[:, None] & (col_map >= 0)[None, :]
    if rows_present and cols_present:
        core[hit] = old[np.ix_(np.maximum(row_map, 0), np.maximum(col_map, 0))][hit]
    missing = core.size - rows_present * cols_present
    if missing:  # filled in row-major order, from one [missing, 1] call, as TensorFlow did
        core[~hit] = _backup_values(initializer, [missing, 1], dtype, name).ravel()
    if oov_rows:
        extra = _backup_values(initializer, [oov_rows, core.shape[1]], dtype, name)
        core = np.concatenate([core, extra], axis=0)
    if oov_cols:
        extra = _backup_values(initializer, [core.shape[0], oov_cols], dtype, name)
        core = np.concatenate([core, extra], axis=1)
    return core.reshape(var_shape)


# -- warm_start ----------------------------------------------------------------------------
