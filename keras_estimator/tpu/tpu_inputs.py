"""The input-side tensor utilities of 2.15 TPUEstimator, on plain TensorFlow ops.

They work eagerly and in graphs, on or off TPU:

- `StopSignals`: the per-batch `stopping` flag TPUEstimator appended to prediction
  batches (a last batch with the flag set ends the loop);
- `PaddingSignals`: pads a short last batch to the full batch size, with a mask of the
  padded rows, and slices the padding off again;
- `Inputs` / `InputsWithStoppingSignals`: what an input_fn returned (features and labels,
  or a Dataset), the latter with the signals mapped into the dataset;
- `TensorPacker`: concatenates many `[batch, 1]` features into one tensor and back;
- `InputsStructureRecorder`: flattens features, labels and signals into a list of tensors
  and restores them.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

# TensorPacker's settings in TPUEstimator: features [batch, <=1] grouped once there are 5.
TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE = 1
TENSOR_PACKER_MIN_GROUP_SIZE = 5
TENSOR_PACKER_KEY = "_concatenated_small_features"


def extract_key_names(tensor_or_dict: Any) -> list:
    """The sorted keys of a dict; [] for anything else."""
    return sorted(tensor_or_dict.keys()) if isinstance(tensor_or_dict, dict) else []


class StopSignals:
    """The stopping signal of one batch: `{"stopping": bool [batch_size, 1]}` (plus the
    padding mask when given).

    Args:
        stop: Whether this batch signals the end.
        batch_size: The batch size (rows of the signal).
        padding_mask: Optional int32 `[batch_size]` mask, 1 on padded rows.

    Example:
        >>> signals = StopSignals(stop=True, batch_size=4).as_dict()
        >>> StopSignals.should_stop(StopSignals.as_scalar_stopping_signal(signals))
        <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """

    NON_STOPPING_SIGNAL = False
    STOPPING_SIGNAL = True

    def __init__(self, stop: bool, batch_size: int, padding_mask: Any = None) -> None:
        self._stop = stop
        self._batch_size = batch_size
        self._padding_mask = padding_mask

    def as_dict(self) -> dict:
        """The signals as a dict of tensors."""
        fill = tf.ones if self._stop else tf.zeros
        signals = {"stopping": fill(shape=[self._batch_size, 1], dtype=tf.bool)}
        if self._padding_mask is not None:
            signals["padding_mask"] = self._padding_mask
        return signals

    @staticmethod
    def as_scalar_stopping_signal(signals: dict) -> tf.Tensor:
        """The batch's stopping flag as a scalar (its first row)."""
        return tf.identity(signals["stopping"][0][0])

    @staticmethod
    def should_stop(scalar_stopping_signal: Any) -> Any:
        """Whether the signal says stop: a bool tensor for a tensor, else a Python bool."""
        if isinstance(scalar_stopping_signal, tf.Tensor):
            return tf.math.logical_and(scalar_stopping_signal, StopSignals.STOPPING_SIGNAL)
        return bool(scalar_stopping_signal)


class PaddingSignals:
    """Pads a batch to the full batch size and slices the padding back off."""

    @staticmethod
    def pad_features_and_labels(features: Any, labels: Any, batch_size: int) -> tuple:
        """(padding_mask, features, labels) with every tensor padded to `batch_size` rows.

        Raises:
            tf.errors.InvalidArgumentError: If the batch is larger than `batch_size`.
        """
        real_batch_size = tf.shape(PaddingSignals._find_any_tensor(features))[0]
        full = tf.constant(batch_size, tf.int32)
        check = tf.debugging.assert_greater_equal(
            full,
            real_batch_size,
            message="The real batch size should not be greater than batch_size.",
        )
        with tf.control_dependencies([check]):
            missing_count = full - real_batch_size

        def pad(tensor: tf.Tensor) -> tf.Tensor:
            rank = len(tensor.shape)
            if rank == 0:
                raise ValueError(f"Cannot pad a scalar along the batch dimension: {tensor}")
            paddings = tf.stack([[0, missing_count]] + [[0, 0]] * (rank - 1))
            padded = tf.pad(tensor, paddings)
            padded.set_shape((batch_size, *tensor.shape[1:]))
            return padded

        features = tf.nest.map_structure(pad, features)
        if labels is not None:
            labels = tf.nest.map_structure(pad, labels)
        mask = PaddingSignals._padding_mask(real_batch_size, missing_count, batch_size)
        return mask, features, labels

    @staticmethod
    def slice_tensor_or_dict(tensor_or_dict: Any, signals: dict) -> Any:
        """`tensor_or_dict` without the padded rows `signals["padding_mask"]` marks (kept
        whole for a full batch or the stopping batch)."""
        mask = signals["padding_mask"]
        batch_size = tf.shape(mask)[0]
        real_batch_size = batch_size - tf.math.reduce_sum(mask)
        should_stop = StopSignals.should_stop(StopSignals.as_scalar_stopping_signal(signals))
        is_full_batch = tf.math.equal(tf.math.reduce_sum(mask), 0)
        keep_all = tf.math.logical_or(should_stop, is_full_batch)

        def slice_one(tensor: tf.Tensor) -> tf.Tensor:
            if len(tensor.shape) == 0:
                raise ValueError(f"Cannot slice a scalar along the batch dimension: {tensor}")
            return tf.cond(keep_all, lambda: tf.identity(tensor),
                           lambda: tensor[:real_batch_size])  # fmt: skip

        return tf.nest.map_structure(slice_one, tensor_or_dict)

    @staticmethod
    def _find_any_tensor(batch_features: Any) -> tf.Tensor:
        for value in tf.nest.flatten(batch_features):
            if isinstance(value, tf.Tensor):
                return value
        raise ValueError("Cannot find any Tensor in features dict.")

    @staticmethod
    def _padding_mask(real_batch_size: Any, missing_count: Any, batch_size: int) -> tf.Tensor:
        mask = tf.concat(
            [tf.zeros((real_batch_size,), tf.int32), tf.ones((missing_count,), tf.int32)], 0
        )
        mask.set_shape((batch_size,))
        return mask


class Inputs:
    """What an input_fn returned: `features`, `(features, labels)` or a Dataset.

    Args:
        features: The features (without a dataset).
        labels: The labels (without a dataset).
        dataset: A `tf.data.Dataset` (without features / labels / signals).
        signals: The signals dict of this batch, if any.
    """

    def __init__(
        self, features: Any = None, labels: Any = None, dataset: Any = None, signals: Any = None
    ) -> None:
        if dataset is not None and (
            features is not None or labels is not None or signals is not None
        ):
            raise RuntimeError(
                "Inputs takes either features (and labels, signals) or a dataset, not both."
            )
        self._features = features
        self._labels = labels
        self._signals = signals
        self._dataset = dataset
        self._iterator: Any = None

    @staticmethod
    def from_input_fn(return_values: Any) -> Inputs:
        """The Inputs of an input_fn's return value."""
        if isinstance(return_values, tf.data.Dataset):
            return Inputs(dataset=return_values)
        return Inputs(*Inputs._parse_inputs(return_values))

    @staticmethod
    def _parse_inputs(return_values: Any) -> tuple:
        if isinstance(return_values, tuple):
            features, labels = return_values
            return features, labels
        return return_values, None

    @property
    def is_dataset(self) -> bool:
        return self._dataset is not None

    def dataset_initializer(self) -> Any:
        """Makes the dataset's iterator; in a graph, returns its initializer op (to run
        before `features_and_labels`), eagerly None (the iterator is ready)."""
        if tf.executing_eagerly():
            self._iterator = iter(self._dataset)
            return None
        self._iterator = tf.compat.v1.data.make_initializable_iterator(self._dataset)
        return self._iterator.initializer

    def _next(self) -> Any:
        if self._iterator is None:
            raise RuntimeError(
                "The dataset's iterator was not made. Fix: call dataset_initializer() "
                "before features_and_labels()."
            )
        if isinstance(self._iterator, tf.data.Iterator):
            return next(self._iterator)
        return self._iterator.get_next()

    def features_and_labels(self) -> tuple:
        """(features, labels) (the next element for a dataset)."""
        if self.is_dataset:
            return Inputs._parse_inputs(self._next())
        return self._features, self._labels

    def signals(self) -> Any:
        return self._signals

    @property
    def dataset(self) -> Any:
        return self._dataset


class InputsWithStoppingSignals(Inputs):
    """A dataset's batches with stopping signals (and padding) mapped in, plus stopping
    batches at the end: the last batch(es) carry `stopping=True`.

    Args:
        dataset: The input_fn's dataset.
        batch_size: The batch size of the signals (and of the padding).
        add_padding: Whether to pad short batches to `batch_size` (with a padding mask).
        num_invocations_per_step: How many batches one step takes (2*n-1 stop batches).
    """

    def __init__(
        self,
        dataset: tf.data.Dataset,
        batch_size: int,
        add_padding: bool = False,
        num_invocations_per_step: int = 1,
    ) -> None:
        if dataset is None:
            raise ValueError("InputsWithStoppingSignals needs a dataset; got None.")
        insert = InputsWithStoppingSignals.insert_stopping_signal
        user_batches = dataset.map(insert(False, batch_size, add_padding))
        final = dataset.take(1).map(insert(True, batch_size, add_padding))
        if num_invocations_per_step > 1:
            # Enough stopping batches that every replica of the last step sees one.
            final = final.repeat(2 * num_invocations_per_step - 1)

            def mask_all(element: dict) -> dict:
                signals = dict(element["signals"])
                signals["padding_mask"] = tf.ones_like(signals["padding_mask"])
                return {**element, "signals": signals}

            final = final.map(mask_all)
        super().__init__(dataset=user_batches.concatenate(final).prefetch(2))
        self._current_inputs: Any = None

    def features_and_labels(self) -> tuple:
        if self._current_inputs is not None:
            raise RuntimeError(
                "The previous inputs were not consumed. Fix: call features_and_labels(), "
                "then signals(), for each batch."
            )
        element = self._next()
        self._current_inputs = element
        return element["features"], element.get("labels")

    def signals(self) -> dict:
        if self._current_inputs is None:
            raise RuntimeError(
                "No current inputs. Fix: call features_and_labels() before signals()."
            )
        signals, self._current_inputs = self._current_inputs["signals"], None
        return signals

    @staticmethod
    def insert_stopping_signal(stop: bool, batch_size: int, add_padding: bool = False) -> Any:
        """A `Dataset.map` function turning elements into
        `{"features", "labels" (if any), "signals"}` with the given stopping flag."""

        def map_fn(*args: Any) -> dict:
            features, labels = Inputs._parse_inputs(args[0] if len(args) == 1 else args)
            padding_mask = None
            if add_padding:
                padding_mask, features, labels = PaddingSignals.pad_features_and_labels(
                    features, labels, batch_size
                )
            element = {"features": features}
            if labels is not None:
                element["labels"] = labels
            element["signals"] = StopSignals(stop, batch_size, padding_mask).as_dict()
            return element

        return map_fn


class TensorPacker:
    """Packs many small `[batch, d<=small]` features into one tensor per dtype, and back.

    Args:
        small_feature_dim_size: The largest second dimension counted as small.
        minimum_num_small_features_to_group: How many small features of one dtype make it
            worth grouping them.

    Example:
        >>> packer = TensorPacker(1, 2)
        >>> features = {"a": tf.ones([4, 1]), "b": tf.zeros([4, 1])}
        >>> packer.maybe_concatenate_features(features)   # one [4, 2] tensor now
        >>> packer.maybe_split_features(features)         # "a" and "b" again
    """

    def __init__(self, small_feature_dim_size: int,
                 minimum_num_small_features_to_group: int) -> None:  # fmt: skip
        self._small_feature_dim_size = small_feature_dim_size
        self._minimum_num_small_features_to_group = minimum_num_small_features_to_group
        self._small_feature_names: dict = {}
        self._small_feature_sizes: dict = {}

    def maybe_concatenate_features(self, features: Any) -> None:
        """Replaces, in the dict `features`, enough small features by their concatenation."""
        self._small_feature_names, self._small_feature_sizes = {}, {}
        names = extract_key_names(features)
        if not names:
            return
        for name in names:
            tensor = features[name]
            if not isinstance(tensor, tf.Tensor):
                return  # nested inputs are left alone
            shape = tensor.shape.as_list() if tensor.shape.rank is not None else []
            if (
                len(shape) == 2
                and shape[1] is not None
                and (shape[1] <= self._small_feature_dim_size)
            ):
                self._small_feature_names.setdefault(tensor.dtype, []).append(name)
                self._small_feature_sizes.setdefault(tensor.dtype, []).append(shape[1])
        for dtype in list(self._small_feature_names):
            if len(self._small_feature_names[dtype]) < self._minimum_num_small_features_to_group:
                del self._small_feature_names[dtype], self._small_feature_sizes[dtype]
        for dtype, group in self._small_feature_names.items():
            key = self._get_small_feature_key(dtype)
            if key in features:
                raise ValueError(f"{key} is reserved as feature key for concatenated features.")
            features[key] = tf.concat([features.pop(name) for name in group], axis=1)

    def maybe_split_features(self, maybe_concatenated_features: Any) -> None:
        """Undoes `maybe_concatenate_features` in the dict, in place."""
        for dtype, group in self._small_feature_names.items():
            packed = maybe_concatenated_features.pop(self._get_small_feature_key(dtype))
            parts = tf.split(packed, self._small_feature_sizes[dtype], axis=1)
            maybe_concatenated_features.update(zip(group, parts))

    def _get_small_feature_key(self, dtype: Any) -> str:
        return f"{TENSOR_PACKER_KEY}_{dtype}"


class InputsStructureRecorder:
    """Records the structure of features, labels and signals, flattens them into one list
    of tensors and restores it (what TPUEstimator's infeed carried).

    Args:
        input_partition_dims: `TPUConfig.input_partition_dims` (one or two structures).
    """

    def __init__(self, input_partition_dims: Any = None) -> None:
        self._feature_structure: dict = {}
        self._flattened_input_dims: Any = None
        self._feature_dims = self._label_dims = None
        if input_partition_dims:
            if len(input_partition_dims) > 2 or input_partition_dims[0] is None:
                raise ValueError(
                    "input_partition_dims must hold one or two structures, the first not "
                    f"None; got {input_partition_dims}."
                )
            self._feature_dims = input_partition_dims[0]
            if len(input_partition_dims) == 2:
                self._label_dims = input_partition_dims[1]
        self._initialized = False
        self.tensor_packer = TensorPacker(
            TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE, TENSOR_PACKER_MIN_GROUP_SIZE
        )

    @property
    def flattened_input_dims(self) -> Any:
        if not self._initialized:
            raise RuntimeError("No structure recorded yet: call validate_and_record_structure.")
        return self._flattened_input_dims

    def has_labels(self) -> bool:
        return "labels" in self._feature_structure

    def _flatten_input_dims(self, features: Any, labels: Any) -> list:
        try:
            dims = list(tf.nest.flatten_up_to(features, self._feature_dims))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "TPUConfig.input_partition_dims[0] mismatched the structure of features. "
                f"input_partition_dims[0]: {self._feature_dims}, features {features}. {exc}"
            ) from exc
        if labels is not None:
            if self._label_dims is None:
                dims += [None] * len(tf.nest.flatten(labels))
            else:
                try:
                    dims += tf.nest.flatten_up_to(labels, self._label_dims)
                except (TypeError, ValueError) as exc:
                    raise ValueError(
                        "TPUConfig.input_partition_dims[1] mismatched the structure of "
                        f"labels. input_partition_dims[1]: {self._label_dims}, labels: "
                        f"{labels}. {exc}"
                    ) from exc
        return dims

    def validate_and_record_structure(self, features: Any, labels: Any) -> None:
        """Records the partition dims of the first features and labels seen."""
        if self._initialized:
            return
        self._initialized = True
        if self._feature_dims is None:
            return
        feature_names, dims_names = (
            extract_key_names(features),
            extract_key_names(self._feature_dims),
        )
        if feature_names != dims_names:
            raise ValueError(
                "TPUConfig.input_partition_dims[0] mismatched feature keys. Expected "
                f"{feature_names}, got {dims_names}"
            )
        if self._label_dims is not None and extract_key_names(labels) != extract_key_names(
            self._label_dims
        ):
            raise ValueError(
                "TPUConfig.input_partition_dims[1] mismatched label keys. Expected "
                f"{extract_key_names(labels)}, got {extract_key_names(self._label_dims)}"
            )
        self._flattened_input_dims = self._flatten_input_dims(features, labels)

    def flatten_features_and_labels(self, features: Any, labels: Any, signals: Any = None) -> list:
        """Features (small ones packed), labels and signals as one list of tensors."""
        self.tensor_packer = TensorPacker(
            TENSOR_PACKER_SMALL_FEATURE_DIM_SIZE, TENSOR_PACKER_MIN_GROUP_SIZE
        )
        self.tensor_packer.maybe_concatenate_features(features)
        self._feature_structure = {"features": features}
        if labels is not None:
            self._feature_structure["labels"] = labels
        if signals is not None:
            self._feature_structure["signals"] = signals
        return tf.nest.flatten(self._feature_structure)

    def unflatten_features_and_labels(self, flattened_inputs: list) -> Inputs:
        """The Inputs (features, labels, signals) of a list `flatten_...` made."""
        restored = tf.nest.pack_sequence_as(self._feature_structure, list(flattened_inputs))
        features = restored["features"]
        self.tensor_packer.maybe_split_features(features)
        return Inputs(features, restored.get("labels"), signals=restored.get("signals"))
