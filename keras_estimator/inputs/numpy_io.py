"""`numpy_input_fn`: feeds numpy arrays (or dicts of them) to an Estimator.

tf.estimator 2.15 fed the arrays through a queue and queue runners; here the input_fn returns a
`tf.data.Dataset` with the same batches: examples in order (or shuffled), epochs back to back,
and with a finite `num_epochs` one final partial batch when the examples run out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

__all__ = ["numpy_input_fn"]

ArrayOrDict = np.ndarray | Mapping[Any, Any]


def check_shuffle(shuffle: Any) -> bool:
    """`shuffle`; raises the 2.15 ValueError unless it is a bool (it has no default on
    purpose)."""
    if not isinstance(shuffle, bool):
        raise ValueError(
            "shuffle must be provided and explicitly set as boolean "
            f"(it is recommended to set it as True for training); got {shuffle}. Fix: pass "
            "shuffle=True for training, shuffle=False for evaluation and prediction. "
            f"Received: shuffle={shuffle!r}"
        )
    return shuffle


def check_batching(batch_size: Any, num_epochs: Any) -> None:
    """Rejects a batch size or epoch count that tf.data would misread (repeat(-1) is endless)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError(
            f"batch_size must be a positive integer; got {batch_size!r}. Fix: pass "
            f"batch_size=N with N >= 1. Received: type(batch_size)={type(batch_size).__name__}"
        )
    if batch_size < 1:
        raise ValueError(
            f"batch_size must be a positive integer; got {batch_size}. Fix: pass batch_size=N "
            f"with N >= 1. Received: batch_size={batch_size!r}"
        )
    if num_epochs is None:
        return
    if isinstance(num_epochs, bool) or not isinstance(num_epochs, (int, np.integer)):
        raise TypeError(
            f"num_epochs must be None (repeat forever) or a non-negative integer; "
            f"got {num_epochs!r}. Fix: pass num_epochs=N (an int), or None. "
            f"Received: type(num_epochs)={type(num_epochs).__name__}"
        )
    if num_epochs < 0:
        raise ValueError(
            "num_epochs must be None (repeat forever) or a non-negative integer; "
            f"got {num_epochs}. Fix: pass num_epochs=N with N >= 0, or None. "
            f"Received: num_epochs={num_epochs!r}"
        )


def make_dataset(
    features: Any,
    labels: Any,
    *,
    num_examples: int,
    batch_size: int,
    num_epochs: int | None,
    shuffle: bool,
    buffer_size: int | None,
    num_threads: int,
) -> tf.data.Dataset:
    """Batches of `(features, labels)` (or `features` when labels is None) sliced on axis 0.

    Epochs follow each other without a break, so a batch may span two epochs; only with a
    finite `num_epochs` is the last batch allowed to be short (as tf.estimator's
    `dequeue_up_to`); with `num_epochs=None` every batch has exactly `batch_size` examples, so
    the batch dimension is static (as `dequeue_many`).
    """
    element = features if labels is None else (features, labels)
    dataset = tf.data.Dataset.from_tensor_slices(element)
    if shuffle:
        size = num_examples if buffer_size is None else max(int(buffer_size), 1)
        dataset = dataset.shuffle(size, reshuffle_each_iteration=True)
    if num_epochs is None:
        dataset = dataset.repeat()
    elif num_epochs != 1:
        dataset = dataset.repeat(int(num_epochs))
    parallel = int(num_threads) if num_threads and int(num_threads) > 1 else None
    return dataset.batch(
        int(batch_size), drop_remainder=num_epochs is None, num_parallel_calls=parallel
    )


def _sorted_arrays(data: Mapping[Any, Any]) -> dict[Any, np.ndarray]:
    return {key: np.asarray(data[key]) for key in sorted(data)}


def _length(array: np.ndarray, name: str) -> int:
    if array.ndim == 0:
        raise ValueError(
            f"{name} must have a first (example) dimension; got a scalar array. Fix: pass one "
            f"value per example, e.g. np.full([n], value). Received: {name}={array!r}"
        )
    return int(array.shape[0])


def numpy_input_fn(
    x: ArrayOrDict,
    y: ArrayOrDict | None = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int = 1000,
    num_threads: int = 1,
) -> Callable[[], tf.data.Dataset]:
    """Returns an input_fn that feeds numpy arrays (or dicts of them) to an Estimator.

    The input_fn returns a `tf.data.Dataset` of `(features, labels)` batches, or of `features`
    alone when `y` is None. `features` is a dict with the keys of `x` when `x` is a dict, and a
    single tensor when `x` is an array; `labels` likewise follows `y`. Examples are sliced on
    the first axis, so a 1-D array gives tensors of shape `[batch]`.

    Example:

    ```python
    x = {"age": np.arange(4) * 1.0, "height": np.arange(32, 36)}
    y = np.arange(-32, -28)
    input_fn = keras_estimator.inputs.numpy_input_fn(
        x, y, batch_size=2, shuffle=False, num_epochs=1)
    estimator.evaluate(input_fn)  # two batches of two examples
    ```

    Args:
      x: numpy array, or dict of numpy arrays (array-likes are converted with `np.asarray`).
        An array is a single feature.
      y: numpy array, dict of numpy arrays, or None when there are no labels.
      batch_size: Number of examples in a batch.
      num_epochs: Number of passes over the data; `None` repeats forever. With a finite number
        the epochs run back to back and the last batch may be smaller than `batch_size`.
      shuffle: Whether to shuffle the examples; must be given explicitly (True for training,
        False for evaluation and prediction).
      queue_capacity: Size of the shuffle buffer (tf.estimator's queue capacity); `None` uses
        the number of examples, a full shuffle. Unused when `shuffle` is False.
      num_threads: Parallel calls used to assemble a batch; the order of examples does not
        depend on it.

    Returns:
      A function of no arguments returning the `tf.data.Dataset`.

    Raises:
      ValueError: at once if `shuffle` is not a bool, `batch_size` is below 1 or `num_epochs`
        negative; when the returned input_fn is called (as in tf.estimator), if `x` or `y` is
        an empty dict or `x` an empty array, if a key is in both `x` and `y`, or if the arrays
        in `x` and `y` differ in length.
      TypeError: when the returned input_fn is called, if `x` is neither a dict nor an array.
    """
    shuffle = check_shuffle(shuffle)
    check_batching(batch_size, num_epochs)

    def input_fn() -> tf.data.Dataset:
        if isinstance(x, Mapping):
            if not x:
                raise ValueError(
                    "x cannot be an empty dict. Expected at least one feature array. Fix: pass "
                    "x={'feature': array}. Received: x={}"
                )
            features: Any = _sorted_arrays(x)
            x_arrays = features
        elif isinstance(x, np.ndarray):
            if x.size == 0:
                raise ValueError(
                    "x cannot be an empty array. Expected at least one example. "
                    f"Received: x.shape={x.shape}"
                )
            features = x
            x_arrays = {"x": x}
        else:
            raise TypeError(
                f"x must be a dict or array; got {type(x).__name__}. Fix: convert it, e.g. "
                f"x=np.asarray(x) or x={{'feature': np.asarray(x)}}. "
                f"Received: type(x)={type(x).__name__}"
            )

        labels: Any
        if y is None:
            labels, y_arrays = None, {}
        elif isinstance(y, Mapping):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead. Received: y={}")
            labels = y_arrays = _sorted_arrays(y)
            duplicates = set(x_arrays).intersection(y_arrays)
            if duplicates:
                raise ValueError(
                    f"{len(duplicates)} duplicate keys are found in both x and y: {duplicates}. "
                    "Expected each key in x or in y only. Fix: rename the label keys."
                )
        else:
            labels = np.asarray(y)
            y_arrays = {"y": labels}

        lengths = {_length(a, f"x[{k!r}]") for k, a in x_arrays.items()}
        lengths |= {_length(a, f"y[{k!r}]") for k, a in y_arrays.items()}
        if len(lengths) != 1:
            x_shapes = (
                {k: a.shape for k, a in x_arrays.items()} if isinstance(x, Mapping) else x.shape
            )
            if labels is None:
                y_shapes = None
            elif isinstance(y, Mapping):
                y_shapes = {k: a.shape for k, a in y_arrays.items()}
            else:
                y_shapes = labels.shape
            raise ValueError(
                "Length of tensors in x and y is mismatched. All elements in x and y must have "
                f"the same length.\nShapes in x: {x_shapes}\nShapes in y: {y_shapes}\n"
                "Fix: give every array in x and y the same first (example) dimension. "
                f"Received: lengths={sorted(lengths)}"
            )

        return make_dataset(
            features,
            labels,
            num_examples=lengths.pop(),
            batch_size=batch_size,
            num_epochs=num_epochs,
            shuffle=shuffle,
            buffer_size=queue_capacity,
            num_threads=num_threads,
        )

    return input_fn
