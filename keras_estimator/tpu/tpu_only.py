"""The error raised by 2.15 TPUEstimator internals that only a TF1 session on a TPU can run.

2.15's TPUEstimator built its TPU program itself: infeed and outfeed queues fed from
threads beside a `tf.compat.v1.Session`, `tpu.split_compile_and_shard`, TPUPartitionedCall
for inference. keras_estimator runs TPUEstimator through `tf.distribute` instead, so those
pieces have nothing to run on; using one raises this error, which says what to use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


def tpu_session_only(name: str, role: str, instead: str) -> NotImplementedError:
    """The NotImplementedError for using `name`, a piece of 2.15's TF1-session TPU program.

    Args:
        name: The 2.15 name that was used, e.g. `"tpu_estimator._train_on_tpu_system"`.
        role: What it was, e.g. `"TPUEstimator's TPU training loop builder"`.
        instead: What to do instead (the fix).

    Returns:
        The error to raise.
    """
    return NotImplementedError(
        f"{name} is {role}, which runs only inside a TF1 session on a TPU (2.15 "
        "TPUEstimator's own TPU program: infeed/outfeed queues fed from threads, "
        "tpu.split_compile_and_shard, TPUPartitionedCall). keras_estimator runs "
        "TPUEstimator through tf.distribute instead (use_tpu=True trains under a "
        "tf.distribute.TPUStrategy; use_tpu=False runs the same model_fn on CPU/GPU), so "
        "this piece has nothing to run on. Expected: a model_fn and input_fn handed to "
        f"TPUEstimator, which builds the TPU program. Fix: {instead}"
    )


def session_only_function(name: str, role: str, instead: str) -> Callable[..., NoReturn]:
    """A function named after `name` that raises `tpu_session_only(...)` when called.

    Example:
        >>> call_computation = session_only_function(
        ...     "tpu_estimator.call_computation", "TPU inference through TPUPartitionedCall",
        ...     "export with TPUEstimator.export_saved_model")
    """

    def session_only(*args: Any, **kwargs: Any) -> NoReturn:
        raise tpu_session_only(name, role, instead)

    session_only.__name__ = session_only.__qualname__ = name.rpartition(".")[2]
    session_only.__doc__ = (
        f"Not provided: {role}, which runs only inside a TF1 session on a TPU. Calling it "
        f"raises NotImplementedError. Instead: {instead}"
    )
    return session_only
