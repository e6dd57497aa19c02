"""What each removed part of `tf.contrib` became: the errors `install()`'s contrib raises.

`keras-estimator check` reads the same facts from the support table; a test keeps the two
in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# tf.contrib module -> what to use instead (the modules keras_estimator does not provide).
REPLACEMENTS: dict[str, str] = {
    "learn": "tf.estimator (keras_estimator): Estimator, canned estimators, train_and_evaluate",
    "opt": "keras.optimizers (e.g. AdamW, Lion) or tf.compat.v1.train optimizers",
    "seq2seq": "keras layers (keras.layers.Attention, keras.layers.RNN) or tensorflow-addons' "
    "seq2seq successors",
    "image": "tf.image or keras.layers (e.g. keras.layers.RandomTranslation)",
    "cloud": "tf.io.gfile with gs:// paths (GCS is built in)",
    "util": "tf.make_ndarray / tf.get_static_value",
    "tfprof": "tf.profiler",
    "distributions": "tensorflow_probability.distributions",
    "signal": "tf.signal",
    "recurrent": "keras.layers.RNN",
    "mixed_precision": "keras.mixed_precision",
    "stateless": "tf.random.stateless_*",
    "quantize": "tensorflow_model_optimization",
    "tensorrt": "tf.experimental.tensorrt",
    "nn": "tf.nn",
    "gan": "keras (a custom train_step)",
    "keras": "keras",
    "losses": "tf.compat.v1.losses or keras.losses",
    "crf": "keras_nlp / tensorflow_addons' text.crf successors",
    "slim": "the tf-slim package (pip install tf-slim, or keras-estimator[slim]): with it "
    "installed, install() provides tf.contrib.slim",
    "predictor": "tf.saved_model.load",
    "graph_editor": "tf.function / tf.Graph APIs",
    "compiler": "tf.function(jit_compile=True)",
    "timeseries": "keras models over tf.data windows",
    "factorization": "keras models (e.g. an embedding dot product)",
    "tensor_forest": "TensorFlow Decision Forests (tensorflow_decision_forests)",
    "boosted_trees": "tf.estimator.BoostedTreesClassifier / BoostedTreesRegressor "
    "(keras_estimator), or TensorFlow Decision Forests",
}

# Modules keras_estimator provides: what to use instead of their inner module paths
# (`tensorflow.contrib.layers.python.layers.utils`, `tensorflow.contrib.tpu.python.tpu.tpu`).
INNER_REPLACEMENTS: dict[str, str] = {
    "tpu": "tf.estimator.tpu / tf.distribute.TPUStrategy (or tf.contrib.tpu's public names)",
    "layers": "tf.contrib.layers' public names, tf.compat.v1.layers or keras.layers",
    "framework": "tf.contrib.framework's public names or their tf.compat.v1 equivalents",
    "training": "tf.contrib.training's public names or tf.compat.v1.train",
    "data": "tf.data / tf.data.experimental",
    "distribute": "tf.distribute strategies in RunConfig(train_distribute=...)",
    "metrics": "tf.compat.v1.metrics",
    "cluster_resolver": "tf.distribute.cluster_resolver",
    "summary": "tf.summary",
    "rnn": "tf.contrib.rnn's public names (TensorFlow's TF1 cells, also tf.compat.v1.nn.rnn_cell "
    "under install()) or keras.layers (LSTMCell, GRUCell, RNN, LayerNormalization)",
    "estimator": "tf.estimator / tf.estimator.experimental (e.g. add_metrics, "
    "stop_if_no_increase_hook)",
    "eager": "TF2 eager execution (tf.function, tf.GradientTape, tf.config.list_logical_devices)",
    "lookup": "tf.lookup (tf.lookup.StaticHashTable, tf.lookup.StaticVocabularyTable)",
}

_DEFAULT = "the TF 2 migration guide's replacement for this module (see `keras-estimator check`)"


def replacement(module: str) -> str:
    """What to use instead of `tf.contrib.<module>` (or a module path inside it)."""
    return REPLACEMENTS.get(module) or INNER_REPLACEMENTS.get(module, _DEFAULT)


def removed_module_message(fullname: str) -> str:
    """The message for `tf.contrib.<module>` / `import tensorflow.contrib.<module>...`."""
    parts = fullname.split(".")
    module = parts[2] if fullname.startswith("tensorflow.contrib.") and len(parts) > 2 else ""
    module = module or (parts[0] if parts else "")
    return (
        f"`{fullname}` is not provided: tf.contrib was removed from TensorFlow 2 and "
        "keras_estimator.install() provides only its estimator-adjacent pieces (see "
        f"`keras-estimator check`). Fix: use {replacement(module)}. Received: {fullname}"
    )


def removed_attribute_error(module: str, name: str, instead: str) -> AttributeError:
    """The error for `tf.contrib.<module>.<name>` that keras_estimator does not provide."""
    return AttributeError(
        f"tf.contrib.{module}.{name} is not provided: tf.contrib was removed from TensorFlow 2 "
        f"and keras_estimator provides only the most used names of tf.contrib.{module}. "
        f"Fix: use {instead}. Received: name={name!r}"
    )


def removed_attribute_getattr(module: str, instead: str) -> Callable[[str], Any]:
    """A module `__getattr__` (PEP 562) for `tf.contrib.<module>`: any name it does not
    define raises `removed_attribute_error` (dunder names a plain AttributeError).

    Example:
        >>> __getattr__ = removed_attribute_getattr("data", "tf.data / tf.data.experimental")
    """

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise removed_attribute_error(module, name, instead)

    return __getattr__


__all__ = [
    "INNER_REPLACEMENTS",
    "REPLACEMENTS",
    "removed_attribute_error",
    "removed_attribute_getattr",
    "removed_module_message",
    "replacement",
]
