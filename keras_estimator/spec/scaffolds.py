"""What keras_estimator makes of an EstimatorSpec's `tf.compat.v1.train.Scaffold`.

A Scaffold configured a TF1 session. Without a session its parts are interpreted:

* `saver`: a `tf.train.Checkpoint` writes and restores the checkpoints (object-based, as
  2.15 saved with one); a `tf.compat.v1.train.Saver`'s retention (`max_to_keep`,
  `keep_checkpoint_every_n_hours`) is used for the checkpoints training writes; it always
  saves every variable, with TF1 names, into model_dir. When a checkpoint is restored, the
  Saver's `restore(session, path)` runs too (its var_list, a renaming dict included,
  decides what it reads), as 2.15's session creator restored with it.
* `init_op`, `local_init_op`, `ready_op`, `ready_for_local_init_op`, `summary_op`: not
  run. Variables start from their initializers, then init_from_checkpoint in the
  model_fn, then `warm_start_from`, as TF1's default init_op would have left them.
* `init_fn(scaffold, session)`: called once when model_dir has no checkpoint, after
  init_from_checkpoint and the warm start, on a session-like object
  (`runtime.scaffold_session`: `saver.restore(session, path)`, `session.run(assign_op)`).
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")
_NOT_RUN = ("init_op", "local_init_op", "ready_op", "ready_for_local_init_op")


def check_scaffold(scaffold: Any) -> None:
    """Warns (per trace) for the Scaffold parts that are not run."""
    if scaffold is None:
        return
    given = [name for name in _NOT_RUN if getattr(scaffold, name, None) is not None]
    if given:
        logger.warning(
            "EstimatorSpec.scaffold %s: not run by keras_estimator; variables start from "
            "their initializers (then init_from_checkpoint, then warm_start_from).",
            ", ".join(given),
        )


def scaffold_saver(scaffold: Any) -> Any:
    """The Scaffold's `tf.compat.v1.train.Saver`, or its `tf.train.Checkpoint` (2.15 saved
    and restored object-based checkpoints with one: `var_list/var/.ATTRIBUTES/...` keys),
    else None."""
    saver = getattr(scaffold, "saver", None)
    return saver if isinstance(saver, tf.compat.v1.train.Saver | tf.train.Checkpoint) else None
