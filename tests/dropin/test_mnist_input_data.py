"""`from tensorflow.examples.tutorials.mnist import input_data` under install() (TF 2 has no
such module): TF 1's `read_data_sets` over the MNIST idx files in a folder, no download."""

import gzip
import importlib

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator

RNG = np.random.RandomState(0)


def write_idx(path, array):
    header = np.array([2051 if array.ndim == 3 else 2049, *array.shape], ">u4").tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_dir(tmp_path):
    images = {"train": RNG.randint(0, 256, (30, 28, 28)), "t10k": RNG.randint(0, 256, (8, 28, 28))}
    labels = {"train": RNG.randint(0, 10, 30), "t10k": RNG.randint(0, 10, 8)}
    for split in ("train", "t10k"):
        write_idx(tmp_path / f"{split}-images-idx3-ubyte.gz", images[split])
        write_idx(tmp_path / f"{split}-labels-idx1-ubyte", labels[split])  # not gzipped
    return tmp_path, images, labels


def test_read_data_sets_reads_the_idx_files_as_tf1_did(installed, mnist_dir):
    folder, images, labels = mnist_dir
    from tensorflow.examples.tutorials.mnist import input_data

    mnist = input_data.read_data_sets(str(folder), one_hot=False, validation_size=10)
    assert mnist.train.images.shape == (20, 784) and mnist.train.images.dtype == np.float32
    np.testing.assert_allclose(mnist.train.images[0], images["train"][10].ravel() / 255.0,
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(mnist.validation.labels, labels["train"][:10])
    assert mnist.train.labels.dtype == np.uint8 and mnist.test.num_examples == 8
    np.testing.assert_array_equal(mnist.test.labels, labels["t10k"])

    shaped = input_data.read_data_sets(str(folder), one_hot=True, reshape=False,
                                       validation_size=0)  # fmt: skip
    assert shaped.train.images.shape == (30, 28, 28, 1)
    np.testing.assert_array_equal(shaped.train.labels.argmax(1), labels["train"])
    # next_batch goes through every example once an epoch, shuffled.
    seen = [shaped.train.next_batch(12)[1].argmax(1) for _ in range(6)]
    assert shaped.train.epochs_completed == 2
    first_epoch = np.concatenate(seen)[:30]
    assert sorted(first_epoch) == sorted(labels["train"])
    with pytest.raises(ValueError, match="Validation size should be between 0 and 30"):
        input_data.read_data_sets(str(folder))  # TF 1's default validation_size=5000


def test_missing_files_say_where_to_put_them(installed, tmp_path):
    from tensorflow.examples.tutorials.mnist import input_data

    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz.*downloads nothing"):
        input_data.read_data_sets(str(tmp_path / "empty"))


def test_gone_after_uninstall():
    estimator.install()
    estimator.uninstall()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tensorflow.examples.tutorials.mnist")
    assert not hasattr(tf, "examples")
