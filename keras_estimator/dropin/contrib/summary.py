"""`tf.contrib.summary`: TF1's "v2" summaries, as TPUEstimator host_calls used them, onto
`tf.summary`.

The host_call pattern of BERT-era TPU code (tensorflow/tpu, tensor2tensor, XLNet) runs as
it is:

    with tf.contrib.summary.create_file_writer(model_dir).as_default():
        with tf.contrib.summary.always_record_summaries():
            tf.contrib.summary.scalar("loss", loss[0], step=gs[0])
            return tf.contrib.summary.all_summary_ops()

`step=None` means the global step, as in TF1; `family` prefixes the tag.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

_V1 = tf.compat.v1


def create_file_writer(
    logdir: str,
    max_queue: int | None = None,
    flush_millis: int | None = None,
    filename_suffix: str | None = None,
    name: str | None = None,
) -> Any:
    """`tf.summary.create_file_writer(logdir, ...)`.

    Example:
        >>> writer = create_file_writer(model_dir, max_queue=1000)
    """
    return tf.summary.create_file_writer(logdir, max_queue=max_queue, flush_millis=flush_millis,
                                         filename_suffix=filename_suffix, name=name)  # fmt: skip


create_summary_file_writer = create_file_writer


def always_record_summaries() -> Any:
    """`tf.summary.record_if(True)`."""
    return tf.summary.record_if(True)


def never_record_summaries() -> Any:
    """`tf.summary.record_if(False)`."""
    return tf.summary.record_if(False)


def record_summaries_every_n_global_steps(n: int, global_step: Any = None) -> Any:
    """Records when the global step (or `global_step`) is a multiple of `n`.

    Example:
        >>> with record_summaries_every_n_global_steps(100): scalar("loss", loss)
    """
    step = _V1.train.get_global_step() if global_step is None else global_step
    if step is None:
        raise ValueError(
            "record_summaries_every_n_global_steps needs a global step. Fix: pass "
            "global_step=, or create one (tf.compat.v1.train.get_or_create_global_step()). "
            "Received: global_step=None"
        )
    return tf.summary.record_if(lambda: tf.equal(tf.math.floormod(step, n), 0))


def _tag_and_step(name: str, family: str | None, step: Any) -> tuple[str, Any]:
    if step is None:
        step = _V1.train.get_global_step()
    if step is None:
        raise ValueError(
            f"tf.contrib.summary: summary {name!r} has no step and there is no global step. "
            f"Fix: pass step=, or create a global step. Received: step=None"
        )
    return (f"{family}/{name}" if family else name), tf.cast(step, tf.int64)


def scalar(name: str, tensor: Any, family: str | None = None, step: Any = None) -> Any:
    """`tf.summary.scalar` at `step` (default: the global step).

    Example:
        >>> scalar("loss", loss, step=global_step)
    """
    tag, step = _tag_and_step(name, family, step)
    return tf.summary.scalar(tag, tensor, step=step)


def histogram(name: str, tensor: Any, family: str | None = None, step: Any = None) -> Any:
    """`tf.summary.histogram` at `step` (default: the global step)."""
    tag, step = _tag_and_step(name, family, step)
    return tf.summary.histogram(tag, tensor, step=step)


def image(name: str, tensor: Any, bad_color: Any = None, max_images: int = 3,
          family: str | None = None, step: Any = None) -> Any:  # fmt: skip
    """`tf.summary.image` at `step` (default: the global step); `bad_color` is ignored."""
    del bad_color
    tag, step = _tag_and_step(name, family, step)
    return tf.summary.image(tag, tensor, step=step, max_outputs=max_images)


def audio(name: str, tensor: Any, sample_rate: Any, max_outputs: int,
          family: str | None = None, step: Any = None) -> Any:  # fmt: skip
    """`tf.summary.audio` at `step` (default: the global step)."""
    tag, step = _tag_and_step(name, family, step)
    return tf.summary.audio(tag, tensor, sample_rate, step=step, max_outputs=max_outputs)


def all_summary_ops() -> Any:
    """The summary ops written in this graph (for a host_call to return)."""
    return _V1.summary.all_v2_summary_ops()


def flush(writer: Any = None, name: str | None = None) -> Any:
    """`tf.summary.flush(writer)`."""
    return tf.summary.flush(writer, name=name)


def initialize(graph: Any = None, session: Any = None) -> None:
    """Nothing to do: TF2 summary writers are ready when created (TF1 needed this op)."""
    del graph, session


__getattr__ = removed_attribute_getattr("summary", "tf.summary")


__all__ = [
    "all_summary_ops",
    "always_record_summaries",
    "audio",
    "create_file_writer",
    "create_summary_file_writer",
    "flush",
    "histogram",
    "image",
    "initialize",
    "never_record_summaries",
    "record_summaries_every_n_global_steps",
    "scalar",
]
