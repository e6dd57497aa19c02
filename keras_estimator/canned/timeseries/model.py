"""`TimeSeriesModel`, the base of time-series models, and `ModelOutputs` (2.15's)."""

from __future__ import annotations

import abc
import collections
from typing import Any

import tensorflow as tf

from keras_estimator.canned.timeseries import math_utils
from keras_estimator.canned.timeseries.feature_keys import TrainEvalFeatures
from keras_estimator.utils.log import quiet_tf_deprecations

ModelOutputs = collections.namedtuple(
    "ModelOutputs", ["loss", "end_state", "predictions", "prediction_times"]
)
ModelOutputs.__doc__ = """What a model computes on a window of data.

Attributes:
    loss: the scalar to minimise.
    end_state: the model's state after the window (a nested tuple of tensors).
    predictions: a dict of predictions, each shaped [batch, len(prediction_times), ...].
    prediction_times: the [batch, window] times the predictions are for.
"""


class TimeSeriesModel(abc.ABC):
    """The base of generative time-series models (tf.estimator 2.15's contract).

    Subclasses define `get_start_state`, `get_batch_loss` and `predict`; the head calls
    `initialize_graph` first (in every model_fn call) with the input statistics.

    Args:
        num_features: the number of values per time.
        exogenous_feature_columns: feature columns for extra inputs that are not
            predicted (read with `tf.compat.v1.feature_column.input_layer`).
        dtype: the floating point dtype of the model.
    """

    def __init__(
        self, num_features: int, exogenous_feature_columns: Any = None, dtype: Any = tf.float32
    ) -> None:
        self._exogenous_feature_columns = list(exogenous_feature_columns or [])
        self.num_features = num_features
        self.dtype = tf.as_dtype(dtype)
        self._input_statistics = None
        self._graph_initialized = False
        self._stats_means = None
        self._stats_sigmas = None

    @property
    def exogenous_feature_columns(self) -> list:
        """The feature columns of the features that are not predicted."""
        return self._exogenous_feature_columns

    def generate(
        self, number_of_series: int, series_length: int,
        model_parameters: Any = None, seed: Any = None,
    ) -> dict | None:  # fmt: skip
        """Samples series from the model; models without sampling raise, as in 2.15 (or
        return None, as 2.15's ARModel did).

        Raises:
            NotImplementedError: this model cannot generate series.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not support generation (as in tf.estimator 2.15). "
            "Use predict() for the distribution of future values."
        )

    def initialize_graph(self, input_statistics: Any = None) -> None:
        """Prepares the model for a model_fn call.

        Args:
            input_statistics: a `math_utils.InputStatistics`, or None for no scaling.
        """
        self._graph_initialized = True
        self._input_statistics = input_statistics
        if input_statistics:
            self._stats_means, variances = input_statistics.overall_feature_moments
            self._stats_sigmas = tf.sqrt(variances)

    def _scale_data(self, data: Any) -> Any:
        """Input scale -> model scale."""
        if self._input_statistics is None:
            return data
        return (data - self._stats_means) / self._stats_sigmas

    def _scale_variance(self, variance: Any) -> Any:
        if self._input_statistics is None:
            return variance
        return variance / self._input_statistics.overall_feature_moments.variance

    def _scale_back_data(self, data: Any) -> Any:
        """Model scale -> input scale."""
        if self._input_statistics is None:
            return data
        return data * self._stats_sigmas + self._stats_means

    def _scale_back_variance(self, variance: Any) -> Any:
        if self._input_statistics is None:
            return variance
        return variance * self._input_statistics.overall_feature_moments.variance

    def _check_graph_initialized(self) -> None:
        if not self._graph_initialized:
            raise ValueError(
                f"{type(self).__name__}.initialize_graph() must be called before the model is "
                "used: it defines the model's variables and takes the input statistics. The "
                "TimeSeriesRegressor's head calls it; call it yourself when using the model "
                "directly."
            )

    def define_loss(self, features: dict, mode: str) -> ModelOutputs:
        """`get_batch_loss` from the start state replicated across the batch.

        Args:
            features: `times` [batch, window], `values` [batch, window, num_features] and
                any exogenous features.
            mode: a `ModeKeys` (TRAIN or EVAL).

        Returns:
            A `ModelOutputs`.
        """
        self._check_graph_initialized()
        batch_size = tf.shape(features[TrainEvalFeatures.TIMES])[0]
        start_state = math_utils.replicate_state(self.get_start_state(), batch_size)
        return self.get_batch_loss(features=features, mode=mode, state=start_state)

    @abc.abstractmethod
    def get_start_state(self) -> Any:
        """The state at the start of a series, without a batch dimension."""

    @abc.abstractmethod
    def get_batch_loss(self, features: dict, mode: str, state: Any) -> ModelOutputs:
        """The loss, predictions and end state for a batch of windows from `state`."""

    @abc.abstractmethod
    def predict(self, features: dict) -> dict:
        """Predictions for `times` after the state in `features` (`start_tuple`)."""

    def _get_exogenous_embedding_shape(self) -> list:
        """The shape (without batch) of the embedded exogenous features."""
        if not self._exogenous_feature_columns:
            return [0]
        v1 = tf.compat.v1
        with tf.Graph().as_default(), quiet_tf_deprecations():
            spec = v1.feature_column.make_parse_example_spec(self._exogenous_feature_columns)
            parsed = v1.io.parse_example(v1.placeholder(tf.string, [None]), spec)
            embedded = v1.feature_column.input_layer(parsed, self._exogenous_feature_columns)
            return embedded.shape.as_list()[1:]

    def _process_exogenous_features(self, times: Any, features: dict) -> Any:
        """The exogenous features embedded as one [batch, window, size] tensor, or None
        without exogenous columns.

        Raises:
            ValueError: if a feature's rank is unknown.
        """
        if not self._exogenous_feature_columns:
            return None
        flat = {}
        for name, tensor in features.items():
            if tensor.shape.ndims is None:
                raise ValueError(
                    f"Features with unknown rank are not supported. Got shape {tensor.shape} "
                    f"for feature {name}. Give the feature a static rank (set_shape / "
                    "ensure_shape) in the input_fn."
                )
            shape = tf.shape(tensor)
            tensor = tf.reshape(tensor, tf.concat([[shape[0] * shape[1]], shape[2:]], 0))
            if tensor.shape.ndims == 1 and tensor.dtype != tf.string:
                tensor = tensor[:, None]
            flat[name] = tensor
        with quiet_tf_deprecations():
            embedded = tf.compat.v1.feature_column.input_layer(
                flat, self._exogenous_feature_columns, trainable=True
            )
        result = tf.reshape(embedded, tf.concat([tf.shape(times), tf.shape(embedded)[1:]], 0))
        result.set_shape(times.shape.concatenate(embedded.shape[1:]))
        return tf.cast(result, self.dtype)
