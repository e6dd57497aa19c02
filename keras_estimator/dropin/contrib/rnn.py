"""`tf.contrib.rnn`: TensorFlow's TF1 RNN cells, for `tf.compat.v1.nn.dynamic_rnn` & co.

TF 2.21's own `tf.compat.v1.nn.rnn_cell` raises "not available with Keras 3"; these are the
same classes, from TensorFlow's own tree (also served as `tf.compat.v1.nn.rnn_cell` by
install(): `dropin.rnn_cell`), so variables keep TF1 names
(`rnn/basic_lstm_cell/kernel`, `rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel`, ...).
Cells that only tf.contrib had (LayerNormBasicLSTMCell, AttentionCellWrapper, ...) raise
an error naming the replacement.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr
from keras_estimator.seam.internals import tf1_rnn_cell_module

TF1_CELLS = (
    "RNNCell",
    "BasicRNNCell",
    "BasicLSTMCell",
    "LSTMCell",
    "GRUCell",
    "MultiRNNCell",
    "DropoutWrapper",
    "ResidualWrapper",
    "DeviceWrapper",
    "LSTMStateTuple",
)
_FUNCTIONS = {
    "static_rnn": "static_rnn",
    "static_bidirectional_rnn": "static_bidirectional_rnn",
    "static_state_saving_rnn": "static_state_saving_rnn",
}

_removed = removed_attribute_getattr(
    "rnn", "keras.layers (LSTMCell, GRUCell, RNN, LayerNormalization) or the TF1 "
    "cells tf.contrib.rnn still provides: " + ", ".join(TF1_CELLS),
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in TF1_CELLS:
        return getattr(tf1_rnn_cell_module(), name)
    if name in _FUNCTIONS:
        return getattr(tf.compat.v1.nn, _FUNCTIONS[name])
    return _removed(name)


def __dir__() -> list[str]:
    return sorted([*TF1_CELLS, *_FUNCTIONS])


__all__ = [*TF1_CELLS, *_FUNCTIONS]  # noqa: PLE0604
