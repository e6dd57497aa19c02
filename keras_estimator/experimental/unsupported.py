"""tf.estimator 2.15 names that keras_estimator does not provide, each with what to use instead.

They resolve (so `tf.estimator.experimental.LinearSDCA` in an import or a default argument does
not fail), take tf.estimator 2.15's constructor arguments, and raise NotImplementedError on
construction, naming the replacement. `keras-estimator check` reports them as unsupported.
"""

from __future__ import annotations

from typing import Any, NoReturn

RNN_REPLACEMENT = (
    "write a model_fn that runs a Keras RNN layer (keras.layers.LSTM / GRU / SimpleRNN over "
    "the padded sequence tensor, with keras.layers.Masking or a mask for the lengths) and "
    "returns a head's EstimatorSpec (head.create_estimator_spec), or train a plain Keras model "
    "with keras.layers.LSTM"
)


def not_provided(api: str, why: str, fix: str) -> NoReturn:
    """Raises the NotImplementedError of an unprovided tf.estimator 2.15 API."""
    raise NotImplementedError(
        f"{api} is not provided by keras_estimator: {why}. Expected: code built on the "
        f"tf.estimator APIs keras_estimator runs (`keras-estimator check` lists them). Fix: {fix}."
    )


class LinearSDCA:
    """Not provided: `tf.estimator.experimental.LinearSDCA`, the SDCA optimizer of linear
    estimators. Constructing it raises NotImplementedError; use LinearClassifier /
    LinearRegressor with their default Ftrl optimizer (with l1/l2 regularization)."""

    def __init__(
        self,
        example_id_column: Any,
        num_loss_partitions: int = 1,
        num_table_shards: Any = None,
        symmetric_l1_regularization: float = 0.0,
        symmetric_l2_regularization: float = 1.0,
        adaptive: bool = False,
    ) -> None:
        not_provided(
            "tf.estimator.experimental.LinearSDCA",
            "the SDCA optimizer needs TensorFlow's removed sdca_optimizer ops",
            "use tf.estimator.LinearClassifier / LinearRegressor with optimizer='Ftrl' (their "
            "default), e.g. optimizer=tf.keras.optimizers.Ftrl(learning_rate, "
            "l1_regularization_strength=..., l2_regularization_strength=...) for the "
            "symmetric_l1/l2_regularization",
        )


USE_DEFAULT = object()  # tf.estimator 2.15's default cell_type marker


class RNNEstimator:
    """Not provided: `tf.estimator.experimental.RNNEstimator`. Constructing it raises
    NotImplementedError; write a model_fn with Keras RNN layers and a head instead."""

    _API = "tf.estimator.experimental.RNNEstimator"

    def __init__(
        self,
        head: Any,
        sequence_feature_columns: Any,
        context_feature_columns: Any = None,
        units: Any = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Any = None,
        return_sequences: bool = False,
        model_dir: Any = None,
        optimizer: Any = "Adagrad",
        config: Any = None,
    ) -> None:
        _rnn_not_provided(self._API)


class RNNClassifier(RNNEstimator):
    """Not provided: `tf.estimator.experimental.RNNClassifier`. Constructing it raises
    NotImplementedError; write a model_fn with Keras RNN layers and a classification head."""

    _API = "tf.estimator.experimental.RNNClassifier"

    def __init__(
        self,
        sequence_feature_columns: Any,
        context_feature_columns: Any = None,
        units: Any = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Any = None,
        return_sequences: bool = False,
        model_dir: Any = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: Any = None,
        optimizer: Any = "Adagrad",
        loss_reduction: Any = "sum_over_batch_size",
        sequence_mask: str = "sequence_mask",
        config: Any = None,
    ) -> None:
        _rnn_not_provided(self._API)


def _rnn_not_provided(api: str) -> NoReturn:
    not_provided(
        api,
        "its sequence feature columns (tf.feature_column.sequence_*) and the TF1 RNN cells it "
        "was built on are gone with Keras 3",
        RNN_REPLACEMENT,
    )
