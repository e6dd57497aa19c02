"""Calling the user's model_fn as tf.estimator did: the arguments it names, an
EstimatorSpec back, the Scaffold checked.

The engine's traced steps call a `ModelFnCaller`; it holds everything the call needs, so
nothing in a trace reaches back into the Estimator.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from keras_estimator.runtime.model_fn_errors import note_model_fn_error
from keras_estimator.spec.estimator_spec import EstimatorSpec, spec_for_mode
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.scaffolds import check_scaffold, scaffold_saver
from keras_estimator.utils.fn_args import fn_args

logger = logging.getLogger("keras_estimator")

_VALID_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "self", "config"}


def fresh_containers(structure: Any) -> Any:
    """`structure` with every dict, list and tuple in it made anew; the tensors the same.

    2.15's model_fn got `iterator.get_next()`'s fresh containers on every call, and legacy
    model_fns edit them (TF-Ranking `update()`s the features, `features.pop("label")` is a
    common idiom). Keras' traced steps refuse a step that changes its inputs, and the
    dataset's element must not change under the next call, so each call gets its own copy.
    """
    if isinstance(structure, dict):
        copied = {key: fresh_containers(value) for key, value in structure.items()}
        return copied if type(structure) is dict else _same_kind(structure, copied)
    if isinstance(structure, list):
        return [fresh_containers(value) for value in structure]
    if isinstance(structure, tuple):
        values = [fresh_containers(value) for value in structure]
        return type(structure)(*values) if hasattr(structure, "_fields") else tuple(values)
    return structure


def _same_kind(original: dict, copied: dict) -> dict:
    """A dict subclass (OrderedDict, defaultdict) rebuilt as its own type where it can be."""
    try:
        remade = copy.copy(original)
        remade.clear()
        remade.update(copied)
        return remade
    except (TypeError, AttributeError):
        return copied


def verify_model_fn_args(model_fn: Callable, params: Any) -> None:
    """tf.estimator's checks of a model_fn's signature against the Estimator's params."""
    args = set(fn_args(model_fn))
    if "features" not in args:
        raise ValueError(
            f"model_fn ({model_fn}) must include features argument. Expected a signature like "
            "model_fn(features, labels, mode, params, config), any subset that includes "
            f"features. Received: model_fn arguments={sorted(args)}"
        )
    if params is not None and "params" not in args:
        raise ValueError(
            f"model_fn ({model_fn}) does not include params argument, but params ({params}) "
            "is passed to Estimator. Fix: add a `params` argument to model_fn, or do not pass "
            f"params=. Received: model_fn arguments={sorted(args)}"
        )
    if params is None and "params" in args:
        logger.warning(
            "Estimator's model_fn (%s) includes params argument, but params are not passed "
            "to Estimator.",
            model_fn,
        )
    unexpected = sorted(args - _VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError(
            f"model_fn ({model_fn}) has following not expected args: {unexpected}. Expected only "
            f"{sorted(_VALID_MODEL_FN_ARGS)}. Fix: give the others defaults, or bind them with "
            f"functools.partial / params. Received: model_fn arguments={sorted(args)}"
        )


def _carries_hooks(spec: EstimatorSpec) -> bool:
    """Hooks: tf.estimator's model_fn made them per call."""
    return any((spec.training_hooks, spec.training_chief_hooks, spec.evaluation_hooks,
                spec.prediction_hooks))  # fmt: skip


def _carries_custom_scaffold(spec: EstimatorSpec) -> bool:
    """A Scaffold with anything set: tf.estimator's model_fn made it per call."""
    scaffold = spec.scaffold
    return scaffold is not None and any(
        getattr(scaffold, part, None) is not None
        for part in ("saver", "init_fn", "init_op", "local_init_op", "ready_op",
                     "ready_for_local_init_op", "summary_op", "init_feed_dict")
    )  # fmt: skip


class ModelFnCaller:
    """Calls `model_fn(features, labels, mode, params, config)` with the arguments it takes.

    `params_for(mode)` gives the params of a mode (TPUEstimator adds `batch_size`);
    `to_spec(result)` turns what model_fn returned into an EstimatorSpec (a
    TPUEstimatorSpec's `as_estimator_spec()`). The Saver of the last TRAIN call's
    Scaffold is kept in `train_scaffold_saver`, each mode's last Scaffold in `scaffolds`
    (its init_fn and Saver run in `runtime.scaffold_session`).
    """

    def __init__(
        self,
        model_fn: Callable,
        config: Any,
        params_for: Callable[[str], dict],
        to_spec: Callable[[Any], Any] = lambda result: result,
    ) -> None:
        self.model_fn = model_fn
        self._args = set(fn_args(model_fn))
        self.config = config
        self._params_for = params_for
        self._to_spec = to_spec
        self.train_scaffold_saver: Any = None  # a Saver or a tf.train.Checkpoint
        # Set when a call's EstimatorSpec carried hooks or a Scaffold (the runtime resets
        # them before a trace): objects made per call, so a later call calls model_fn again.
        self.made_per_call = False
        self.made_scaffold = False  # a Scaffold among them: its graph's ops are its own
        self.scaffolds: dict[str, Any] = {}

    def __call__(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        features, labels = fresh_containers(features), fresh_containers(labels)
        kwargs: dict[str, Any] = {}
        if "labels" in self._args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError(
                "model_fn does not take labels, but input_fn returns labels. Fix: add a "
                "`labels` argument to model_fn, or return features only from input_fn. "
                f"Received: model_fn arguments={sorted(self._args)}"
            )
        if "mode" in self._args:
            kwargs["mode"] = mode
        if "params" in self._args:
            kwargs["params"] = self._params_for(mode)
        if "config" in self._args:
            kwargs["config"] = copy.deepcopy(self.config)
        logger.info("Calling model_fn.")
        try:
            returned = self.model_fn(features=features, **kwargs)
        except Exception as exc:
            note_model_fn_error(exc, mode, features, labels, kwargs.get("params"))
            raise
        result = self._to_spec(returned)
        logger.info("Done calling model_fn.")
        if not isinstance(result, EstimatorSpec):
            raise ValueError(
                "model_fn should return an EstimatorSpec. Fix: return "
                "EstimatorSpec(mode, ...) in every mode of the model_fn. "
                f"Received: type(model_fn(...))={type(result).__name__}, value {result!r:.200}"
            )
        result = spec_for_mode(result, mode)  # a mode=None spec runs as `mode` (2.15)
        check_scaffold(result.scaffold)
        scaffold = _carries_custom_scaffold(result)
        self.made_scaffold = self.made_scaffold or scaffold
        self.made_per_call = self.made_per_call or scaffold or _carries_hooks(result)
        self.scaffolds[mode] = result.scaffold
        if mode == ModeKeys.TRAIN:
            self.train_scaffold_saver = scaffold_saver(result.scaffold)
        return result
