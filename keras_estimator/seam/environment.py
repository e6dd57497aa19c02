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


def check_environment() -> None:
    """Raises ImportError with a fix when TF / Keras cannot host keras_estimator.

    Runs before TensorFlow and Keras are first imported by keras_estimator.
    """
    global _checked
    if _checked:
        return
    if os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes"):
        raise ImportError(
            "keras_estimator runs on Keras 3, but TF_USE_LEGACY_KERAS is set, which turns "
            "tf.keras into Keras 2 (tf_keras). Unset TF_USE_LEGACY_KERAS and start a new process."
        )
    requested = os.environ.get("KERAS_BACKEND")
    if requested and requested != "tensorflow":
        # Checked before importing keras: importing it with another backend can itself fail.
        _wrong_backend(requested)
    import tensorflow as tf

    if _version_tuple(tf.__version__) < MIN_TF:
        raise ImportError(
            f"keras_estimator needs TensorFlow >= {MIN_TF[0]}.{MIN_TF[1]}; found "
            f"{tf.__version__}. On TensorFlow <= 2.15 use the original tf.estimator, or "
            "upgrade: pip install -U 'tensorflow>=2.16'."
        )
    import keras

    if _version_tuple(keras.__version__)[0] < 3:
        raise ImportError(
            f"keras_estimator needs Keras 3; found keras {keras.__version__}. "
            "Fix: pip install -U 'keras>=3'."
        )
    backend = keras.backend.backend()
    if backend != "tensorflow":
        _wrong_backend(backend)
    _checked = True


def _wrong_backend(backend: str) -> None:
    raise ImportError(
        f"keras_estimator needs the TensorFlow Keras backend; the active backend is "
        f'{backend!r}. Fix: set KERAS_BACKEND=tensorflow (or "backend": "tensorflow" in '
        "~/.keras/keras.json) before importing keras."
    )
