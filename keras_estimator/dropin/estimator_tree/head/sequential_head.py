"""2.15's `head/sequential_head`: `SequentialHeadWrapper` and the sequential-head base."""

from __future__ import annotations

import abc
from typing import Any

import tensorflow as tf

from keras_estimator.canned.heads.base_head import Head
from keras_estimator.canned.heads.sequential_head import SequentialHeadWrapper, flatten_steps

__all__ = ["SequentialHeadWrapper"]


class _SequentialHead(Head, abc.ABC):
    """A head whose inputs have a time dimension: it names the mask feature it reads."""

    @property
    @abc.abstractmethod
    def input_sequence_mask_key(self) -> str:
        """The feature key of the sequence mask."""


def _flatten_tensor(tensor: Any, sequence_mask: tf.Tensor, expected_length: Any) -> Any:
    """`tensor`'s [batch, steps, ...] entries where `sequence_mask` is set, as
    [n, ...] (a SparseTensor's values likewise)."""
    return flatten_steps(tensor, sequence_mask, expected_length, "tensor")
