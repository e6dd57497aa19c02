"""What keras_estimator makes of an EstimatorSpec's `tf.compat.v1.train.Scaffold`.

A Scaffold configured a TF1 session. Without a session its parts are interpreted:

* `saver`: a `tf.compat.v1.train.Saver`'s retention (`max_to_keep`,
  `keep_checkpoint_every_n_hours`) is used for the checkpoints training writes; it always
  saves every variable, with TF1 names, into model_dir.
* `init_op`, `local_init_op`, `ready_op`, `ready_for_local_init_op`, `summary_op`: not
  run. Variables start from their initializers, then init_from_checkpoint in the
  model_fn, then `warm_start_from`, as TF1's default init_op would have left them.
* `init_fn(scaffold, session)`: a session callback (typically `saver.restore(session,
  ...)`), which cannot run without a session: a clear NotImplementedError, pointing at
  init_from_checkpoint and warm_start_from, which do the same.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")
_NOT_RUN = ("init_op", "local_init_op", "ready_op", "ready_for_local_init_op")


def check_scaffold(scaffold: Any) -> None:
    """Raises for Scaffold parts that cannot be honoured; warns (per trace) for those not run."""
    if scaffold is None:
        return
    if getattr(scaffold, "init_fn", None) is not None:
        raise NotImplementedError(
            "EstimatorSpec.scaffold has an init_fn, a callback on a TF1 session, which "
            "keras_estimator does not have. Expected pretrained weights to come from "
            "tf.compat.v1.train.init_from_checkpoint(ckpt, {'scope/': 'scope/'}) inside the "
            "model_fn, or from Estimator(warm_start_from=...); both are applied once, when "
            "model_dir has no checkpoint yet, as init_fn was. Fix: drop init_fn and use one of "
            "those. Received: scaffold.init_fn="
            f"{getattr(scaffold.init_fn, '__name__', type(scaffold.init_fn).__name__)}"
        )
    given = [name for name in _NOT_RUN if getattr(scaffold, name, None) is not None]
    if given:
        logger.warning(
            "EstimatorSpec.scaffold %s: not run by keras_estimator; variables start from "
            "their initializers (then init_from_checkpoint, then warm_start_from).",
            ", ".join(given),
        )


def scaffold_saver(scaffold: Any) -> tf.compat.v1.train.Saver | None:
    saver = getattr(scaffold, "saver", None)
    return saver if isinstance(saver, tf.compat.v1.train.Saver) else None
