"""`tf.contrib.lookup`: TF 1's vocabulary tables, on TensorFlow 2's `tf.lookup`.

`index_table_from_tensor` / `index_table_from_file` (string -> id, out-of-vocabulary
values to `default_value` or to `num_oov_buckets` hash buckets after the vocabulary),
`index_to_string_table_from_tensor` / `..._from_file` (id -> string), and the table
classes TF 1 exported here (`HashTable` is `tf.lookup.StaticHashTable`). Input pipelines and
model_fns used them to turn string labels into class ids.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

_INSTEAD = "tf.lookup (tf.lookup.StaticHashTable, tf.lookup.StaticVocabularyTable)"

HashTable = tf.compat.v1.lookup.StaticHashTable
KeyValueTensorInitializer = tf.compat.v1.lookup.KeyValueTensorInitializer
TextFileInitializer = tf.compat.v1.lookup.TextFileInitializer
TextFileIndex = tf.lookup.TextFileIndex
MutableHashTable = tf.lookup.experimental.MutableHashTable
MutableDenseHashTable = tf.lookup.experimental.DenseHashTable


def _checked(num_oov_buckets: int, hasher_spec: Any) -> None:
    if num_oov_buckets < 0:
        raise ValueError(
            "num_oov_buckets must be greater or equal than 0. Fix: pass 0 (out-of-vocabulary "
            "values get default_value) or more buckets. "
            f"Received: num_oov_buckets={num_oov_buckets}"
        )
    if hasher_spec is not None:
        raise ValueError(
            "hasher_spec is not supported: out-of-vocabulary buckets use TensorFlow's fast "
            "string hash (TF 1's default FastHashSpec). Fix: drop hasher_spec. "
            f"Received: hasher_spec={hasher_spec!r}"
        )


def _index_table(initializer: Any, num_oov_buckets: int, default_value: int) -> Any:
    if num_oov_buckets:
        return tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets)
    return tf.lookup.StaticHashTable(initializer, default_value)


def index_table_from_tensor(
    vocabulary_list: Any,
    num_oov_buckets: int = 0,
    default_value: int = -1,
    hasher_spec: Any = None,
    dtype: tf.DType = tf.string,
    name: str | None = None,
) -> Any:
    """A table mapping each vocabulary entry to its position (int64).

    Args:
        vocabulary_list: A 1-D tensor (or list) of distinct keys.
        num_oov_buckets: Hash buckets for other keys, ids `len(vocabulary_list)` on.
        default_value: The id of other keys when `num_oov_buckets` is 0.
        hasher_spec: Only None (TF 1's default fast hash) is supported.
        dtype: The keys' dtype (string or an integer dtype).
        name: Unused (TF 1's op name scope).

    Returns:
        A `tf.lookup.StaticHashTable` or `StaticVocabularyTable`; `.lookup(keys)` gives ids.

    Example:
        >>> table = index_table_from_tensor(tf.constant(["<=50K", ">50K"]))
        >>> table.lookup(labels)   # int64 class ids
    """
    del name
    _checked(num_oov_buckets, hasher_spec)
    keys = tf.convert_to_tensor(vocabulary_list, dtype=dtype)
    ids = tf.range(tf.size(keys, out_type=tf.int64), dtype=tf.int64)
    initializer = tf.lookup.KeyValueTensorInitializer(keys, ids)
    return _index_table(initializer, num_oov_buckets, default_value)


def index_table_from_file(
    vocabulary_file: str | None = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: int = -1,
    hasher_spec: Any = None,
    key_dtype: tf.DType = tf.string,
    name: str | None = None,
    key_column_index: int = tf.lookup.TextFileIndex.WHOLE_LINE,
    value_column_index: int = tf.lookup.TextFileIndex.LINE_NUMBER,
    delimiter: str = "\t",
) -> Any:
    """A table mapping each line of a vocabulary file to its line number (int64).

    Args: as `index_table_from_tensor`, and `vocabulary_file` (one key a line),
        `vocab_size` (the first lines only), the column indices and delimiter of
        `tf.lookup.TextFileInitializer`.

    Returns:
        A `tf.lookup.StaticHashTable` or `StaticVocabularyTable`.
    """
    del name
    if not vocabulary_file:
        raise ValueError(
            "vocabulary_file must be specified and must not be empty. Fix: pass the path of "
            f"a vocabulary file. Received: vocabulary_file={vocabulary_file!r}"
        )
    _checked(num_oov_buckets, hasher_spec)
    initializer = tf.lookup.TextFileInitializer(
        vocabulary_file, key_dtype, key_column_index, tf.int64, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter,
    )  # fmt: skip
    return _index_table(initializer, num_oov_buckets, default_value)


def index_to_string_table_from_tensor(
    vocabulary_list: Any, default_value: str = "UNK", name: str | None = None
) -> Any:
    """A table mapping ids (int64) to the vocabulary entry at that position.

    Example:
        >>> index_to_string_table_from_tensor(["a", "b"]).lookup(tf.constant([1, 5], tf.int64))
        # [b"b", b"UNK"]
    """
    del name
    values = tf.convert_to_tensor(vocabulary_list)
    ids = tf.range(tf.size(values, out_type=tf.int64), dtype=tf.int64)
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(ids, values), default_value
    )


def index_to_string_table_from_file(
    vocabulary_file: str,
    vocab_size: int | None = None,
    default_value: str = "UNK",
    name: str | None = None,
    key_column_index: int = tf.lookup.TextFileIndex.LINE_NUMBER,
    value_column_index: int = tf.lookup.TextFileIndex.WHOLE_LINE,
    delimiter: str = "\t",
) -> Any:
    """A table mapping line numbers (int64) to the lines of a vocabulary file."""
    del name
    initializer = tf.lookup.TextFileInitializer(
        vocabulary_file, tf.int64, key_column_index, tf.string, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter,
    )  # fmt: skip
    return tf.lookup.StaticHashTable(initializer, default_value)


__getattr__ = removed_attribute_getattr("lookup", _INSTEAD)

__all__ = [
    "HashTable",
    "KeyValueTensorInitializer",
    "MutableDenseHashTable",
    "MutableHashTable",
    "TextFileIndex",
    "TextFileInitializer",
    "index_table_from_file",
    "index_table_from_tensor",
    "index_to_string_table_from_file",
    "index_to_string_table_from_tensor",
]
