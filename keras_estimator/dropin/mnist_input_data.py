"""`tensorflow.examples.tutorials.mnist.input_data` under `install()`: TF 1's MNIST reader.

TF 1 tutorials (and many estimator examples) began with
`input_data.read_data_sets("/tmp/data/", one_hot=False)`, which downloaded the four MNIST
idx files into that folder unless they were there. TensorFlow 2 dropped the module. This
one reads the same files (gzipped or not) from the folder and gives the same `DataSet`s
(`images`: float32 in [0, 1], `(n, 784)` with `reshape`; `labels`: uint8 class ids, or
one-hot rows; `next_batch`); it downloads nothing: without the files it says where to put
them.
"""

from __future__ import annotations

import collections
import gzip
import os
from typing import Any

import numpy as np

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
_SOURCE = "https://storage.googleapis.com/cvdf-datasets/mnist/"
_IMAGES_MAGIC, _LABELS_MAGIC = 2051, 2049

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _read_idx(path: str, magic: int) -> np.ndarray:
    """The array of an idx file (big-endian header: magic, dimensions; then uint8 data)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    header = np.frombuffer(data[:4], ">u4")[0]
    if header != magic:
        raise ValueError(
            f"Invalid magic number {header} in MNIST file {path}: expected {magic} (an idx "
            f"file of {'images' if magic == _IMAGES_MAGIC else 'labels'}). Fix: use the "
            f"files from {_SOURCE}. Received: {path}"
        )
    rank = 3 if magic == _IMAGES_MAGIC else 1
    shape = tuple(int(d) for d in np.frombuffer(data[4 : 4 + 4 * rank], ">u4"))
    values = np.frombuffer(data[4 + 4 * rank :], np.uint8)
    if values.size != int(np.prod(shape)):
        raise ValueError(
            f"MNIST file {path} is truncated: its header says {shape}, it holds {values.size} "
            f"values. Fix: download it again from {_SOURCE}. Received: {path}"
        )
    return values.reshape(shape)


def extract_images(path: str) -> np.ndarray:
    """The images of an idx3 file as uint8 `(n, rows, cols, 1)`."""
    return _read_idx(path, _IMAGES_MAGIC)[..., np.newaxis]


def dense_to_one_hot(labels: np.ndarray, num_classes: int = 10) -> np.ndarray:
    """Class ids -> one-hot rows (float64, as TF 1 gave them)."""
    one_hot = np.zeros((labels.shape[0], num_classes))
    one_hot[np.arange(labels.shape[0]), labels.astype(np.int64)] = 1
    return one_hot


def extract_labels(path: str, one_hot: bool = False, num_classes: int = 10) -> np.ndarray:
    """The labels of an idx1 file: uint8 class ids, or one-hot rows."""
    labels = _read_idx(path, _LABELS_MAGIC)
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """Images and labels of one split, with TF 1's `next_batch` (shuffled each epoch)."""

    def __init__(
        self,
        images: np.ndarray,
        labels: np.ndarray,
        dtype: Any = np.float32,
        reshape: bool = True,
        seed: int | None = None,
    ) -> None:
        if images.shape[0] != labels.shape[0]:
            raise ValueError(
                f"images.shape: {images.shape} labels.shape: {labels.shape}: one label per "
                "image expected. Fix: pass matching files."
            )
        dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        if dtype not in (np.uint8, np.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        if reshape:
            images = images.reshape(images.shape[0], -1)
        if dtype == np.float32:
            images = images.astype(np.float32) * (1.0 / 255.0)
        self.images = images
        self.labels = labels
        self.num_examples = images.shape[0]
        self.epochs_completed = 0
        self._index = 0
        self._rng = np.random.RandomState(seed)

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True):
        """The next `batch_size` (images, labels); a new epoch reshuffles (when `shuffle`)."""
        del fake_data
        if self._index == 0 and self.epochs_completed == 0 and shuffle:
            self._shuffle()
        if self._index + batch_size <= self.num_examples:
            start, self._index = self._index, self._index + batch_size
            return self.images[start : self._index], self.labels[start : self._index]
        rest_images, rest_labels = self.images[self._index :], self.labels[self._index :]
        self.epochs_completed += 1
        if shuffle:
            self._shuffle()
        self._index = batch_size - rest_images.shape[0]
        return (
            np.concatenate([rest_images, self.images[: self._index]]),
            np.concatenate([rest_labels, self.labels[: self._index]]),
        )

    def _shuffle(self) -> None:
        order = self._rng.permutation(self.num_examples)
        self.images, self.labels = self.images[order], self.labels[order]


def _path(train_dir: str, name: str) -> str | None:
    for candidate in (name, name[: -len(".gz")]):
        path = os.path.join(train_dir, candidate)
        if os.path.exists(path):
            return path
    return None


def read_data_sets(
    train_dir: str,
    fake_data: bool = False,
    one_hot: bool = False,
    dtype: Any = np.float32,
    reshape: bool = True,
    validation_size: int = 5000,
    seed: int | None = None,
    source_url: str | None = None,
) -> Datasets:
    """MNIST's train / validation / test `DataSet`s from the idx files in `train_dir`.

    Args:
        train_dir: The folder holding `train-images-idx3-ubyte.gz`,
            `train-labels-idx1-ubyte.gz`, `t10k-images-idx3-ubyte.gz` and
            `t10k-labels-idx1-ubyte.gz` (or the same names without `.gz`).
        fake_data: Unsupported (TF 1's unit-test switch).
        one_hot: Labels as one-hot rows instead of class ids.
        dtype: float32 (images scaled to [0, 1]) or uint8.
        reshape: Images as `(n, 784)` rows instead of `(n, 28, 28, 1)`.
        validation_size: The first this many training images become `validation`.
        seed: Seed of `next_batch`'s shuffling.
        source_url: Unused: nothing is downloaded.

    Returns:
        `Datasets(train, validation, test)`.

    Raises:
        FileNotFoundError: A file is not in `train_dir`.

    Example:
        >>> mnist = read_data_sets("/tmp/data/", one_hot=False)
        >>> mnist.train.images.shape   # (55000, 784) for the real files
    """
    del source_url
    if fake_data:
        raise ValueError(
            "read_data_sets(fake_data=True) is not provided by keras_estimator. Fix: use real "
            "idx files (or numpy arrays of your own). Received: fake_data=True"
        )
    found = {name: _path(train_dir, name) for name in (TRAIN_IMAGES, TRAIN_LABELS,
                                                       TEST_IMAGES, TEST_LABELS)}  # fmt: skip
    paths = {name: path for name, path in found.items() if path is not None}
    missing = [name for name in found if name not in paths]
    if missing:
        raise FileNotFoundError(
            f"MNIST files {missing} are not in {os.path.abspath(train_dir)}: under "
            "keras_estimator, tensorflow.examples.tutorials.mnist.input_data reads the idx "
            f"files and downloads nothing. Fix: put the four files of {_SOURCE} "
            f"({', '.join(found)}) into {os.path.abspath(train_dir)}. "
            f"Received: train_dir={train_dir!r}"
        )
    train_images = extract_images(paths[TRAIN_IMAGES])
    train_labels = extract_labels(paths[TRAIN_LABELS], one_hot=one_hot)
    test_images = extract_images(paths[TEST_IMAGES])
    test_labels = extract_labels(paths[TEST_LABELS], one_hot=one_hot)
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(
            f"Validation size should be between 0 and {len(train_images)}. "
            f"Received: {validation_size}."
        )
    options = {"dtype": dtype, "reshape": reshape, "seed": seed}
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size], **options)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], **options)
    return Datasets(train, validation, DataSet(test_images, test_labels, **options))


def load_mnist(train_dir: str = "MNIST-data") -> Datasets:
    """TF 1's shorthand: `read_data_sets(train_dir)`."""
    return read_data_sets(train_dir)


__all__ = [
    "DataSet",
    "Datasets",
    "dense_to_one_hot",
    "extract_images",
    "extract_labels",
    "load_mnist",
    "read_data_sets",
]
