"""TF1-named checkpoints in model_dir: the tf.estimator layout, read and written eagerly.

`model_dir/checkpoint` plus `model.ckpt-N.index` / `.data-*`, with variable names such as
`dense/kernel`, `dense/kernel/Adam`, `beta1_power` and `global_step`, so that
`tf.train.list_variables`, warm starts and checkpoints written by tf.estimator 2.15 work.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import tensorflow as tf

from keras_estimator._logging import quiet_tf_warning

logger = logging.getLogger("keras_estimator")

CHECKPOINT_BASENAME = "model.ckpt"


class CheckpointMismatchError(tf.errors.NotFoundError, ValueError):
    """A checkpoint does not hold the variables the model_fn creates.

    A `tf.errors.NotFoundError` as tf.estimator's Saver raised, and a ValueError.
    """

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)


def latest_checkpoint(model_dir: str) -> str | None:
    """The newest complete checkpoint prefix in `model_dir`, or None."""
    if not model_dir or not tf.io.gfile.isdir(model_dir):
        return None
    return tf.train.latest_checkpoint(model_dir)


def open_reader(path: str) -> Any:
    try:
        return tf.train.load_checkpoint(path)
    except Exception as exc:  # noqa: BLE001 - TF raises several types for bad files
        raise ValueError(
            f"Could not read checkpoint {path!r}: {exc}. Expected a complete checkpoint "
            "(its .index and .data files). Fix: pass checkpoint_path= an older, complete "
            "checkpoint, or remove the broken one from the checkpoint state file."
        ) from exc


class CheckpointRestorer:
    """Restores variables by TF1 name as they are created, collecting every mismatch."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._reader = open_reader(path)
        self._shapes = self._reader.get_variable_to_shape_map()
        self._dtypes = self._reader.get_variable_to_dtype_map()
        self.missing: list[str] = []
        self.misshaped: list[str] = []

    def restore(self, name: str, variable: tf.Variable) -> None:
        if name not in self._shapes:
            self.missing.append(name)
            return
        want = tuple(variable.shape.as_list())
        have = tuple(self._shapes[name])
        if want != have or self._dtypes[name].base_dtype != variable.dtype.base_dtype:
            self.misshaped.append(
                f"{name}: checkpoint has {self._dtypes[name].name}{list(have)}, "
                f"model_fn creates {variable.dtype.name}{list(want)}"
            )
            return
        variable.assign(self._reader.get_tensor(name))

    def restore_all(self, variables: dict[str, tf.Variable]) -> None:
        for name, variable in variables.items():
            self.restore(name, variable)

    def raise_if_mismatched(self) -> None:
        """Raises if a restored variable was missing or mis-shaped, naming every one."""
        if not (self.missing or self.misshaped):
            return
        lines = []
        if self.missing:
            lines.append(f"not in the checkpoint: {sorted(self.missing)}")
        if self.misshaped:
            lines.append(f"different shape or dtype: {self.misshaped}")
        raise CheckpointMismatchError(
            f"The checkpoint {self.path!r} does not match the variables the model_fn creates "
            f"({'; '.join(lines)}). It was probably written by a different model. Fix: use a "
            "new model_dir, or restore the model_fn that wrote this checkpoint."
        )


def _saved_part(variable: tf.Variable) -> tf.Variable:
    """What is written for a variable: a mirrored variable's copies are equal, save one."""
    if isinstance(variable, tf.distribute.DistributedValues):
        return variable.values[0]
    return variable


class CheckpointWriter:
    """Saves `model.ckpt-N` with TF1 names and keeps the newest `keep_checkpoint_max`."""

    def __init__(
        self,
        model_dir: str,
        variables: dict[str, tf.Variable],
        keep_checkpoint_max: int | None,
        keep_checkpoint_every_n_hours: float | None,
        basename: str = CHECKPOINT_BASENAME,
    ) -> None:
        self.model_dir = model_dir
        self.basename = basename
        with quiet_tf_warning("Saver is deprecated"):
            self._saver = tf.compat.v1.train.Saver(
                var_list={name: _saved_part(v) for name, v in variables.items()},
                max_to_keep=keep_checkpoint_max,  # None or 0 keeps every checkpoint
                keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours or 10000.0,
                sharded=False,
                save_relative_paths=True,
            )
        state = tf.train.get_checkpoint_state(model_dir)
        if state is not None:
            with quiet_tf_warning("get_checkpoint_mtimes"):
                self._saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))

    def save(self, step: int) -> str:
        prefix = os.path.join(self.model_dir, self.basename)
        logger.info("Saving checkpoints for %d into %s.", step, prefix)
        with quiet_tf_warning("remove_checkpoint"):
            return self._saver.save(None, prefix, global_step=step, write_meta_graph=False)
