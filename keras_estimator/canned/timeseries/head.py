"""The heads of time-series estimators: model_fns around a `TimeSeriesModel` (2.15's).

`TimeSeriesRegressionHead.create_estimator_spec` is the model_fn of `TimeSeriesRegressor`:
TRAIN minimises the model's loss (updating the input statistics), EVAL returns the loss,
the in-sample predictions, their `times` and the end state (`start_tuple`) as metrics,
PREDICT continues from a `start_tuple`. With flattened state features (`model_state_00`,
...: what `build_raw_serving_input_receiver_fn` makes) PREDICT builds the three serving
signatures (predict, filter, cold_start_filter). `OneShotPredictionHead` serves one
signature instead, which filters the given values and predicts the remaining times.
"""

from __future__ import annotations

import re
from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads import base_head
from keras_estimator.canned.timeseries import feature_keys
from keras_estimator.export.export_outputs import PredictOutput, Signature
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

_V1 = tf.compat.v1
_STATE_KEY = re.compile(r"^" + feature_keys.State.STATE_PREFIX + r"_(\d+)$")


class _NoStatePredictOutput(PredictOutput):
    """A predict signature that does not take the flattened state inputs."""

    def signature(self, receiver_tensors: dict) -> Signature:
        inputs = {
            key: value
            for key, value in receiver_tensors.items()
            if not key.startswith(feature_keys.State.STATE_PREFIX)
        }
        return super().signature(inputs)


def state_to_dictionary(state_tuple: Any) -> dict:
    """The state flattened into `{"model_state_00": ..., "model_state_01": ...}`."""
    return {
        f"{feature_keys.State.STATE_PREFIX}_{number:02d}": value
        for number, value in enumerate(tf.nest.flatten(state_tuple))
    }


def _identity_metric_single(name: str, input_tensor: Any) -> tuple:
    """A metric whose value is `input_tensor` of the last evaluated batch (a `(value,
    update_op)` pair; `name` names the value)."""
    return tf.identity(input_tensor, name=f"{name}_identity_metric"), tf.no_op()


def _identity_metric_nested(name: str, input_tensors: Any) -> tuple:
    """`_identity_metric_single` over a nested structure: `(structure, update_op)`."""
    values = [
        _identity_metric_single(f"{name}_{number}", tensor)[0]
        for number, tensor in enumerate(tf.nest.flatten(input_tensors))
    ]
    return tf.nest.pack_sequence_as(input_tensors, values), tf.no_op()


def _check_feature_shapes_compatible_with(
    features: dict, compatible_with_name: str, compatible_with_value: Any, ignore: Any = None
) -> None:
    """Raises ValueError unless every feature (but `ignore`) is shaped [batch, window, ...]
    with the batch and window of `compatible_with_value`."""
    ignore = ignore or set()
    for name, value in features.items():
        if name in ignore:
            continue
        shape = value.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(
                f"Features must have shape (batch dimension, window size, ...) (got rank "
                f"{shape.ndims} for feature '{name}')"
            )
        if not shape[:2].is_compatible_with(compatible_with_value.shape):
            raise ValueError(
                "Features must have shape (batch dimension, window size, ...) where batch "
                f"dimension and window size match the '{compatible_with_name}' feature (got "
                f"shape {shape} for feature '{name}' but shape {compatible_with_value.shape} "
                f"for feature '{compatible_with_name}')"
            )


def _check_train_eval_features(features: dict, model: Any) -> None:
    """Raises ValueError unless `features` hold `times` [batch, window] and `values`
    [batch, window, num_features], and the rest match them."""
    times_key, values_key = (
        feature_keys.TrainEvalFeatures.TIMES,
        feature_keys.TrainEvalFeatures.VALUES,
    )
    for key in (times_key, values_key):
        if key not in features:
            raise ValueError(
                f"Expected a '{key}' feature for training/evaluation. The input_fn must "
                f"return features {{'{times_key}': [batch, window] integers, '{values_key}': "
                f"[batch, window, {model.num_features}] floats}}."
            )
    times = features[times_key]
    if not times.shape.is_compatible_with([None, None]):
        raise ValueError(
            f"Expected shape (batch dimension, window size) for feature '{times_key}' (got "
            f"shape {times.shape})"
        )
    values = features[values_key]
    if not values.shape.is_compatible_with([None, None, model.num_features]):
        raise ValueError(
            f"Expected shape (batch dimension, window size, {model.num_features}) for feature "
            f"'{values_key}', since the model was configured with "
            f"num_features={model.num_features} (got shape {values.shape})"
        )
    _check_feature_shapes_compatible_with(
        features, times_key, times, ignore={feature_keys.State.STATE_TUPLE}
    )


class TimeSeriesRegressionHead:
    """The model_fn of a time-series model (`create_estimator_spec`), tf.estimator 2.15's.

    Args:
        model: the `TimeSeriesModel`.
        state_manager: a state manager (`state_management`).
        optimizer: a `tf.compat.v1.train.Optimizer` (or anything with
            `minimize(loss, global_step=...)`).
        input_statistics_generator: a `math_utils.InputStatisticsFromMiniBatch`, or None.
        name: the head's name (prefixes the loss summary).
    """

    def __init__(
        self, model: Any, state_manager: Any, optimizer: Any,
        input_statistics_generator: Any = None, name: str | None = None,
    ) -> None:  # fmt: skip
        self.model = model
        self.state_manager = state_manager
        self.optimizer = optimizer
        self.input_statistics_generator = input_statistics_generator
        self._name = name

    @property
    def name(self) -> str | None:
        """The head's name."""
        return self._name

    @property
    def logits_dimension(self) -> int:
        """1, as in 2.15 (time-series heads have no logits)."""
        return 1

    def create_loss(self, features: dict, mode: str, logits: Any = None, labels: Any = None) -> Any:
        """The model's `ModelOutputs` (through the state manager); logs the loss summary."""
        outputs = self.state_manager.define_loss(self.model, features, mode)
        summary = "loss" if not self._name else f"loss/{self._name}"
        _V1.summary.scalar(summary, outputs.loss)
        return outputs

    def _train_ops(self, features: dict) -> EstimatorSpec:
        with _V1.variable_scope("model", use_resource=True):
            outputs = self.create_loss(features, ModeKeys.TRAIN)
        train_op = self.optimizer.minimize(outputs.loss, global_step=_V1.train.get_global_step())
        return EstimatorSpec(mode=ModeKeys.TRAIN, loss=outputs.loss, train_op=train_op)

    def _evaluate_ops(self, features: dict) -> EstimatorSpec:
        with _V1.variable_scope("model", use_resource=True):
            outputs = self.create_loss(features, ModeKeys.EVAL)
        metrics = {
            key: _identity_metric_single(key, value) for key, value in outputs.predictions.items()
        }
        times_key = feature_keys.FilteringResults.TIMES
        metrics[times_key] = _identity_metric_single(times_key, outputs.prediction_times)
        state_key = feature_keys.FilteringResults.STATE_TUPLE
        metrics[state_key] = _identity_metric_nested(state_key, outputs.end_state)
        metrics[base_head.LOSS_MEAN] = _V1.metrics.mean(outputs.loss, name="average_loss")
        return EstimatorSpec(
            mode=ModeKeys.EVAL, loss=outputs.loss, eval_metric_ops=metrics,
            predictions=outputs.predictions,
        )  # fmt: skip

    def _predict_ops(self, features: dict) -> EstimatorSpec:
        with _V1.variable_scope("model", use_resource=True):
            predictions = self.model.predict(features=features)
        predictions[feature_keys.PredictionResults.TIMES] = features[
            feature_keys.PredictionFeatures.TIMES
        ]
        return EstimatorSpec(mode=ModeKeys.PREDICT, predictions=predictions)

    def _serving_ops(self, features: dict) -> EstimatorSpec:
        with _V1.variable_scope("model", use_resource=True):
            prediction_outputs = self.model.predict(features=features)
        with _V1.variable_scope("model", reuse=True):
            filtering_outputs = self.create_loss(features, ModeKeys.EVAL)
        with _V1.variable_scope("model", reuse=True):
            no_state = {
                k: v for k, v in features.items()
                if not k.startswith(feature_keys.State.STATE_PREFIX)
                and k != feature_keys.State.STATE_TUPLE
            }  # fmt: skip
            # A cold start: the model's start state, replicated across the batch.
            cold_outputs = self.model.define_loss(features=no_state, mode=ModeKeys.EVAL)
        labels = feature_keys.SavedModelLabels
        return EstimatorSpec(
            mode=ModeKeys.PREDICT,
            export_outputs={
                labels.PREDICT: PredictOutput(prediction_outputs),
                labels.FILTER: PredictOutput(state_to_dictionary(filtering_outputs.end_state)),
                labels.COLD_START_FILTER: _NoStatePredictOutput(
                    state_to_dictionary(cold_outputs.end_state)
                ),
            },
            predictions={},
        )

    def _convert_feature_to_tensor(self, name: str, value: Any) -> Any:
        """Times as int64, values in the model's dtype, state as given."""
        if name in (feature_keys.TrainEvalFeatures.TIMES, feature_keys.PredictionFeatures.TIMES):
            return tf.cast(value, tf.int64)
        if name == feature_keys.TrainEvalFeatures.VALUES:
            return tf.cast(value, self.model.dtype)
        if name == feature_keys.PredictionFeatures.STATE_TUPLE:
            return value  # the model's own dtypes
        if isinstance(value, (tf.SparseTensor, tf.RaggedTensor)):
            return value
        return tf.convert_to_tensor(value)

    def _gather_state(self, features: dict) -> tuple[dict, bool]:
        """`features` with flattened state (`model_state_NN`) packed into `start_tuple`, and
        whether there was any."""
        numbered = sorted(
            (int(match.group(1)), key)
            for key in features
            if (match := _STATE_KEY.search(key))
        )  # fmt: skip
        if not numbered:
            return features, False
        features = dict(features)
        flat = [features.pop(key) for _, key in numbered]
        features[feature_keys.State.STATE_TUPLE] = tf.nest.pack_sequence_as(
            self.model.get_start_state(), flat
        )
        return features, True

    def _check_predict_features(self, features: dict) -> None:
        """Raises ValueError unless `features` hold `times` and `start_tuple`."""
        times_key = feature_keys.PredictionFeatures.TIMES
        state_key = feature_keys.PredictionFeatures.STATE_TUPLE
        for key in (times_key, state_key):
            if key not in features:
                raise ValueError(
                    f"Expected a '{key}' feature for prediction: '{times_key}' ([batch, window] "
                    f"times to predict) and '{state_key}' (the state to continue from, as "
                    "evaluate() returns it)."
                )
        times = features[times_key]
        if not times.shape.is_compatible_with([None, None]):
            raise ValueError(
                f"Expected shape (batch dimension, window size) for feature '{times_key}' "
                f"(got shape {times.shape})"
            )
        _check_feature_shapes_compatible_with(features, times_key, times, ignore={state_key})

    def create_estimator_spec(self, features: dict, mode: str, labels: Any = None) -> EstimatorSpec:
        """The model_fn: checks the features and returns the `EstimatorSpec` of `mode`.

        Raises:
            ValueError: if labels are given (times and values are features), or the
                features do not fit the mode.
        """
        with tf.name_scope(self._name or "head"):
            if labels is not None and not (isinstance(labels, dict) and not labels):
                raise ValueError(
                    "The model received a `labels`, which is not supported. Pass "
                    f"'{feature_keys.TrainEvalFeatures.TIMES}' and "
                    f"'{feature_keys.TrainEvalFeatures.VALUES}' as features (the input_fn "
                    "returns only a features dict)."
                )
            features = {k: self._convert_feature_to_tensor(k, v) for k, v in features.items()}
            if self.input_statistics_generator is not None:
                statistics = self.input_statistics_generator.initialize_graph(
                    features, update_statistics=mode == ModeKeys.TRAIN
                )
            else:
                statistics = None
            self.model.initialize_graph(input_statistics=statistics)
            features, passed_flat_state = self._gather_state(features)
            if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
                _check_train_eval_features(features, self.model)
            elif mode == ModeKeys.PREDICT:
                self._check_predict_features(features)
            else:
                raise ValueError(f"Unknown mode '{mode}' passed to model_fn.")
            self.state_manager.initialize_graph(model=self.model, input_statistics=statistics)
            if mode == ModeKeys.TRAIN:
                return self._train_ops(features)
            if mode == ModeKeys.EVAL:
                return self._evaluate_ops(features)
            if passed_flat_state:  # export_saved_model: the serving signatures
                return self._serving_ops(features)
            return self._predict_ops(features)


class OneShotPredictionHead(TimeSeriesRegressionHead):
    """A head whose one serving signature takes `times`, `values` (shorter than `times`)
    and exogenous features but no state: it filters the values from the model's start
    state, then predicts the remaining times."""

    def _check_predict_features(self, features: dict) -> None:
        times_key = feature_keys.PredictionFeatures.TIMES
        values_key = feature_keys.TrainEvalFeatures.VALUES
        state_key = feature_keys.PredictionFeatures.STATE_TUPLE
        for key in (times_key, values_key, state_key):
            if key not in features:
                raise ValueError(
                    f"Expected a '{key}' feature for prediction: OneShotPredictionHead takes "
                    f"'{times_key}', '{values_key}' (the values to filter) and '{state_key}'."
                )
        times = features[times_key]
        if not times.shape.is_compatible_with([None, None]):
            raise ValueError(
                f"Expected shape (batch dimension, window size) for feature '{times_key}' "
                f"(got shape {times.shape})"
            )
        _check_feature_shapes_compatible_with(
            features, times_key, times, ignore={state_key, values_key}
        )

    def _evaluate_ops(self, features: dict) -> EstimatorSpec:
        spec = super()._evaluate_ops(features)
        # No state goes in or out of this head: evaluation does not report it either.
        del spec.eval_metric_ops[feature_keys.State.STATE_TUPLE]
        return spec

    def _serving_ops(self, features: dict) -> EstimatorSpec:
        values_key = feature_keys.FilteringFeatures.VALUES
        with _V1.variable_scope("model", use_resource=True):
            filtering, prediction = {}, {}
            length = tf.shape(features[values_key])[1]
            for key, value in features.items():
                if key == feature_keys.State.STATE_TUPLE:
                    continue  # the model's start state is used instead
                if key == values_key:
                    filtering[key] = value
                else:
                    filtering[key] = value[:, :length]
                    prediction[key] = value[:, length:]
            cold = self.model.define_loss(features=filtering, mode=ModeKeys.EVAL)
            prediction[feature_keys.State.STATE_TUPLE] = cold.end_state
        with _V1.variable_scope("model", reuse=True):
            outputs = self.model.predict(features=prediction)
        return EstimatorSpec(
            mode=ModeKeys.PREDICT,
            export_outputs={feature_keys.SavedModelLabels.PREDICT: _NoStatePredictOutput(outputs)},
            predictions={},
        )
