"""2.15's `sdca_ops.py`: `_SDCAModel`, a linear model trained by stochastic dual coordinate
ascent, and `_SparseFeatureColumn`, on keras_estimator's SDCA step (canned/sdca_graph.py:
the per-example state table and TensorFlow's `SdcaOptimizerV2` kernel).

`minimize()` returns the op of one SDCA step (example states, the unshrunk weights
`<weight>_unshrunk`, the global step); `update_weights(train_op)` sets the weights from the
unshrunk ones, shrunk by l1 / l2 when l1 > 0, as in 2.15. Partitioned weight variables
(2.15 took lists) are not supported: give one variable per feature.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator.canned import sdca_graph

__all__ = ["_SDCAModel", "_SparseFeatureColumn"]
logger = logging.getLogger("keras_estimator")
_LISTS = ("sparse_features", "dense_features")
_LOSSES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss", "poisson_loss")


class _SparseFeatureColumn:
    """One sparse feature of a batch as SDCA reads it: for each entry, its example's index,
    the feature id and the value.

    Args:
        example_indices: [n] int64.
        feature_indices: [n] int64.
        feature_values: [n] float32, or None for ones.
    """

    def __init__(self, example_indices: Any, feature_indices: Any, feature_values: Any) -> None:
        self._example_indices = tf.convert_to_tensor(example_indices, tf.int64)
        self._feature_indices = tf.convert_to_tensor(feature_indices, tf.int64)
        self._feature_values = (
            None if feature_values is None else tf.convert_to_tensor(feature_values, tf.float32)
        )

    @property
    def example_indices(self) -> tf.Tensor:
        """The example index of each entry."""
        return self._example_indices

    @property
    def feature_indices(self) -> tf.Tensor:
        """The feature id of each entry."""
        return self._feature_indices

    @property
    def feature_values(self) -> tf.Tensor | None:
        """The value of each entry (None: all ones)."""
        return self._feature_values

    def as_sparse_feature(self) -> sdca_graph.SparseFeature:
        """The `sdca_graph.SparseFeature` of this column (ones for missing values)."""
        values = self._feature_values
        if values is None:
            values = tf.ones(tf.shape(self._feature_indices), tf.float32)
        return sdca_graph.SparseFeature(self._example_indices, self._feature_indices, values)


def _require(keys: list, where: dict, what: str, lists: tuple = ()) -> None:
    for key in keys:
        if key not in where:
            raise ValueError(f"{key} must be specified in {what}. Received keys: {sorted(where)}")
    for key in lists:
        if not isinstance(where[key], list):
            raise ValueError(f"{key} should be a list, got {type(where[key]).__name__}.")


class _SDCAModel:
    """A linear model trained by SDCA (2.15's private class).

    Args:
        examples: `{"sparse_features": [_SparseFeatureColumn], "dense_features": [[batch,
            d] float32], "example_labels": [batch], "example_weights": [batch],
            "example_ids": [batch] strings}`.
        variables: `{"sparse_features_weights": [variable [vocab] or [vocab, 1]],
            "dense_features_weights": [variable [d] or [d, 1]]}`.
        options: `{"symmetric_l1_regularization", "symmetric_l2_regularization" (> 0),
            "loss_type" (logistic_loss, squared_loss, hinge_loss, smooth_hinge_loss,
            poisson_loss), optional "num_loss_partitions", "num_table_shards",
            "adaptive"}`.

    Raises:
        ValueError: for missing or invalid examples, variables or options.

    Example:
        >>> model = _SDCAModel(examples, variables, options)
        >>> train_op = model.update_weights(model.minimize(global_step))
    """

    def __init__(self, examples: dict, variables: dict, options: dict) -> None:
        if not examples or not variables or not options:
            raise ValueError("examples, variables and options must all be specified.")
        if options.get("loss_type") not in _LOSSES:
            raise ValueError(
                f"Unsupported loss_type: {options.get('loss_type')!r}; expected one of {_LOSSES}."
            )
        required = ["example_labels", "example_weights", "example_ids", *_LISTS]
        _require(required, examples, "examples", _LISTS)
        _require(["sparse_features_weights", "dense_features_weights"], variables, "variables",
                 ("sparse_features_weights", "dense_features_weights"))  # fmt: skip
        _require(["loss_type", "symmetric_l2_regularization", "symmetric_l1_regularization"],
                 options, "options")  # fmt: skip
        l1, l2 = options["symmetric_l1_regularization"], options["symmetric_l2_regularization"]
        if l2 <= 0.0:
            raise ValueError("symmetric_l2_regularization should be positive.")
        if l2 <= 1.0:
            logger.warning(
                "symmetric_l2_regularization for SDCA should typically be larger than for "
                "online optimization methods. Recommended value is of the order of the average "
                "L2 norm of the training examples."
            )
        if l1 < 0.0:
            raise ValueError("symmetric_l1_regularization should be non-negative.")
        for name in ("sparse_features_weights", "dense_features_weights"):
            for weight in variables[name]:
                if isinstance(weight, (list, tuple)):
                    raise ValueError(
                        "Partitioned weight variables are not supported by keras_estimator's "
                        f"_SDCAModel ({name} holds a list). Fix: give one variable per feature."
                    )
        self._examples = examples
        self._variables = variables
        self._options = options
        self._weights = [
            *variables["sparse_features_weights"],
            *variables["dense_features_weights"],
        ]
        self._unshrunk = [
            tf.Variable(
                lambda w=w: tf.zeros(w.shape, tf.float32),
                trainable=False,
                name=f"{w.name.split(':')[0]}_unshrunk/",
            )  # fmt: skip
            for w in self._weights
        ]
        shards = options.get("num_table_shards") or 1
        self._table = sdca_graph.ExampleStateTable(shards)

    def _l1_loss(self) -> tf.Tensor:
        total = tf.add_n([tf.reduce_sum(tf.abs(tf.cast(w, tf.float64))) for w in self._weights])
        return self._options["symmetric_l1_regularization"] * total

    def _l2_loss(self) -> tf.Tensor:
        total = tf.add_n([tf.reduce_sum(tf.square(tf.cast(w, tf.float64))) for w in self._weights])
        return self._options["symmetric_l2_regularization"] * total / 2.0

    def _linear_predictions(self, examples: dict) -> tf.Tensor:
        batch_size = tf.shape(examples["example_ids"])[0]
        result = tf.zeros([batch_size])
        for column, weight in zip(
            examples["sparse_features"], self._variables["sparse_features_weights"], strict=True
        ):
            feature = column.as_sparse_feature()
            products = tf.reshape(tf.gather(weight, feature.feature_indices), [-1])
            result += tf.math.unsorted_segment_sum(
                products * feature.feature_values, feature.example_indices, batch_size
            )
        for dense, weight in zip(
            examples["dense_features"], self._variables["dense_features_weights"], strict=True
        ):
            result += tf.reshape(tf.matmul(dense, tf.reshape(weight, [-1, 1])), [-1])
        return result

    def predictions(self, examples: dict) -> tf.Tensor:
        """[batch] predictions: probabilities (logistic loss), exp(w·x) (poisson loss), or
        w·x."""
        _require(["example_weights", "sparse_features", "dense_features"], examples, "examples",
                 ("sparse_features", "dense_features"))  # fmt: skip
        result = self._linear_predictions(examples)
        if self._options["loss_type"] == "logistic_loss":
            return tf.sigmoid(result)
        if self._options["loss_type"] == "poisson_loss":
            return tf.exp(result)
        return result

    def minimize(self, global_step: Any = None, name: Any = None) -> tf.Operation:
        """The op of one SDCA step over the examples: example states and unshrunk weights
        updated, then `global_step` (if given) increased by one."""
        examples = self._examples
        options = self._options
        sparse = [column.as_sparse_feature() for column in examples["sparse_features"]]
        count = len(sparse)
        sparse_unshrunk, dense_unshrunk = self._unshrunk[:count], self._unshrunk[count:]
        keys = tf.raw_ops.SdcaFprint(input=examples["example_ids"])
        state, commit = self._table.lookup(keys)
        batch_ids = [
            tf.cast(tf.unique(tf.cast(f.feature_indices, tf.int32))[0], tf.int64) for f in sparse
        ]
        new_state, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
            sparse_example_indices=[f.example_indices for f in sparse],
            sparse_feature_indices=[f.feature_indices for f in sparse],
            sparse_feature_values=[f.feature_values for f in sparse],
            dense_features=[
                tf.convert_to_tensor(d, tf.float32) for d in examples["dense_features"]
            ],
            example_weights=tf.cast(examples["example_weights"], tf.float32),
            example_labels=tf.cast(examples["example_labels"], tf.float32),
            sparse_indices=batch_ids,
            sparse_weights=[
                tf.gather(w.read_value(), i) for w, i in zip(sparse_unshrunk, batch_ids)
            ],
            dense_weights=[w.read_value() for w in dense_unshrunk],
            example_state_data=state,
            loss_type=options["loss_type"],
            l1=float(options["symmetric_l1_regularization"]),
            l2=float(options["symmetric_l2_regularization"]),
            num_loss_partitions=int(options.get("num_loss_partitions", 1)),
            num_inner_iterations=1,
            adaptive=bool(options.get("adaptive", True)),
        )
        updates = [commit(new_state)]
        for w, ids, delta in zip(sparse_unshrunk, batch_ids, sparse_deltas, strict=True):
            updates.append(
                w.scatter_add(tf.IndexedSlices(tf.reshape(delta, [-1, *w.shape[1:]]), ids))
            )
        for w, delta in zip(dense_unshrunk, dense_deltas, strict=True):
            updates.append(w.assign_add(tf.reshape(delta, w.shape), read_value=False))
        if global_step is not None:
            with tf.control_dependencies(updates):
                updates = [global_step.assign_add(1, read_value=False)]
        return tf.group(*updates, name=name)

    def update_weights(self, train_op: Any) -> tf.Operation:
        """After `train_op`: the weights set to the unshrunk ones, shrunk by l1 / l2."""
        with tf.control_dependencies([train_op] if train_op is not None else []):
            options = sdca_graph.SDCAOptions(
                loss_type=self._options["loss_type"],
                l1=float(self._options["symmetric_l1_regularization"]),
                l2=float(self._options["symmetric_l2_regularization"]),
                num_loss_partitions=1, num_table_shards=1, adaptive=True,
            )  # fmt: skip
            return sdca_graph._set_weights(self._weights, self._unshrunk, options)

    def approximate_duality_gap(self) -> tf.Tensor:
        """(primal loss + dual loss + l1 loss + 2 * l2 loss) / example weights, summed over
        every example seen (float64)."""
        sums = [
            tf.reduce_sum(tf.cast(values.read_value(), tf.float64), 0)
            for _, values in self._table._shards
        ]
        total = tf.add_n(sums)
        return (total[1] + total[2] + self._l1_loss() + 2.0 * self._l2_loss()) / total[3]

    def unregularized_loss(self, examples: dict) -> tf.Tensor:
        """The mean loss over the examples, weighted (float64), without regularization."""
        _require(["example_labels", "example_weights", "sparse_features", "dense_features"],
                 examples, "examples", ("sparse_features", "dense_features"))  # fmt: skip
        predictions = tf.cast(self._linear_predictions(examples), tf.float64)
        labels = tf.cast(examples["example_labels"], tf.float64)
        weights = tf.cast(examples["example_weights"], tf.float64)
        loss_type = self._options["loss_type"]
        if loss_type == "logistic_loss":
            losses = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=predictions)
        elif loss_type == "poisson_loss":
            losses = tf.nn.log_poisson_loss(targets=labels, log_input=predictions)
        elif loss_type in ("hinge_loss", "smooth_hinge_loss"):
            losses = tf.nn.relu(1.0 - (2.0 * labels - 1.0) * predictions)
        else:
            return tf.reduce_sum(tf.square(labels - predictions) * weights) / (
                2.0 * tf.reduce_sum(weights)
            )
        return tf.reduce_sum(losses * weights) / tf.reduce_sum(weights)

    def regularized_loss(self, examples: dict) -> tf.Tensor:
        """`unregularized_loss` plus (l1 + l2 loss) / the examples' total weight."""
        _require(["example_labels", "example_weights", "sparse_features", "dense_features"],
                 examples, "examples", ("sparse_features", "dense_features"))  # fmt: skip
        weights = tf.reduce_sum(tf.cast(examples["example_weights"], tf.float64))
        return (self._l1_loss() + self._l2_loss()) / weights + self.unregularized_loss(examples)
