"""Name-keyed store for every variable a model_fn creates, across traces and modes.

Keras traces a step function more than once (and each mode is its own trace), while a
TF1 model_fn creates its variables on every call. A `tf.variable_creator_scope` creator
keyed by the name TF1 would have given the variable hands the first variable back on
every later call, so all traces share one set of variables with TF1 names.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.seam import internals

_GLOBAL = tf.compat.v1.GraphKeys.GLOBAL_VARIABLES
_LOCAL = tf.compat.v1.GraphKeys.LOCAL_VARIABLES
_TRAINABLE = tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES


def _made_elsewhere(variable: tf.Variable) -> bool:
    """Whether a local (metric) variable was made under a strategy and is now asked for
    outside one, or the other way round. TF1 made each mode's metrics afresh in its own
    graph: a model_fn building its metrics in every mode gets, in EVAL outside the training
    strategy, plain ones, not TRAIN's per-replica (SyncOnRead) variables, which cannot be
    updated outside a replica."""
    return isinstance(variable, tf.distribute.DistributedValues) != tf.distribute.has_strategy()


class VariableStore:
    """Holds the variables of one Estimator's model, keyed by TF1 name."""

    def __init__(self) -> None:
        self.variables: dict[str, tf.Variable] = {}
        self.local_names: set[str] = set()
        self.lock = threading.RLock()
        self._active = 0
        self._recording: set[str] | None = None
        self._registered: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._creating = 0  # creating() blocks open (the Estimator's own traces)
        # Keras metrics seen in eval_metric_ops; some may hold variables made outside.
        self.keras_metrics: weakref.WeakSet = weakref.WeakSet()
        # (variable, checkpoint, tensor name) from init_from_checkpoint in the model_fn.
        self.checkpoint_initializers: list = []
        # Summary writers the model_fn created while traced (kept alive, flushed by train).
        self.summary_writers: list = []

    # -- lifecycle -------------------------------------------------------------
    @contextlib.contextmanager
    def creating(self) -> Iterator[set[str]]:
        """Installs the creator (eagerly, around the tracing of a step).

        Yields the set of variable names the traces inside use, created or reused: what
        a checkpoint must provide for that step.
        """
        previous, self._recording = self._recording, set()
        self._creating += 1
        try:
            with tf.variable_creator_scope(self._creator):
                yield self._recording
        finally:
            self._creating -= 1
            self._recording = previous

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Makes the creator act; only while a model_fn runs."""
        with self.lock:
            self._active += 1
        try:
            if self._creating:
                yield
            else:
                # Traced by Keras itself (`keras_model.fit`): the creator is not installed.
                with tf.variable_creator_scope(self._creator):
                    yield
        finally:
            with self.lock:
                self._active -= 1

    # -- queries ---------------------------------------------------------------
    def global_variables(self) -> dict[str, tf.Variable]:
        """Every variable that belongs in a checkpoint (not metric/local ones)."""
        return {k: v for k, v in self.variables.items() if k not in self.local_names}

    def is_empty(self) -> bool:
        """True before the model_fn made a variable (the global step aside)."""
        return not self.variables.keys() - {"global_step"}

    def local_variables(self) -> list[tf.Variable]:
        return [self.variables[k] for k in sorted(self.local_names) if k in self.variables]

    def mark_local(self, variables: list[tf.Variable]) -> None:
        by_id = {id(v): k for k, v in self.variables.items()}
        for v in variables:
            key = by_id.get(id(v))
            if key is not None:
                self.local_names.add(key)

    def reset_locals(self) -> None:
        """Zeroes metric (local) variables, as a fresh tf.estimator session did."""
        for v in self.local_variables():
            v.assign(tf.zeros(v.shape, v.dtype))
        for metric in list(self.keras_metrics):
            metric.reset_state()

    # -- the creator -------------------------------------------------------------
    def _creator(self, next_creator: Callable, **kwargs: Any) -> tf.Variable:
        if not self._active:
            return next_creator(**kwargs)
        graph = tf.compat.v1.get_default_graph()
        name = kwargs.get("name")
        # v1 slot variables arrive as "dense/kernel/Adam/": a trailing "/" names the scope
        # itself, which TF1 turned into the variable name "dense/kernel/Adam".
        absolute = name is not None and name.endswith("/")
        name = "Variable" if name is None else (name.split(":")[0].strip("/") or "Variable")
        # unique_name prefixes the current name scope, as TF1 did for the variable's op; a
        # name ending in "/" is already whole (a slot made inside a variable_scope arrives
        # as "scope/dense/kernel/Adam/" while the name scope is "scope/").
        with graph.name_scope(None) if absolute else contextlib.nullcontext():
            key = graph.unique_name(name, mark_as_used=True)
        collections = kwargs.get("collections")
        is_local = _LOCAL in (collections or ())
        if is_local:
            key = _shared_across_replicas(key)
        with self.lock:
            variable = self.variables.get(key)
            if variable is not None and is_local and _made_elsewhere(variable):
                variable = None  # a metric of TRAIN's replicas, now evaluated outside them
            if variable is None:
                variable = self._create(key, next_creator, kwargs)
                self.variables[key] = variable
                if is_local:
                    self.local_names.add(key)
            if self._recording is not None:
                self._recording.add(key)
        self.register(graph, variable, collections, kwargs.get("trainable"))
        return variable

    def _create(self, key: str, next_creator: Callable, kwargs: dict) -> tf.Variable:
        initial_value = kwargs.get("initial_value")
        if not callable(initial_value) and isinstance(initial_value, tf.Tensor):
            if not tf.executing_eagerly() and not hasattr(initial_value, "numpy"):
                kwargs["initial_value"] = _value_at_creation(key, initial_value)
        # A trailing "/" makes the name absolute: init_scope keeps the caller's name scope,
        # which would otherwise be prefixed a second time ("dense/dense/kernel").
        kwargs["name"] = key + "/"
        kwargs.pop("collections", None)
        # A device function as caching device (tf.compat.v1.nn.dynamic_rnn sets one on its
        # scope) cannot apply to a variable made eagerly; TF2 variables cache nothing.
        if callable(kwargs.get("caching_device")):
            kwargs["caching_device"] = None
        # The variable is made eagerly, once: tf.function's own creator must not record it
        # as created by the trace, or it traces the step (and the model_fn) a second time.
        kwargs["experimental_enable_variable_lifting"] = False
        with tf.init_scope():
            return next_creator(**kwargs)

    def register(self, graph: Any, variable: tf.Variable, collections: Any, trainable: Any) -> None:
        """Adds the variable to the traced graph's collections, as TF1 would have."""
        seen = self._registered.setdefault(graph, set())
        if id(variable) in seen:
            return
        seen.add(id(variable))
        names = list(collections) if collections else [_GLOBAL]
        is_trainable = trainable if trainable is not None else variable.trainable
        if is_trainable and _TRAINABLE not in names and _LOCAL not in names:
            names.append(_TRAINABLE)
        for collection in names:
            graph.add_to_collection(collection, variable)


def _value_at_creation(key: str, initial_value: tf.Tensor) -> Any:
    """The value of a tensor the model_fn computed to initialise a variable
    (`tf.get_variable("w", initializer=tf.truncated_normal([3, 3], stddev=0.1))`), computed
    once, now, as TF1's initializer op ran once: the ops it needs are cut out of the step
    being traced and run eagerly. A constant is taken as it is."""
    constant = tf.get_static_value(initial_value)
    if constant is not None:
        return np.asarray(constant)
    graph = initial_value.graph
    error: Exception | None = None
    if hasattr(graph, "internal_captures"):  # a traced function's graph (FuncGraph)
        try:
            compute = internals.prune_graph(graph, None, initial_value, with_arguments=False)
            with tf.init_scope():
                return compute()
        except (ValueError, tf.errors.OpError) as failed:
            error = failed
    raise ValueError(
        f"Variable {key!r} is created inside model_fn from a tensor that cannot be computed "
        "when the variable is created: it depends on the step's input (features / labels) or "
        "is made inside a tf.while_loop / tf.cond body. Expected an initial value computed "
        "from constants, random ops and other variables (tf.truncated_normal(shape, "
        "stddev=0.1)), an initializer (tf.compat.v1.get_variable(..., initializer=...)) or a "
        "callable initial_value (tf.Variable(lambda: ...)). Fix: use one of those. Received: "
        f"initial_value={initial_value.name!r} ({error})"
    ) from error


def _shared_across_replicas(key: str) -> str:
    """A metric variable made by replica N > 0 of a MirroredStrategy (its name scope is
    "replica_N/"): the one variable of replica 0, whose components the strategy shares."""
    context = tf.distribute.get_replica_context()
    if context is None or not tf.distribute.has_strategy():
        return key
    replica = tf.get_static_value(context.replica_id_in_sync_group)
    prefix = f"replica_{replica}/"
    return key[len(prefix) :] if replica and key.startswith(prefix) else key
