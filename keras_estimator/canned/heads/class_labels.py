"""Class labels: ids from integers or from a label vocabulary, range-checked at run time."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads.base_head import as_column


def check_vocabulary(label_vocabulary: Any, n_classes: int) -> list[str] | None:
    if label_vocabulary is None:
        return None
    if not isinstance(label_vocabulary, list | tuple):
        raise ValueError(
            f"label_vocabulary should be a list or a tuple. Given type: {type(label_vocabulary)}"
        )
    if len(label_vocabulary) != n_classes:
        raise ValueError(
            '"label_vocabulary" does not have "n_classes" items. '
            f"len(label_vocabulary)={len(label_vocabulary)}, n_classes={n_classes}, "
            f"label_vocabulary={list(label_vocabulary)}"
        )
    if len(set(label_vocabulary)) != len(label_vocabulary):
        raise ValueError(f"label_vocabulary has duplicate entries: {list(label_vocabulary)}")
    return [str(v) for v in label_vocabulary]


def class_ids(labels: Any, n_classes: int, vocabulary: list[str] | None) -> tf.Tensor:
    """[batch, 1] int64 class ids; an assertion fails on ids outside [0, n_classes).

    Binary float labels are the binary head's business (soft labels in [0, 1]).
    """
    labels = as_column(labels)
    if labels.shape[-1] is not None and labels.shape[-1] != 1:
        raise ValueError(
            "Mismatched label shape. Expected labels dimension=1.  Received "
            f"{labels.shape[-1]}. Suggested Fix: If your classifier expects one-hot encoding "
            "label, check your n_classes argument to the estimator and/or the shape of your "
            "label. Otherwise, check the shape of your label."
        )
    if vocabulary is not None:
        if labels.dtype != tf.string:
            raise ValueError(
                f"Labels dtype should be string when label_vocabulary is given, got "
                f"{labels.dtype.name}. Expected labels that are entries of label_vocabulary."
            )
        matches = tf.equal(labels, tf.constant(vocabulary)[tf.newaxis, :])  # [batch, n]
        found = tf.reduce_any(matches, axis=1, keepdims=True)
        ids = tf.argmax(tf.cast(matches, tf.int32), axis=1, output_type=tf.int64)[:, None]
        ids = tf.where(found, ids, tf.constant(-1, tf.int64))
        low = f"Labels must be >= 0 (a label is not in label_vocabulary {vocabulary})."
    else:
        if labels.dtype == tf.string:
            raise ValueError(
                "Labels are strings but no label_vocabulary was given. Expected integer class "
                "ids in [0, n_classes), or pass label_vocabulary=[...] naming the classes."
            )
        if labels.dtype.is_floating and n_classes > 2:
            raise ValueError(
                f"Labels dtype should be integer. Instead got {labels.dtype}. Expected class "
                "ids in [0, n_classes) (cast them with tf.cast(labels, tf.int64))."
            )
        ids = tf.cast(labels, tf.int64)
        low = "Labels must be >= 0."
    checks = [
        tf.debugging.assert_less_equal(
            ids, tf.constant(n_classes - 1, tf.int64),
            message="Labels must be <= n_classes - 1",
        ),
        tf.debugging.assert_non_negative(ids, message=low),
    ]  # fmt: skip
    with tf.control_dependencies(checks):
        return tf.identity(ids)


def class_names(ids: tf.Tensor, n_classes: int, vocabulary: list[str] | None) -> tf.Tensor:
    """Class names for ids: the vocabulary entries, or the ids as strings."""
    if vocabulary is not None:
        return tf.gather(tf.constant(vocabulary), ids)
    return tf.strings.as_string(ids)


def all_classes(batch_like: tf.Tensor, n_classes: int, vocabulary: list[str] | None):
    """(all_class_ids int32 [batch, n], all_classes string [batch, n])."""
    batch = tf.shape(batch_like)[0]
    ids = tf.tile(tf.range(n_classes, dtype=tf.int32)[tf.newaxis, :], [batch, 1])
    names = vocabulary if vocabulary is not None else [str(i) for i in range(n_classes)]
    strings = tf.tile(tf.constant(names)[tf.newaxis, :], [batch, 1])
    return ids, strings
