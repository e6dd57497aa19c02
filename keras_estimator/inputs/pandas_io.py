"""`pandas_input_fn`: feeds a pandas DataFrame (and Series or DataFrame labels) to an Estimator.

pandas is optional: it is imported only when `pandas_input_fn` is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.inputs.numpy_io import check_batching, check_shuffle, make_dataset

__all__ = ["pandas_input_fn"]


class PandasNotInstalledError(ImportError, TypeError):
    """pandas_input_fn was called without pandas installed.

    An ImportError; also a TypeError, which is what tf.estimator 2.15 raised in this case.
    """


def _import_pandas() -> Any:
    try:
        import pandas
    except ImportError as error:
        raise PandasNotInstalledError(
            "pandas_input_fn needs pandas, which is not installed (importing it failed: "
            f"{error}). pandas is an optional dependency of keras_estimator; install it with "
            "`pip install pandas`, or pass numpy arrays to numpy_input_fn instead."
        ) from error
    return pandas


def _column_arrays(frame: Any) -> dict[Any, np.ndarray]:
    duplicated = frame.columns[frame.columns.duplicated()]
    if len(duplicated):
        raise ValueError(
            f"DataFrame has duplicate column names {list(duplicated)}; each column becomes a "
            "feature keyed by its name, so names must be unique. Fix: rename them, e.g. "
            "frame.columns = [...]. "
            f"Received: columns={list(frame.columns)}"
        )
    return {column: np.asarray(frame[column].to_numpy()) for column in frame.columns}


def pandas_input_fn(
    x: Any,
    y: Any = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int | None = 1000,
    num_threads: int = 1,
    target_column: str = "target",
) -> Callable[[], tf.data.Dataset]:
    """Returns an input_fn that feeds a pandas DataFrame to an Estimator.

    The input_fn returns a `tf.data.Dataset` of `(features, labels)` batches, or of `features`
    alone when `y` is None. `features` is a dict from each column name of `x` to a `[batch]`
    tensor; `labels` is a `[batch]` tensor for a Series `y`, or a dict keyed by the column names
    of a DataFrame `y`. Rows are taken in the order of `x` (or shuffled); `y` must have the
    same index as `x`.

    Example:

    ```python
    df = pd.DataFrame({"age": [21.0, 35.0, 50.0], "height": [170, 180, 165]})
    labels = pd.Series([0, 1, 1])
    input_fn = keras_estimator.inputs.pandas_input_fn(
        df, labels, batch_size=2, shuffle=True, num_epochs=None)
    estimator.train(input_fn, steps=100)
    ```

    Args:
      x: pandas `DataFrame`; each column becomes a feature.
      y: pandas `Series` or `DataFrame` with the same index as `x`, or None.
      batch_size: Number of rows in a batch.
      num_epochs: Number of passes over the data; `None` repeats forever. With a finite number
        the epochs run back to back and the last batch may be smaller than `batch_size`.
      shuffle: Whether to shuffle the rows; must be given explicitly (True for training, False
        for evaluation and prediction).
      queue_capacity: Size of the shuffle buffer (tf.estimator's queue capacity); `None` uses
        the number of rows, a full shuffle. Unused when `shuffle` is False.
      num_threads: Parallel calls used to assemble a batch; the order of rows does not depend
        on it.
      target_column: tf.estimator's name for a Series `y` in its merged frame; kept for
        compatibility: it must be a string and must not name a column of `x`.

    Returns:
      A function of no arguments returning the `tf.data.Dataset`.

    Raises:
      ImportError: if pandas is not installed (also a TypeError, as tf.estimator raised).
      ValueError: if `shuffle` is not a bool, if `x` has a column named `target_column` while
        `y` is a Series, or if the indexes of `x` and `y` differ.
      TypeError: if `target_column` is not a string, or `x` is not a DataFrame.
    """
    pd = _import_pandas()
    shuffle = check_shuffle(shuffle)
    if not isinstance(target_column, str):
        raise TypeError(
            "target_column must be a string type. Fix: pass target_column='name'. "
            f"Received: target_column={target_column!r}"
        )
    check_batching(batch_size, num_epochs)
    if not isinstance(x, pd.DataFrame):
        raise TypeError(
            f"x must be a pandas DataFrame; got {type(x).__name__}. Fix: wrap it, e.g. "
            "pd.DataFrame(x), or use numpy_input_fn for numpy arrays. "
            f"Received: type(x)={type(x).__name__}"
        )
    if len(x.columns) == 0:
        raise ValueError(
            "x cannot be a DataFrame without columns. Expected at least one feature column. "
            f"Received: x.shape={x.shape}"
        )

    labels: Any = None
    if y is not None:
        if not isinstance(y, (pd.Series, pd.DataFrame)):
            raise TypeError(
                f"y must be a pandas Series or DataFrame; got {type(y).__name__}. Fix: wrap it, "
                "e.g. pd.Series(y, index=x.index), or pass y=None. "
                f"Received: type(y)={type(y).__name__}"
            )
        if isinstance(y, pd.Series) and target_column in x:
            raise ValueError(
                f"Cannot use name {target_column} for target column: DataFrame already has a "
                f"column with that name: {x.columns}. Fix: pass target_column= a name not in x. "
                f"Received: target_column={target_column!r}"
            )
        if not np.array_equal(x.index, y.index):
            raise ValueError(
                f"Index for x and y are mismatched.\nIndex for x: {x.index}\n"
                f"Index for y: {y.index}\n"
                "Fix: give y the index of x, e.g. y = y.set_axis(x.index) or "
                "reset_index(drop=True) on both. "
                f"Received: len(x.index)={len(x.index)}, len(y.index)={len(y.index)}"
            )
        if isinstance(y, pd.DataFrame):
            labels = _column_arrays(y)
        else:
            labels = np.asarray(y.to_numpy())

    # Copied now, as tf.estimator copied x: later changes to the frame do not leak in.
    features = {key: array.copy() for key, array in _column_arrays(x).items()}
    if isinstance(labels, dict):
        labels = {key: array.copy() for key, array in labels.items()}
    elif labels is not None:
        labels = labels.copy()
    num_rows = len(x)

    def input_fn() -> tf.data.Dataset:
        return make_dataset(
            features,
            labels,
            num_examples=num_rows,
            batch_size=batch_size,
            num_epochs=num_epochs,
            shuffle=shuffle,
            buffer_size=queue_capacity,
            num_threads=num_threads,
        )

    return input_fn
