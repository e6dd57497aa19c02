"""keras_estimator: tf.estimator code on TensorFlow 2.16+ and Keras 3.

Example:
    >>> import tensorflow.compat.v1 as tf
    >>> import keras_estimator as estimator
    >>> est = estimator.Estimator(model_fn, model_dir="runs/a")
"""

from keras_estimator.utils.environment import check_environment as _check_environment  # noqa: E402

_check_environment()

from keras_estimator import canned, experimental, export, inputs, tpu  # noqa: E402
from keras_estimator.canned import *  # noqa: E402,F403  (tf.estimator.DNNClassifier, ...)
from keras_estimator.canned import __all__ as _canned_names  # noqa: E402
from keras_estimator.canned.heads import *  # noqa: E402,F403  (tf.estimator.BinaryClassHead, ...)
from keras_estimator.canned.heads import __all__ as _head_names  # noqa: E402
from keras_estimator.checkpoint.warm_start import VocabInfo, WarmStartSettings  # noqa: E402
from keras_estimator.compat import install_v1_layers as _install_v1_layers  # noqa: E402
from keras_estimator.dropin.install import install, uninstall  # noqa: E402
from keras_estimator.estimator.estimator import Estimator  # noqa: E402
from keras_estimator.hooks import *  # noqa: E402,F403  (tf.estimator re-exported the hooks)
from keras_estimator.hooks import __all__ as _hook_names  # noqa: E402
from keras_estimator.runtime.history import TrainingHistory, plot_history  # noqa: E402
from keras_estimator.runtime.progress import set_progress_bar  # noqa: E402
from keras_estimator.spec.estimator_spec import EstimatorSpec  # noqa: E402
from keras_estimator.spec.mode_keys import ModeKeys  # noqa: E402
from keras_estimator.spec.run_config import RunConfig  # noqa: E402
from keras_estimator.training.train_and_evaluate import EvalSpec, TrainSpec, train_and_evaluate  # noqa: E402
from keras_estimator.utils.log import follow_tensorflow_logger as _follow_tensorflow_logger  # noqa: E402,E501

_install_v1_layers()
_follow_tensorflow_logger()

__version__ = "0.1.0"
__all__ = [
    "Estimator",
    "EstimatorSpec",
    "ModeKeys",
    "EvalSpec",
    "RunConfig",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "canned",
    "experimental",
    "export",
    "inputs",
    "install",
    "plot_history",
    "TrainingHistory",
    "uninstall",
    "set_progress_bar",
    "tpu",
    "train_and_evaluate",
    *_hook_names,
    *_canned_names,
    *_head_names,
]
