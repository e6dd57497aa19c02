"""`model_to_estimator`: an Estimator from a compiled Keras 3 model (tf.keras 2.15's bridge).

The Estimator's model_fn clones the Keras model in every call (its variables become the
Estimator's, named by the model's layers) and applies what `compile()` was given: the
compiled loss (plus the model's regularisation losses) is the EstimatorSpec's loss, the
compiled metrics its `eval_metric_ops`, the compiled optimizer (a fresh one from its
config) its train_op. The Estimator starts from the Keras model's current weights: they
are written to `<model_dir>/keras/keras_model.ckpt` and loaded when training starts from
fresh variables, as tf.keras 2.15 did.

input_fns follow 2.15's rules: features are a dict keyed by the model's input names (a
functional model's `keras.Input(name=...)`; `input_1`, `input_2`, ... for a subclassed
model), a list in input order, or one tensor; labels likewise by output names. An input
Keras 3 auto-names (`input_layer`) also takes tf.keras 2's name for it (`dense_input` for
a Sequential whose first layer is `dense`, else `input_1`, ...). Sample
weights come as `({"features": features, "sample_weights": weights}, labels)`.
"""

from __future__ import annotations

import copy
import logging
import os
import re
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.optimizers import minimize, resolve_optimizer
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.export.export_outputs import DEFAULT_SIGNATURE, PredictOutput
from keras_estimator.keras_bridge.metric_names import (
    graph_mode_names_asked,
    tf_keras2_metric_names,
)
from keras_estimator.seam import internals
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys

logger = logging.getLogger("keras_estimator")
_WARM_START_DIR = "keras"
_WARM_START_PREFIX = "keras_model.ckpt"


class FormattedKeyError(KeyError):
    """A KeyError whose message prints with its line breaks (as 2.15's did)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _kind(model: keras.Model) -> str:
    """ "sequential", "functional" (built from keras.Input tensors) or "subclassed"."""
    if isinstance(model, keras.Sequential):
        return "sequential"
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        inputs = None
    return "functional" if inputs else "subclassed"


def _input_names(model: keras.Model, features: Any) -> list[str]:
    if _kind(model) == "subclassed" or not getattr(model, "inputs", None):
        count = len(features) if isinstance(features, dict) else 0
        return [f"input_{i}" for i in range(1, count + 1)]
    return [tensor.name for tensor in model.inputs]


_KERAS3_AUTO_INPUT = re.compile(r"input_layer(?:_(\d+))?")


def _tf_keras2_input_names(model: keras.Model, name: str) -> list[str]:
    """What tf.keras 2 named the input Keras 3 auto-names `name`, which 2.15-era input_fns
    key their features by: `<first layer>_input` for a Sequential built from its layers
    (`dense_input`), else `input_1`, `input_2`, ... (Keras 3: `input_layer`,
    `input_layer_1`, ...)."""
    auto = _KERAS3_AUTO_INPUT.fullmatch(name)
    if auto is None:  # a name the user gave: the same in both
        return []
    aliases = [f"input_{int(auto.group(1) or 0) + 1}"]
    if _kind(model) == "sequential" and model.layers:
        aliases.insert(0, f"{model.layers[0].name}_input")
    return aliases


def _with_tf_keras2_keys(model: keras.Model, features: dict, names: list[str]) -> dict:
    """`features` with each missing input name taken from its tf.keras 2 name, if there."""
    for name in names:
        if name not in features:
            alias = next((a for a in _tf_keras2_input_names(model, name) if a in features), None)
            if alias is not None:
                features = {**features, name: features[alias]}
    return features


def _output_names(model: keras.Model, count: int) -> list[str]:
    kind = _kind(model)
    if kind == "functional":
        output = model.output
        return list(output) if isinstance(output, dict) else list(model.output_names)
    if kind == "sequential":
        return [model.layers[-1].name]
    return [f"output_{i}" for i in range(1, count + 1)]


def _ordered(value: Any, names: list[str] | None, what: str, order: str) -> Any:
    """2.15's rule: a dict by `names` (extra keys allowed), a list as is, a tensor as one."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, dict):
        missing = set(names or []) - set(value)
        if missing:
            raise FormattedKeyError(
                f"The dictionary passed into {what} does not cover requested {order} keys "
                "defined in the keras model."
                f"\n\tExpected keys: {set(names or [])}"
                f"\n\t{what} keys: {set(value)}"
                f"\n\tMissed keys: {missing}"
                f"\nFix: key the input_fn's {what} by the Keras model's {order} names. "
                f"Received: {what} keys={sorted(value)}"
            )
        return [value[name] for name in names or []]
    return [value]


def _model_inputs(model: keras.Model, features: Any) -> Any:
    structure = getattr(model, "input", None) if _kind(model) == "functional" else None
    if isinstance(structure, dict):
        missing = set(structure) - set(features if isinstance(features, dict) else {})
        if missing:
            _ordered(features, list(structure), "features", "inputs")  # raises
        return {key: features[key] for key in structure}
    if _kind(model) == "subclassed" and isinstance(features, dict):
        names = _input_names(model, features)
        if set(features) != set(names):  # not 2.15's input_1, input_2, ...: the call's dict
            return dict(features)
    names = _input_names(model, features)
    if isinstance(features, dict) and names:
        features = _with_tf_keras2_keys(model, features, names)
    inputs = _ordered(features, names, "features", "inputs")
    return inputs[0] if len(inputs) == 1 else inputs


def _targets(outputs: Any, labels: Any, names: list[str]) -> Any:
    """The labels in the structure of the model's outputs."""
    ordered = _ordered(labels, names, "labels", "outputs")
    if ordered is None:
        return None
    if isinstance(outputs, dict):
        return dict(zip(outputs, ordered))
    if isinstance(outputs, (list, tuple)):
        return ordered
    return ordered[0]


def _split_sample_weights(features: Any) -> tuple[Any, Any]:
    if isinstance(features, dict) and set(features) == {"features", "sample_weights"}:
        return features["features"], features["sample_weights"]
    return features, None


def _metric_ops(
    model: keras.Model,
    metric_names_map: dict | None,
    compiled_as: Any,
    output_names: list[str],
    graph_mode: bool,
) -> dict | None:
    """The compiled metrics (updated), keyed as 2.15 reported them (`<output>_<name>` for
    several outputs; tf.keras 2's graph-mode names after `disable_v2_behavior()`) or
    renamed by `metric_names_map`."""
    # The container itself (inside a model_fn, `model.metrics` lists tf.keras 2's view).
    compiled = internals.keras_compiled_parts(model).compile_metrics
    if compiled is None:
        return None
    names = list(compiled.result())  # same order as .metrics, Keras' unique names
    as_2_15 = tf_keras2_metric_names(names, compiled_as, output_names, graph_mode)
    metrics = {as_2_15[name]: metric for name, metric in zip(names, compiled.metrics)}
    if not metric_names_map:
        return metrics
    unknown = set(metrics) - set(metric_names_map)
    if unknown:
        raise ValueError(
            "Invalid `metric_names_map`. The following keras model metric names:"
            f'"{sorted(unknown)}" do not exist in the `metric_names_map` dictionary. Fix: map '
            f"every compiled metric. Received: metric_names_map keys={sorted(metric_names_map)}"
        )
    extra = set(metric_names_map) - set(metrics)
    if extra:
        raise ValueError(
            "Invalid `metric_names_map`. There are unexpected keys in the `metric_names_map` "
            f"dictionary. Expected keys: {sorted(metrics)}, Received: {sorted(extra)}"
        )
    return {metric_names_map[name]: metric for name, metric in metrics.items()}


class _KerasModelFn:
    """The model_fn of a converted Keras model (a class: it carries the warm-start file)."""

    def __init__(
        self,
        keras_model: keras.Model,
        custom_objects: dict | None,
        metric_names_map: dict | None,
        export_outputs: dict | None,
    ) -> None:
        self.keras_model = keras_model
        self.custom_objects = custom_objects
        self.metric_names_map = metric_names_map
        self.export_outputs = export_outputs
        # Read eagerly, once: inside a traced model_fn the optimizer's state is symbolic.
        self.compile_config = keras_model.get_compile_config()
        self.model_config = keras_model.get_config()
        self.warm_start_checkpoint: str | None = None
        # 2.15 named metrics as tf.keras 2's graph mode did if the script had asked for it.
        self.graph_mode_names = graph_mode_names_asked()

    def __call__(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        features, sample_weight = _split_sample_weights(features)
        with keras.utils.custom_object_scope(self.custom_objects or {}):
            # A copy: Functional.from_config consumes the config it is given.
            model = type(self.keras_model).from_config(copy.deepcopy(self.model_config))
        inputs = _model_inputs(model, features)
        outputs = model(inputs, training=mode == ModeKeys.TRAIN)
        flat_outputs = tf.nest.flatten(outputs)
        names = _output_names(model, len(flat_outputs))
        predictions = dict(zip(names, flat_outputs))
        self._warm_start(model)
        loss = train_op = eval_metric_ops = None
        if mode != ModeKeys.PREDICT:
            with keras.utils.custom_object_scope(self.custom_objects or {}):
                config = keras.saving.deserialize_keras_object(copy.deepcopy(self.compile_config))
            model.compile(**config)
            targets = _targets(outputs, labels, names)
            loss = model.compute_loss(
                x=inputs, y=targets, y_pred=outputs, sample_weight=sample_weight,
                training=mode == ModeKeys.TRAIN,
            )  # fmt: skip
            if mode == ModeKeys.EVAL:
                model.compute_metrics(inputs, targets, outputs, sample_weight)
                eval_metric_ops = _metric_ops(
                    model, self.metric_names_map, self.compile_config.get("metrics"), names,
                    self.graph_mode_names,
                )  # fmt: skip
            else:
                optimizer = resolve_optimizer(config["optimizer"], None)
                variables = [internals.keras_variable_backing(v) for v in model.trainable_weights]
                train_op = minimize(optimizer, loss, variables)
        return EstimatorSpec(
            mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=self._export_outputs(predictions, names),
        )

    def _warm_start(self, model: keras.Model) -> None:
        """Starts fresh variables from the Keras model's weights (read once, at start)."""
        if self.warm_start_checkpoint is None:
            return
        mine, theirs = model.weights, self.keras_model.weights
        if [tuple(v.shape) for v in mine] != [tuple(v.shape) for v in theirs]:
            raise ValueError(
                "The cloned Keras model's weights differ from the given model's, so its "
                "weights cannot be carried over. Expected get_config()/from_config() to "
                "rebuild the same layers. Fix: make the model's get_config return every "
                "constructor argument. Received: shapes "
                f"{[tuple(v.shape) for v in theirs]} -> {[tuple(v.shape) for v in mine]}"
            )
        tf.compat.v1.train.init_from_checkpoint(
            self.warm_start_checkpoint,
            {_weight_key(i): internals.keras_variable_backing(v) for i, v in enumerate(mine)},
        )

    def _export_outputs(self, predictions: dict, names: list[str]) -> dict:
        outputs: dict = {DEFAULT_SIGNATURE: PredictOutput(predictions)}
        if self.export_outputs is None:
            return outputs
        unknown = set(self.export_outputs) - set(names)
        if unknown:
            raise FormattedKeyError(
                "The keys of export_outputs must be output names of the Keras model."
                f"\n\tExpected keys: {set(names)}\n\texport_outputs keys: "
                f"{set(self.export_outputs)}\n\tMissed keys: {unknown}"
                "\nFix: key export_outputs by the model's output names. "
                f"Received: export_outputs keys={sorted(self.export_outputs)}"
            )
        for key, output_class in self.export_outputs.items():
            outputs[key] = output_class(predictions[key])
        return outputs


def _weight_key(index: int) -> str:
    return f"weight_{index}/.ATTRIBUTES/VARIABLE_VALUE"


def _save_keras_weights(keras_model: keras.Model, model_dir: str) -> str | None:
    """Writes the model's current weights for the Estimator to start from (once)."""
    directory = os.path.join(model_dir, _WARM_START_DIR)
    prefix = os.path.join(directory, _WARM_START_PREFIX)
    if tf.io.gfile.exists(prefix + ".index"):
        return prefix
    if not keras_model.weights:
        return None
    tf.io.gfile.makedirs(directory)
    weights = {
        f"weight_{i}": internals.keras_variable_backing(v)
        for i, v in enumerate(keras_model.weights)
    }
    tf.train.Checkpoint(**weights).write(prefix)
    return prefix


def _check_clonable(keras_model: keras.Model, custom_objects: dict | None) -> None:
    if _kind(keras_model) != "subclassed":
        return
    try:
        with keras.utils.custom_object_scope(custom_objects or {}):
            type(keras_model).from_config(keras_model.get_config())
    except (NotImplementedError, TypeError) as exc:
        raise ValueError(
            "Subclassed `Model`s passed to `model_to_estimator` must implement "
            "`Model.get_config` and `Model.from_config`: the Estimator rebuilds the model in "
            f"each call ({exc}). Fix: give the model a get_config returning its constructor "
            f"arguments. Received: keras_model={type(keras_model).__name__}"
        ) from exc


def model_to_estimator(
    keras_model: keras.Model | None = None,
    keras_model_path: str | None = None,
    custom_objects: dict | None = None,
    model_dir: str | os.PathLike | None = None,
    config: Any = None,
    checkpoint_format: str = "checkpoint",
    metric_names_map: dict | None = None,
    export_outputs: dict | None = None,
) -> Estimator:
    """An `Estimator` from a compiled Keras 3 model, as `tf.keras.estimator.model_to_estimator`.

    Sequential, functional and subclassed models (with `get_config` / `from_config`), one
    or several inputs and outputs. The Estimator trains with the compiled optimizer and
    loss, evaluates the compiled metrics, predicts (and exports) a dict keyed by output
    names, and starts from the model's current weights. Training the Estimator does not
    change `keras_model`.

    Args:
        keras_model: A compiled Keras model (exclusive with `keras_model_path`).
        keras_model_path: A compiled model saved with `model.save()` (`.keras` or `.h5`).
        custom_objects: Custom classes / functions for cloning and loading the model.
        model_dir: The Estimator's model_dir (wins over `config.model_dir`).
        config: A `RunConfig`.
        checkpoint_format: "checkpoint" or "saver" (2.15's names); both write the
            Estimator's name-based checkpoints.
        metric_names_map: Keras metric name -> eval_metric_ops name, for every metric.
        export_outputs: Output name -> an ExportOutput class (e.g. `RegressionOutput`),
            an extra signature per output besides `serving_default`.

    Returns:
        A `keras_estimator.Estimator`.

    Example:
        >>> model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(3)])
        >>> model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        ...               metrics=["accuracy"])
        >>> est = model_to_estimator(keras_model=model, model_dir="runs/keras")
        >>> est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(32))
    """
    if keras_model is None and not keras_model_path:
        raise ValueError(
            "Either `keras_model` or `keras_model_path` needs to be provided. Fix: pass a "
            "compiled Keras model or the path of a saved one. Received: keras_model=None, "
            f"keras_model_path={keras_model_path!r}"
        )
    if keras_model is not None and keras_model_path:
        raise ValueError(
            "Please specity either `keras_model` or `keras_model_path`, but not both. Fix: "
            f"pass one. Received: keras_model_path={keras_model_path!r}"
        )
    if checkpoint_format not in (None, "checkpoint", "saver"):
        raise ValueError(
            f'Checkpoint format must be one of "checkpoint" or "saver". Got {checkpoint_format}'
        )
    if keras_model is None:
        logger.info("Loading models from %s", keras_model_path)
        keras_model = keras.models.load_model(keras_model_path, custom_objects=custom_objects)
    if not isinstance(keras_model, keras.Model):
        raise TypeError(
            "keras_model must be a Keras 3 `keras.Model` (Sequential, functional or "
            f"subclassed). Received: type(keras_model)={type(keras_model).__name__}"
        )
    if getattr(keras_model, "optimizer", None) is None or not keras_model.compiled:
        raise ValueError(
            "The given keras model has not been compiled yet. Please compile the model with "
            "`model.compile()` before calling `model_to_estimator()`. "
            f"Received: keras_model={keras_model.name!r} (not compiled)"
        )
    _check_clonable(keras_model, custom_objects)
    model_fn = _KerasModelFn(keras_model, custom_objects, metric_names_map, export_outputs)
    estimator = Estimator(model_fn, model_dir=model_dir, config=config)
    if estimator.config.is_chief:
        model_fn.warm_start_checkpoint = _save_keras_weights(keras_model, estimator.model_dir)
    elif tf.io.gfile.exists(
        os.path.join(estimator.model_dir, _WARM_START_DIR, _WARM_START_PREFIX + ".index")
    ):
        model_fn.warm_start_checkpoint = os.path.join(
            estimator.model_dir, _WARM_START_DIR, _WARM_START_PREFIX
        )
    return estimator
