"""Python's garbage collector and TensorFlow's long-lived objects.

Importing TensorFlow and Keras leaves ~400,000 objects the cyclic garbage collector tracks
(modules, classes, op definitions, dispatch tables), all alive until the process ends.
Every full collection walks them: ~0.2 s on a 2-core machine, and tracing a model_fn (new
graphs, ops and tensors) triggers one every few hundred thousand objects, in the middle of a
first train(), evaluate() or predict(). `gc.freeze()` moves the objects alive at that moment
into the collector's permanent generation, which no collection walks again; objects created
later are collected as usual, and frozen ones are still freed when their last reference
goes. What freezing gives up: a reference cycle alive at that moment and dropped later is
never collected.

keras_estimator freezes once per process, when the first Estimator is made (importing
changes nothing). `KERAS_ESTIMATOR_GC_FREEZE=0` in the environment turns it off.
"""

from __future__ import annotations

import gc
import logging
import os

logger = logging.getLogger("keras_estimator")

_ENV = "KERAS_ESTIMATOR_GC_FREEZE"
_frozen = False


def freeze_long_lived_objects() -> bool:
    """Freezes the objects alive now (once per process, see the module doc); returns whether
    this call froze them.

    Example:
        >>> freeze_long_lived_objects()  # the first Estimator does this
    """
    global _frozen
    if _frozen or os.environ.get(_ENV, "1").strip() == "0" or not gc.isenabled():
        return False
    _frozen = True
    gc.freeze()
    logger.debug("Froze %d long-lived objects out of garbage collection (%s=0 turns it off).",
                 gc.get_freeze_count(), _ENV)  # fmt: skip
    return True
