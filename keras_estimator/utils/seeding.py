"""Seeding Keras' own randomness for the duration of a trace, without touching user state."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

from keras_estimator.seam.internals import keras_global_seed_generator_reset


@contextlib.contextmanager
def seeded_python_random(seed: int | None) -> Iterator[None]:
    """Seeds Python's `random` (Keras 3 draws default initializer and dropout seeds from
    it when layers are built) and Keras' global SeedGenerator; restores the caller's
    `random` state afterwards. Does nothing when `seed` is None."""
    if seed is None:
        yield
        return
    state = random.getstate()
    random.seed(seed)
    try:
        with keras_global_seed_generator_reset():
            yield
    finally:
        random.setstate(state)
