"""2.15's `util`: what an input_fn returned, as (features, labels, input hooks), and the
hooks that initialize dataset iterators in a TF1 graph.

Used by libraries that call input_fns themselves inside a model_fn or a hook (EasyRec's
exporters): there the graph is TF1-style, as under 2.15.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.seam.internals import saved_model_export_utils

_V1 = tf.compat.v1
MAX_DIRECTORY_CREATION_ATTEMPTS = (
    saved_model_export_utils().export_utils.MAX_DIRECTORY_CREATION_ATTEMPTS
)


class _DatasetInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Runs an initializable iterator's initializer when the session is made."""

    def __init__(self, iterator: Any) -> None:
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initializer

    def after_create_session(self, session: Any, coord: Any) -> None:
        del coord
        session.run(self._initializer)


class DistributedIteratorInitializerHook(_DatasetInitializerHook):
    """Initializes a distributed iterator (its `initializer`) at session creation."""


class MultiHostDatasetInitializerHook(tf.compat.v1.train.SessionRunHook):
    """Runs several dataset initializers at session creation (one per host).

    Args:
        dataset_initializers: the initializer ops.
    """

    def __init__(self, dataset_initializers: list) -> None:
        self._initializers = dataset_initializers

    def after_create_session(self, session: Any, coord: Any) -> None:
        del coord
        session.run(self._initializers)


def parse_iterator_result(result: Any) -> tuple[Any, Any]:
    """(features, labels) of an iterator's element: a pair, or features alone."""
    if isinstance(result, list | tuple):
        if len(result) != 2:
            raise ValueError(
                "input_fn should return (features, labels) as a len 2 tuple. Expected a "
                f"pair or the features alone. Received a {len(result)}-tuple."
            )
        return result[0], result[1]
    return result, None


def parse_input_fn_result(result: Any) -> tuple[Any, Any, list]:
    """(features, labels, input_hooks) of what an input_fn returned.

    A dataset is read through an initializable iterator whose hook initializes it (in a
    TF1 graph) or an eager iterator; a pair is (features, labels); anything else is the
    features alone.

    Example:
        >>> features, labels, hooks = parse_input_fn_result(input_fn())
    """
    hooks: list = []
    if isinstance(result, tf.data.Dataset):
        if tf.executing_eagerly():
            result = next(iter(result))
        else:
            iterator = _V1.data.make_initializable_iterator(result)
            hooks.append(_DatasetInitializerHook(iterator))
            result = iterator.get_next()
    features, labels = parse_iterator_result(result)
    return features, labels, hooks
