"""eval_metric_ops -> per-step values that already include the step's update.

A v1 metric returns `(value, update_op)` where `value` read the metric variables when it
was built, i.e. before `update_op` in program order; inside a tf.function the reads are
ordered by program order, so returning `value` from the step would report the state before
the last batch. tf.estimator ran `value` in a separate session.run after all updates; here
the value's read-dependent subgraph is rebuilt after the updates, in the same step.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam.internals import keras_variable_backing

_READ_OPS = frozenset({"ReadVariableOp", "VarHandleOp", "ResourceGather"})
_WRITE_OPS = frozenset({"AssignAddVariableOp", "AssignVariableOp", "AssignSubVariableOp"})


def _depends_on_state(tensor: tf.Tensor, memo: dict) -> bool:
    op = tensor.op
    if op in memo:
        return memo[op]
    memo[op] = False  # guards against cycles
    result = op.type in _READ_OPS or any(_depends_on_state(t, memo) for t in op.inputs)
    memo[op] = result
    return result


def _rebuild(tensor: tf.Tensor, memo: dict, copies: dict) -> tf.Tensor:
    """Copies the part of `tensor`'s subgraph that reads variables; reuses the rest."""
    op = tensor.op
    if not _depends_on_state(tensor, memo):
        return tensor
    if op not in copies:
        inputs = [_rebuild(t, memo, copies) for t in op.inputs]
        attrs = {k: op.node_def.attr[k] for k in op.node_def.attr}
        copies[op] = op.graph.create_op(
            op.type,
            inputs,
            [t.dtype for t in op.outputs],
            name=op.name.split("/")[-1] + "_final",
            attrs=attrs,
        )
    return copies[op].outputs[tensor.value_index]


def value_after(value: Any, updates: list) -> Any:
    """The metric value, recomputed so that it reads the variables after `updates`.

    `value` may be a nested tuple / dict of tensors (tf.estimator 2.15 accepted such metric
    values and reported the same structure); every tensor in it is recomputed.
    """
    memo: dict = {}
    copies: dict = {}

    def after(leaf: Any) -> tf.Tensor:
        with tf.control_dependencies(updates):
            return tf.identity(_rebuild(tf.convert_to_tensor(leaf), memo, copies))

    return tf.nest.map_structure(after, value)


def writes_to(variables: list[tf.Variable]) -> list[tf.Operation]:
    """Ops of the traced graph that write `variables` (Keras metric updates, for one)."""
    graph = tf.compat.v1.get_default_graph()
    handles = {id(v.handle) for v in variables}
    # A traced graph reads outer variables through its captures; a TF1 graph (a library's
    # own, AdaNet's bookkeeping) holds its variables' handles itself.
    internal = {
        id(inner) for outer, inner in getattr(graph, "captures", ()) if id(outer) in handles
    }
    internal |= handles
    return [
        op
        for op in graph.get_operations()
        if op.type in _WRITE_OPS and op.inputs and id(op.inputs[0]) in internal
    ]


def metric_values(
    eval_metric_ops: dict, store: VariableStore
) -> tuple[dict[str, Any], list[tf.Operation]]:
    """Returns `(values, updates)`: every metric's value read after all of `updates`.

    A value is a tensor, or the nested tuple / dict of tensors the metric returned.
    """
    pending, updates = metric_updates(eval_metric_ops, store)
    return values_after(pending, updates), updates


def metric_updates(eval_metric_ops: dict, store: VariableStore) -> tuple[dict, list]:
    """Returns `(pending, updates)`: each metric's value (a tensor structure, or the Keras
    metric) and the update ops of the step; `values_after` reads the values after them."""
    updates, pending = [], {}
    keras_variables: list[tf.Variable] = []
    for name, metric in eval_metric_ops.items():
        if isinstance(metric, keras.metrics.Metric):
            # Keras metrics were updated inside the model_fn; their variables are local.
            variables = [keras_variable_backing(v) for v in metric.variables]
            store.mark_local(variables)
            store.keras_metrics.add(metric)
            keras_variables += variables
            pending[name] = metric
        else:
            value, update_ops = metric
            for update_op in tf.nest.flatten(update_ops):
                if not isinstance(update_op, (tf.Tensor, tf.Operation)):
                    update_op = update_op.op  # e.g. the unread variable of a v1 assign_add
                updates.append(update_op)
            pending[name] = value
    # Fetch each update once, as an operation (a Tensor update_op is its op's output).
    writes = writes_to(store.local_variables() + keras_variables)
    ops = [u.op if isinstance(u, tf.Tensor) else u for u in updates + writes]
    return pending, list({id(op): op for op in ops}.values())


def values_after(pending: dict, updates: list) -> dict[str, Any]:
    """The metrics' values read after all of `updates` (under a strategy: called in
    cross-replica context, where a metric's SUM-aggregated variables read as the total)."""
    values = {}
    for name, item in pending.items():
        if isinstance(item, keras.metrics.Metric):
            with tf.control_dependencies(updates):
                values[name] = tf.convert_to_tensor(item.result())
        else:
            values[name] = value_after(item, updates)
    return values
