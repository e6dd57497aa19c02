"""Calling an input_fn and turning whatever it returns into one tf.data.Dataset.

The dataset always yields `(features, labels)`, or `(features,)` when there are no labels.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.runtime.queue_input import dataset_from_queue_input, needs_a_graph
from keras_estimator.seam.internals import v1_iterators_made_by
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.fn_args import fn_args, required_fn_args

logger = logging.getLogger("keras_estimator")
_LEN_2 = "input_fn should return (features, labels) as a len 2 tuple."

_INPUT_FN_ARGS = ("mode", "params", "config", "input_context")
_input_fn_lock = threading.Lock()


class _RecoveredIterator:
    """Stands in for a v1 iterator made inside input_fn; remembers its dataset.

    `get_next()` hands out placeholder tensors from a scratch graph; when input_fn returns
    them (in any nesting) we map them back onto the dataset's elements.
    """

    def __init__(self, dataset: tf.data.Dataset, registry: dict) -> None:
        self._dataset = dataset
        self._registry = registry
        self.initializer = tf.no_op() if not tf.executing_eagerly() else None

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    output_types = property(lambda self: tf.compat.v1.data.get_output_types(self._dataset))
    output_shapes = property(lambda self: tf.compat.v1.data.get_output_shapes(self._dataset))

    def get_next(self, name: str | None = None) -> Any:
        graph = tf.Graph()
        with graph.as_default():
            flat = tf.nest.flatten(self._dataset.element_spec)
            holders = [
                tf.compat.v1.placeholder(s.dtype, s.shape, name=f"iterator_element_{i}")
                for i, s in enumerate(flat)
            ]
        for index, holder in enumerate(holders):
            self._registry[id(holder)] = (self._dataset, index, holder)
        return tf.nest.pack_sequence_as(self._dataset.element_spec, holders)

    def make_initializer(self, dataset: Any, name: str | None = None) -> Any:
        return self.initializer


def _call_with_recovered_iterators(input_fn: Callable, kwargs: dict) -> tuple[Any, dict]:
    """Calls input_fn with v1 iterator constructors returning `_RecoveredIterator`s."""
    registry: dict = {}

    def make(dataset: Any, *args: Any, **kw: Any) -> _RecoveredIterator:
        return _RecoveredIterator(dataset, registry)

    # One input_fn at a time: the replacement closes over this call's registry.
    with _input_fn_lock, v1_iterators_made_by(make):
        result = input_fn(**kwargs)
    return result, registry


def _from_recovered(result: Any, registry: dict) -> tf.data.Dataset | None:
    """Maps a structure of placeholders from `_RecoveredIterator.get_next()` to a dataset."""
    leaves = tf.nest.flatten(result)
    found = [registry.get(id(leaf)) for leaf in leaves]
    if not any(found):
        return None
    if not all(found) or len({id(f[0]) for f in found}) != 1:
        raise ValueError(
            "input_fn returned a mix of iterator.get_next() outputs and other values. "
            "Expected it to return iterator.get_next() (or its parts) unchanged, or the "
            "dataset itself. Fix: move transformations into dataset.map(...). "
            f"Received: input_fn()={result!r:.200}"
        )
    dataset = found[0][0]
    indices = [f[1] for f in found]

    def restructure(*element: Any) -> Any:
        flat = tf.nest.flatten(element if len(element) > 1 else element[0])
        return tf.nest.pack_sequence_as(result, [flat[i] for i in indices])

    return dataset.map(restructure)


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
        return result.map(lambda features: (features,))
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
    sizes = {}
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
    try:
        result, registry = _call_with_recovered_iterators(input_fn, kwargs)
    except RuntimeError as error:
        if not needs_a_graph(error):
            raise
        # Queues and QueueRunners (before tf.data): the input_fn runs in a graph of its own.
        dataset, _ = dataset_from_queue_input(input_fn, kwargs)
        return dataset
    recovered = _from_recovered(result, registry) if registry else None
    if recovered is not None:
        result = recovered
    if result is None:
        raise InputFnResultError(
            "input_fn returned None; expected a tf.data.Dataset or a (features, labels) tuple. "
            "Fix: add the missing `return` statement to input_fn. Received: input_fn()=None"
        )
    return _as_pair_dataset(result, mode, repeat_tensors)
