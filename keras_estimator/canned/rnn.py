"""RNNClassifier and RNNEstimator: Keras 3 RNN layers over sequence feature columns.

As tf.estimator 2.15's: the sequence columns' padded values (and the context columns'
values repeated at each step) run through a Keras RNN layer masked by the sequence lengths,
then a Dense `logits` layer; the head makes the spec. A named optimizer is Adagrad at 0.05
with its gradients clipped to norm 5, its iterations the global step. Variables keep 2.15's
names: `sequence_features/<column>/embedding_weights`, `rnn_model/rnn/lstm_cell/kernel`
(`rnn_model/lstm/lstm_cell/...` for an int `units`), `rnn_model/logits/kernel`, and
`training/Adagrad/<variable>/accumulator`. With `return_sequences=True` the logits are per
step, [batch, time, d], and the head is a sequential one (`SequentialHeadWrapper`, which
RNNClassifier makes): the features get the sequence mask under its key unless they hold it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned import canned_model_fn, sequence_inputs
from keras_estimator.canned import optimizers as optimizers_lib
from keras_estimator.canned.heads.base_head import SUM_OVER_BATCH_SIZE
from keras_estimator.canned.heads.sequential_head import SequentialHeadWrapper
from keras_estimator.estimator.estimator import Estimator
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig

logger = logging.getLogger("keras_estimator")
_V1 = tf.compat.v1
_LEARNING_RATE = 0.05  # tf.estimator 2.15's rate for a named optimizer
_CLIP_NORM = 5.0  # and its gradient clipping (named optimizers only)
USE_DEFAULT = object()  # tf.estimator 2.15's default cell_type marker
_LAYERS = {"simple_rnn": keras.layers.SimpleRNN, "lstm": keras.layers.LSTM,
           "gru": keras.layers.GRU}  # fmt: skip
_CELLS = {"simple_rnn": keras.layers.SimpleRNNCell, "lstm": keras.layers.LSTMCell,
          "gru": keras.layers.GRUCell}  # fmt: skip


def _check_cell_arguments(rnn_cell_fn: Any, units: Any, cell_type: Any) -> None:
    if rnn_cell_fn and (units or cell_type is not USE_DEFAULT):
        raise ValueError("units and cell_type must not be specified when using rnn_cell_fn")


def _cell(units: int, cell_type: Any) -> Any:
    cell_class = _CELLS.get(cell_type, cell_type) if isinstance(cell_type, str) else cell_type
    if not callable(cell_class):
        raise ValueError(
            "`cell_type` should be a class producing a RNN cell, or a string specifying the "
            f"cell type. Supported strings are: {list(_CELLS)}. Received: cell_type={cell_type!r}"
        )
    cell = cell_class(units=units)
    if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
        raise ValueError(f"RNN cell should have a `call` and `state_size` method. Received: {cell}")
    return cell


def rnn_layer(rnn_cell_fn: Any, units: Any, cell_type: Any, return_sequences: bool) -> Any:
    """The Keras RNN layer 2.15 built: LSTM / GRU / SimpleRNN for an int `units` and a cell
    name, else `RNN` over `rnn_cell_fn()` or over one cell per entry of `units`."""
    _check_cell_arguments(rnn_cell_fn, units, cell_type)
    if cell_type in _LAYERS and isinstance(units, int):
        return _LAYERS[cell_type](units=units, return_sequences=return_sequences)
    if not rnn_cell_fn:
        chosen = "simple_rnn" if cell_type is USE_DEFAULT else cell_type
        widths = [units] if isinstance(units, int) else list(units or [])
        if not widths:
            raise ValueError(
                "units must be given (an int or a list of ints, one per RNN layer) when no "
                f"rnn_cell_fn is. Received: units={units!r}"
            )

        def rnn_cell_fn() -> Any:
            cells = [_cell(width, chosen) for width in widths]
            return cells[0] if len(cells) == 1 else cells

    return keras.layers.RNN(cell=rnn_cell_fn(), return_sequences=return_sequences)


def rnn_logits(features: dict, mode: str, logits_dimension: int, sequence_columns: list,
               context_columns: list, make_layer: Callable[[], Any]) -> tuple:  # fmt: skip
    """([batch, logits] (or [batch, time, logits] with a `return_sequences` layer), the
    [batch, time] sequence mask)."""
    if not isinstance(features, dict):
        raise ValueError(
            f"features should be a dictionary of `Tensor`s. Given type: {type(features)}"
        )
    training = mode == ModeKeys.TRAIN
    with tf.name_scope("rnn_model"), tf.name_scope("sequence_input_layer"):
        values, lengths = sequence_inputs.sequence_input(features, sequence_columns)
        if context_columns:
            values = sequence_inputs.with_context(values, features, context_columns)
    mask = tf.sequence_mask(lengths)
    with _V1.variable_scope("rnn_model", auxiliary_name_scope=False):
        with tf.name_scope("rnn_model/"):
            outputs = make_layer()(values, mask=mask, training=training)
            logits = keras.layers.Dense(logits_dimension, name="logits")(outputs)
    return logits, mask


class RNNEstimator(Estimator):
    """An Estimator for RNN models with a given head, as tf.estimator 2.15's.

    Args:
        head: a head (`BinaryClassHead`, `RegressionHead`, ...).
        sequence_feature_columns: sequence columns (`sequence_numeric_column`, or an
            embedding / indicator column of a `sequence_categorical_column_*`).
        context_feature_columns: dense columns whose values are given at every step.
        units: an int (one LSTM / GRU / SimpleRNN layer with `cell_type`) or a list of ints
            (stacked cells).
        cell_type: `'simple_rnn'` (the default), `'lstm'`, `'gru'` or a cell class.
        rnn_cell_fn: a callable returning a Keras RNN cell (or a list of cells); instead of
            `units` and `cell_type`.
        return_sequences: logits for every step; `head` must then be a sequential head
            (`SequentialHeadWrapper`), whose mask key the features get (from the sequence
            lengths) unless they hold it already.
        model_dir: where checkpoints and summaries go.
        optimizer: a name (Adagrad at 0.05, clip norm 5), a Keras optimizer or a callable.
        config: a `RunConfig`.

    Example:
        >>> tokens = tf.feature_column.sequence_categorical_column_with_identity("tokens", 10)
        >>> est = RNNEstimator(head=RegressionHead(), units=[16], cell_type="lstm",
        ...                    sequence_feature_columns=[embedding_column(tokens, 4)])
    """

    def __init__(
        self,
        head: Any,
        sequence_feature_columns: Any,
        context_feature_columns: Any = None,
        units: Any = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Any = None,
        return_sequences: bool = False,
        model_dir: str | os.PathLike | None = None,
        optimizer: Any = "Adagrad",
        config: RunConfig | None = None,
    ) -> None:
        if return_sequences and not hasattr(head, "input_sequence_mask_key"):
            raise ValueError(
                "Provided head must be a `_SequentialHead` object when `return_sequences` is "
                "set to True. Fix: wrap it, SequentialHeadWrapper(head, "
                "sequence_length_mask='sequence_mask'), or use RNNClassifier (which does). "
                f"Received: head={head!r}"
            )
        _check_cell_arguments(rnn_cell_fn, units, cell_type)
        canned_model_fn.check_optimizer(optimizer)
        self._head = head

        def model_fn(features, labels, mode):
            sequence_columns = sequence_inputs.check_sequence_columns(sequence_feature_columns)
            logits, mask = rnn_logits(
                features, mode, head.logits_dimension, sequence_columns,
                list(context_feature_columns or []),
                lambda: rnn_layer(rnn_cell_fn, units, cell_type, return_sequences),
            )  # fmt: skip
            if return_sequences and head.input_sequence_mask_key not in features:
                features = {**features, head.input_sequence_mask_key: mask}
            return _spec(head, features, mode, logits, labels, optimizer)

        super().__init__(model_fn, model_dir, config)


def _spec(head: Any, features: dict, mode: str, logits: tf.Tensor, labels: Any,
          optimizer: Any) -> Any:  # fmt: skip
    if mode != ModeKeys.TRAIN:
        return head.create_estimator_spec(features, mode, logits, labels)

    def train_op_fn(loss: tf.Tensor) -> tf.Operation:
        resolved = optimizers_lib.resolve_optimizer(optimizer, _LEARNING_RATE)
        if isinstance(optimizer, str):
            resolved.clipnorm = _CLIP_NORM
        variables = _V1.get_collection(_V1.GraphKeys.TRAINABLE_VARIABLES)
        mean_loss = head.loss_reduction == SUM_OVER_BATCH_SIZE
        train_op = optimizers_lib.minimize(resolved, loss, variables, mean_loss)
        return tf.group(train_op, *_V1.get_collection(_V1.GraphKeys.UPDATE_OPS))

    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn=train_op_fn)


class RNNClassifier(RNNEstimator):
    """A classifier over sequences (binary or multi-class), as tf.estimator 2.15's.

    Its predictions: `logits`, `logistic` (binary), `probabilities`, `class_ids`, `classes`,
    `all_class_ids`, `all_classes`. With `return_sequences=True` every valid time step is an
    example: labels are [batch, time] (padded, or a SparseTensor), a `weight_column` is the key
    of [batch, time] weights, loss and metrics cover the steps the sequence mask marks valid,
    and predictions are per step (`class_ids` [time, 1] per example) with the mask under the
    key `sequence_mask` (the features' own tensor of that name, if they hold one, else one made
    from the sequence lengths). See `RNNEstimator` for the other arguments.

    Example:
        >>> tokens = tf.feature_column.sequence_categorical_column_with_identity("tokens", 10)
        >>> est = RNNClassifier(sequence_feature_columns=[embedding_column(tokens, 4)],
        ...                     units=[8], cell_type="lstm")
        >>> est.train(input_fn, steps=200)
    """

    def __init__(
        self,
        sequence_feature_columns: Any,
        context_feature_columns: Any = None,
        units: Any = None,
        cell_type: Any = USE_DEFAULT,
        rnn_cell_fn: Any = None,
        return_sequences: bool = False,
        model_dir: str | os.PathLike | None = None,
        n_classes: int = 2,
        weight_column: Any = None,
        label_vocabulary: list[str] | None = None,
        optimizer: Any = "Adagrad",
        loss_reduction: Any = SUM_OVER_BATCH_SIZE,
        sequence_mask: str = "sequence_mask",
        config: RunConfig | None = None,
    ) -> None:
        head = canned_model_fn.classification_head(n_classes, weight_column, label_vocabulary,
                                                   loss_reduction)  # fmt: skip
        if return_sequences:
            if weight_column is not None and not isinstance(weight_column, str):
                raise TypeError(
                    "With return_sequences=True, weight_column must be None or a string (the "
                    "key of per-step weights, [batch, time]). Fix: pass the feature's key. "
                    f"Received: weight_column={weight_column!r}"
                )
            logger.info(
                "Converting head to sequential head with `SequentialHeadWrapper` to allow "
                "sequential predictions."
            )
            head = SequentialHeadWrapper(head, sequence_length_mask=sequence_mask,
                                         feature_columns=weight_column)  # fmt: skip
        super().__init__(head, sequence_feature_columns, context_feature_columns, units,
                         cell_type, rnn_cell_fn, return_sequences, model_dir, optimizer,
                         config)  # fmt: skip
