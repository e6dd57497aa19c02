"""keras_estimator: tf.estimator code on TensorFlow 2.16+ and Keras 3.

The public face: the `tf.estimator` namespace (Estimator, EstimatorSpec, ModeKeys,
RunConfig, train_and_evaluate, the canned estimators, heads and hooks) and the
sub-namespaces `export`, `experimental`, `inputs`, `tpu`, `canned`, and `v1` (the
`tf.compat.v1.estimator` namespace). Names load on first use, so `import keras_estimator`
is quick and changes nothing in TensorFlow; `install()` and the first Estimator do (see
the README's "Architecture").

Example:
    >>> import tensorflow.compat.v1 as tf
    >>> import keras_estimator as estimator
    >>> est = estimator.Estimator(model_fn, model_dir="runs/a")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from keras_estimator._version import __version__ as __version__
from keras_estimator.seam.environment import check_environment_variables

check_environment_variables()  # TF_USE_LEGACY_KERAS / KERAS_BACKEND: fail at import, clearly

_SUBMODULES = ("canned", "experimental", "export", "inputs", "tpu", "v1")
_CANNED = (
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BoostedTreesClassifier",
    "BoostedTreesEstimator", "BoostedTreesRegressor", "DNNClassifier", "DNNEstimator",
    "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor",
    "DNNRegressor", "LinearClassifier", "LinearEstimator", "LinearRegressor", "add_metrics",
    "classifier_parse_example_spec", "regressor_parse_example_spec",
)  # fmt: skip
_HEADS = (
    "BinaryClassHead", "Head", "LogisticRegressionHead", "MultiClassHead", "MultiHead",
    "MultiLabelHead", "PoissonRegressionHead", "RegressionHead",
)  # fmt: skip
_HOOKS = (
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
    "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook",
    "ProfilerHook", "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext",
    "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook",
)  # fmt: skip
_EXPORTERS = ("BestExporter", "Exporter", "FinalExporter", "LatestExporter")
# Public name -> the module that defines it.
_LOCATIONS: dict[str, str] = {
    "Estimator": "keras_estimator.estimator.estimator",
    "EstimatorSpec": "keras_estimator.spec.estimator_spec",
    "ModeKeys": "keras_estimator.spec.mode_keys",
    "RunConfig": "keras_estimator.spec.run_config",
    "TrainSpec": "keras_estimator.training.train_and_evaluate",
    "EvalSpec": "keras_estimator.training.train_and_evaluate",
    "train_and_evaluate": "keras_estimator.training.train_and_evaluate",
    "VocabInfo": "keras_estimator.checkpoint.warm_start",
    "WarmStartSettings": "keras_estimator.checkpoint.warm_start",
    "install": "keras_estimator.dropin.install",
    "uninstall": "keras_estimator.dropin.install",
    "TrainingHistory": "keras_estimator.runtime.history",
    "plot_history": "keras_estimator.runtime.history",
    "set_progress_bar": "keras_estimator.runtime.progress",
    # What the reliability guarantees raise (README "Reliability"), to catch by name.
    "CheckpointWriteError": "keras_estimator.checkpoint.checkpoint_files",
    "ModelDirLockedError": "keras_estimator.checkpoint.model_dir_lock",
    "ModelDirLockWriteError": "keras_estimator.checkpoint.model_dir_lock",
    "TrainingTerminated": "keras_estimator.runtime.interrupts",
    "DenseFeatures": "keras_estimator.keras_bridge.dense_features",
    "model_to_estimator": "keras_estimator.keras_bridge.model_to_estimator",
    **dict.fromkeys(_CANNED, "keras_estimator.canned"),
    **dict.fromkeys(_HEADS, "keras_estimator.canned.heads"),
    **dict.fromkeys(_HOOKS, "keras_estimator.hooks"),
    **dict.fromkeys(_EXPORTERS, "keras_estimator.export.exporters"),
}
__all__ = sorted([*_LOCATIONS, *_SUBMODULES])


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        _check_environment()
        return importlib.import_module(f"keras_estimator.{name}")
    location = _LOCATIONS.get(name)
    if location is None:
        raise AttributeError(f"module 'keras_estimator' has no attribute {name!r}")
    _check_environment()
    value = getattr(importlib.import_module(location), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _check_environment() -> None:
    from keras_estimator.seam.environment import check_environment

    check_environment()


if TYPE_CHECKING:  # what static tools see; at run time these load on first use
    from keras_estimator import canned, experimental, export, inputs, tpu  # noqa: F401
    from keras_estimator.canned import *  # noqa: F403
    from keras_estimator.canned.heads import *  # noqa: F403
    from keras_estimator.checkpoint.warm_start import VocabInfo, WarmStartSettings  # noqa: F401
    from keras_estimator.dropin.install import install, uninstall  # noqa: F401
    from keras_estimator.estimator.estimator import Estimator  # noqa: F401
    from keras_estimator.hooks import *  # noqa: F403
    from keras_estimator.keras_bridge.dense_features import DenseFeatures  # noqa: F401
    from keras_estimator.keras_bridge.model_to_estimator import model_to_estimator  # noqa: F401
    from keras_estimator.runtime.history import TrainingHistory, plot_history  # noqa: F401
    from keras_estimator.runtime.progress import set_progress_bar  # noqa: F401
    from keras_estimator.spec.estimator_spec import EstimatorSpec  # noqa: F401
    from keras_estimator.spec.mode_keys import ModeKeys  # noqa: F401
    from keras_estimator.spec.run_config import RunConfig  # noqa: F401
    from keras_estimator.training.train_and_evaluate import (  # noqa: F401
        EvalSpec,
        TrainSpec,
        train_and_evaluate,
    )
