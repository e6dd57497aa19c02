"""Autoregressive time-series models: `ARModel` and its LSTM plug-in (tf.estimator 2.15's).

An `ARModel` reads windows of `input_window_size` past values (plus time-of-period features
and exogenous features) and predicts the next `output_window_size` values through a
prediction model (`LSTMPredictionModel` by default, a Keras 3 model made in every model_fn
call; its variables keep one name wherever it is called: the tf.while_loops of evaluation
and prediction included).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.timeseries import model
from keras_estimator.canned.timeseries import model_utils as model_utils
from keras_estimator.canned.timeseries.feature_keys import PredictionFeatures, TrainEvalFeatures
from keras_estimator.spec.mode_keys import ModeKeys

# The name scope of the prediction model's variables, whatever scope it is called in
# (absolute: the trailing "/" drops the enclosing while-loop and head scopes).
_MODEL_SCOPE = "model/"


class LSTMPredictionModel(keras.Model):
    """An LSTM encoder / decoder, the default prediction model of `ARModel`.

    The encoder reads the input window; its final state starts the decoder, which reads
    the output window's features. Dense layers give each output time's mean and (through
    `exp`) covariance.

    Args:
        num_features: the number of values per time.
        input_window_size: the length of the input window.
        output_window_size: the length of the output window.
        num_units: the units of both LSTMs.
    """

    def __init__(
        self, num_features: int, input_window_size: int, output_window_size: int,
        num_units: int = 128,
    ) -> None:  # fmt: skip
        super().__init__(name="lstm_prediction_model")
        self._encoder = keras.layers.LSTM(num_units, name="encoder", return_state=True)
        self._decoder = keras.layers.LSTM(num_units, name="decoder", return_sequences=True)
        self._mean_transform = keras.layers.Dense(num_features, name="mean_transform")
        self._covariance_transform = keras.layers.Dense(num_features, name="covariance_transform")

    def call(self, input_window_features: Any, output_window_features: Any) -> dict:
        """Returns `{"mean": ..., "covariance": ...}`, each [batch, output window, features]."""
        _, state_h, state_c = self._encoder(input_window_features)
        decoded = self._decoder(output_window_features, initial_state=[state_h, state_c])
        return {
            "mean": self._mean_transform(decoded),
            "covariance": tf.exp(self._covariance_transform(decoded)),
        }


def _normal_negative_log_likelihood(targets: Any, mean: Any, covariance: Any) -> tf.Tensor:
    sigma = tf.sqrt(tf.maximum(covariance, 1e-5))
    z = (mean - targets) / sigma
    return tf.reduce_sum(0.5 * z**2 + tf.math.log(sigma) + 0.5 * math.log(2.0 * math.pi))


class ARModel(model.TimeSeriesModel):
    """An autoregressive model, linear or not, as tf.estimator 2.15's `ARModel`.

    Each training window holds `input_window_size + output_window_size` times; the model
    predicts the last `output_window_size` values from the first `input_window_size` (and
    from time features: each periodicity is cut into `num_time_buckets` buckets, and a
    time's feature in its bucket is its offset within the bucket, 0 elsewhere).

    Args:
        periodicities: one periodicity or a list (in the units of `times`).
        input_window_size: the number of past times the model reads.
        output_window_size: the number of times it predicts at once (> 0).
        num_features: the number of values per time.
        prediction_model_factory: called with `num_features`, `input_window_size` and
            `output_window_size`, returns a Keras model whose `call(input_window_features,
            output_window_features)` returns `{"mean", "covariance"}`.
        num_time_buckets: the buckets per periodicity.
        loss: `ARModel.NORMAL_LIKELIHOOD_LOSS` (trains the covariance too) or
            `ARModel.SQUARED_LOSS`.
        exogenous_feature_columns: feature columns of extra inputs that are not predicted.

    Raises:
        ValueError: for a window or bucket size that cannot work, or an unknown loss.
    """

    SQUARED_LOSS = "squared_loss"
    NORMAL_LIKELIHOOD_LOSS = "normal_likelihood_loss"

    def __init__(
        self, periodicities: Any, input_window_size: int, output_window_size: int,
        num_features: int, prediction_model_factory: Any = LSTMPredictionModel,
        num_time_buckets: int = 10, loss: str = NORMAL_LIKELIHOOD_LOSS,
        exogenous_feature_columns: Any = None,
    ) -> None:  # fmt: skip
        self._model_factory = prediction_model_factory
        self.input_window_size = input_window_size
        self.output_window_size = output_window_size
        self.window_size = input_window_size + output_window_size
        if loss not in (self.SQUARED_LOSS, self.NORMAL_LIKELIHOOD_LOSS):
            raise ValueError(
                f"ARModel's loss must be ARModel.SQUARED_LOSS ({self.SQUARED_LOSS!r}) or "
                f"ARModel.NORMAL_LIKELIHOOD_LOSS ({self.NORMAL_LIKELIHOOD_LOSS!r}); "
                f"received {loss!r}."
            )
        self.loss = loss
        super().__init__(
            num_features=num_features, exogenous_feature_columns=exogenous_feature_columns
        )
        self.exogenous_size = (
            self._get_exogenous_embedding_shape()[-1] if exogenous_feature_columns else 0
        )
        if num_time_buckets <= 0:
            raise ValueError(f"num_time_buckets must be positive; received {num_time_buckets}.")
        self._buckets = int(num_time_buckets)
        if not periodicities:
            periodicities = []
        elif not isinstance(periodicities, (list, tuple)):
            periodicities = [periodicities]
        self._periodicities = [int(p) for p in periodicities]
        if any(p <= 0 for p in self._periodicities):
            raise ValueError(f"periodicities must be positive; received {self._periodicities}.")
        if not self._periodicities and not input_window_size:
            raise ValueError(
                "ARModel needs something to regress on: give periodicities (time features) "
                "or input_window_size > 0 (past values)."
            )
        if output_window_size <= 0:
            raise ValueError(f"output_window_size must be positive; received {output_window_size}.")
        # The prediction model (a Keras model from the factory), made by initialize_graph.
        self._model_instance: Callable[..., dict[str, tf.Tensor]] | None = None

    def initialize_graph(self, input_statistics: Any = None) -> None:
        """Takes the statistics and makes the prediction model (for this model_fn call)."""
        super().initialize_graph(input_statistics=input_statistics)
        self._model_instance = self._model_factory(
            num_features=self.num_features,
            input_window_size=self.input_window_size,
            output_window_size=self.output_window_size,
        )

    def get_start_state(self) -> tuple:
        """Zero times, values and exogenous features for `input_window_size` steps."""
        window = self.input_window_size
        return (
            tf.zeros([window], dtype=tf.int64),
            tf.zeros([window, self.num_features], dtype=self.dtype),
            tf.zeros([window, self.exogenous_size], dtype=self.dtype),
        )

    def random_model_parameters(self, seed: Any = None) -> None:
        """Not supported (as in 2.15, where it returned None)."""

    def generate(
        self, number_of_series: int, series_length: int,
        model_parameters: Any = None, seed: Any = None,
    ) -> None:  # fmt: skip
        """Not supported (as in 2.15, where it returned None)."""

    def _compute_time_features(self, time: Any) -> tuple[tf.Tensor, tf.Tensor]:
        """`(time / periodicities, bucket features [batch, window, periods, buckets])`."""
        batch_size = tf.shape(time)[0]
        periods = tf.constant(self._periodicities, shape=[1, 1, len(self._periodicities), 1],
                              dtype=time.dtype)  # fmt: skip
        time = tf.reshape(time, [batch_size, -1, 1, 1])
        window_offset = time / self._periodicities
        # The position within each period, in units of buckets: [0, buckets).
        position = (
            tf.cast(time % periods, self.dtype) * self._buckets / tf.cast(periods, self.dtype)
        )
        offsets = tf.nn.relu(
            position - tf.reshape(tf.range(self._buckets, dtype=self.dtype), [1, 1, 1, -1])
        )
        return window_offset, tf.where(offsets < 1.0, offsets, tf.zeros_like(offsets))

    def prediction_ops(self, times: Any, values: Any, exogenous_regressors: Any) -> dict:
        """The prediction model's `{"mean", "covariance"}` for the output window.

        Args:
            times: [batch, window_size] integers: the input window's times, then the output
                window's.
            values: [batch, input_window_size, num_features] input values (model scale).
            exogenous_regressors: [batch, window_size, exogenous_size], or None.

        Returns:
            A dict of [batch, output_window_size, num_features] tensors.
        """
        times.shape.assert_is_compatible_with([None, self.window_size])
        batch_size = tf.shape(times)[0]
        inputs, outputs = [], []
        split = (self.input_window_size, self.output_window_size)
        if self._periodicities:
            _, time_features = self._compute_time_features(times)
            size = self._buckets * len(self._periodicities)
            time_features = tf.reshape(time_features, [batch_size, self.window_size, size])
            past, future = tf.split(time_features, split, axis=1)
            inputs.append(past)
            outputs.append(future)
        if self.input_window_size:
            values.shape.assert_is_compatible_with(
                [None, self.input_window_size, self.num_features]
            )
            inputs.append(values[:, : self.input_window_size])
        if self.exogenous_size:
            past, future = tf.split(exogenous_regressors, split, axis=1)
            inputs.append(past)
            outputs.append(future)
        input_features = tf.concat(inputs, axis=2)
        if outputs:
            output_features = tf.concat(outputs, axis=2)
        else:
            output_features = tf.zeros([batch_size, self.output_window_size, 0], self.dtype)
        static_batch = times.shape[0]
        input_features.set_shape([static_batch, self.input_window_size, input_features.shape[-1]])
        output_features.set_shape(
            [static_batch, self.output_window_size, output_features.shape[-1]]
        )
        return self._output_window_predictions(input_features, output_features)

    def _output_window_predictions(self, input_window_features: Any, output_window_features: Any):  # noqa: ANN202
        if self._model_instance is None:
            raise RuntimeError(
                "ARModel has no prediction model yet. Fix: call initialize_graph() first (the "
                "estimator's model_fn does)."
            )
        with tf.name_scope(_MODEL_SCOPE):
            predictions = self._model_instance(input_window_features, output_window_features)
        shape = [None, self.output_window_size, self.num_features]
        for value in predictions.values():
            value.set_shape(shape)
        return predictions

    def _predicted_mean_op(self, activations: list) -> tf.Tensor:
        activation, size = activations[-1]
        mean = model_utils.fully_connected(
            activation, size, self.output_window_size * self.num_features,
            name="predicted_mean", activation=None,
        )  # fmt: skip
        return tf.reshape(mean, [-1, self.output_window_size, self.num_features])

    def _predicted_covariance_op(self, activations: list, num_values: int) -> tf.Tensor:
        activation, size = activations[-1]
        if self.loss == ARModel.NORMAL_LIKELIHOOD_LOSS:
            log_variance = model_utils.fully_connected(
                activation, size, self.output_window_size * num_values,
                name="log_sigma_square", activation=None,
            )  # fmt: skip
            return tf.reshape(tf.exp(log_variance), [-1, self.output_window_size, num_values])
        shape = tf.stack([tf.shape(activation)[0], self.output_window_size, num_values])
        return tf.ones(shape, dtype=activation.dtype)

    def loss_op(self, targets: Any, prediction_ops: dict) -> tf.Tensor:
        """The loss per target value: the normal negative log likelihood of the mean under
        N(targets, covariance), or the squared error."""
        prediction = prediction_ops["mean"]
        if self.loss == ARModel.NORMAL_LIKELIHOOD_LOSS:
            total = _normal_negative_log_likelihood(
                targets, prediction, prediction_ops["covariance"]
            )
        else:
            total = tf.reduce_sum(tf.square(prediction - targets))
        return total / tf.cast(tf.reduce_prod(tf.shape(targets)), total.dtype)

    def _process_exogenous_features(self, times: Any, features: dict) -> tf.Tensor:
        embedded = super()._process_exogenous_features(times=times, features=features)
        if embedded is None:  # a [batch, window, 0] tensor: no special case downstream
            return tf.zeros(tf.concat([tf.shape(times), [0]], axis=0), dtype=self.dtype)
        return embedded

    def _exogenous(self, times: Any, features: dict) -> tf.Tensor:
        special = (
            TrainEvalFeatures.TIMES,
            TrainEvalFeatures.VALUES,
            PredictionFeatures.STATE_TUPLE,
        )
        others = {k: v for k, v in features.items() if k not in special}
        return self._process_exogenous_features(times=times, features=others)

    def predict(self, features: dict) -> dict:
        """Predicts `times` autoregressively, `output_window_size` times per step.

        Args:
            features: `times` ([batch, window] after the state's times), `start_tuple` (the
                state: times [batch, input_window_size], values [batch, input_window_size,
                num_features] in model scale, exogenous features) and any exogenous
                features shaped like `times`.

        Returns:
            `{"mean", "covariance"}`, each [batch, window, num_features], in input scale.
        """
        if not self._graph_initialized:
            self.initialize_graph()
        predict_times = tf.cast(features[PredictionFeatures.TIMES], tf.int32)
        exogenous = self._exogenous(predict_times, features)
        batch_size = tf.shape(predict_times)[0]
        count = tf.shape(predict_times)[1]
        window = self.output_window_size
        iterations = (count + window - 1) // window
        padding = iterations * window - count
        predict_times = tf.pad(predict_times, [[0, 0], [0, padding]])
        exogenous = tf.pad(exogenous, [[0, 0], [0, padding], [0, 0]])
        state_times, state_values, state_exogenous = features[PredictionFeatures.STATE_TUPLE]
        state_times = tf.cast(state_times, tf.int32)
        state_values = tf.cast(state_values, self.dtype)
        state_exogenous = tf.cast(state_exogenous, self.dtype)
        past = self.input_window_size
        input_times = predict_times[:, :window]
        input_exogenous = exogenous[:, :window]
        if past:
            tf.debugging.assert_greater_equal(
                tf.shape(state_values)[1], past,
                message=f"The state must hold at least input_window_size={past} values",
            )  # fmt: skip
            input_times = tf.concat([state_times[:, -past:], input_times], axis=1)
            input_values = state_values[:, -past:]
            input_exogenous = tf.concat([state_exogenous[:, -past:], input_exogenous], axis=1)
        else:
            input_values = tf.zeros([batch_size, 0, self.num_features], self.dtype)

        def step(i, times, values, exogenous_window, means, covariances):  # noqa: ANN001, ANN202
            predicted = self.prediction_ops(times, values if past else None, exogenous_window)
            mean = predicted["mean"]
            start = window * tf.minimum(i + 1, iterations - 1)
            next_times = predict_times[:, start : start + window]
            next_exogenous = exogenous[:, start : start + window]
            if past:
                if window < past:  # the new input window: the last `past` times so far
                    values = tf.concat([values[:, window:], mean], axis=1)
                    next_times = tf.concat([times[:, -past:], next_times], axis=1)
                    next_exogenous = tf.concat(
                        [exogenous_window[:, -past:], next_exogenous], axis=1
                    )
                else:  # all of them predicted in this step
                    values = mean[:, -past:]
                    next_times = predict_times[:, start - past : start + window]
                    next_exogenous = exogenous[:, start - past : start + window]
            next_times.set_shape(times.shape)
            next_exogenous.set_shape(exogenous_window.shape)
            covariances = covariances.write(i, predicted["covariance"])
            return (i + 1, next_times, values, next_exogenous, means.write(i, mean), covariances)

        arrays = [tf.TensorArray(self.dtype, size=iterations) for _ in range(2)]
        loop = tf.while_loop(
            lambda i, *_: i < iterations, step,
            [tf.constant(0), input_times, input_values, input_exogenous, *arrays],
        )  # fmt: skip

        def gather(array: tf.TensorArray) -> tf.Tensor:
            stacked = tf.transpose(array.stack(), [1, 0, 2, 3])  # [batch, iteration, window, n]
            return tf.reshape(stacked, [batch_size, iterations * window, -1])[:, :count]

        mean, covariance = gather(loop[4]), gather(loop[5])
        if self.loss == ARModel.SQUARED_LOSS:
            covariance = tf.ones_like(mean)
        return {
            "mean": self._scale_back_data(mean),
            "covariance": self._scale_back_variance(covariance),
        }

    def _process_window(
        self, features: dict, mode: str, exogenous_regressors: Any
    ) -> model.ModelOutputs:
        """The model's outputs on one window of `window_size` times."""
        times = tf.cast(features[TrainEvalFeatures.TIMES], tf.int64)
        values = tf.cast(features[TrainEvalFeatures.VALUES], self.dtype)
        exogenous_regressors = tf.cast(exogenous_regressors, self.dtype)
        original_values = values
        if not times.shape.is_compatible_with([None, self.window_size]):
            raise ValueError(
                f"ARModel with input_window_size={self.input_window_size} and "
                f"output_window_size={self.output_window_size} expects feature "
                f"'{TrainEvalFeatures.TIMES}' to have shape (batch_size, {self.window_size}) "
                f"(for any batch_size), but got shape {times.shape}. Make the input_fn yield "
                f"windows of {self.window_size} times, or adjust the input_window_size and "
                "output_window_size arguments to ARModel."
            )
        values = self._scale_data(values)
        past_values = values[:, : self.input_window_size] if self.input_window_size else None
        predicted = self.prediction_ops(times, past_values, exogenous_regressors)
        targets = values[:, self.input_window_size :]
        targets.shape.assert_is_compatible_with(predicted["mean"].shape)
        if mode == ModeKeys.EVAL and self.loss == ARModel.SQUARED_LOSS:
            # Evaluation reports the squared error in the input's own scale.
            loss = self.loss_op(
                self._scale_back_data(targets), {"mean": self._scale_back_data(predicted["mean"])}
            )
        else:
            loss = self.loss_op(targets, predicted)
        past = self.input_window_size
        return model.ModelOutputs(
            loss=loss,
            end_state=(times[:, -past:], values[:, -past:], exogenous_regressors[:, -past:]),
            predictions={
                "mean": self._scale_back_data(predicted["mean"]),
                "covariance": self._scale_back_variance(predicted["covariance"]),
                "observed": original_values[:, -self.output_window_size :],
            },
            prediction_times=times[:, -self.output_window_size :],
        )

    def get_batch_loss(self, features: dict, mode: str, state: Any) -> model.ModelOutputs:
        """The loss and predictions of a batch of windows.

        In TRAIN each window must hold exactly `window_size` times. In EVAL a window may be
        longer: its last output windows that fit (without overlap) are predicted, each from
        the `input_window_size` values before it; the end state is the last
        `input_window_size` times, values (model scale) and exogenous features.

        Args:
            features: `times` [batch, window], `values` [batch, window, num_features] and
                any exogenous features.
            mode: `ModeKeys.TRAIN` or `ModeKeys.EVAL`.
            state: the state before the window (EVAL keeps its end if the window is short).

        Returns:
            A `ModelOutputs`.

        Raises:
            ValueError: for another mode, or a window shorter than `window_size`.
        """
        features = {k: tf.convert_to_tensor(v) for k, v in features.items()}
        times = features[TrainEvalFeatures.TIMES]
        exogenous = self._exogenous(times, features)
        if mode == ModeKeys.TRAIN:
            return self._process_window(features, mode=mode, exogenous_regressors=exogenous)
        if mode != ModeKeys.EVAL:
            raise ValueError(
                f"Unknown mode '{mode}' passed to get_batch_loss: it takes ModeKeys.TRAIN or "
                "ModeKeys.EVAL (for predictions use predict())."
            )
        times.shape.assert_has_rank(2)
        static_window = times.shape[1]
        if static_window is not None and static_window < self.window_size:
            raise ValueError(
                "ARModel requires a window of at least input_window_size + output_window_size "
                f"to evaluate on (input_window_size={self.input_window_size}, "
                f"output_window_size={self.output_window_size}, and got shape {times.shape} "
                f"for feature '{TrainEvalFeatures.TIMES}' (batch size, window size))."
            )
        past, window = self.input_window_size, self.output_window_size
        iterations = (tf.shape(times)[1] - past) // window
        output_size = iterations * window
        crop = output_size + past  # the windows cover the end of the series exactly
        features = {k: v[:, -crop:] for k, v in features.items()}
        exogenous = exogenous[:, -crop:]

        def step(i, losses, means, covariances):  # noqa: ANN001, ANN202
            start = i * window
            outputs = self._process_window(
                {k: v[:, start : start + self.window_size] for k, v in features.items()},
                mode=mode,
                exogenous_regressors=exogenous[:, start : start + self.window_size],
            )
            return (i + 1, losses.write(i, outputs.loss),
                    means.write(i, outputs.predictions["mean"]),
                    covariances.write(i, outputs.predictions["covariance"]))  # fmt: skip

        arrays = [tf.TensorArray(self.dtype, size=iterations) for _ in range(3)]
        _, losses, means, covariances = tf.while_loop(
            lambda i, *_: i < iterations, step, [tf.constant(0), *arrays]
        )
        times = features[TrainEvalFeatures.TIMES]
        values = tf.cast(features[TrainEvalFeatures.VALUES], self.dtype)
        shape = [tf.shape(times)[0], output_size, self.num_features]

        def gather(array: tf.TensorArray) -> tf.Tensor:
            return tf.reshape(tf.transpose(array.stack(), [1, 0, 2, 3]), shape)

        state_times, state_values, state_exogenous = state
        if past:  # the last `past` points, even if this window had fewer
            end_state = (
                tf.concat([state_times, tf.cast(times, tf.int64)], 1)[:, -past:],
                tf.concat([state_values, self._scale_data(values)], 1)[:, -past:],
                tf.concat([state_exogenous, exogenous], 1)[:, -past:],
            )
            end_state[0].set_shape([None, past])
            end_state[1].set_shape([None, past, self.num_features])
            end_state[2].set_shape([None, past, self.exogenous_size])
        else:
            end_state = (state_times, state_values, state_exogenous)
        return model.ModelOutputs(
            loss=tf.reduce_mean(losses.stack(), axis=0),
            end_state=end_state,
            predictions={
                "mean": gather(means),
                "covariance": gather(covariances),
                "observed": values[:, -output_size:],
            },
            prediction_times=times[:, -output_size:],
        )
