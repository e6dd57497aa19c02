"""The global step: an eager int64 variable that TF1 code can also treat as a graph variable."""

from __future__ import annotations

import inspect
from typing import Any

import tensorflow as tf

from keras_estimator.seam.internals import ResourceVariable

_RESOURCE_VARIABLE_ARGS = frozenset(inspect.signature(ResourceVariable.__init__).parameters) - {
    "self"
}


class _OpName:
    """Stands in for `variable.op` where TF1 code only wants its name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.type = "VarHandleOp"

    def __repr__(self) -> str:
        return f"<op {self.name}>"


class GlobalStepVariable(ResourceVariable):
    """`global_step`, int64, first-replica aggregation.

    TF1 hooks (StepCounterHook, ...) read `tf.train.get_global_step().op.name`; an eager
    variable has no op, so this one answers with its name.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("initial_value", 0)
        kwargs.setdefault("name", "global_step")
        kwargs.update(dtype=tf.int64, trainable=False)
        kwargs.setdefault("aggregation", tf.VariableAggregation.ONLY_FIRST_REPLICA)
        super().__init__(**kwargs)

    @classmethod
    def under(cls, strategy: tf.distribute.Strategy | None) -> tf.Variable:
        """The global step; under a strategy, a distributed variable of GlobalStepVariables."""
        if strategy is None:
            with tf.init_scope():
                return cls()

        def component(next_creator: Any, **kwargs: Any) -> tf.Variable:
            return cls(**{k: v for k, v in kwargs.items() if k in _RESOURCE_VARIABLE_ARGS})

        # The strategy's creator (inner) places a component per device through ours (outer).
        with tf.variable_creator_scope(component), strategy.scope(), tf.init_scope():
            return tf.Variable(
                0,
                dtype=tf.int64,
                name="global_step",
                trainable=False,
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            )

    @property
    def op(self):
        if tf.executing_eagerly() or not hasattr(self.handle, "graph"):
            return _OpName("global_step")
        return super().op
