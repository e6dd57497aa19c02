"""TF1-named checkpoints in model_dir: the tf.estimator layout, read and written eagerly.

`model_dir/checkpoint` plus `model.ckpt-N.index` / `.data-*`, with variable names such as
`dense/kernel`, `dense/kernel/Adam`, `beta1_power` and `global_step`, so that
`tf.train.list_variables`, warm starts and checkpoints written by tf.estimator 2.15 work.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from typing import Any

import tensorflow as tf

from keras_estimator.utils.log import quiet_tf_warning

logger = logging.getLogger("keras_estimator")

CHECKPOINT_BASENAME = "model.ckpt"


class CheckpointMismatchError(tf.errors.NotFoundError, ValueError):
    """A checkpoint does not hold the variables the model_fn creates.

    A `tf.errors.NotFoundError` as tf.estimator's Saver raised, and a ValueError.
    """

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)


_STATE_READS = 5  # a trainer in another process may rewrite the state while we read it


class CheckpointWriteError(OSError):
    """Saving a checkpoint failed; the previous one is still the latest and complete."""


def _remove(path: str) -> None:
    try:
        if tf.io.gfile.isdir(path):
            tf.io.gfile.rmtree(path)
        else:
            tf.io.gfile.remove(path)
    except (tf.errors.OpError, OSError):
        pass


class BrokenCheckpointStateError(tf.errors.NotFoundError, ValueError):
    """model_dir's `checkpoint` state file names a checkpoint whose files are gone."""

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)


def _exists(prefix: str) -> bool:
    return tf.io.gfile.exists(prefix + ".index")


def latest_checkpoint(model_dir: str) -> str | None:
    """The newest checkpoint prefix in `model_dir`, or None when there is none.

    Raises BrokenCheckpointStateError when the `checkpoint` state file names a checkpoint
    whose files are missing: training would otherwise silently start over (tf.estimator's
    behaviour) and evaluation would score fresh weights.
    """
    if not model_dir or not tf.io.gfile.isdir(model_dir):
        return None
    named = None
    for _ in range(_STATE_READS):
        state = tf.train.get_checkpoint_state(model_dir)
        if state is None or not state.model_checkpoint_path:
            return None
        newest = state.model_checkpoint_path  # TF already joined relative paths to model_dir
        if _exists(newest):
            return newest
        if newest == named:
            break  # the same missing checkpoint twice: the state file is broken
        # Another process may have saved a newer checkpoint and deleted this one since
        # the state was read: read it again.
        named = newest
        time.sleep(0.05)
    complete = [p for p in state.all_model_checkpoint_paths if _exists(p)]
    raise BrokenCheckpointStateError(
        f"The checkpoint state file {os.path.join(model_dir, 'checkpoint')!r} names "
        f"{newest!r}, whose files are missing. "
        + (f"Complete checkpoints it lists: {complete}. " if complete else "")
        + "Fix: pass checkpoint_path= a complete checkpoint to evaluate/predict, or edit "
        "(or delete, to start over) the state file so that it names an existing checkpoint. "
        f"Received: model_checkpoint_path={newest!r}"
    )


_READ_ERRORS: dict[type, type] = {}


def _read_error(tf_error: type) -> type:
    """`tf_error` and ValueError at once (tf.estimator raised TF's; we always raised ValueError)."""
    if tf_error not in _READ_ERRORS:

        def __init__(self: Any, message: str, code: int) -> None:  # noqa: N807
            tf.errors.OpError.__init__(self, None, None, message, code)

        def __reduce__(self: Any) -> tuple:  # noqa: N807  (picklable, e.g. for multiprocessing)
            return _rebuild_read_error, (tf_error, self.message, self.error_code)

        _READ_ERRORS[tf_error] = type(
            "CheckpointReadError",
            (tf_error, ValueError),
            {"__init__": __init__, "__reduce__": __reduce__, "__module__": __name__},
        )
    return _READ_ERRORS[tf_error]


def _rebuild_read_error(tf_error: type, message: str, code: int) -> Exception:
    return _read_error(tf_error)(message, code)


def open_reader(path: str) -> Any:
    try:
        return tf.train.load_checkpoint(path)
    except Exception as exc:  # noqa: BLE001 - TF raises several types for bad files
        message = (
            f"Could not read checkpoint {path!r}: {exc}. Expected a complete checkpoint "
            "(its .index and .data files). Fix: pass checkpoint_path= an older, complete "
            "checkpoint, or remove the broken one from the checkpoint state file. "
            f"Received: checkpoint_path={path!r}"
        )
        if isinstance(exc, tf.errors.OpError):
            raise _read_error(type(exc))(message, exc.error_code) from exc
        raise ValueError(message) from exc


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
        try:
            value = self._reader.get_tensor(name)
        except Exception as exc:  # noqa: BLE001 - a damaged .data file fails in several ways
            raise ValueError(
                f"Could not read variable {name!r} from checkpoint {self.path!r}: "
                f"{type(exc).__name__}: {exc}. Its .data file is damaged or truncated. Fix: "
                "pass checkpoint_path= an older, complete checkpoint, or remove this one from "
                f"the checkpoint state file. Received: checkpoint_path={self.path!r}"
            ) from exc
        variable.assign(value)

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
            f"({'; '.join(lines)}). It was probably written by a different model. Expected "
            "the checkpoint to hold every variable with the same shape and dtype. Fix: use a "
            "new model_dir, or restore the model_fn that wrote this checkpoint. "
            f"Received: checkpoint_path={self.path!r}"
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
        # A save killed mid-write (kill -9, preemption) leaves temporary files nothing else
        # removes; the one writer of this model_dir (the chief) clears them on start.
        prefix = glob.escape(os.path.join(model_dir, basename))
        pattern_dir = glob.escape(model_dir)
        for pattern in (f"{prefix}-*.tempstate*", f"{prefix}-*_temp*",
                        f"{pattern_dir}/checkpoint.tmp*"):  # fmt: skip
            for leftover in tf.io.gfile.glob(pattern):
                _remove(leftover)

    def save(self, step: int) -> str:
        prefix = os.path.join(self.model_dir, self.basename)
        logger.info("Saving checkpoints for %d into %s.", step, prefix)
        previous = tf.train.latest_checkpoint(self.model_dir)
        try:
            with quiet_tf_warning("remove_checkpoint"):
                return self._saver.save(None, prefix, global_step=step, write_meta_graph=False)
        except (tf.errors.OpError, OSError) as exc:
            # TF writes into temporary files and renames them at the end: remove what a
            # failed write left, so that model_dir only holds complete checkpoints.
            escaped = glob.escape(prefix)
            leftovers = tf.io.gfile.glob(f"{escaped}-{step}*_temp*")
            leftovers += tf.io.gfile.glob(f"{escaped}-{step}*.tempstate*")
            for leftover in leftovers:
                _remove(leftover)
            kept = f"The previous checkpoint, {previous}, is intact. " if previous else ""
            raise CheckpointWriteError(
                f"Could not write the checkpoint for step {step} to {self.model_dir!r}: "
                f"{type(exc).__name__}: {getattr(exc, 'message', exc)}. {kept}Fix the cause "
                "(disk space, permissions, quota) and call train() again: it resumes from the "
                f"latest complete checkpoint. Received: model_dir={self.model_dir!r}"
            ) from exc
