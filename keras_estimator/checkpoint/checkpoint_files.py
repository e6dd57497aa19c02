"""TF1-named checkpoints in model_dir: the tf.estimator layout, read and written eagerly.

`model_dir/checkpoint` plus `model.ckpt-N.index` / `.data-*`, with variable names such as
`dense/kernel`, `dense/kernel/Adam`, `beta1_power` and `global_step`, so that
`tf.train.list_variables`, warm starts and checkpoints written by tf.estimator 2.15 work.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import stat
import time
import uuid
from typing import Any

import tensorflow as tf
from google.protobuf import text_format

from keras_estimator.checkpoint.graph_files import GRAPH_FILE, write_atomically
from keras_estimator.seam import internals

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
    behaviour) and evaluation would score fresh weights. A state file that does not parse
    (truncated, binary) gives the newest complete checkpoint in model_dir, with a warning:
    tf.estimator ignored such a file and started over, overwriting the checkpoints there.
    """
    if not model_dir or not tf.io.gfile.isdir(model_dir):
        return None
    named = None
    for _ in range(_STATE_READS):
        state, damage = _load_state(model_dir)
        if damage is not None:
            return _recovered_latest(model_dir, damage)
        if state is None:
            return None  # no state file: no checkpoint (as TF; deleting it starts over)
        newest = state.model_checkpoint_path  # joined to model_dir when relative, as TF does
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
    state, damage = _load_state(directory)
    if damage is not None:
        return _recovered_latest(directory, damage)
    if state is None:
        return None
    prefix = state.model_checkpoint_path
    if _exists(prefix) or (tf.io.gfile.exists(prefix) and not tf.io.gfile.isdir(prefix)):
        return prefix  # a V2 checkpoint (.index), or a V1 one (the prefix itself)
    return None


@functools.cache  # one class per TensorFlow error class: `except` clauses match them
def _read_error(tf_error: type) -> type:
    """`tf_error` and ValueError at once (tf.estimator raised TF's; we always raised ValueError)."""

    def __init__(self: Any, message: str, code: int) -> None:  # noqa: N807
        tf.errors.OpError.__init__(self, None, None, message, code)

    def __reduce__(self: Any) -> tuple:  # noqa: N807  (picklable, e.g. for multiprocessing)
        return _rebuild_read_error, (tf_error, self.message, self.error_code)

    return type(
        "CheckpointReadError",
        (tf_error, ValueError),
        {"__init__": __init__, "__reduce__": __reduce__, "__module__": __name__},
    )


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
            # Typed `type`: mypy takes a `type[X]` for X's instances against Hashable.
            error_class: type = type(exc)
            raise _read_error(error_class)(message, exc.error_code) from exc
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
        # graph.pbtxt, written with a call's first save (write_atomically's temporary).
        or (step == "[0-9]+" and name.startswith(GRAPH_FILE + ".tempstate"))
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


_CheckpointState = type(tf.compat.v1.train.generate_checkpoint_state_proto("dir", "ckpt"))
_damage_reported: set[tuple[str, str]] = set()


def _load_state(directory: str) -> tuple[Any, str | None]:
    """`(state, None)`, `(None, None)` without a state file, or `(None, what is wrong)`.

    As `tf.train.get_checkpoint_state` (relative paths joined to `directory`), but a file
    that does not parse or decode is reported, not ignored: TF logs "Checkpoint ignored"
    and returns None (or raises a UnicodeDecodeError naming no file), and a trainer then
    starts over from step 0, overwriting the checkpoints there.
    """
    path = os.path.join(directory, _STATE_FILE)
    try:
        if not tf.io.gfile.exists(path):
            return None, None
        with tf.io.gfile.GFile(path, "rb") as f:
            content = f.read()
    except tf.errors.NotFoundError:
        return None, None  # replaced or removed meanwhile
    except (OSError, tf.errors.OpError) as exc:
        return None, f"it could not be read ({type(exc).__name__}: {exc})"
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"it is not text ({exc})"
    state = _CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError as exc:
        return None, f"it does not parse ({exc}; truncated?)"
    if not state.model_checkpoint_path:
        return None, "it names no model_checkpoint_path (empty or truncated)"
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(directory, state.model_checkpoint_path)
    for i, entry in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(entry):
            state.all_model_checkpoint_paths[i] = os.path.join(directory, entry)
    return state, None


def _read_state(directory: str) -> Any:
    """The parsed state file, or None (none there, or damaged: see `_load_state`)."""
    return _load_state(directory)[0]


def complete_checkpoints(directory: str, basename: str = CHECKPOINT_BASENAME) -> list[str]:
    """The prefixes of the complete `<basename>-<step>` checkpoints in `directory`, by step."""
    bundles = _bundles(_listdir(directory), basename)
    complete = [p for p, files in bundles.items() if _complete(directory, p, files)]
    return [os.path.join(directory, p) for p in sorted(complete, key=_step)]


def _recovered_latest(directory: str, damage: str) -> str | None:
    """The newest complete checkpoint in `directory`, whose state file is damaged.

    Logged once per damaged content: nothing is lost, and the next save rewrites the file.
    """
    complete = complete_checkpoints(directory)
    newest = complete[-1] if complete else None
    key = (os.path.join(directory, _STATE_FILE), damage)
    if key not in _damage_reported:
        _damage_reported.add(key)
        logger.warning(
            "The checkpoint state file %s is damaged: %s. Rebuilt the state from the complete "
            "checkpoints in the directory: %s. Using the newest, %s; the next checkpoint "
            "save rewrites the state file. Received: checkpoint state file=%r",
            key[0], damage, [os.path.basename(p) for p in complete] or "none", newest, key[0],
        )  # fmt: skip
    return newest


class _BundleSaver:
    """Writes `<prefix>.index` / `.data-00000-of-00001` as `tf.compat.v1.train.Saver(
    var_list, sharded=False).save(...)` did (the same bytes), without Saver rebuilding its
    SaveableObjects and ops at every eager save."""

    def __init__(self, var_list: dict) -> None:
        self._saveables = internals.saveable_objects(var_list)

    def save(self, prefix: str) -> None:
        names, slices, tensors = [], [], []
        for saveable in self._saveables:
            for spec in saveable.specs:
                tensor = spec.tensor  # read now; None: an uninitialized variable
                if tensor is None:
                    raise ValueError(
                        f"Cannot save the checkpoint {prefix}: the variable {spec.name!r} "
                        "holds no value yet (uninitialized). Expected every checkpointed "
                        "variable initialized. Fix: give it an initializer. Received: "
                        f"variable={spec.name!r}"
                    )
                names.append(spec.name)
                slices.append(spec.slice_spec)
                tensors.append(tensor)
        with tf.device("/cpu:0"):
            tf.raw_ops.SaveV2(
                prefix=prefix, tensor_names=names, shape_and_slices=slices, tensors=tensors
            )


class _ObjectCheckpointBundle:
    """Writes `<prefix>.index` / `.data-*` of a `tf.train.Checkpoint`: object-based keys
    (`var_list/var/.ATTRIBUTES/VARIABLE_VALUE`) and its object graph, what 2.15 saved when
    a Scaffold's saver was one."""

    def __init__(self, checkpoint: tf.train.Checkpoint) -> None:
        self._checkpoint = checkpoint

    def save(self, prefix: str) -> None:
        self._checkpoint.write(prefix)


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
        object_checkpoint: tf.train.Checkpoint | None = None,
    ) -> None:
        self.model_dir = model_dir
        self.basename = basename
        # It writes the .index / .data bundle only; the state file and retention are ours.
        self._bundle: Any = (
            _ObjectCheckpointBundle(object_checkpoint)
            if object_checkpoint is not None
            else _BundleSaver({name: _saved_part(v) for name, v in variables.items()})
        )
        self._keep_max = keep_checkpoint_max or 0  # None or 0 keeps every checkpoint
        self._keep_every_secs = (keep_checkpoint_every_n_hours or 10000.0) * 3600
        # RunConfig's default, 10000 hours, keeps none in practice.
        self._keeps_hourly = (keep_checkpoint_every_n_hours or 10000.0) < 10000.0
        self._next_kept_time = time.time() + self._keep_every_secs
        self._due: list[tuple[str, float]] = []  # past keep_checkpoint_max: to delete
        # `() -> bytes`: the MetaGraphDef each save also writes as `<prefix>-<step>.meta`
        # (RunConfig.checkpoint_save_graph_def); None writes none.
        self.meta_graph: Any = None
        state, damage = _load_state(model_dir)
        self._last = self._recover(list(state.all_model_checkpoint_paths)) if state else []
        self._remove_leftovers(state)
        self._adopt_unlisted(state, damage)

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

    def _adopt_unlisted(self, state: Any, damage: str | None) -> None:
        """Complete checkpoints the state file does not name join the pruning bookkeeping.

        Those newer than the newest it names (a save whose state update was cut short), or,
        when the state file is damaged, every complete one (with keep_checkpoint_every_n_hours
        in use, the newest keep_checkpoint_max: older ones may be kept by it). Older unlisted
        ones of a state file that parses stay untouched: keep_checkpoint_every_n_hours keeps
        checkpoints on disk that the state file no longer names. Past keep_checkpoint_max,
        the oldest are deleted with the next save.
        """
        if state is None and damage is None:
            return  # no state file: nothing was ever recorded here
        known = {os.path.basename(p) for p, _ in self._last}
        newest = max(map(_step, self._listed(state)), default=-1)
        if damage is None and newest < 0:
            return  # it names checkpoints elsewhere only: those of this directory are not its
        recovered = len(self._last)  # Saver's rule: the list keeps its recovered length
        complete = complete_checkpoints(self.model_dir, self.basename)
        if damage is not None and self._keep_max and self._keeps_hourly:
            complete = complete[-self._keep_max :]
        adopted = [
            p
            for p in complete
            if os.path.basename(p) not in known and (damage is not None or _step(p) > newest)
        ]
        self._last += self._recover(adopted)
        while self._keep_max and len(self._last) > max(self._keep_max, recovered):
            self._due.append(self._last.pop(0))
        if adopted and damage is None:
            logger.info(
                "%s: complete checkpoint(s) %s are newer than the newest the checkpoint state "
                "file names (a save whose state update was cut short); keep_checkpoint_max "
                "counts them.",
                self.model_dir, [os.path.basename(p) for p in adopted],
            )  # fmt: skip

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
        """Deletes the checkpoints past keep_checkpoint_max (Saver's rule: one a save, more
        when the state file was rebuilt from the directory's checkpoints)."""
        while self._due:
            self._prune_one(*self._due.pop(0))

    def _prune_one(self, path: str, saved_at: float) -> None:
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
        try:
            return latest_checkpoint(self.model_dir)
        except BrokenCheckpointStateError:
            return None

    def save(self, step: int) -> str:
        prefix = os.path.join(self.model_dir, self.basename)
        logger.info("Saving checkpoints for %d into %s.", step, prefix)
        previous = self._previous()
        last, due = list(self._last), []
        try:
            path = f"{prefix}-{step}"
            self._bundle.save(path)
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
            cause = (
                "the directory no longer exists (deleted while training?)"
                if not tf.io.gfile.isdir(self.model_dir)
                else f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
            )
            raise CheckpointWriteError(
                f"Could not write the checkpoint for step {step} to {self.model_dir!r}: "
                f"{cause}. {kept}Fix the cause (disk space, permissions, quota, the "
                "directory) and call train() again: it resumes from the latest complete "
                f"checkpoint. Received: model_dir={self.model_dir!r}"
            ) from exc
        self._last = last
        self._due = [entry for entry in self._due if entry[0] != path] + due  # never the new one
        self._prune()
        return path
