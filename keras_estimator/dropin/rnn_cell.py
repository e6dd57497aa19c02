"""`tf.compat.v1.nn.rnn_cell` under `install()`: TensorFlow's own TF1 RNN cells.

TF 2.21's `tf.compat.v1.nn.rnn_cell` is a lazy loader that forwards to tf_keras and, with
Keras 3, raises "`GRUCell` is not available with Keras 3". The cells themselves still ship
in TensorFlow (`seam.internals.tf1_rnn_cell_module`, also behind `tf.contrib.rnn`); served
here under their tf.compat.v1 name, they build the variables tf.estimator 2.15's cells
built (`rnn/gru_cell/gates/kernel`, `rnn/multi_rnn_cell/cell_0/lstm_cell/kernel`, ...), so
its checkpoints load. In `keras-estimator run`'s TF1 mode `tf.nn.rnn_cell` is this module.

Example:
    >>> import keras_estimator; keras_estimator.install()
    >>> import tensorflow as tf
    >>> cell = tf.compat.v1.nn.rnn_cell.GRUCell(8)
    >>> outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
"""

from __future__ import annotations

import sys
from typing import Any

from keras_estimator.dropin.contrib.rnn import TF1_CELLS
from keras_estimator.seam.internals import tf1_rnn_cell_module


def __getattr__(name: str) -> Any:
    if name in TF1_CELLS:
        return getattr(tf1_rnn_cell_module(), name)
    raise AttributeError(
        f"tf.compat.v1.nn.rnn_cell has no attribute {name!r}: it holds TensorFlow 1.x's cells "
        f"({', '.join(TF1_CELLS)}). Fix: use one of them, or keras.layers (LSTMCell, GRUCell, "
        f"RNN) for new code. Received: name={name!r}"
    )


def __dir__() -> list[str]:
    return sorted(TF1_CELLS)


__all__ = list(TF1_CELLS)  # noqa: PLE0604


def rnn_cell_attributes() -> list[tuple[Any, str, Any]]:
    """(module, "rnn_cell", this module) for each `tf.compat.v1.nn` whose own `rnn_cell`
    gives no cells (the Keras 3 case); empty where it works (a tf_keras set-up)."""
    import tensorflow as tf

    this = sys.modules[__name__]
    nn_modules = {id(tf.compat.v1.nn): tf.compat.v1.nn}
    nn_modules.update(
        {id(m): m for n, m in list(sys.modules.items()) if n.endswith("compat.v1.nn")}
    )
    return [(nn, "rnn_cell", this) for nn in nn_modules.values() if not _has_cells(nn)]


def _has_cells(nn: Any) -> bool:
    try:
        return getattr(nn.rnn_cell, "GRUCell", None) is not None
    except Exception:  # the lazy loader raises AttributeError or ImportError
        return False
