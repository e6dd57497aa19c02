"""The TF1 world inside one trace: fresh collections, the global step, stable names.

A FuncGraph shares the variable collections and the v1 variable store with the eager
graph by reference, so a second trace would see the first trace's variables and raise
"Variable dense/kernel already exists". Each traced graph gets its own, once; each call
of the model_fn gets stable default names (v1 scopes and Keras auto-names).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import tensorflow as tf

from keras_estimator.checkpoint.init_from_checkpoint import recording_checkpoint_initializers
from keras_estimator.engine.keras_models import keras_models_as_tf1
from keras_estimator.engine.keras_optimizer import keras_optimizers_as_tf1
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.seam import internals

_KEYS = tf.compat.v1.GraphKeys
_PER_TRACE_COLLECTIONS = (
    _KEYS.GLOBAL_VARIABLES,
    _KEYS.LOCAL_VARIABLES,
    _KEYS.TRAINABLE_VARIABLES,
    _KEYS.MODEL_VARIABLES,
    _KEYS.METRIC_VARIABLES,
    _KEYS.GLOBAL_STEP,
    _KEYS.UPDATE_OPS,
    _KEYS.SUMMARIES,
    _KEYS.LOSSES,
    _KEYS.REGULARIZATION_LOSSES,
    _KEYS.SAVEABLE_OBJECTS,
    _KEYS.INIT_OP,
    _KEYS.LOCAL_INIT_OP,
    _KEYS.READY_OP,
    _KEYS.SAVERS,
    # Tables made eagerly earlier (an input_fn's, another call's) leave None here: TF1's
    # fresh graph per call held only this call's initializers.
    _KEYS.TABLE_INITIALIZERS,
    ("__variable_store",),  # the v1 variable store (a tuple key in TF)
    ("__varscope",),  # the v1 variable-scope store
    "global_step_read_op_cache",
)
_GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"
# A graph prepared for model_fn calls says so itself (another replica's call, or a second
# model_fn call in one trace, finds it prepared).
_PREPARED_KEY = "keras_estimator_prepared"


def _prepare_graph(graph: tf.Graph, store: VariableStore, global_step: tf.Variable) -> None:
    for key in _PER_TRACE_COLLECTIONS:
        graph.clear_collection(key)
    store.register(graph, global_step, [_KEYS.GLOBAL_VARIABLES], False)
    graph.add_to_collection(_KEYS.GLOBAL_STEP, global_step)
    with tf.name_scope("global_step_read"):
        graph.add_to_collection(_GLOBAL_STEP_READ_KEY, tf.identity(global_step.read_value()))
    graph.add_to_collection(_PREPARED_KEY, True)


def _keras_metric_variables_local(store: VariableStore) -> contextlib.AbstractContextManager:
    # A Keras metric's state is per evaluation, like a v1 metric's local variables: never
    # restored from (or required in) a checkpoint, even when the model_fn creates a metric
    # it does not return (a head's metric replaced through add_metrics, say).
    def made(variable: tf.Variable) -> None:
        store.mark_local([variable])
        # tf.keras 2 made metric variables in no collection: a Saver built in the step (a
        # hook's, AdaNet's) must not save or restore them.
        kept = tf.compat.v1.get_default_graph().get_collection_ref(_KEYS.GLOBAL_VARIABLES)
        kept[:] = [v for v in kept if v is not variable]

    return internals.keras_metric_variables_seen(made)


@contextlib.contextmanager
def tf1_graph_scope(store: VariableStore, global_step: tf.Variable) -> Iterator[tf.Graph]:
    """Runs a model_fn call as if it were building a fresh TF1 graph.

    Yields the default (traced) graph.
    """
    graph = tf.compat.v1.get_default_graph()
    with store.lock:
        if not graph.get_collection(_PREPARED_KEY):
            _prepare_graph(graph, store, global_step)
    root = tf.compat.v1.get_variable_scope()
    with (
        store.active(),
        internals.fresh_keras_auto_names(),
        internals.keras2_private_layer_names(),
        internals.logging_hooks_taking_tensor_lists(),
        internals.tensor_equality_as_in_tf1_graphs(),
        internals.variable_ops_in_traces(),
        internals.initializers_of_traced_variables_only(),
        recording_checkpoint_initializers(store.checkpoint_initializers),
        # A Saver built in a traced step would add save/restore ops run on every step.
        internals.savers_without_ops(),
        # Writers made in the step (a host_call's) must outlive the model_fn call.
        internals.summary_writers_kept(store.summary_writers),
        _keras_metric_variables_local(store),
        # Keras 3 optimizers with tf.keras 2's graph-mode surface (apply_gradients -> op).
        keras_optimizers_as_tf1(),
        # ... and models with tf.keras 2's `metrics` and `get_updates_for`.
        keras_models_as_tf1(),
    ):
        # Re-entering the root scope by object restores the default-name counters on exit,
        # so a second call in the same graph (another replica) names layers the same.
        with tf.compat.v1.variable_scope(root, auxiliary_name_scope=False):
            yield graph


def global_step_read(graph: tf.Graph) -> tf.Tensor:
    """The read of the global step taken at the start of the traced step."""
    return graph.get_collection(_GLOBAL_STEP_READ_KEY)[0]
