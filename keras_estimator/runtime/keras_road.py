"""The Keras road: `est.keras_model` shares its variables and model_dir with the Estimator.

Keras-side training (`fit`, `train_on_batch`) ends with a checkpoint written to model_dir
in the tf.estimator layout at the model's global step, also when it is interrupted: the
Estimator's next `evaluate()` / `train()` restores it and counts on from that step, so no
Keras step is lost. On an Estimator made over a trained model_dir, the model's first data
traces the model_fn and restores the latest checkpoint. `export(path)` writes a SavedModel
of the PREDICT graph, as `export_saved_model` does, to exactly `path`, with the `serve`
endpoint `keras.layers.TFSMLayer(path)` calls (the features in, the predictions out).
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.checkpoint.model_dir_lock import hold_training_lock, lock_held_here
from keras_estimator.export.receivers import (
    ServingInputReceiver,
    build_raw_serving_input_receiver_fn,
)
from keras_estimator.runtime.saved_model_export import write_saved_model
from keras_estimator.spec.mode_keys import ModeKeys

logger = logging.getLogger("keras_estimator")


def _dataset_of(x: Any, y: Any) -> tf.data.Dataset:
    """What Keras will feed, as a dataset (for its structure and specs only)."""
    if isinstance(x, tf.data.Dataset):
        return x
    element = x if y is None else (x, y)
    return tf.data.Dataset.from_tensor_slices(element).batch(2)


class KerasRoad:
    """Connects an Estimator's `EstimatorModel` to its model_dir (see the module doc)."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def attach(self, model: Any) -> None:
        model.road = self

    def build(self, model: Any, x: Any, y: Any) -> None:
        """Traces the model_fn for this data and restores model_dir's latest checkpoint."""
        runtime = self._runtime
        checkpoint = runtime.latest_checkpoint()
        if x is None or model is not runtime.model:
            raise ValueError(
                "This keras_model is built on its first data (from the checkpoint in model_dir "
                "when there is one): the model_fn creates its variables when it sees the "
                "features. Fix: call fit / evaluate / predict on it first (or train() the "
                "Estimator). "
                f"Received: model_dir={runtime.model_dir!r}, checkpoint={checkpoint!r}"
            )
        dataset = _dataset_of(x, y)
        spec = dataset.element_spec
        mode = ModeKeys.TRAIN if isinstance(spec, tuple) and len(spec) == 2 else ModeKeys.PREDICT
        if mode == ModeKeys.PREDICT and not (isinstance(spec, tuple) and len(spec) == 1):
            dataset = dataset.map(lambda *element: element)
        with runtime.scope(mode):
            runtime.prepare(mode, dataset, checkpoint)
        logger.info("keras_model built for %s and restored from %s.", mode, checkpoint)

    def save_keras_weights(self, model: Any) -> str | None:
        """After `set_weights` / `load_weights`: the weights replace model_dir's checkpoint
        of the model's global step, so the Estimator's next call restores them. Inside a
        running train() (a callback restoring weights) that call's final save writes them."""
        if lock_held_here(self._runtime.model_dir):
            return None
        return self.save_keras_training(model, same_step=True)

    def save_keras_training(self, model: Any, same_step: bool = False) -> str | None:
        """Saves the variables to model_dir when Keras trained past the latest checkpoint.

        `same_step`: the weights were set (not trained), so they replace a checkpoint of
        the same step. Not saved, with a log line saying why: on a non-chief task; when
        model_dir's latest checkpoint is past this step (another trainer went on meanwhile),
        or at it without `same_step`; when a weight is NaN or infinite (train() refuses
        those too). A trainer holding model_dir's lock makes it raise ModelDirLockedError.
        """
        runtime = self._runtime
        if model is not runtime.model or not model.store.global_variables().keys() - {
            "global_step"
        }:
            return None
        step = runtime.global_step_value()
        config = runtime.config
        if not config.is_chief:
            logger.warning("Keras training of step %d is not saved: only the chief writes "
                           "model_dir.", step)  # fmt: skip
            return None
        tf.io.gfile.makedirs(runtime.model_dir)
        # A trainer of model_dir in another process (or Estimator) must not be overwritten:
        # the save takes model_dir's lock as train() does (ModelDirLockedError names it).
        with hold_training_lock(runtime.model_dir, is_chief=True):
            latest = runtime.latest_checkpoint()
            saved = int(tf.train.load_variable(latest, "global_step")) if latest else None
            if saved is not None and (saved > step or (saved == step and not same_step)):
                if saved > step:
                    logger.warning(
                        "Keras training (global step %d) is not saved: model_dir's latest "
                        "checkpoint %s is at step %d, written by another trainer since this "
                        "model was restored.", step, latest, saved,
                    )  # fmt: skip
                return None
            variables = model.store.global_variables()
            broken = sorted(
                name
                for name, v in variables.items()
                if v.dtype.is_floating and not np.all(np.isfinite(v.numpy()))
            )
            if broken:
                logger.error(
                    "Keras training (global step %d) is not saved: %s hold NaN or infinite "
                    "values. model_dir keeps %s.", step, ", ".join(broken[:5]), latest,
                )  # fmt: skip
                return None
            writer = ckpt_lib.CheckpointWriter(
                runtime.model_dir, variables, config.keep_checkpoint_max,
                config.keep_checkpoint_every_n_hours,
            )  # fmt: skip
            if config.checkpoint_save_graph_def:
                writer.meta_graph = runtime.step_graph(ModeKeys.TRAIN).meta_graph
            path = writer.save(step)
        logger.info("Keras training saved to %s (global step %d).", path, step)
        return path

    def export(self, model: Any, filepath: str, input_signature: Any) -> str:
        """A SavedModel of the PREDICT graph at `filepath`, from the current weights."""
        runtime = self._runtime
        features = input_signature if input_signature is not None else model.features_spec
        if features is None:
            raise ValueError(
                "export() needs the features' specs: this model has not seen data yet. "
                "Fix: pass input_signature={'x': tf.TensorSpec([None, 8])} (the features), or "
                "call fit / evaluate / predict first. Received: input_signature=None"
            )
        self.save_keras_training(model)

        raw = build_raw_serving_input_receiver_fn(
            features if isinstance(features, dict) else {"input": features}
        )

        def receiver_fn() -> ServingInputReceiver:
            receiver = raw()
            if isinstance(features, dict):
                return receiver
            return ServingInputReceiver(receiver.features["input"], receiver.receiver_tensors)

        if tf.io.gfile.exists(filepath) and tf.io.gfile.listdir(filepath):
            raise FileExistsError(
                f"export() writes a new SavedModel directory, and {filepath!r} exists and is "
                f"not empty. Fix: export to a new path. Received: filepath={filepath!r}"
            )
        # Written beside `filepath` under a temporary name, then renamed: a reader never
        # sees half a SavedModel. URLs (gs://...) keep their scheme.
        local = "://" not in filepath
        parent = os.path.dirname(os.path.abspath(filepath) if local else filepath.rstrip("/"))
        base = f"{parent}/.keras_estimator_export_{uuid.uuid4().hex}"
        try:
            serve = "features" if isinstance(features, dict) else "tensor"  # TFSMLayer's input
            written = write_saved_model(runtime, base, receiver_fn, None, False, None,
                                        ModeKeys.PREDICT, keras_serve=serve)  # fmt: skip
            if tf.io.gfile.exists(filepath):
                tf.io.gfile.rmtree(filepath)  # an empty directory
            tf.io.gfile.rename(os.fsdecode(written), filepath)
        finally:
            if tf.io.gfile.exists(base):
                tf.io.gfile.rmtree(base)
        logger.info("Exported the PREDICT graph to %s.", filepath)
        return filepath
