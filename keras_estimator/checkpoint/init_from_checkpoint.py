"""`tf.compat.v1.train.init_from_checkpoint` inside a model_fn, applied once.

In TF1 it replaced the variables' initializers, so the checkpoint was read once, when the
session initialised them. Inside a traced Keras step those restore ops would become part
of the step and re-load the checkpoint on every step. So while a model_fn is traced, TF's
own map resolution runs unchanged (scope maps, one-to-one maps, its error messages) but
the final "set this variable's initializer" is recorded instead; the Estimator assigns
the recorded values eagerly, once, when it starts from fresh variables (no checkpoint in
model_dir), exactly when TF1 would have run the initializers.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.seam.internals import checkpoint_initializers_recorded

logger = logging.getLogger("keras_estimator")


def recording_checkpoint_initializers(records: list) -> contextlib.AbstractContextManager:
    """Appends `(variable, checkpoint file, tensor name)` for each init_from_checkpoint."""

    def record(variable: Any, ckpt_file: Any, tensor_name: str, slice_spec: str) -> None:
        if slice_spec:
            raise NotImplementedError(
                f"init_from_checkpoint into a partitioned variable ({variable.name}) is not "
                "supported by keras_estimator. Expected unpartitioned variables. Fix: create "
                "them without a partitioner. "
                f"Received: variable={variable.name!r}, slice_spec={slice_spec!r}"
            )
        records.append((variable, ckpt_file, tensor_name))

    return checkpoint_initializers_recorded(record)


def apply_checkpoint_initializers(records: list) -> int:
    """Assigns the recorded checkpoint values eagerly; returns how many variables."""
    readers: dict[str, Any] = {}
    for variable, ckpt_file, tensor_name in records:
        path = ckpt_file.decode() if isinstance(ckpt_file, bytes) else str(ckpt_file)
        if path not in readers:
            readers[path] = ckpt_lib.open_reader(path)
        variable.assign(readers[path].get_tensor(tensor_name))
        logger.info(
            "Initialize variable %s from checkpoint %s with %s", variable.name, path, tensor_name
        )
    return len(records)
