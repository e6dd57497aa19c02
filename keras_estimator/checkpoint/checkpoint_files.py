"""TF1-named checkpoints in model_dir: the tf.estimator layout, read and written eagerly.

`model_dir/checkpoint` plus `model.ckpt-N.index` / `.data-*`, with variable names such as
`dense/kernel`, `dense/kernel/Adam`, `beta1_power` and `global_step`, so that
`tf.train.list_variables`, warm starts and checkpoints written by tf.estimator 2.15 work.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
import uuid
from typing import Any

import tensorflow as tf
from google.protobuf import text_format

from keras_estimator.checkpoint.graph_files import write_atomically
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


def listed_checkpoint(directory: str) -> str | None:
    """The checkpoint `directory`'s state file names if its files exist, else None.

    As `tf.train.latest_checkpoint`, but the path is a name, never a glob pattern (which
    a directory such as `run[1]` would be: it matched `run1`'s files).
    """
    state = _read_state(directory)
    if state is None or not state.model_checkpoint_path:
        return None
    prefix = state.model_checkpoint_path
    if _exists(prefix) or (tf.io.gfile.exists(prefix) and not tf.io.gfile.isdir(prefix)):
        return prefix  # a V2 checkpoint (.index), or a V1 one (the prefix itself)
    return None


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
            # A Keras 3 cell's dropout seed (tf.estimator 2.15's Keras 2 cells had none)
            # keeps its initial value when a 2.15 checkpoint lacks it.
            if not name.endswith("/seed_generator_state"):
                self.missing.append(name)
            return
        have = tuple(self._shapes[name])
        # A variable of unknown shape (KMeans' `clusters`) takes the checkpoint's.
        want = tuple(variable.shape.as_list()) if variable.shape.rank is not None else have
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


# -- model_dir safety: what startup cleanup and pruning may delete ---------------------------
# Only regular files directly in the checkpoint directory, named as keras_estimator (through
# TensorFlow's bundle writer) names them, are ever deleted: never a link's target, never a
# directory tree, never a path a `checkpoint` state file points at elsewhere, and never
# through a glob (a model_dir such as `run[1]` is a name, not a pattern).

_STATE_FILE = "checkpoint"
_BUNDLE_SUFFIX = r"(\.index|\.data-[0-9]{5}-of-[0-9]{5}|\.meta)"
_SUFFIX_ORDER = {".index": 0, ".meta": 2}  # the data files (1) between, as TensorFlow deleted


def _is_local(path: str) -> bool:
    return "://" not in path


def _listdir(directory: str) -> list[str]:
    try:
        if _is_local(directory):
            return os.listdir(directory)
        return [name.rstrip("/") for name in tf.io.gfile.listdir(directory)]
    except (OSError, tf.errors.OpError):
        return []


def _kind(directory: str, name: str) -> str | None:
    """What `directory/name` is: file, link, directory or other; None when it is gone."""
    path = os.path.join(directory, name)
    try:
        if not _is_local(directory):
            return "directory" if tf.io.gfile.isdir(path) else "file"
        mode = os.lstat(path).st_mode
    except (OSError, tf.errors.OpError):
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "directory" if stat.S_ISDIR(mode) else "other"


def _remove_file(directory: str, name: str) -> bool:
    """Removes `directory/name` if it is a regular file; True when it was removed.

    A link (to a file or a directory) or a directory of that name is left alone with a
    warning: nothing here follows a link or deletes a tree.
    """
    path = os.path.join(directory, name)
    kind = _kind(directory, name)
    if kind is None:
        return False
    if kind != "file":
        logger.warning(
            "Leaving %s alone: it is named like a checkpoint file keras_estimator writes, but "
            "it is a %s, and only regular files are removed from a model_dir. Remove it "
            "yourself if it is not needed.",
            path,
            kind if kind != "other" else "special file",
        )
        return False
    try:
        if _is_local(directory):
            os.remove(path)  # unlink: a link put there meanwhile goes, never its target
        else:
            tf.io.gfile.remove(path)
    except (FileNotFoundError, tf.errors.NotFoundError):
        return False
    except (OSError, tf.errors.OpError) as exc:
        logger.warning("Could not remove %s: %s", path, exc)
        return False
    return True


def _same_directory(a: str, b: str) -> bool:
    if _is_local(a) and _is_local(b):
        return os.path.realpath(a) == os.path.realpath(b)
    return os.path.normpath(a) == os.path.normpath(b)


def _step(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def _is_temporary(name: str, basename: str, step: str = "[0-9]+") -> bool:
    """A file of a checkpoint (or state file) write cut short, as TensorFlow names them."""
    own = re.escape(basename) + "-" + step
    return bool(
        re.fullmatch(own + r"(\.index|\.data-[0-9]{5}-of-[0-9]{5}|\.meta)?\.tempstate[0-9]*", name)
        or re.fullmatch(own + r"_temp.*", name, flags=re.DOTALL)
        or (step == "[0-9]+" and name.startswith(_STATE_FILE + ".tmp"))
    )


def _bundles(names: list[str], basename: str) -> dict[str, list[str]]:
    """`{"<basename>-<step>": its .index / .data-* / .meta names}`, in deletion order."""
    pattern = re.compile(re.escape(basename) + "-[0-9]+" + _BUNDLE_SUFFIX)
    found: dict[str, list[str]] = {}
    for name in names:
        match = pattern.fullmatch(name)
        if match:
            found.setdefault(name[: match.start(1)], []).append(name)
    for files in found.values():
        files.sort(key=lambda n: (_SUFFIX_ORDER.get(os.path.splitext(n)[1], 1), n))
    return found


def _complete(directory: str, prefix: str, files: list[str]) -> bool:
    """The `.index` and every `.data` shard of one of its shard counts are there."""
    present = {f[len(prefix) :] for f in files if _kind(directory, f) not in (None, "directory")}
    shards = set()
    for suffix in present:
        match = re.fullmatch(r"\.data-([0-9]{5})-of-([0-9]{5})", suffix)
        if match:
            shards.add((int(match[1]), int(match[2])))
    return ".index" in present and any(
        all((i, count) in shards for i in range(count)) for count in {c for _, c in shards}
    )


def _read_state(directory: str) -> Any:
    try:
        return tf.train.get_checkpoint_state(directory)
    except (tf.errors.OpError, OSError, ValueError):
        return None


class CheckpointWriter:
    """Saves `model.ckpt-N` with TF1 names and keeps the newest `keep_checkpoint_max`.

    The `checkpoint` state file and the retention (`keep_checkpoint_max`,
    `keep_checkpoint_every_n_hours`) are `tf.compat.v1.train.Saver`'s, but what pruning and
    cleanup delete is limited to regular files named `<basename>-<step>.index`, `.data-*`,
    `.meta` (and the temporary files of their writes) directly in this directory: a state
    file listing paths elsewhere, links, directories and glob characters in model_dir
    never make it delete anything else.
    """

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
            # It writes the .index / .data bundle only; the state file and retention are ours.
            self._saver = tf.compat.v1.train.Saver(
                var_list={name: _saved_part(v) for name, v in variables.items()}, sharded=False
            )
        self._keep_max = keep_checkpoint_max or 0  # None or 0 keeps every checkpoint
        self._keep_every_secs = (keep_checkpoint_every_n_hours or 10000.0) * 3600
        self._next_kept_time = time.time() + self._keep_every_secs
        self._due: list[tuple[str, float]] = []  # past keep_checkpoint_max: to delete
        # `() -> bytes`: the MetaGraphDef each save also writes as `<prefix>-<step>.meta`
        # (RunConfig.checkpoint_save_graph_def); None writes none.
        self.meta_graph: Any = None
        state = _read_state(model_dir)
        self._last = self._recover(list(state.all_model_checkpoint_paths)) if state else []
        self._remove_leftovers(state)

    def _own(self, path: str) -> str | None:
        """`<basename>-<step>` when `path` names such a checkpoint directly in model_dir."""
        head, name = os.path.split(path)
        if re.fullmatch(re.escape(self.basename) + "-[0-9]+", name) is None:
            return None
        return name if _same_directory(head or os.curdir, self.model_dir) else None

    def _recover(self, paths: list[str]) -> list[tuple[str, float]]:
        """The listed checkpoints that still exist, with their times (Saver's recovery)."""
        recovered = []
        for path in paths:
            name = self._own(path)
            try:
                if name is not None:
                    path = os.path.join(self.model_dir, name)
                    index = path + ".index"
                    if _is_local(index):
                        mtime = os.lstat(index).st_mtime
                    else:
                        mtime = tf.io.gfile.stat(index).mtime_nsec / 1e9
                else:
                    mtime = tf.io.gfile.stat(path + ".index").mtime_nsec / 1e9
                    logger.warning(
                        "The checkpoint state file in %s lists %r, which is not a checkpoint "
                        "of this directory (%s-<step> in it): keep_checkpoint_max will not "
                        "delete its files. Received: all_model_checkpoint_paths entry=%r",
                        self.model_dir, path, self.basename, path,
                    )  # fmt: skip
            except (OSError, tf.errors.OpError):
                continue  # gone: another process may have deleted it meanwhile
            recovered.append((path, mtime))
        return recovered

    def _listed(self, state: Any) -> set[str]:
        if state is None:
            return set()
        paths = [*state.all_model_checkpoint_paths, state.model_checkpoint_path]
        return {name for name in map(self._own, filter(None, paths)) if name}

    def _remove_leftovers(self, state: Any) -> None:
        """A save killed mid-write (kill -9, preemption) leaves temporary files, and a
        checkpoint the state file never named; the one writer of this model_dir (the
        chief) removes them when it starts."""
        names = _listdir(self.model_dir)
        for name in names:
            if _is_temporary(name, self.basename):
                _remove_file(self.model_dir, name)
        listed = self._listed(state)
        newest = max(map(_step, listed), default=-1)
        for prefix, files in _bundles(names, self.basename).items():
            if prefix in listed or _step(prefix) <= newest:
                continue
            if _complete(self.model_dir, prefix, files):
                continue  # a whole checkpoint: only its state file update was cut short
            logger.warning(
                "Removing %s in %s: the files of a checkpoint whose write was cut short "
                "(the checkpoint state file never named it).",
                files, self.model_dir,
            )  # fmt: skip
            for name in files:
                _remove_file(self.model_dir, name)

    def _remove_failed_save(self, prefix: str) -> None:
        """Removes what a failed save of `prefix` (`<basename>-<step>`) wrote."""
        names = _listdir(self.model_dir)
        for name in names:
            if _is_temporary(name, self.basename, step=re.escape(prefix.rsplit("-", 1)[1])):
                _remove_file(self.model_dir, name)
        if prefix not in self._listed(_read_state(self.model_dir)):
            for name in _bundles(names, self.basename).get(prefix, []):
                _remove_file(self.model_dir, name)

    def _write_state(self, path: str, paths: list[str]) -> None:
        """The `checkpoint` state file, as Saver wrote it (relative paths), atomically."""

        def relative(p: str) -> str:
            return os.path.relpath(p, self.model_dir) if os.path.isabs(p) else p

        proto = tf.compat.v1.train.generate_checkpoint_state_proto(
            self.model_dir, relative(path), all_model_checkpoint_paths=list(map(relative, paths))
        )
        target = os.path.join(self.model_dir, _STATE_FILE)
        temp = f"{target}.tmp{uuid.uuid4().hex}"
        try:
            with tf.io.gfile.GFile(temp, "w") as f:
                f.write(text_format.MessageToString(proto))
            tf.io.gfile.rename(temp, target, overwrite=True)
        except BaseException:
            _remove_file(self.model_dir, os.path.basename(temp))
            raise

    def _prune(self) -> None:
        """Deletes the oldest checkpoint past keep_checkpoint_max (Saver's rule, one a save)."""
        if not self._due:
            return
        path, saved_at = self._due.pop(0)
        if saved_at > self._next_kept_time:  # keep_checkpoint_every_n_hours keeps this one
            self._next_kept_time += self._keep_every_secs
            return
        name = self._own(path)
        if name is None:
            logger.warning(
                "Not deleting checkpoint %r past keep_checkpoint_max: it is not %s-<step> in "
                "%s. Received: all_model_checkpoint_paths entry=%r",
                path, self.basename, self.model_dir, path,
            )  # fmt: skip
            return
        for file in _bundles(_listdir(self.model_dir), self.basename).get(name, []):
            _remove_file(self.model_dir, file)

    def _previous(self) -> str | None:
        state = _read_state(self.model_dir)
        if state is not None and state.model_checkpoint_path:
            if _exists(state.model_checkpoint_path):
                return state.model_checkpoint_path
        return None

    def save(self, step: int) -> str:
        prefix = os.path.join(self.model_dir, self.basename)
        logger.info("Saving checkpoints for %d into %s.", step, prefix)
        previous = self._previous()
        last, due = list(self._last), []
        try:
            path = self._saver.save(
                None, prefix, global_step=step, write_meta_graph=False, write_state=False
            )
            if self.meta_graph is not None:
                write_atomically(path + ".meta", self.meta_graph())
            if self._keep_max:  # Saver's bookkeeping: the newest keep_checkpoint_max listed
                last = [entry for entry in last if entry[0] != path]
                last.append((path, time.time()))
                if len(last) > self._keep_max:
                    due.append(last.pop(0))
            self._write_state(path, [p for p, _ in last])
        except (tf.errors.OpError, OSError) as exc:
            # Remove what the failed save wrote (temporary files, a bundle the state file
            # does not name), so that model_dir only holds complete, listed checkpoints.
            self._remove_failed_save(f"{self.basename}-{step}")
            kept = f"The previous checkpoint, {previous}, is intact. " if previous else ""
            raise CheckpointWriteError(
                f"Could not write the checkpoint for step {step} to {self.model_dir!r}: "
                f"{type(exc).__name__}: {getattr(exc, 'message', exc)}. {kept}Fix the cause "
                "(disk space, permissions, quota) and call train() again: it resumes from the "
                f"latest complete checkpoint. Received: model_dir={self.model_dir!r}"
            ) from exc
        self._last, self._due = last, self._due + due
        self._prune()
        return path
