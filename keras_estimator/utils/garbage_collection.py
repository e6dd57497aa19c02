"""Python's garbage collector during an Estimator call.

Importing TensorFlow and Keras leaves ~400,000 objects the cyclic garbage collector tracks
(modules, classes, op definitions, dispatch tables), and a program adds its own. Every full
collection walks them all (~0.2 s on a 2-core machine), and tracing a model_fn (new graphs,
ops and tensors) triggers one every ~100,000 surviving objects: in the middle of a first
train(), evaluate() or predict().

`long_lived_objects_frozen()` moves the objects alive when a call begins into the
collector's permanent generation (`gc.freeze()`), which its collections skip, and back at
the call's end (`gc.unfreeze()`): collections inside the call walk only what the call made.
Nothing is kept from collection for good: a cycle among older objects dropped during the call
is collected after it. Calls nest and may run in several threads (the outermost freezes and
unfreezes); a program that froze objects itself is left alone. `KERAS_ESTIMATOR_GC_FREEZE=0`
in the environment turns it off.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

_ENV = "KERAS_ESTIMATOR_GC_FREEZE"
_lock = threading.Lock()
_depth = 0  # calls running now, all threads
_froze = False  # whether the outermost of them froze (and so unfreezes)


@contextlib.contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Inside: the objects alive at the outermost entry are frozen out of collections.

    Example:
        >>> with long_lived_objects_frozen():
        ...     est.train(input_fn, steps=10)  # every Estimator call does this itself
    """
    global _depth, _froze
    with _lock:
        if _depth == 0:
            _froze = (
                os.environ.get(_ENV, "1").strip() != "0"
                and gc.isenabled()
                and gc.get_freeze_count() == 0  # the program's own freeze: leave it be
            )
            if _froze:
                gc.freeze()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _froze:
                gc.unfreeze()
                _froze = False
