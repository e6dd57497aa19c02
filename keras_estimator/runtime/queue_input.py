"""input_fns from before tf.data: TF1 queues and QueueRunners, run in their own graph.

`tf.compat.v1.train.batch` / `shuffle_batch`, `string_input_producer`, readers and hand-made
`QueueRunner`s cannot run eagerly. Such an input_fn is called again inside a fresh
`tf.Graph`; a `tf.compat.v1.Session` on that graph initialises its variables and tables
and starts its queue runners under a Coordinator, as tf.estimator's MonitoredSession did;
the Keras step is fed by a `tf.data.Dataset` that runs the input_fn's tensors once per
batch. The input ends when a queue is closed and exhausted (OutOfRangeError), as it did.
The session and its threads stop when the dataset's iterator is released.

An eager input_fn that limits its epochs with `limit_epochs` runs here too, so its limit
ends the input as it did (`epoch_limits_run_in_a_graph`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.hooks.session import attach_input_session
from keras_estimator.seam.patching import patched

logger = logging.getLogger("keras_estimator")

_V1 = tf.compat.v1
# What TensorFlow says when a TF1 input pipeline is built eagerly.
_EAGER_REFUSALS = (
    "QueueRunners are not supported when eager execution is enabled",
    "Input pipelines based on Queues are not supported when eager execution is enabled",
    "Queue-based input pipelines have been replaced by `tf.data`",
    # Placeholders fed by an iterator initializer in a hook (TF-Ranking's libsvm example).
    "tf.placeholder() is not compatible with eager execution",
)


class EpochLimitedInput(RuntimeError):
    """An input_fn called `tf.compat.v1.train.limit_epochs(tensor, num_epochs=N)` eagerly.

    Eagerly, limit_epochs counts one read and returns the tensor, so the input would never
    end; 2.15's session read the tensor once per step and ended the input after N. Such an
    input_fn runs in a graph of its own, where the limit ends it as it did.
    """


@contextlib.contextmanager
def epoch_limits_run_in_a_graph() -> Iterator[None]:
    """Within it, an eager `limit_epochs` with `num_epochs` raises `EpochLimitedInput`."""
    original = _V1.train.limit_epochs

    def limit_epochs(tensor: Any, num_epochs: Any = None, name: Any = None) -> Any:
        if num_epochs is not None and tf.executing_eagerly():
            raise EpochLimitedInput(
                f"input_fn limits its epochs (limit_epochs(num_epochs={num_epochs})): running "
                "it in a graph of its own"
            )
        return original(tensor, num_epochs=num_epochs, name=name)

    with patched(_V1.train, "limit_epochs", limit_epochs):
        yield


def needs_a_graph(error: BaseException) -> bool:
    """Whether `error` says the input_fn must run in a graph: TensorFlow refusing to build a
    queue-based input eagerly, or an epoch limit (`EpochLimitedInput`)."""
    if isinstance(error, EpochLimitedInput):
        return True
    return isinstance(error, RuntimeError) and any(text in str(error) for text in _EAGER_REFUSALS)


def _spec_of(tensor: Any, value: Any) -> tf.TypeSpec:
    """The tensor's static shape; where the queue declared none, the first batch's rank
    (with every dimension left open)."""
    shape = tensor.shape
    if shape.rank is None and value is not None:
        shape = tf.TensorShape([None] * len(getattr(value, "dense_shape", value.shape)))
    if isinstance(tensor, tf.SparseTensor):
        return tf.SparseTensorSpec(shape, tensor.dtype)
    return tf.TensorSpec(shape, tensor.dtype)


class _QueueSession:
    """The input graph's session and queue-runner threads, started once, stopped once."""

    def __init__(self, graph: tf.Graph, fetches: Any) -> None:
        self._graph, self._fetches = graph, fetches
        self._lock = threading.Lock()
        self._session: Any = None
        self._coordinator: Any = None
        self._threads: list = []
        self._pending: Any = None

    def start(self) -> None:
        with self._graph.as_default():
            init = tf.group(
                _V1.global_variables_initializer(),
                _V1.local_variables_initializer(),
                _V1.tables_initializer(),
            )
        self._session = _V1.Session(graph=self._graph)
        self._session.run(init)
        self._coordinator = _V1.train.Coordinator()
        # QueueRunner.create_threads, not start_queue_runners: the latter refuses any thread
        # whose context is eager (the tf.data generator's is).
        self._threads = [
            thread
            for runner in self._graph.get_collection(_V1.GraphKeys.QUEUE_RUNNERS)
            for thread in runner.create_threads(
                self._session, coord=self._coordinator, daemon=True, start=True
            )
        ]
        logger.info(
            "input_fn builds TF1 queues: running it in its own graph and session with %d "
            "queue-runner threads.",
            len(self._threads),
        )

    def first_batch(self) -> Any:
        """Starts the session and runs one batch, kept for `batches` to yield first (its
        values tell the shapes a queue without declared shapes produces). None: the input
        is empty, or its iterator waits for a hook to initialize it (see `run`)."""
        with self._lock:
            if self._session is None:
                self.start()
            try:
                self._pending = self._session.run(self._fetches)
            except tf.errors.OutOfRangeError:
                self._pending = None  # an empty input: the dataset yields nothing
            except tf.errors.FailedPreconditionError:
                # An initializable iterator over placeholders: a hook's after_create_session
                # runs its initializer with a feed_dict (`run`), as 2.15's session did.
                self._pending = None
            return self._pending

    def run(self, fetches: Any, feed_dict: Any = None) -> Any:
        """`session.run` in the input's graph, for a hook (an iterator's initializer)."""
        with self._lock:
            if self._session is None:
                self.start()
            return self._session.run(fetches, feed_dict=feed_dict)

    def batches(self) -> Iterator[Any]:
        with self._lock:
            if self._session is None:
                self.start()
            pending, self._pending = self._pending, None
        try:
            if pending is not None:
                yield pending
            while self._session is not None and not self._coordinator.should_stop():
                try:
                    yield self._session.run(self._fetches)
                except tf.errors.OutOfRangeError:
                    return  # a queue was closed and is empty: the input's end
                except tf.errors.FailedPreconditionError as error:
                    raise _uninitialized_input(error) from error
        finally:
            self.stop()

    def stop(self) -> None:
        with self._lock:
            if self._session is None:
                return
            self._coordinator.request_stop()
            self._session.close()  # cancels the enqueues blocked on full queues
            try:
                self._coordinator.join(
                    self._threads, stop_grace_period_secs=5, ignore_live_threads=True
                )
            except (tf.errors.OpError, RuntimeError):
                pass  # runner threads report the cancellation; the input has ended anyway
            self._session = None


def _uninitialized_input(error: Exception) -> RuntimeError:
    return RuntimeError(
        f"The input_fn's iterator was not initialized ({str(error).splitlines()[0]}). An "
        "initializable iterator over placeholders is initialized by a hook: its "
        "after_create_session(session, coord) runs session.run(iterator.initializer, "
        "feed_dict=...), as in 2.15. Fix: pass that hook to train() / evaluate() / predict() "
        "in hooks=, or build the dataset from the arrays themselves "
        "(tf.data.Dataset.from_tensor_slices(arrays))."
    )


def dataset_from_queue_input(input_fn: Callable, kwargs: dict) -> tuple[tf.data.Dataset, bool]:
    """Calls `input_fn(**kwargs)` in a fresh graph; returns `(dataset, has_labels)`.

    The dataset yields `(features, labels)` (or `(features,)`) as the input_fn's tensors
    evaluate on each session run.
    """
    graph = tf.Graph()
    with graph.as_default():
        result = input_fn(**kwargs)
    if isinstance(result, tuple | list) and len(result) == 2:
        element = (result[0], result[1]) if result[1] is not None else (result[0],)
    else:
        element = (result,)
    for leaf in tf.nest.flatten(element):
        if not isinstance(leaf, tf.Tensor | tf.SparseTensor) or leaf.graph is not graph:
            raise TypeError(
                "input_fn builds TF1 queues, so keras_estimator runs it in a graph of its own; "
                f"it must then return tensors of that graph. Received: {leaf!r:.200}. Fix: "
                "return the tensors the queues produce (features dict, labels)."
            )
    session = _QueueSession(graph, element)
    attach_input_session(graph, session)
    first = session.first_batch()
    if first is None:
        specs = tf.nest.map_structure(lambda t: _spec_of(t, None), element)
    else:
        specs = tf.nest.map_structure(_spec_of, element, first)
    dataset = tf.data.Dataset.from_generator(session.batches, output_signature=specs)
    return dataset.prefetch(1), len(element) == 2
