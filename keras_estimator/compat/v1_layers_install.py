"""Points `tf.compat.v1.layers` (and `tf.layers` under `tensorflow.compat.v1`) at our layers.

On TF >= 2.16 with Keras 3 that attribute is a lazy loader that raises
"`dense` is not available with Keras 3". Only that one attribute is replaced, on every
module object TensorFlow exposes as `compat.v1` (there are several wrappers).
"""

from __future__ import annotations

import importlib
import sys

from keras_estimator.compat import layers as v1_layers
from keras_estimator.seam.patching import AttributePatch

_patches: dict[int, AttributePatch] = {}  # id(module) -> its patch, held for good


def install_v1_layers() -> None:
    """Makes `tf.compat.v1.layers.*` resolve to `keras_estimator.compat.layers`. Idempotent.

    Called when the first Estimator is made and by `install()`, not on import: importing
    keras_estimator changes nothing in TensorFlow.
    """
    import tensorflow as tf

    # Import it now so that a later `import tensorflow.compat.v1` finds the patched module.
    importlib.import_module("tensorflow.compat.v1")
    modules = [tf.compat.v1]
    modules += [m for name, m in list(sys.modules.items()) if name.endswith("compat.v1")]
    for module in modules:
        if getattr(module, "__dict__", {}).get("layers") is not v1_layers:
            _patches[id(module)] = AttributePatch(module, "layers", v1_layers)
