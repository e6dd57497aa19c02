"""The `keras_estimator` logger follows TensorFlow's, as tf.estimator's log lines did.

tf.estimator logged through the `tensorflow` logger, so `tf.compat.v1.logging.set_verbosity
(tf.compat.v1.logging.INFO)` is how legacy scripts ask for "loss = ..., step = ..." lines.
Making `tensorflow` the parent of the `keras_estimator` logger keeps our own logger name
(configure it directly to override) while its records reach TensorFlow's handler and level.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

LOGGER_NAME = "keras_estimator"


def follow_tensorflow_logger() -> None:
    logger = logging.getLogger(LOGGER_NAME)
    if "ipykernel" in sys.modules and logger.level == logging.NOTSET:
        # TensorFlow's logger is at INFO in a Jupyter kernel; our per-step INFO lines would
        # crowd the progress bar, which already shows the loss. `notice()` lines still show;
        # `logging.getLogger("keras_estimator").setLevel("INFO")` brings the rest back.
        logger.setLevel(logging.WARNING)
    tensorflow_logger = logging.getLogger("tensorflow")
    if logger.parent is not tensorflow_logger:
        logger.parent = tensorflow_logger
        # Levels are cached per logger; a new parent changes the effective level.
        # setLevel (here to the level it has) clears those caches.
        logger.setLevel(logger.level)


@contextlib.contextmanager
def quiet_tf_warning(text: str) -> Iterator[None]:
    """Hides one known TensorFlow warning (containing `text`) for the block."""

    def keep(record: logging.LogRecord) -> bool:
        return text not in record.getMessage()

    tf_logger = logging.getLogger("tensorflow")
    tf_logger.addFilter(keep)
    try:
        yield
    finally:
        tf_logger.removeFilter(keep)


def quiet_tf_deprecations() -> contextlib.AbstractContextManager:
    """Hides TF's deprecation notes for the TF1 entry points keras_estimator calls on
    purpose (feature columns); the user's own calls still show theirs."""
    return quiet_tf_warning("is deprecated and will be removed")


class _PrintedThroughRoot(logging.Filter):
    """On TensorFlow's own stderr handler: drops keras_estimator's records when a handler of
    the root logger prints them too (absl's, installed by `tf.app.run` / `absl.app.run`; the
    CLI's `basicConfig`), so each line prints once. TensorFlow adds its handler on import only
    when the root logger has none; a handler added to the root later printed every line a
    second time."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(LOGGER_NAME) or not logging.getLogger("tensorflow").propagate:
            return True
        return not any(handler.level <= record.levelno for handler in logging.getLogger().handlers)


_printed_through_root = _PrintedThroughRoot()


def print_each_record_once() -> None:
    """For the command line (`run`, `demo`): keras_estimator's lines print once when both
    TensorFlow's handler and a root handler would print them (see _PrintedThroughRoot).
    Leaves TensorFlow's own records as they are (2.15 printed those twice under absl)."""
    for handler in logging.getLogger("tensorflow").handlers:
        if _printed_through_root not in handler.filters:
            handler.addFilter(_printed_through_root)


def notice(logger: logging.Logger, message: str, *args: object) -> None:
    """A line the user should see when re-running notebook cells (WARNING in a Jupyter
    kernel, where INFO is hidden by default; INFO elsewhere, as tf.estimator logged it)."""
    level = logging.WARNING if "ipykernel" in sys.modules else logging.INFO
    logger.log(level, message, *args)


follow_tensorflow_logger()  # on import: every room that logs imports this module
