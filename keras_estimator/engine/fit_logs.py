"""The global step in `keras_model.fit`'s logs: an int in the returned History, not in the bar.

The train step reports the global step beside the loss (hooks and the Estimator's loop read
it); Keras turns every log into a float, so `fit()` showed `global_step: 300.0000` as if it
were a metric. The bar leaves it out (it counts fit's own steps); History keeps it, as ints.
"""

from __future__ import annotations

from typing import Any

import keras

from keras_estimator.engine.output_keys import GLOBAL_STEP_KEY


class _ProgbarWithoutGlobalStep(keras.callbacks.ProgbarLogger):
    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        super().on_train_batch_end(batch, _without_step(logs))

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        super().on_epoch_end(epoch, _without_step(logs))


def _without_step(logs: dict | None) -> dict | None:
    return None if logs is None else {k: v for k, v in logs.items() if k != GLOBAL_STEP_KEY}


def fit_callbacks(callbacks: Any, verbose: Any) -> Any:
    """`callbacks` plus a progress bar without the global step, unless fit shows no bar or
    the user brought their own ProgbarLogger."""
    listed = list(callbacks or [])
    if verbose == 0 or any(isinstance(c, keras.callbacks.ProgbarLogger) for c in listed):
        return callbacks
    return [*listed, _ProgbarWithoutGlobalStep()]


def global_step_as_int(history: Any) -> Any:
    """The History `fit` returned, its `global_step` entries as ints."""
    steps = getattr(history, "history", {}).get(GLOBAL_STEP_KEY)
    if steps is not None:
        history.history[GLOBAL_STEP_KEY] = [int(step) for step in steps]
    return history
