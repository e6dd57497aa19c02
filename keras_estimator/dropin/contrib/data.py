"""`tf.contrib.data`: the dataset transformations estimator input_fns used, onto tf.data.

Each returns a function for `dataset.apply(...)`, as TF1's did. Names tf.data kept under
`tf.data.experimental` are those; `batch_and_drop_remainder` and
`padded_batch_and_drop_remainder` (gone from tf.data) are `batch(drop_remainder=True)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

_EXPERIMENTAL = tf.data.experimental
Transformation = Callable[[tf.data.Dataset], tf.data.Dataset]

AUTOTUNE = tf.data.AUTOTUNE
parallel_interleave = _EXPERIMENTAL.parallel_interleave
shuffle_and_repeat = _EXPERIMENTAL.shuffle_and_repeat
prefetch_to_device = _EXPERIMENTAL.prefetch_to_device
copy_to_device = _EXPERIMENTAL.copy_to_device
ignore_errors = _EXPERIMENTAL.ignore_errors
unbatch = _EXPERIMENTAL.unbatch
group_by_window = _EXPERIMENTAL.group_by_window
bucket_by_sequence_length = _EXPERIMENTAL.bucket_by_sequence_length
sample_from_datasets = _EXPERIMENTAL.sample_from_datasets
choose_from_datasets = _EXPERIMENTAL.choose_from_datasets
make_csv_dataset = _EXPERIMENTAL.make_csv_dataset
make_batched_features_dataset = _EXPERIMENTAL.make_batched_features_dataset
parse_example_dataset = _EXPERIMENTAL.parse_example_dataset
scan = _EXPERIMENTAL.scan
rejection_resample = _EXPERIMENTAL.rejection_resample
enumerate_dataset = _EXPERIMENTAL.enumerate_dataset
get_single_element = _EXPERIMENTAL.get_single_element
dense_to_sparse_batch = _EXPERIMENTAL.dense_to_sparse_batch
group_by_reducer = _EXPERIMENTAL.group_by_reducer
Reducer = _EXPERIMENTAL.Reducer
unique = _EXPERIMENTAL.unique
Counter = _EXPERIMENTAL.Counter
CsvDataset = _EXPERIMENTAL.CsvDataset
SqlDataset = _EXPERIMENTAL.SqlDataset
TFRecordWriter = _EXPERIMENTAL.TFRecordWriter


def map_and_batch(
    map_func: Callable,
    batch_size: int,
    num_parallel_batches: int | None = None,
    drop_remainder: bool = False,
    num_parallel_calls: int | None = None,
) -> Transformation:
    """`dataset.apply(map_and_batch(f, 32))` == `dataset.map(f).batch(32)`, as TF1's was.

    Example:
        >>> dataset = dataset.apply(map_and_batch(parse, batch_size=32, drop_remainder=True))
    """
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError(
            "`num_parallel_batches` and `num_parallel_calls` are mutually exclusive. Fix: give "
            f"only one. Received: num_parallel_batches={num_parallel_batches!r}, "
            f"num_parallel_calls={num_parallel_calls!r}"
        )
    if num_parallel_calls is None and num_parallel_batches is not None:
        num_parallel_calls = num_parallel_batches * batch_size

    def apply(dataset: tf.data.Dataset) -> tf.data.Dataset:
        dataset = dataset.map(map_func, num_parallel_calls=num_parallel_calls)
        return dataset.batch(batch_size, drop_remainder=drop_remainder)

    return apply


def batch_and_drop_remainder(batch_size: int) -> Transformation:
    """`dataset.batch(batch_size, drop_remainder=True)`: full batches only.

    Example:
        >>> dataset = dataset.apply(batch_and_drop_remainder(32))
    """
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size: int, padded_shapes: Any,
                                    padding_values: Any = None) -> Transformation:  # fmt: skip
    """`dataset.padded_batch(..., drop_remainder=True)`.

    Example:
        >>> dataset = dataset.apply(padded_batch_and_drop_remainder(32, [None]))
    """
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                                drop_remainder=True)  # fmt: skip


__getattr__ = removed_attribute_getattr("data", "tf.data / tf.data.experimental")


__all__ = [
    "AUTOTUNE",
    "Counter",
    "CsvDataset",
    "Reducer",
    "SqlDataset",
    "TFRecordWriter",
    "batch_and_drop_remainder",
    "bucket_by_sequence_length",
    "choose_from_datasets",
    "copy_to_device",
    "dense_to_sparse_batch",
    "enumerate_dataset",
    "get_single_element",
    "group_by_reducer",
    "group_by_window",
    "ignore_errors",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "map_and_batch",
    "padded_batch_and_drop_remainder",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
    "rejection_resample",
    "sample_from_datasets",
    "scan",
    "shuffle_and_repeat",
    "unbatch",
    "unique",
]
