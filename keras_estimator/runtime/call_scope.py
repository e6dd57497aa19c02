"""Where an Estimator call runs: eagerly, with older objects out of the GC's walk."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from keras_estimator.seam import internals
from keras_estimator.utils.garbage_collection import long_lived_objects_frozen


@contextlib.contextmanager
def in_call() -> Iterator[None]:
    """Eager execution (even inside a TF1 `tf.Graph().as_default()`), and the objects older
    than the call out of the garbage collector's walk (utils/garbage_collection.py)."""
    with internals.eager_mode(), long_lived_objects_frozen():
        yield
