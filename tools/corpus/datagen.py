"""Tiny inputs of the formats the corpus programs read, made by us (seeded, a few KB).

Each helper writes one file; recipes combine them into a program's `data(work)`.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

Column = Callable[[np.random.Generator], object]


def uniform(low: float = 0.0, high: float = 1.0, digits: int = 3) -> Column:
    return lambda rng: round(float(rng.uniform(low, high)), digits)


def integer(low: int, high: int) -> Column:
    """An integer in [low, high)."""
    return lambda rng: int(rng.integers(low, high))


def choice(values: Sequence[object]) -> Column:
    return lambda rng: values[int(rng.integers(len(values)))]


def words(vocabulary: Sequence[str], low: int = 3, high: int = 8) -> Column:
    return lambda rng: " ".join(
        vocabulary[int(i)] for i in rng.integers(len(vocabulary), size=int(rng.integers(low, high)))
    )


def csv_file(
    path: Path,
    columns: dict[str, Column],
    rows: int = 64,
    header: bool = True,
    seed: int = 0,
    delimiter: str = ",",
) -> Path:
    """A CSV of `rows` rows; `columns` maps each column name to its value maker."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as out:
        writer = csv.writer(out, delimiter=delimiter)
        if header:
            writer.writerow(list(columns))
        for _ in range(rows):
            writer.writerow([make(rng) for make in columns.values()])
    return path


def text_file(path: Path, lines: Sequence[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


Feature = Callable[[np.random.Generator], tuple[str, list]]


def floats(size: int = 1, low: float = 0.0, high: float = 1.0) -> Feature:
    return lambda rng: ("float", rng.uniform(low, high, size).astype(np.float32).tolist())


def ints(size: int = 1, low: int = 0, high: int = 2) -> Feature:
    return lambda rng: ("int64", rng.integers(low, high, size).tolist())


def var_ints(low: int, high: int, max_len: int = 4) -> Feature:
    return lambda rng: (
        "int64",
        rng.integers(low, high, int(rng.integers(1, max_len + 1))).tolist(),
    )


def var_floats(max_len: int = 12) -> Feature:
    return lambda rng: ("float", rng.uniform(0, 1, int(rng.integers(2, max_len + 1))).tolist())


def raw_bytes(size: int) -> Feature:
    return lambda rng: ("bytes", [rng.integers(0, 256, size, dtype=np.uint8).tobytes()])


def strings(values: Sequence[str]) -> Feature:
    return lambda rng: ("bytes", [values[int(rng.integers(len(values)))].encode()])


def tokens(vocabulary: Sequence[str], low: int = 1, high: int = 5) -> Feature:
    """A bytes list of `low` to `high - 1` words of the vocabulary."""
    return lambda rng: (
        "bytes",
        [
            vocabulary[int(i)].encode()
            for i in rng.integers(len(vocabulary), size=int(rng.integers(low, high)))
        ],
    )


def jpeg(height: int = 32, width: int = 32) -> Feature:
    def make(rng: np.random.Generator) -> tuple[str, list]:
        import tensorflow as tf

        image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        return "bytes", [tf.io.encode_jpeg(image).numpy()]

    return make


def tfrecord_file(
    path: Path,
    features: dict[str, Feature],
    rows: int = 64,
    seed: int = 0,
    compression: str | None = None,
) -> Path:
    """tf.train.Example records; `features` maps each feature key to its value maker."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    options = tf.io.TFRecordOptions(compression_type=compression) if compression else None
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for _ in range(rows):
            writer.write(example_bytes(features, rng))
    return path


def example_bytes(features: dict[str, Feature], rng: np.random.Generator) -> bytes:
    """One serialized tf.train.Example of the given features."""
    import tensorflow as tf

    feature = {}
    for key, make in features.items():
        kind, values = make(rng)
        if kind == "float":
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        elif kind == "int64":
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _length_delimited(field: int, payload: bytes) -> bytes:
    """A protobuf length-delimited field: key (field << 3 | 2), varint length, payload."""
    out = bytearray([field << 3 | 2])
    size = len(payload)
    while size > 0x7F:
        out.append(size & 0x7F | 0x80)
        size >>= 7
    out.append(size)
    return bytes(out) + payload


def elwc_file(
    path: Path,
    context: dict[str, Feature],
    examples: dict[str, Feature],
    rows: int = 32,
    list_sizes: tuple[int, int] = (2, 6),
    seed: int = 0,
) -> Path:
    """TF-Ranking's ExampleListWithContext records (tensorflow.serving's proto: `repeated
    Example examples = 1; Example context = 2;`), encoded here so that no serving package
    is needed: each record one context Example and a list of `list_sizes` [low, high) ones."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(rows):
            size = int(rng.integers(*list_sizes))
            record = b"".join(
                _length_delimited(1, example_bytes(examples, rng)) for _ in range(size)
            )
            writer.write(record + _length_delimited(2, example_bytes(context, rng)))
    return path


def libsvm_ranking_file(
    path: Path, queries: int = 16, documents: int = 6, features: int = 8, seed: int = 0
) -> Path:
    """LETOR / LibSVM ranking lines, `label qid:Q index:value ...` (graded labels 0-4)."""
    rng = np.random.default_rng(seed)
    lines = []
    for query in range(1, queries + 1):
        for _ in range(int(rng.integers(2, documents + 1))):
            values = " ".join(f"{i}:{rng.uniform(-1, 1):.4f}" for i in range(1, features + 1))
            lines.append(f"{int(rng.integers(0, 5))} qid:{query} {values}")
    return text_file(path, lines)


def module_file(path: Path, source: str) -> Path:
    """A small helper module of ours that a recipe edit imports (e.g. a dataset loader
    standing in for a download)."""
    return text_file(path, source.strip("\n").splitlines())


MNIST_LOADER = '''
"""Corpus stand-in for tensorflow.examples.tutorials.mnist.input_data: tiny random digits."""
import types

import numpy as np


def read_data_sets(train_dir=None, one_hot=False, reshape=True, **kwargs):
    rng = np.random.default_rng(0)

    def split(n):
        # Sparse like real digits (mostly zero), so 0.1-learning-rate MLPs do not diverge.
        images = (rng.uniform(0, 1, (n, 784)) * (rng.uniform(0, 1, (n, 784)) < 0.15)).astype(
            np.float32
        )
        labels = rng.integers(0, 10, n)
        if one_hot:
            labels = np.eye(10, dtype=np.float32)[labels]
        if not reshape:
            images = images.reshape(n, 28, 28, 1)
        return types.SimpleNamespace(images=images, labels=labels, num_examples=n)

    return types.SimpleNamespace(train=split(256), validation=split(64), test=split(128))


def load_data(path=None):
    """Like keras.datasets.mnist.load_data: uint8 (n, 28, 28) images and int labels."""
    rng = np.random.default_rng(1)

    def split(n):
        images = rng.integers(0, 256, (n, 28, 28)) * (rng.uniform(0, 1, (n, 28, 28)) < 0.15)
        return images.astype(np.uint8), rng.integers(0, 10, n).astype(np.uint8)

    return split(256), split(128)
'''


def mnist_idx_files(folder: Path, train: int = 5256, test: int = 256, seed: int = 0) -> Path:
    """The four MNIST idx files (gzipped) of tiny random sparse digits in `folder`, for
    programs reading them with TF 1's `input_data.read_data_sets(folder)`: `train` images
    (more than its default `validation_size=5000`), `test` images. Kept if already there."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", train), ("t10k", test)):
        images = rng.integers(0, 256, (n, 28, 28)) * (rng.uniform(0, 1, (n, 28, 28)) < 0.15)
        labels = rng.integers(0, 10, n)
        for kind, magic, array in (("images-idx3", 2051, images), ("labels-idx1", 2049, labels)):
            path = folder / f"{split}-{kind}-ubyte.gz"
            if path.exists():
                continue
            header = np.array([magic, *array.shape], ">u4").tobytes()
            with gzip.open(path, "wb") as f:
                f.write(header + array.astype(np.uint8).tobytes())
    return folder


def npz_file(path: Path, seed: int = 0, **shapes: tuple[tuple[int, ...], str]) -> Path:
    """An .npz whose arrays have the given (shape, kind) with kind "float" or "int:<high>"."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for key, (shape, kind) in shapes.items():
        if kind.startswith("int:"):
            arrays[key] = rng.integers(0, int(kind[4:]), shape)
        else:
            arrays[key] = rng.uniform(0, 1, shape).astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


BOSTON_LOADER = '''
"""Corpus stand-in for keras.datasets.boston_housing: tiny random houses."""
import numpy as np


def load_data(path=None, test_split=0.2, seed=113):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (100, 13)).astype(np.float64)
    y = (x[:, 0] * 2 + x[:, 5] + rng.normal(0, 1, 100) + 12).astype(np.float64)
    cut = int(100 * (1 - test_split))
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])
'''


TRACKING_ALIAS = '''
"""Corpus stand-in: TensorFlow 2.11 moved tensorflow.python.training.tracking to
tensorflow.python.checkpoint; AdaNet 0.9.0 still imports graph_view from the old place."""
import sys
import types

from tensorflow.python.checkpoint import graph_view

_OLD = "tensorflow.python.training.tracking"
if _OLD not in sys.modules:
    tracking = types.ModuleType(_OLD)
    tracking.graph_view = graph_view
    sys.modules[_OLD] = tracking
    sys.modules[_OLD + ".graph_view"] = graph_view
'''
