"""The global step: an eager int64 variable that TF1 code can also treat as a graph variable."""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import resource_variable_ops


class _OpName:
    """Stands in for `variable.op` where TF1 code only wants its name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.type = "VarHandleOp"

    def __repr__(self) -> str:
        return f"<op {self.name}>"


class GlobalStepVariable(resource_variable_ops.ResourceVariable):
    """`global_step`, int64, first-replica aggregation.

    TF1 hooks (StepCounterHook, ...) read `tf.train.get_global_step().op.name`; an eager
    variable has no op, so this one answers with its name.
    """

    def __init__(self) -> None:
        super().__init__(
            0,
            dtype=tf.int64,
            name="global_step",
            trainable=False,
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
        )

    @property
    def op(self):  # type: ignore[override]
        if tf.executing_eagerly() or not hasattr(self.handle, "graph"):
            return _OpName("global_step")
        return super().op
