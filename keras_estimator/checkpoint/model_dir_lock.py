"""One trainer per model_dir: the advisory lock file `train.lock` the chief holds in train().

The lock is a small JSON file naming its holder (host, PID, when it started, the command).
It is created complete and at once (written to a temporary file, then hard-linked to
`train.lock`, which fails when the name exists), refreshed by a heartbeat (its mtime, every
`stale_after / 5` seconds, at most 60), and removed when train() ends, also on an exception,
Ctrl-C or SIGTERM. A trainer that finds the lock held raises `ModelDirLockedError` naming
the holder, unless the holder is gone:

- on this host (same host name, boot and PID namespace): its PID is not running (or runs a
  process started later: the PID was reused), so a kill -9 or a crash is taken over at once;
- on another host: its heartbeat is older than `KERAS_ESTIMATOR_LOCK_STALE_SECS` (600 s).

Readers (evaluate, predict, export, an evaluator task) never take it; non-chief workers do
not either (only the chief writes model_dir). Inside one process, a second train() into a
model_dir another Estimator (or thread) is training into is refused the same way.

On a network file system the guarantees are weaker. NFS (v3 and later) makes the hard
link atomic, so two trainers never both hold the lock; stale detection across hosts relies
on clocks agreeing to well within the stale time. On object stores (gs://, s3://, hdfs://,
anything read through tf.io.gfile) there is no atomic create-if-absent: the lock is checked,
written and read back, so trainers started within the same second may both get it; the
heartbeat notices a lock taken over and logs an error. On Windows a PID is not probed (the
way to probe would end the process): a lock left there by a crash is deleted by hand.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")

LOCK_NAME = "train.lock"
STALE_SECS_ENV = "KERAS_ESTIMATOR_LOCK_STALE_SECS"
DEFAULT_STALE_SECS = 600.0
_TAKEOVER_ATTEMPTS = 5

# Lock paths this process holds -> the thread training there (one trainer per model_dir).
_held: dict[str, str] = {}
_held_guard = threading.Lock()


class ModelDirLockedError(RuntimeError):
    """Another trainer holds model_dir's lock; `holder` is what its lock file says."""

    def __init__(self, message: str, holder: dict | None = None) -> None:
        super().__init__(message)
        self.holder = holder or {}


class ModelDirLockWriteError(OSError):
    """The lock file could not be written (no space, no permission): train() did not start."""


def stale_after() -> float:
    """Seconds without a heartbeat after which another host's lock is taken over."""
    value = os.environ.get(STALE_SECS_ENV, "")
    try:
        seconds = float(value) if value else DEFAULT_STALE_SECS
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(
            f"{STALE_SECS_ENV} must be a positive number of seconds. Fix: set it to e.g. "
            f"600, or unset it (default {DEFAULT_STALE_SECS:g}). "
            f"Received: {STALE_SECS_ENV}={value!r}"
        )
    return seconds


def _is_local(path: str) -> bool:
    return "://" not in path


def _read_text(path: str) -> str | None:
    try:
        if _is_local(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
        return tf.io.gfile.GFile(path, "r").read()
    except (FileNotFoundError, tf.errors.NotFoundError):
        return None


def _mtime(path: str) -> float | None:
    try:
        if _is_local(path):
            return os.stat(path).st_mtime
        return tf.io.gfile.stat(path).mtime_nsec / 1e9
    except (FileNotFoundError, tf.errors.NotFoundError):
        return None


def _first_line(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.readline().strip() or None
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, Linux), None if unknown."""
    stat = _first_line(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _pid_running(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill would end the process there: assume it runs (delete the file)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return True
    stat = _first_line(f"/proc/{pid}/stat")
    state = stat.rsplit(")", 1)[-1].split()[:1] if stat else []
    return state != ["Z"]  # a zombie has ended (only its parent has not reaped it)


def _this_machine() -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "boot_id": _first_line("/proc/sys/kernel/random/boot_id"),
        "pid_namespace": _pid_namespace(),
    }


def _same_machine(holder: dict) -> bool:
    """Same host name, boot and PID namespace: the holder's PID can be checked from here."""
    here = _this_machine()
    return all(holder.get(key) == value for key, value in here.items())


def _describe(holder: dict) -> str:
    since = holder.get("started", "an unknown time")
    text = f"host {holder.get('host', '?')}, PID {holder.get('pid', '?')}, since {since}"
    if holder.get("command"):
        text += f", command {holder['command']!r}"
    return text


class ModelDirLock:
    """The lock on one model_dir; `acquire()` / `release()`, or use `hold_training_lock`."""

    def __init__(self, model_dir: str) -> None:
        self.model_dir = model_dir
        self.path = os.path.join(model_dir, LOCK_NAME)
        self._key = os.path.realpath(self.path) if _is_local(self.path) else self.path
        self._stale_after = stale_after()
        self._token = uuid.uuid4().hex
        self._record: dict[str, Any] = {}
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._created_dir = False

    # -- acquiring ----------------------------------------------------------------------
    def acquire(self) -> None:
        """Takes the lock, or raises ModelDirLockedError naming the live holder."""
        with _held_guard:
            thread = _held.get(self._key)
            if thread is not None:
                holder = {**(self._read_holder() or {}), "thread": thread}
                raise self._error(
                    holder,
                    f"this process (thread {thread}) is already training into it with another "
                    "Estimator",
                )
            self._created_dir = not tf.io.gfile.exists(self.model_dir)
            tf.io.gfile.makedirs(self.model_dir)
            try:
                self._take()
            except BaseException:
                self._remove_created_dir()
                raise
            _held[self._key] = threading.current_thread().name
        self._heartbeat = threading.Thread(
            target=self._beat, name="keras_estimator-model_dir-lock", daemon=True
        )
        self._heartbeat.start()

    def _take(self) -> None:
        for _ in range(_TAKEOVER_ATTEMPTS):
            if self._create_or_explain():
                break
            holder = self._read_holder()
            if holder is None:
                continue  # released meanwhile
            reason = self._stale_reason(holder)
            if reason is None:
                raise self._error(holder, "another training run holds its lock")
            logger.warning(
                "Taking over the lock %s of a training run that is gone (%s): %s.",
                self.path, _describe(holder), reason,
            )  # fmt: skip
            self._break(holder)
        else:
            raise self._error(
                self._read_holder() or {},
                f"the lock changed hands {_TAKEOVER_ATTEMPTS} times while this run tried "
                "to take it (several trainers are starting at once)",
            )

    def _new_record(self) -> str:
        now = time.time()
        started = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
        self._record = {
            **_this_machine(),
            "pid": os.getpid(),
            "process_start": _process_start(os.getpid()),
            "started": started.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "command": " ".join(sys.argv)[:200],
            "token": self._token,
        }
        return json.dumps(self._record, separators=(",", ":")) + "\n"

    def _create_or_explain(self) -> bool:
        try:
            return self._create()
        except (OSError, tf.errors.OpError) as exc:
            raise ModelDirLockWriteError(
                f"Could not write the lock file {self.path} that keeps a second trainer out "
                f"of model_dir ({exc}); nothing was trained. Expected a writable model_dir "
                "with free space. Fix: check the space, quota and permissions of model_dir. "
                f"Received: model_dir={self.model_dir!r}"
            ) from exc

    def _create(self) -> bool:
        """Creates the lock file whole, or returns False when it exists."""
        content = self._new_record()
        temp = os.path.join(self.model_dir, f"{LOCK_NAME}.{self._token}.tmp")
        if not _is_local(self.path):
            if tf.io.gfile.exists(self.path):
                return False
            with tf.io.gfile.GFile(temp, "w") as f:
                f.write(content)
            try:
                tf.io.gfile.rename(temp, self.path, overwrite=False)
            except tf.errors.AlreadyExistsError:
                tf.io.gfile.remove(temp)
                return False
            return self._still_mine()  # no atomic create: read back who won
        try:
            with open(temp, "w", encoding="utf-8") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            os.link(temp, self.path)  # atomic, also on NFS: fails when the name exists
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            with contextlib.suppress(OSError):
                if os.stat(temp).st_nlink == 2:
                    return True  # NFS: the link was made, the reply was lost
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            return self._create_exclusive(content)  # no hard links on this file system
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)

    def _create_exclusive(self, content: str) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        return True

    def _read_holder(self) -> dict | None:
        """The lock file's record; None when there is none. One being written (created
        without a hard link) is read again for a moment; one unreadable after that is
        described by its mtime only."""
        for _ in range(20):
            text = _read_text(self.path)
            if text is None:
                return None
            with contextlib.suppress(ValueError):
                record = json.loads(text)
                if isinstance(record, dict):
                    return record
            time.sleep(0.05)
        return {"unreadable": True}

    def _stale_reason(self, holder: dict) -> str | None:
        """Why the holder is gone, or None while it may still be training."""
        pid = holder.get("pid")
        if not holder.get("unreadable") and isinstance(pid, int) and _same_machine(holder):
            if pid == os.getpid():
                return "it was written by an earlier process with this PID (a restart)"
            if not _pid_running(pid):
                return f"process {pid} is no longer running"
            start = holder.get("process_start")
            if start is not None and _process_start(pid) not in (None, start):
                return f"PID {pid} now belongs to a process started later"
            return None
        mtime = _mtime(self.path)
        if mtime is None:
            return "it was removed"
        age = time.time() - mtime
        if age > self._stale_after:
            return (
                f"its heartbeat is {age:.0f} s old (over {STALE_SECS_ENV}="
                f"{self._stale_after:g} s) and it is held from another host"
            )
        return None

    def _break(self, holder: dict) -> None:
        """Removes a stale lock file, unless another trainer replaced it meanwhile."""
        if not _is_local(self.path):
            with contextlib.suppress(tf.errors.NotFoundError):
                tf.io.gfile.remove(self.path)
            return
        aside = f"{self.path}.{self._token}.stale"
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # another trainer removed it first
        try:
            moved = json.loads(_read_text(aside) or "null")
        except ValueError:
            moved = None
        if holder.get("token") is not None and (moved or {}).get("token") != holder["token"]:
            with contextlib.suppress(FileExistsError):
                os.link(aside, self.path)  # a live lock taken meanwhile: put it back
        os.unlink(aside)

    def _error(self, holder: dict, what: str) -> ModelDirLockedError:
        if holder.get("unreadable"):
            described = "its lock file is unreadable"
        else:
            described = _describe(holder)
        age = ""
        mtime = _mtime(self.path)
        if mtime is not None and not holder.get("thread"):
            age = f"; last heartbeat {max(time.time() - mtime, 0):.0f} s ago"
        return ModelDirLockedError(
            f"Cannot train into model_dir {self.model_dir}: {what} ({described}{age}). Two "
            "trainers writing one model_dir overwrite each other's checkpoints. Expected "
            "one trainer per model_dir (evaluate, predict and export need no lock). Fix: "
            "wait for that run to end or stop it, or train into another model_dir. If that "
            f"run is gone (e.g. its machine died), delete {self.path}; a lock held from "
            f"another host is also taken over once its heartbeat is older than "
            f"{self._stale_after:g} s ({STALE_SECS_ENV}). Received: model_dir={self.model_dir!r}",
            holder,
        )

    # -- holding ------------------------------------------------------------------------
    def _still_mine(self) -> bool:
        text = _read_text(self.path)
        try:
            return text is not None and json.loads(text).get("token") == self._token
        except (ValueError, AttributeError):
            return False

    def _beat(self) -> None:
        interval = max(min(self._stale_after / 5, 60.0), 0.05)
        while not self._stop.wait(interval):
            try:
                if not self._still_mine():
                    logger.error(
                        "The lock %s on model_dir was removed or taken over by another run "
                        "while this one trains: two trainers may now write model_dir. "
                        "Fix: stop one of them.", self.path,
                    )  # fmt: skip
                    return
                if _is_local(self.path):
                    os.utime(self.path)
                else:
                    with tf.io.gfile.GFile(self.path, "w") as f:
                        f.write(json.dumps(self._record, separators=(",", ":")) + "\n")
            except (OSError, tf.errors.OpError) as exc:  # a network blip: try again later
                logger.warning("Could not refresh the model_dir lock %s: %s", self.path, exc)

    def _remove_created_dir(self) -> None:
        """A call that wrote nothing leaves no directory behind."""
        if self._created_dir and _is_local(self.model_dir):
            with contextlib.suppress(OSError):
                os.rmdir(self.model_dir)  # only when empty

    def release(self) -> None:
        """Removes the lock file if this run still holds it."""
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        try:
            if self._still_mine():
                tf.io.gfile.remove(self.path)
            self._remove_created_dir()
        finally:
            with _held_guard:
                _held.pop(self._key, None)


def lock_held_here(model_dir: str) -> bool:
    """True while a train() of this process holds model_dir's lock."""
    with _held_guard:
        return ModelDirLock(model_dir)._key in _held


@contextlib.contextmanager
def hold_training_lock(model_dir: str, is_chief: bool) -> Iterator[ModelDirLock | None]:
    """Holds model_dir's lock while the block runs (only the chief writes: others hold none).

    Example:
        >>> with hold_training_lock("runs/a", config.is_chief):
        ...     train()
    """
    if not is_chief:
        yield None
        return
    lock = ModelDirLock(model_dir)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()
