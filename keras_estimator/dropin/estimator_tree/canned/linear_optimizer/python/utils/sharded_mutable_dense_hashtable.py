"""2.15's `sharded_mutable_dense_hashtable.py`: a dense hash table (scalar or vector keys)
and a table sharded by key, on TensorFlow's `tf.lookup.experimental.DenseHashTable`.

Shards are named `<name>-<i>-of-<n>` (2.15's checkpoint names); a key goes to shard
`|key| mod n` (`|key[0]| mod n` for vector keys).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

__all__ = ["_MutableDenseHashTable", "_ShardedMutableDenseHashTable"]


class _MutableDenseHashTable(tf.lookup.experimental.DenseHashTable):
    """A mutable hash table with open addressing (2.15's private class): TensorFlow's
    `DenseHashTable`, whose keys may be vectors (their shape is `empty_key`'s).

    Args:
        key_dtype: the keys' dtype.
        value_dtype: the values' dtype.
        default_value: the value of a missing key (its shape is the values' shape).
        empty_key: a key never inserted (marks empty buckets).
        deleted_key: another key never inserted (marks deleted buckets).
        initial_num_buckets: a power of 2, or None.
        name: the table's name.
        checkpoint: whether a tf.train.Saver / Checkpoint saves the table.
    """

    def __init__(
        self, key_dtype: Any, value_dtype: Any, default_value: Any, empty_key: Any,
        deleted_key: Any, initial_num_buckets: Any = None, name: str = "MutableDenseHashTable",
        checkpoint: bool = True,
    ) -> None:  # fmt: skip
        super().__init__(
            key_dtype=key_dtype, value_dtype=value_dtype, default_value=default_value,
            empty_key=empty_key, deleted_key=deleted_key,
            initial_num_buckets=initial_num_buckets, name=name, checkpoint=checkpoint,
        )  # fmt: skip
        self._table_name = name

    @property
    def name(self) -> str:
        """The table's name (also when made eagerly, where TensorFlow's table has none)."""
        return self._table_name


class _ShardedMutableDenseHashTable:
    """`num_shards` `_MutableDenseHashTable`s, each key in one of them (2.15's class).

    Args:
        key_dtype: the keys' dtype (an integer type).
        value_dtype: the values' dtype.
        default_value: the value of a missing key.
        empty_key: a key never inserted.
        deleted_key: another key never inserted.
        num_shards: the number of tables.
        checkpoint: whether the tables are saved.
        name: the prefix of the tables' names.
    """

    def __init__(
        self, key_dtype: Any, value_dtype: Any, default_value: Any, empty_key: Any,
        deleted_key: Any, num_shards: int = 1, checkpoint: bool = True,
        name: str = "ShardedMutableHashTable",
    ) -> None:  # fmt: skip
        self._key_dtype = tf.as_dtype(key_dtype)
        self._value_dtype = tf.as_dtype(value_dtype)
        self._name = name
        self._table_shards = [
            _MutableDenseHashTable(
                key_dtype=key_dtype,
                value_dtype=value_dtype,
                default_value=default_value,
                empty_key=empty_key,
                deleted_key=deleted_key,
                checkpoint=checkpoint,
                name=f"{name}-{i + 1}-of-{num_shards}",
            )  # fmt: skip
            for i in range(num_shards)
        ]
        self._value_shape = tf.TensorShape(tf.convert_to_tensor(default_value).shape)

    @property
    def name(self) -> str:
        """The prefix of the shards' names."""
        return self._name

    @property
    def _num_shards(self) -> int:
        return len(self._table_shards)

    @property
    def table_shards(self) -> list:
        """The shards."""
        return self._table_shards

    def size(self, name: Any = None) -> tf.Tensor:
        """The number of keys in all shards (int64)."""
        return tf.add_n([table.size() for table in self._table_shards], name=name)

    def _shard_indices(self, keys: Any) -> tf.Tensor:
        if self._key_dtype.is_integer:
            first = keys[:, 0] if keys.shape.ndims == 2 else keys
            return tf.cast(tf.math.floormod(tf.abs(first), self._num_shards), tf.int32)
        return tf.strings.to_hash_bucket_fast(
            keys if keys.shape.ndims == 1 else keys[:, 0], self._num_shards, name=None
        )  # fmt: skip

    def _check_keys(self, keys: Any) -> None:
        if keys.shape.ndims not in (1, 2):
            raise ValueError(
                f"Expected a vector or matrix for keys, got {keys.shape}. Give [n] scalar keys "
                "or [n, key size] vector keys."
            )

    def lookup(self, keys: Any, name: Any = None) -> tf.Tensor:
        """The values of `keys` ([n] or [n, key size]); missing keys get the default."""
        keys = tf.convert_to_tensor(keys, self._key_dtype)
        self._check_keys(keys)
        if self._num_shards == 1:
            return self._table_shards[0].lookup(keys)
        shards = self._shard_indices(keys)
        parts = tf.dynamic_partition(keys, shards, self._num_shards)
        positions = tf.dynamic_partition(tf.range(tf.shape(keys)[0]), shards, self._num_shards)
        found = [table.lookup(part) for table, part in zip(self._table_shards, parts, strict=True)]
        return tf.dynamic_stitch(positions, found, name=name)

    def insert(self, keys: Any, values: Any, name: Any = None) -> Any:
        """Inserts (or overwrites) `keys` with `values`; returns the op (None eagerly)."""
        keys = tf.convert_to_tensor(keys, self._key_dtype)
        values = tf.convert_to_tensor(values, self._value_dtype)
        self._check_keys(keys)
        if self._num_shards == 1:
            return self._table_shards[0].insert(keys, values)
        shards = self._shard_indices(keys)
        key_parts = tf.dynamic_partition(keys, shards, self._num_shards)
        value_parts = tf.dynamic_partition(values, shards, self._num_shards)
        inserted = [table.insert(k, v) for table, k, v in
                    zip(self._table_shards, key_parts, value_parts, strict=True)]  # fmt: skip
        return None if tf.executing_eagerly() else tf.group(*inserted, name=name)

    def export_sharded(self, name: Any = None) -> tuple[list, list]:
        """`(keys per shard, values per shard)`: each shard's buckets (empty ones too)."""
        exported = [table.export() for table in self._table_shards]
        return [k for k, _ in exported], [v for _, v in exported]
