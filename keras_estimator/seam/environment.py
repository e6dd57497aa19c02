"""Import-time check that TensorFlow and Keras are versions this library runs on."""

from __future__ import annotations

import os

MIN_TF = (2, 16)
_checked = False


def _version_tuple(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


def check_environment_variables() -> None:
    """The part of the check that needs no import (run by `import keras_estimator`):
    TF_USE_LEGACY_KERAS and KERAS_BACKEND must leave Keras 3 on TensorFlow."""
    if os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes"):
        raise ImportError(
            "keras_estimator runs on Keras 3, but TF_USE_LEGACY_KERAS is set, which turns "
            "tf.keras into Keras 2 (tf_keras). Unset TF_USE_LEGACY_KERAS and start a new "
            f"process. Received: TF_USE_LEGACY_KERAS={os.environ['TF_USE_LEGACY_KERAS']!r}"
        )
    requested = os.environ.get("KERAS_BACKEND")
    if requested and requested != "tensorflow":
        # Checked before importing keras: importing it with another backend can itself fail.
        _wrong_backend(requested)


def check_environment() -> None:
    """Raises ImportError with a fix when TF / Keras cannot host keras_estimator.

    Runs before TensorFlow and Keras are first imported by keras_estimator.
    """
    global _checked
    if _checked:
        return
    check_environment_variables()
    import tensorflow as tf

    if _version_tuple(tf.__version__) < MIN_TF:
        raise ImportError(
            f"keras_estimator needs TensorFlow >= {MIN_TF[0]}.{MIN_TF[1]}, but an older one is "
            "installed. Fix: on TensorFlow <= 2.15 use the original tf.estimator, or upgrade: "
            f"pip install -U 'tensorflow>=2.16'. Received: tensorflow=={tf.__version__}"
        )
    import keras

    if _version_tuple(keras.__version__)[0] < 3:
        raise ImportError(
            "keras_estimator needs Keras 3, but an older Keras is installed. "
            f"Fix: pip install -U 'keras>=3'. Received: keras=={keras.__version__}"
        )
    backend = keras.backend.backend()
    if backend != "tensorflow":
        _wrong_backend(backend)
    _checked = True


def _wrong_backend(backend: str) -> None:
    raise ImportError(
        "keras_estimator needs the TensorFlow Keras backend, but another one is active. "
        'Fix: set KERAS_BACKEND=tensorflow (or "backend": "tensorflow" in '
        f"~/.keras/keras.json) before importing keras. Received: backend={backend!r}"
    )
