"""Seeding Keras' own randomness for the duration of a trace, without touching user state."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

from keras.src.backend.common import global_state
from keras.src.random import seed_generator


@contextlib.contextmanager
def seeded_python_random(seed: int | None) -> Iterator[None]:
    """Seeds Python's `random` (Keras 3 draws default initializer and dropout seeds from
    it when layers are built) and Keras' global SeedGenerator; restores the caller's
    `random` state afterwards. Does nothing when `seed` is None."""
    if seed is None:
        yield
        return
    state = random.getstate()
    previous = global_state.get_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR)
    random.seed(seed)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    try:
        yield
    finally:
        random.setstate(state)
        global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, previous)
