"""Calling an input_fn and turning whatever it returns into one tf.data.Dataset.

The dataset always yields `(features, labels)`, or `(features,)` when there are no labels.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.runtime.queue_input import (
    dataset_from_queue_input,
    epoch_limits_run_in_a_graph,
    needs_a_graph,
)
from keras_estimator.seam.internals import v1_iterators_made_by
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.fn_args import fn_args, required_fn_args

logger = logging.getLogger("keras_estimator")
_LEN_2 = "input_fn should return (features, labels) as a len 2 tuple."

_INPUT_FN_ARGS = ("mode", "params", "config", "input_context")
_input_fn_lock = threading.Lock()


class _Recovery:
    """What one input_fn call did with v1 iterators: the datasets whose `get_next()` it
    called, and the placeholders handed out for their elements, all in one scratch graph.

    Operations the input_fn applies to those placeholders (casting, reshaping, building
    dicts) are built into that graph too, as TensorFlow builds an op on graph tensors
    even when executing eagerly; `dataset()` replays them in a `dataset.map`.
    """

    def __init__(self) -> None:
        self.graph = tf.Graph()
        self.datasets: list[tf.data.Dataset] = []
        self.holders: dict[int, tuple[int, int, tf.Tensor]] = {}
        # From the first get_next() to input_fn's return, the scratch graph is the default
        # (graph mode): what input_fn builds on the elements goes into it, as in 2.15's graph.
        self.in_graph = contextlib.ExitStack()

    def placeholders_for(self, dataset: tf.data.Dataset) -> Any:
        if not self.holders:
            self.in_graph.enter_context(self.graph.as_default())
        index = next((i for i, d in enumerate(self.datasets) if d is dataset), None)
        if index is None:
            index = len(self.datasets)
            self.datasets.append(dataset)
        with self.graph.as_default():
            # Composite elements (SparseTensor, RaggedTensor) by their component tensors.
            flat = tf.nest.flatten(dataset.element_spec, expand_composites=True)
            holders = [
                tf.compat.v1.placeholder(s.dtype, s.shape, name=f"iterator_{index}_element_{i}")
                for i, s in enumerate(flat)
            ]
        for position, holder in enumerate(holders):
            self.holders[id(holder)] = (index, position, holder)
        with self.graph.as_default():
            return tf.nest.pack_sequence_as(dataset.element_spec, holders, expand_composites=True)

    def needs_a_session(self) -> str | None:
        """What input_fn built on the elements that only a TF1 session runs (queues and
        their runners, variables, tables to initialise), or None."""
        keys = tf.compat.v1.GraphKeys
        for key in (keys.QUEUE_RUNNERS, keys.GLOBAL_VARIABLES, keys.LOCAL_VARIABLES,
                    keys.TABLE_INITIALIZERS):  # fmt: skip
            if self.graph.get_collection(key):
                return key
        return None

    def dataset(self, result: Any) -> tf.data.Dataset | None:
        """The dataset of what input_fn returned (None: it returned no iterator output)."""
        leaves = tf.nest.flatten(result, expand_composites=True)
        computed = [
            leaf for leaf in leaves
            if isinstance(leaf, tf.Tensor) and id(leaf) not in self.holders
            and getattr(leaf, "graph", None) is self.graph
        ]  # fmt: skip
        held = [leaf for leaf in leaves if id(leaf) in self.holders]
        if not held and not computed:
            return None
        for leaf in leaves:
            graph = getattr(leaf, "graph", None) if isinstance(leaf, tf.Tensor) else None
            if graph is not None and graph is not self.graph and not hasattr(leaf, "numpy"):
                raise ValueError(
                    "input_fn returned iterator.get_next() outputs together with a tensor of "
                    f"another graph ({leaf!r:.100}). Expected everything it returns to come "
                    "from its iterators, from operations on their outputs, or constants. "
                    "Fix: build it inside input_fn, or in dataset.map(...). "
                    f"Received: input_fn()={result!r:.200}"
                )
        graph_def = self.graph.as_graph_def() if computed else None
        specs = [d.element_spec for d in self.datasets]
        source = self.datasets[0] if len(self.datasets) == 1 else tf.data.Dataset.zip(
            tuple(self.datasets))  # fmt: skip

        def replay(*args: Any) -> Any:
            if len(self.datasets) == 1:
                elements = [args if isinstance(specs[0], tuple) else args[0]]
            else:
                elements = list(args)
            flat = [tf.nest.flatten(element, expand_composites=True) for element in elements]
            values = {}
            if computed:
                input_map = {holder.name: flat[d][i] for d, i, holder in self.holders.values()}
                outputs = tf.graph_util.import_graph_def(
                    graph_def, input_map=input_map, return_elements=[t.name for t in computed],
                    name="input_fn",
                )  # fmt: skip
                values = {id(t): out for t, out in zip(computed, outputs)}
            out = []
            for leaf in leaves:
                if id(leaf) in self.holders:
                    d, i, _ = self.holders[id(leaf)]
                    out.append(flat[d][i])
                else:
                    out.append(values.get(id(leaf), leaf))
            return tf.nest.pack_sequence_as(result, out, expand_composites=True)

        return source.map(replay)


class _RecoveredIterator:
    """Stands in for a v1 iterator made inside input_fn; remembers its dataset.

    `get_next()` hands out placeholder tensors of the call's scratch graph; what input_fn
    returns from them (unchanged or post-processed) becomes a map over the dataset.
    """

    def __init__(self, dataset: tf.data.Dataset, recovery: _Recovery) -> None:
        self._dataset = dataset
        self._recovery = recovery
        self.initializer = tf.no_op() if not tf.executing_eagerly() else None

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    output_types = property(lambda self: tf.compat.v1.data.get_output_types(self._dataset))
    output_shapes = property(lambda self: tf.compat.v1.data.get_output_shapes(self._dataset))

    def get_next(self, name: str | None = None) -> Any:
        return self._recovery.placeholders_for(self._dataset)

    def make_initializer(self, dataset: Any, name: str | None = None) -> Any:
        return self.initializer


def _call_with_recovered_iterators(input_fn: Callable, kwargs: dict, recovery: _Recovery) -> Any:
    """Calls input_fn with v1 iterator constructors returning `_RecoveredIterator`s."""

    def make(dataset: Any, *args: Any, **kw: Any) -> _RecoveredIterator:
        return _RecoveredIterator(dataset, recovery)

    # One input_fn at a time: the replacement closes over this call's recovery.
    with _input_fn_lock, v1_iterators_made_by(make):
        try:
            return input_fn(**kwargs)
        finally:
            recovery.in_graph.close()


class InputFnResultError(TypeError, ValueError):
    """input_fn returned something that is not a dataset or features (TypeError in 2.15)."""


def _as_pair_dataset(result: Any, mode: str, repeat_tensors: bool = False) -> tf.data.Dataset:
    if isinstance(result, tf.data.Dataset):
        spec = result.element_spec
        if isinstance(spec, tuple):
            if len(spec) == 2:
                return result
            if len(spec) == 1:
                return result
            raise ValueError(
                f"{_LEN_2} input_fn returned a Dataset whose elements are tuples of {len(spec)}; "
                "expected (features, labels) or features alone. Fix: fold extra parts into "
                "the features dict, e.g. dataset.map(lambda x, y, w: ({**x, 'weight': w}, y)). "
                f"Received: input_fn().element_spec={spec}"
            )
        # zip, not map: a 1-tuple of each element without tracing a function (~0.1 s).
        return tf.data.Dataset.zip((result,))
    if isinstance(result, (tuple, list)) and not isinstance(result, str):
        if len(result) != 2:
            raise ValueError(
                f"{_LEN_2} input_fn returned a {type(result).__name__} of {len(result)} elements; "
                "expected a tf.data.Dataset, or a (features, labels) tuple, or features. Fix: "
                "return (features, labels), with extra tensors inside the features dict. "
                f"Received: len(input_fn())={len(result)}"
            )
        features, labels = result
        _check_batch_sizes(features, labels)
        element = (features,) if labels is None else (features, labels)
    elif isinstance(result, (dict, tf.Tensor, tf.SparseTensor, np.ndarray)):
        element = (result,)
    else:
        raise InputFnResultError(
            f"input_fn returned {result!r:.200} (type {type(result).__name__}); expected a "
            "tf.data.Dataset of (features, labels), a Dataset of features, or a "
            "(features, labels) tuple of tensors / dicts of tensors. Fix: build a Dataset from "
            "the data, e.g. tf.data.Dataset.from_tensor_slices((features, labels)).batch(n). "
            f"Received: type(input_fn())={type(result).__name__}"
        )
    dataset = tf.data.Dataset.from_tensors(element)
    if mode == ModeKeys.TRAIN or repeat_tensors:
        # Constant tensors were fed on every step of a TF1 session (tf.estimator's
        # evaluate(steps=N) ran N steps on them); the caller bounds the steps.
        dataset = dataset.repeat()
    else:
        logger.warning(
            "input_fn returned tensors, not a Dataset; %s uses them as a single batch.",
            "evaluation" if mode == ModeKeys.EVAL else "prediction",
        )
    return dataset


def _check_batch_sizes(features: Any, labels: Any) -> None:
    sizes: dict[str, set[int]] = {}
    for kind, part in (("features", features), ("labels", labels)):
        for leaf in tf.nest.flatten(part):
            shape = getattr(leaf, "shape", None)
            if shape is not None:
                shape = tf.TensorShape(shape)  # numpy arrays (tf.estimator took them) too
            if shape is not None and shape.rank and shape[0] is not None:
                sizes.setdefault(kind, set()).add(int(shape[0]))
    all_sizes = set().union(*sizes.values()) if sizes else set()
    if len(all_sizes) > 1:
        raise ValueError(
            "features and labels returned by input_fn have different batch sizes. "
            "Expected every tensor to have the same first (batch) dimension. Fix: slice or "
            "batch features and labels together, e.g. "
            "tf.data.Dataset.from_tensor_slices((features, labels)).batch(n). "
            f"Received: batch sizes={sizes}"
        )


def call_input_fn(
    input_fn: Callable,
    mode: str,
    params: dict,
    config: Any,
    input_context: Any = None,
    *,
    repeat_tensors: bool = False,
) -> tf.data.Dataset:
    """Calls `input_fn` with the arguments it names; returns a (features, labels) dataset.

    When input_fn returns tensors (not a Dataset), TRAIN repeats them forever and EVAL /
    PREDICT use them as one batch; `repeat_tensors=True` repeats them in every mode, as
    tf.estimator fed the same tensors on every session.run (evaluate(steps=N) ran N steps
    on them): the caller must then bound the steps. A Dataset is never repeated.
    """
    if not callable(input_fn):
        raise TypeError(
            f"input_fn must be callable, given: {input_fn!r}. Expected a function that returns a "
            "tf.data.Dataset or (features, labels). Fix: pass the function itself, e.g. "
            "train(input_fn=make_dataset), or wrap data in a lambda. "
            f"Received: type(input_fn)={type(input_fn).__name__}"
        )
    names = fn_args(input_fn)
    # Arguments with defaults are left alone, as tf.estimator did.
    unknown = [n for n in required_fn_args(input_fn) if n not in _INPUT_FN_ARGS]
    if unknown:
        raise TypeError(
            f"input_fn has arguments {unknown} that Estimator cannot supply. Expected only "
            f"names among {list(_INPUT_FN_ARGS)}. Fix: bind the others with "
            "functools.partial or a lambda, e.g. lambda: input_fn(batch_size=32). "
            f"Received: input_fn arguments={names}"
        )
    kwargs: dict[str, Any] = {}
    if "mode" in names:
        kwargs["mode"] = mode
    if "params" in names:
        kwargs["params"] = params
    if "config" in names:
        kwargs["config"] = config
    if "input_context" in names:
        kwargs["input_context"] = input_context
    recovery = _Recovery()
    try:
        with epoch_limits_run_in_a_graph():
            result = _call_with_recovered_iterators(input_fn, kwargs, recovery)
    except Exception as error:
        if needs_a_graph(error):
            # Queues and QueueRunners (before tf.data): the input_fn runs in a graph of its own.
            dataset, _ = dataset_from_queue_input(input_fn, kwargs)
            return dataset
        if not recovery.holders:
            raise
        # Post-processing of iterator outputs that cannot be built on placeholders while
        # executing eagerly: run input_fn in a graph of its own, as tf.estimator did.
        logger.info("input_fn post-processes iterator outputs in a way that needs a graph "
                    "(%s): running it in a graph and session of its own.", error)  # fmt: skip
        dataset, _ = dataset_from_queue_input(input_fn, kwargs)
        return dataset
    needs = recovery.needs_a_session() if recovery.holders else None
    if needs is not None:
        logger.info("input_fn builds %s on iterator outputs: running it in a graph and session "
                    "of its own, as tf.estimator did.", needs)  # fmt: skip
        dataset, _ = dataset_from_queue_input(input_fn, kwargs)
        return dataset
    recovered = recovery.dataset(result) if recovery.holders else None
    if recovered is not None:
        result = recovered
    if result is None:
        raise InputFnResultError(
            "input_fn returned None; expected a tf.data.Dataset or a (features, labels) tuple. "
            "Fix: add the missing `return` statement to input_fn. Received: input_fn()=None"
        )
    return _as_pair_dataset(result, mode, repeat_tensors)
