"""A Keras 3 optimizer applied inside a traced TF1-style step, as one train_op."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

# The variable writes an optimizer's apply_gradients adds: weights, slots, iterations.
_WRITE_OPS = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "ResourceApply",
              "ResourceScatter", "ResourceSparseApply")  # fmt: skip


def apply_as_train_op(optimizer: Any, pairs: list, name: str = "keras_train_op") -> tf.Operation:
    """Runs `optimizer.apply_gradients(pairs)` in the default graph; returns its writes grouped.

    Keras returns its iteration variable, not an op, so the train_op is every write it added.
    """
    graph = tf.compat.v1.get_default_graph()
    first_new_op = len(graph.get_operations())
    optimizer.apply_gradients(pairs)
    writes = [op for op in graph.get_operations()[first_new_op:] if op.type.startswith(_WRITE_OPS)]
    return tf.group(*writes, name=name)
