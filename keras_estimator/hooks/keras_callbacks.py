"""Keras callbacks passed in `hooks=`, called as `model.fit` / `model.evaluate` call them."""

from __future__ import annotations

from typing import Any

import keras


class KerasCallbacks:
    """Drives Keras callbacks over one train() ("train"), evaluate() ("test") or
    predict() ("predict") call, as `fit` / `evaluate` / `predict` call them.

    The whole call is one epoch; every step is a batch (as fit's default
    steps_per_execution=1); `model.stop_training` / `stop_evaluating` / `stop_predicting`
    set to True ends the call after the step. Predict batches get `{"outputs": ...}`.
    The model is the one `fit()` shows callbacks: compiled (`model.optimizer.iterations`
    is the global step), with `model.history` during training and `params` set.
    """

    def __init__(self, callbacks: list, model: Any, kind: str, steps: int | None = None) -> None:
        self.active = bool(callbacks)
        self._kind = kind
        if not self.active:
            return
        self._model = model
        if not model.compiled:
            model.compile()
        self._list = keras.callbacks.CallbackList(
            callbacks, add_history=kind == "train", model=model,
            verbose=0, epochs=1, steps=steps,
        )  # fmt: skip

    def begin(self) -> None:
        if not self.active:
            return
        if self._kind == "train":
            self._model.stop_training = False
            self._list.on_train_begin()
            self._list.on_epoch_begin(0)
        elif self._kind == "test":
            self._model.stop_evaluating = False
            self._list.on_test_begin()
        else:
            self._model.stop_predicting = False
            self._list.on_predict_begin()

    def batch_begin(self, batch: int) -> None:
        if not self.active:
            return
        if self._kind == "train":
            self._list.on_train_batch_begin(batch)
        elif self._kind == "test":
            self._list.on_test_batch_begin(batch)
        else:
            self._list.on_predict_batch_begin(batch)

    def batch_end(self, batch: int, logs: dict) -> bool:
        """True when a callback asked to stop (`model.stop_training`)."""
        if not self.active:
            return False
        if self._kind == "train":
            self._list.on_train_batch_end(batch, logs)
            return bool(self._model.stop_training)
        if self._kind == "test":
            self._list.on_test_batch_end(batch, logs)
            return bool(getattr(self._model, "stop_evaluating", False))
        self._list.on_predict_batch_end(batch, logs)
        return bool(getattr(self._model, "stop_predicting", False))

    def end(self, logs: dict) -> None:
        if not self.active:
            return
        if self._kind == "train":
            self._list.on_epoch_end(0, logs)
            self._list.on_train_end(logs)
        elif self._kind == "test":
            self._list.on_test_end(logs)
        else:
            self._list.on_predict_end()
