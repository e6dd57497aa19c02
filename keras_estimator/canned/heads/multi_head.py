"""MultiHead: several named heads over one model (multi-task learning)."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from keras_estimator.canned.heads import base_head as base
from keras_estimator.export.export_outputs import ExportOutput, PredictOutput
from keras_estimator.spec.estimator_spec import EstimatorSpec
from keras_estimator.spec.mode_keys import ModeKeys


class MultiHead(base.Head):
    """Heads trained together: the loss is the weighted sum of the heads' losses.

    `logits` are a dict keyed by head name, or one tensor whose last dimension is the
    heads' logits dimensions concatenated; `labels` are a dict keyed by head name.
    Predictions are keyed `(head name, key)`; metric keys end in `/<head name>`.

    Args:
        heads: Heads, each with a distinct `name`.
        head_weights: One weight per head (default 1 each).

    Example:
        >>> head = MultiHead([MultiClassHead(3, name="kind"), RegressionHead(name="size")])
    """

    def __init__(self, heads: list, head_weights: list[float] | None = None) -> None:
        if not heads:
            raise ValueError(f"Must specify heads. Given: {heads}")
        if head_weights is not None and len(head_weights) != len(heads):
            raise ValueError(
                "heads and head_weights must have the same size. Given len(heads): "
                f"{len(heads)}. Given len(head_weights): {len(head_weights)}."
            )
        names = [head.name for head in heads]
        if any(not name for name in names) or len(set(names)) != len(names):
            raise ValueError(f"All given heads must have distinct names. Given: {names}")
        super().__init__(name="_".join(names))
        self._heads = list(heads)
        self._head_weights = list(head_weights) if head_weights else [1.0] * len(heads)

    @property
    def logits_dimension(self) -> int:
        return sum(head.logits_dimension for head in self._heads)

    def _split_logits(self, logits: Any) -> dict:
        if isinstance(logits, dict):
            missing = [head.name for head in self._heads if head.name not in logits]
            if missing:
                raise ValueError(f"logits has no entry for heads {missing}; keys: {list(logits)}")
            return {head.name: logits[head.name] for head in self._heads}
        sizes = [head.logits_dimension for head in self._heads]
        parts = tf.split(tf.convert_to_tensor(logits), sizes, axis=-1)
        return {head.name: part for head, part in zip(self._heads, parts)}

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        parts = self._split_logits(logits)
        losses = [
            weight * head.loss(labels[head.name], parts[head.name], features, mode)
            for head, weight in zip(self._heads, self._head_weights)
        ]
        total = tf.add_n(losses)
        if regularization_losses:
            total = total + tf.add_n(list(regularization_losses))
        return total

    def predictions(self, logits: Any, keys: list | None = None) -> dict:
        parts = self._split_logits(logits)
        return {
            (head.name, key): value
            for head in self._heads
            for key, value in head.predictions(parts[head.name]).items()
            if keys is None or key in keys
        }

    def create_estimator_spec(
        self, features, mode, logits, labels=None, optimizer=None, trainable_variables=None,
        train_op_fn=None, update_ops=None, regularization_losses=None,
    ) -> EstimatorSpec:  # fmt: skip
        parts = self._split_logits(logits)
        if mode != ModeKeys.PREDICT and not isinstance(labels, dict):
            raise ValueError(f"labels must be a dict keyed by head name; given: {labels!r}")
        specs = [
            head.create_estimator_spec(
                features,
                mode,
                parts[head.name],
                labels[head.name] if mode != ModeKeys.PREDICT else None,
                train_op_fn=lambda loss: tf.no_op(),
            )  # fmt: skip
            for head in self._heads
        ]
        predictions = {
            (head.name, key): value
            for head, spec in zip(self._heads, specs)
            for key, value in spec.predictions.items()
        }
        if mode == ModeKeys.PREDICT:
            export_outputs = self._merge_predict_export_outputs(specs)
            return EstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs)
        loss = tf.add_n([w * spec.loss for w, spec in zip(self._head_weights, specs)])
        regularization = tf.add_n(list(regularization_losses)) if regularization_losses else None
        if regularization is not None:
            loss = loss + regularization
        if mode == ModeKeys.EVAL:
            metrics: dict[str, Any] = {}
            for head, spec in zip(self._heads, specs):
                metrics.update(spec.eval_metric_ops)
                per_head = keras.metrics.Mean(name=f"loss/{head.name}")
                per_head.update_state(spec.loss)
                metrics[f"loss/{head.name}"] = per_head
            if regularization is not None:
                metric = keras.metrics.Mean(name=base.LOSS_REGULARIZATION)
                metric.update_state(regularization)
                metrics[base.LOSS_REGULARIZATION] = metric
            base.metric_variables_in_no_collection(metrics)
            return EstimatorSpec(mode, loss=loss, predictions=predictions,
                                 eval_metric_ops=metrics)  # fmt: skip
        train_op = self._train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops)
        return EstimatorSpec(mode, loss=loss, predictions=predictions, train_op=train_op)

    def _merge_predict_export_outputs(self, specs: list[EstimatorSpec]) -> dict[str, ExportOutput]:
        """Each head's PREDICT export outputs under `<head name>/<key>` (its default under
        its name; the first head's is the default), and all predictions as `predict`.

        (2.15's name; Head's `_export_outputs(predictions)` is for one head's predictions.)
        """
        outputs: dict[str, ExportOutput] = {}
        merged: dict[str, tf.Tensor] = {}
        for index, (head, spec) in enumerate(zip(self._heads, specs)):
            for key, output in (spec.export_outputs or {}).items():
                if key == base.SERVING_DEFAULT:
                    outputs[head.name] = output
                    if index == 0:
                        outputs[base.SERVING_DEFAULT] = output
                else:
                    outputs[f"{head.name}/{key}"] = output
            merged.update({f"{head.name}/{k}": v for k, v in spec.predictions.items()})
        outputs[base.PREDICT] = PredictOutput(merged)
        return outputs
