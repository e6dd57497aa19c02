"""The SDCA training step of a linear model: its example-state table, unshrunk weights, update.

TensorFlow 2.21 still ships the kernels tf.estimator 2.15's LinearSDCA ran on
(`SdcaOptimizerV2`, `SdcaFprint`, `MutableDenseHashTableV2`); this builds one step of the
same computation on resource variables, with the names 2.15 checkpointed:

- per model weight `w`, a variable of the same shape holding the weights before the l1
  shrinkage (`<w>_unshrunk`; the caller names it), which the kernel reads and updates;
- the per-example dual state (4 floats per example, keyed by `SdcaFprint(example_id)`, a
  [2] int64 key) in `num_shards` dense hash tables split by `|key[0]| mod num_shards`,
  checkpointed as `ShardedMutableHashTable-<i>-of-<n>-keys` / `-values` (the table's
  buckets, [buckets, 2] int64 and [buckets, 4] float32; empty key [0, 0], deleted [1, 1]).

The table's buckets are kept in those two variables (so the checkpoint, `get_variable_value`
and warm starts see them as variables): each step imports them into a hash table, looks the
batch's examples up, inserts their new state and exports the buckets back. After the update
the model weights are set to the unshrunk ones, shrunk by `l1 / l2` when l1 > 0 (what 2.15's
chief hook ran after each step).
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

_INITIAL_BUCKETS = 131072  # MutableDenseHashTable's default, as 2.15 saved it
_EMPTY_KEY = (0, 0)
_DELETED_KEY = (1, 1)
_STATE_SIZE = 4  # per example: dual, primal loss, dual loss, example weight
TABLE_NAME = "ShardedMutableHashTable"


class SparseFeature(NamedTuple):
    """One categorical column of a batch: (example index, feature id, value) per entry."""

    example_indices: tf.Tensor  # [n] int64
    feature_indices: tf.Tensor  # [n] int64
    feature_values: tf.Tensor  # [n] float32


class Examples(NamedTuple):
    """The batch as the SDCA kernel reads it."""

    sparse_features: list[SparseFeature]
    dense_features: list[tf.Tensor]  # each [batch, d] float32 (the bias: ones [batch, 1])
    labels: tf.Tensor  # [batch] float32
    weights: tf.Tensor  # [batch] float32
    example_ids: tf.Tensor  # [batch] string


def unique_sparse_feature(ids: tf.SparseTensor, weights: tf.SparseTensor | None) -> SparseFeature:
    """A categorical column's ids as SDCA takes them: out-of-vocabulary ids (< 0) dropped and
    an id repeated within one example given once, with its values summed."""
    example_indices = ids.indices[:, 0]
    feature_ids = tf.cast(tf.reshape(ids.values, [-1]), tf.int64)
    values = (
        tf.ones(tf.shape(feature_ids), tf.float32)
        if weights is None
        else tf.cast(tf.reshape(weights.values, [-1]), tf.float32)
    )
    valid = feature_ids >= 0
    example_indices = tf.boolean_mask(example_indices, valid)
    feature_ids = tf.boolean_mask(feature_ids, valid)
    values = tf.boolean_mask(values, valid)
    # One int64 per (example, id) pair, so that tf.unique finds the repeats.
    width = tf.reduce_max(tf.concat([feature_ids, [0]], 0)) + 1
    pairs, position = tf.unique(example_indices * width + feature_ids)
    count = tf.shape(pairs)[0]
    unique_examples = tf.math.unsorted_segment_min(example_indices, position, count)
    return SparseFeature(
        unique_examples,
        pairs - unique_examples * width,
        tf.math.unsorted_segment_sum(values, position, count),
    )


class ExampleStateTable:
    """The per-example dual state, in `num_shards` hash tables whose buckets live in variables.

    Args:
        num_shards: the number of shards (2.15's `num_table_shards`, None meaning 1).

    Example:
        >>> table = ExampleStateTable(1)
        >>> state, commit = table.lookup(tf.raw_ops.SdcaFprint(input=ids))
        >>> update = commit(new_state)
    """

    def __init__(self, num_shards: int) -> None:
        self._shards = []
        for i in range(num_shards):
            name = f"{TABLE_NAME}-{i + 1}-of-{num_shards}"
            keys = _variable(f"{name}-keys", lambda: tf.zeros([_INITIAL_BUCKETS, 2], tf.int64))
            values = _variable(
                f"{name}-values", lambda: tf.zeros([_INITIAL_BUCKETS, _STATE_SIZE], tf.float32)
            )
            self._shards.append((keys, values))

    def _shard_of(self, keys: tf.Tensor) -> tf.Tensor:
        return tf.cast(tf.math.floormod(tf.abs(keys[:, 0]), len(self._shards)), tf.int32)

    def lookup(self, keys: tf.Tensor):  # noqa: ANN201 - (state, commit) pair
        """(the [batch, 4] state of each key, `commit(new_state)` -> the op storing it)."""
        count = len(self._shards)
        shard = self._shard_of(keys)
        key_parts = tf.dynamic_partition(keys, shard, count)
        positions = tf.dynamic_partition(tf.range(tf.shape(keys)[0]), shard, count)
        tables, states = [], []
        for (key_var, value_var), part in zip(self._shards, key_parts, strict=True):
            table = tf.raw_ops.MutableDenseHashTableV2(
                empty_key=tf.constant(_EMPTY_KEY, tf.int64),
                deleted_key=tf.constant(_DELETED_KEY, tf.int64),
                value_dtype=tf.float32,
                value_shape=[_STATE_SIZE],
                initial_num_buckets=_INITIAL_BUCKETS,
            )
            loaded = tf.raw_ops.LookupTableImportV2(
                table_handle=table, keys=key_var.read_value(), values=value_var.read_value()
            )
            with tf.control_dependencies([loaded]):
                states.append(
                    tf.raw_ops.LookupTableFindV2(
                        table_handle=table,
                        keys=part,
                        default_value=tf.zeros([_STATE_SIZE], tf.float32),
                    )
                )
            tables.append(table)
        state = tf.dynamic_stitch(positions, states)

        def commit(new_state: tf.Tensor) -> tf.Operation:
            value_parts = tf.dynamic_partition(new_state, shard, count)
            stored = []
            for table, part, values, (key_var, value_var) in zip(
                tables, key_parts, value_parts, self._shards, strict=True
            ):
                inserted = tf.raw_ops.LookupTableInsertV2(
                    table_handle=table, keys=part, values=values
                )
                with tf.control_dependencies([inserted]):
                    buckets, bucket_values = tf.raw_ops.LookupTableExportV2(
                        table_handle=table, Tkeys=tf.int64, Tvalues=tf.float32
                    )
                stored.append(key_var.assign(buckets, read_value=False))
                stored.append(value_var.assign(bucket_values, read_value=False))
            return tf.group(*stored)

        return state, commit


def _variable(name: str, initial_value) -> tf.Variable:  # noqa: ANN001
    # A trailing "/" makes the name absolute (no enclosing scope), as 2.15's table names were.
    return tf.Variable(initial_value, name=f"{name}/", shape=tf.TensorShape(None), trainable=False)


class SDCAOptions(NamedTuple):
    loss_type: str  # "logistic_loss" or "squared_loss"
    l1: float
    l2: float
    num_loss_partitions: int
    num_table_shards: int
    adaptive: bool


def training_step(
    examples: Examples,
    sparse_weights: list[tf.Variable],
    dense_weights: list[tf.Variable],
    unshrunk_names: list[str],
    options: SDCAOptions,
    global_step: tf.Variable,
) -> tf.Operation:
    """One SDCA step over the batch: updates the unshrunk weights and the example states,
    adds 1 to the global step, then sets the model weights from the unshrunk ones.

    `sparse_weights` ([ids, 1]) go with `examples.sparse_features`, `dense_weights` ([d, 1],
    the bias [1]) with `examples.dense_features`; `unshrunk_names` names the unshrunk copy of
    each (sparse first).
    """
    weights = [*sparse_weights, *dense_weights]
    # 2.15 started the unshrunk copies at zero, whatever the weights held.
    unshrunk = [
        _absolute_variable(name, w) for name, w in zip(unshrunk_names, weights, strict=True)
    ]
    sparse_unshrunk, dense_unshrunk = (
        unshrunk[: len(sparse_weights)],
        unshrunk[len(sparse_weights) :],
    )
    table = ExampleStateTable(options.num_table_shards)
    keys = tf.raw_ops.SdcaFprint(input=examples.example_ids)
    state, commit = table.lookup(keys)
    batch_ids = [
        tf.cast(tf.unique(tf.cast(f.feature_indices, tf.int32))[0], tf.int64)
        for f in examples.sparse_features
    ]
    state_update, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
        sparse_example_indices=[f.example_indices for f in examples.sparse_features],
        sparse_feature_indices=[f.feature_indices for f in examples.sparse_features],
        sparse_feature_values=[f.feature_values for f in examples.sparse_features],
        dense_features=examples.dense_features,
        example_weights=examples.weights,
        example_labels=examples.labels,
        sparse_indices=batch_ids,
        sparse_weights=[tf.gather(w.read_value(), i) for w, i in zip(sparse_unshrunk, batch_ids)],
        dense_weights=[w.read_value() for w in dense_unshrunk],
        example_state_data=state,
        loss_type=options.loss_type,
        l1=options.l1,
        l2=options.l2,
        num_loss_partitions=options.num_loss_partitions,
        num_inner_iterations=1,
        adaptive=options.adaptive,
    )
    updates = [commit(state_update)]
    for w, i, delta in zip(sparse_unshrunk, batch_ids, sparse_deltas, strict=True):
        updates.append(w.scatter_add(tf.IndexedSlices(delta, i)))
    for w, delta in zip(dense_unshrunk, dense_deltas, strict=True):
        updates.append(w.assign_add(delta, read_value=False))
    with tf.control_dependencies(updates):
        stepped = global_step.assign_add(1, read_value=False)
    with tf.control_dependencies([stepped]):
        return _set_weights(weights, unshrunk, options)


def _absolute_variable(name: str, like: tf.Variable) -> tf.Variable:
    return tf.Variable(lambda: tf.zeros(like.shape, tf.float32), name=f"{name}/", trainable=False)


def _set_weights(
    weights: list[tf.Variable], unshrunk: list[tf.Variable], options: SDCAOptions
) -> tf.Operation:
    """weights = unshrunk, shrunk towards 0 by l1 / l2 when l1 > 0 (2.15's update_weights)."""
    assigned = []
    for w, u in zip(weights, unshrunk, strict=True):
        value = u.read_value()
        if options.l1 > 0:
            shrinkage = options.l1 / options.l2
            value = tf.sign(value) * tf.maximum(0.0, tf.abs(value) - shrinkage)
        assigned.append(w.assign(value, read_value=False))
    return tf.group(*assigned)
