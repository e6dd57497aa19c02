"""2.15's `inputs/queues/feeding_functions`: feed functions that slice numpy arrays,
dicts of arrays, DataFrames or a generator into batches of `{placeholder: value}`.

The feed functions work as 2.15's (epochs counted from a possibly random start, the last
batch cut at the epoch limit, `OutOfRangeError` after it). Unavailable here:
`_enqueue_data`, which fed them through TF1 queue runners in a session; keras_estimator's
`numpy_input_fn` / `pandas_input_fn` read the same data as a `tf.data.Dataset`.
"""

from __future__ import annotations

import collections
import importlib.util
import random
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.dropin.unavailable import unavailable_function

HAS_PANDAS = importlib.util.find_spec("pandas") is not None

_enqueue_data = unavailable_function(
    "inputs.queues.feeding_functions._enqueue_data",
    "it feeds a TF1 queue from Python threads of a tf.compat.v1.Session",
    "use keras_estimator.inputs.numpy_input_fn / pandas_input_fn, or tf.data.Dataset."
    "from_tensor_slices(...), which read the same data",
)


def _get_integer_indices_for_next_batch(
    batch_indices_start: int,
    batch_size: int,
    epoch_end: int,
    array_length: int,
    current_epoch: int,
    total_epochs: int | None,
) -> tuple[list[int], int]:
    """(the row indices of the next batch, the epoch count after it).

    Rows wrap around `array_length`; each pass over `epoch_end` completes an epoch. Once
    `total_epochs` are complete the batch stops at that epoch's last row.

    Raises:
        tf.errors.OutOfRangeError: `total_epochs` were already emitted.
    """
    if total_epochs is not None and current_epoch >= total_epochs:
        raise tf.errors.OutOfRangeError(None, None, f"Already emitted {current_epoch} epochs.")
    indices = [
        i % array_length for i in range(batch_indices_start, batch_indices_start + batch_size)
    ]
    ends = [position for position, index in enumerate(indices) if index == epoch_end]
    epoch = current_epoch + len(ends)
    if total_epochs is None or epoch < total_epochs:
        return indices, epoch
    last_position = ends[total_epochs - current_epoch - 1]
    return indices[: last_position + 1], total_epochs


class _IndexedFeedFn:
    """Batches of row indices over `length` rows, epoch-limited (the feed functions' core)."""

    def __init__(
        self, length: int, batch_size: int, random_start: bool, seed: Any, num_epochs: int | None
    ) -> None:
        self._max = length
        self._batch_size = batch_size
        self._num_epochs = num_epochs
        self._epoch = 0
        self._trav = random.Random(seed).randrange(length) if random_start else 0
        self._epoch_end = (self._trav - 1) % length

    def _next_indices(self) -> list[int]:
        indices, self._epoch = _get_integer_indices_for_next_batch(
            self._trav,
            self._batch_size,
            self._epoch_end,
            self._max,
            self._epoch,
            self._num_epochs,
        )
        self._trav = (indices[-1] + 1) % self._max
        return indices


def _check_placeholders(placeholders: list, expected: int, what: str) -> None:
    if len(placeholders) != expected:
        raise ValueError(f"{what} expects {expected} placeholders; got {len(placeholders)}.")


class _ArrayFeedFn(_IndexedFeedFn):
    """`{index placeholder: row indices, value placeholder: array[rows]}` per call."""

    def __init__(
        self,
        placeholders: list,
        array: Any,
        batch_size: int,
        random_start: bool = False,
        seed: Any = None,
        num_epochs: int | None = None,
    ) -> None:
        _check_placeholders(placeholders, 2, "_array_feed_fn")
        self._placeholders = placeholders
        self._array = array
        super().__init__(len(array), batch_size, random_start, seed, num_epochs)

    def __call__(self) -> dict:
        indices = self._next_indices()
        return {self._placeholders[0]: indices, self._placeholders[1]: self._array[indices]}


class _OrderedDictNumpyFeedFn(_IndexedFeedFn):
    """The index placeholder, then one placeholder per array of the ordered dict."""

    def __init__(
        self,
        placeholders: list,
        ordered_dict_of_arrays: collections.OrderedDict,
        batch_size: int,
        random_start: bool = False,
        seed: Any = None,
        num_epochs: int | None = None,
    ) -> None:
        _check_placeholders(
            placeholders, len(ordered_dict_of_arrays) + 1, "_OrderedDictNumpyFeedFn"
        )
        self._index_placeholder = placeholders[0]
        self._col_placeholders = placeholders[1:]
        self._ordered_dict_of_arrays = ordered_dict_of_arrays
        length = len(next(iter(ordered_dict_of_arrays.values())))
        for key, array in ordered_dict_of_arrays.items():
            if len(array) != length:
                raise ValueError(f"Array {key} has length {len(array)}; expected {length}.")
        super().__init__(length, batch_size, random_start, seed, num_epochs)

    def __call__(self) -> dict:
        indices = self._next_indices()
        feed = {self._index_placeholder: indices}
        for placeholder, array in zip(
            self._col_placeholders, self._ordered_dict_of_arrays.values()
        ):
            feed[placeholder] = array[indices]
        return feed


class _PandasFeedFn(_IndexedFeedFn):
    """The index placeholder, then one placeholder per DataFrame column."""

    def __init__(
        self,
        placeholders: list,
        dataframe: Any,
        batch_size: int,
        random_start: bool = False,
        seed: Any = None,
        num_epochs: int | None = None,
    ) -> None:
        _check_placeholders(placeholders, len(dataframe.columns) + 1, "_PandasFeedFn")
        self._index_placeholder = placeholders[0]
        self._col_placeholders = placeholders[1:]
        self._dataframe = dataframe
        super().__init__(len(dataframe), batch_size, random_start, seed, num_epochs)

    def __call__(self) -> dict:
        indices = self._next_indices()
        rows = self._dataframe.iloc[indices]
        feed = {self._index_placeholder: list(rows.index)}
        for placeholder, column in zip(self._col_placeholders, rows.columns):
            feed[placeholder] = rows[column].values
        return feed


def _fill_array(arr: list, seq: Any, fillvalue: Any = 0) -> None:
    """Copies the nested sequence `seq` into the list `arr`, padding with `fillvalue`."""
    if isinstance(seq, list | tuple | np.ndarray) and np.ndim(seq) > 0:
        for index, item in enumerate(seq):
            if index < len(arr):
                if isinstance(arr[index], list):
                    _fill_array(arr[index], item, fillvalue)
                else:
                    arr[index] = item


def _pad_if_needed(batch_key_item: list, fillvalue: Any = 0) -> np.ndarray:
    """The batch's values for one key as an array, shorter sequences padded to the longest."""
    shapes = [np.shape(item) for item in batch_key_item]
    if len(set(shapes)) <= 1:
        return np.asarray(batch_key_item)
    rank = max(len(shape) for shape in shapes)
    if any(len(shape) != rank for shape in shapes):
        raise ValueError("Items of one key must have the same rank to be padded.")
    longest = tuple(max(shape[axis] for shape in shapes) for axis in range(rank))
    padded = np.full(
        (len(batch_key_item), *longest), fillvalue, dtype=np.asarray(batch_key_item[0]).dtype
    )
    for row, item in enumerate(batch_key_item):
        item = np.asarray(item)
        where: tuple[int | slice, ...] = (row, *(slice(0, n) for n in item.shape))
        padded[where] = item
    return padded


class _GeneratorFeedFn:
    """Batches of the dicts a generator function yields, by key (padded with `pad_value`
    when given); `num_epochs` passes over the generator."""

    def __init__(
        self,
        placeholders: list,
        generator: Any,
        batch_size: int,
        random_start: bool = False,
        seed: Any = None,
        num_epochs: int | None = None,
        pad_value: Any = None,
    ) -> None:
        first = next(generator())
        if len(placeholders) != len(first):
            raise ValueError(f"Expected {len(first)} placeholders; got {len(placeholders)}.")
        self._keys = sorted(first)
        self._col_placeholders = placeholders
        self._generator_function = generator
        self._iterator = generator()
        self._batch_size = batch_size
        self._num_epochs = num_epochs
        self._epoch = 0
        self._pad_value = pad_value
        del random_start, seed

    def __call__(self) -> dict:
        if self._num_epochs is not None and self._epoch >= self._num_epochs:
            raise tf.errors.OutOfRangeError(None, None, f"Already emitted {self._epoch} epochs.")
        rows: list[dict] = []
        while len(rows) < self._batch_size:
            try:
                rows.append(next(self._iterator))
            except StopIteration:
                self._epoch += 1
                self._iterator = self._generator_function()
                if self._num_epochs is not None and self._epoch >= self._num_epochs:
                    if not rows:
                        raise tf.errors.OutOfRangeError(
                            None, None, f"Already emitted {self._epoch} epochs."
                        ) from None
                    break
        feed = {}
        for placeholder, key in zip(self._col_placeholders, self._keys):
            values = [row[key] for row in rows]
            feed[placeholder] = (
                np.asarray(values)
                if self._pad_value is None
                else _pad_if_needed(values, self._pad_value)
            )
        return feed
