"""`tf.contrib.data.map_and_batch`: a `Dataset.apply` transformation (map, then batch)."""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf


def map_and_batch(
    map_func: Callable,
    batch_size: int,
    num_parallel_batches: int | None = None,
    drop_remainder: bool = False,
    num_parallel_calls: int | None = None,
) -> Callable[[tf.data.Dataset], tf.data.Dataset]:
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


__all__ = ["map_and_batch"]
