"""The checkpoint names tf.estimator 2.15's v1 canned estimators gave optimizer slots.

A `tf.compat.v1.train` optimizer names a slot `<variable>/<optimizer name>` (`_1` for a
second slot), inside the variable scope where `minimize` runs. 2.15's DNN and linear
models minimised inside their own (`dnn`, `linear`) scope, whose variables were
partitioned (one partition); TensorFlow saved such a slot as the primary's full name
plus the tail of the slot's name past the length of the partition's name, which gives
`dnn/hiddenlayer_0/kernel/t_0/Adagrad` and `linear/linear_model/x/weights/part_0/Ftrl`.
The DNNLinearCombined and Baseline models minimised outside those scopes:
`dnn/logits/bias/Adagrad`, `baseline/bias/Ftrl`. `v1_slot_names` gives our slots those
names, so 2.15's model_dirs resume with their optimizer state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1
_PARTITION = "/part_0"  # the single partition of 2.15's partitioned variables


def slot_checkpoint_name(scope: str, primary: str, slot: str, partitioned: bool) -> str:
    """2.15's saved name of slot `slot` of `primary`, created in variable scope `scope`.

    Example:
        >>> slot_checkpoint_name("dnn", "dnn/logits/bias", "Adagrad", partitioned=True)
        'dnn/logits/bias/t_0/Adagrad'
    """
    if not partitioned:
        return f"{primary}/{slot}"
    prefix = f"{scope}/" if scope else ""
    created = f"{prefix}{primary}{_PARTITION}/{slot}"  # the slot variable's own name
    return f"{primary}/{created[len(primary + _PARTITION) + 1 :]}"


def _variable_name(variable: Any) -> str:
    return variable.name.split(":")[0]


@contextlib.contextmanager
def v1_slot_names(partitioned: bool) -> Iterator[None]:
    """Slots that v1 optimizers create inside this block get 2.15's checkpoint names.

    `partitioned`: whether 2.15 created the primaries under a partitioner (the v1 DNN
    and linear models) and minimised in the same variable scope.
    """
    graph = _V1.get_default_graph()
    scope = _V1.get_variable_scope().name
    prefix = f"{scope}/" if scope else ""

    def creator(next_creator: Any, **kwargs: Any) -> tf.Variable:
        name = (kwargs.get("name") or "").split(":")[0].strip("/")
        primaries = sorted(
            {_variable_name(v) for v in _V1.get_collection(_V1.GraphKeys.TRAINABLE_VARIABLES)},
            key=len,
            reverse=True,
        )
        for primary in primaries:
            if name.startswith(f"{prefix}{primary}/"):
                slot = name[len(prefix + primary) + 1 :]
                kwargs["name"] = slot_checkpoint_name(scope, primary, slot, partitioned) + "/"
                with graph.name_scope(None):  # a variable's name ignores the name scope
                    return next_creator(**kwargs)
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        yield


def spec_with_v1_slot_names(
    head: Any,
    features: dict,
    mode: str,
    logits: tf.Tensor,
    labels: Any,
    partitioned: bool,
    **training: Any,
) -> Any:
    """`head.create_estimator_spec` (given `optimizer=` or `train_op_fn=` as `training`)
    inside `v1_slot_names(partitioned)`: the v1 canned estimators' spec.

    Example:
        >>> spec = spec_with_v1_slot_names(head, features, mode, logits, labels,
        ...                                partitioned=True, optimizer=optimizer)
    """
    with v1_slot_names(partitioned):
        return head.create_estimator_spec(features, mode, logits, labels, **training)
