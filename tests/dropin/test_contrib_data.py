"""tf.contrib.data after install(): its transformations onto tf.data, element for element."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.dropin.contrib import data

ALIASES = [
    "parallel_interleave", "shuffle_and_repeat", "prefetch_to_device", "copy_to_device",
    "ignore_errors", "unbatch", "group_by_window", "bucket_by_sequence_length",
    "sample_from_datasets", "choose_from_datasets", "make_csv_dataset",
    "make_batched_features_dataset", "parse_example_dataset", "scan", "rejection_resample",
    "enumerate_dataset", "get_single_element", "dense_to_sparse_batch", "group_by_reducer",
    "Reducer", "unique", "Counter", "CsvDataset", "SqlDataset", "TFRecordWriter",
]  # fmt: skip


def _elements(dataset):
    return [tf.nest.map_structure(lambda t: np.asarray(t.numpy()).tolist(), e) for e in dataset]


@pytest.mark.parametrize("name", ALIASES)
def test_names_tf_data_kept_are_tf_datas(name):
    assert getattr(data, name) is getattr(tf.data.experimental, name)
    assert data.AUTOTUNE == tf.data.AUTOTUNE


def test_parallel_interleave_reads_files_like_tf1(tmp_path):
    paths = []
    for shard in range(3):
        path = str(tmp_path / f"shard{shard}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(4):
                writer.write(f"{shard}-{i}".encode())
        paths.append(path)
    files = tf.data.Dataset.from_tensor_slices(paths)
    records = files.apply(data.parallel_interleave(tf.data.TFRecordDataset, cycle_length=2))
    got = [r.decode() for r in _elements(records)]
    # cycle_length 2, block_length 1: shard0 and shard1 alternate, then shard2
    assert got == ["0-0", "1-0", "0-1", "1-1", "0-2", "1-2", "0-3", "1-3",
                   "2-0", "2-1", "2-2", "2-3"]  # fmt: skip
    sloppy = files.apply(data.parallel_interleave(tf.data.TFRecordDataset, cycle_length=3,
                                                  sloppy=True))  # fmt: skip
    assert sorted(_elements(sloppy)) == sorted(r.encode() for r in got)


def test_batching_transformations():
    numbers = tf.data.Dataset.range(10)
    assert _elements(numbers.apply(data.batch_and_drop_remainder(4))) == [[0, 1, 2, 3],
                                                                         [4, 5, 6, 7]]  # fmt: skip
    mapped = numbers.apply(data.map_and_batch(lambda i: i * 2, 4, num_parallel_batches=2))
    assert _elements(mapped) == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        data.map_and_batch(abs, 4, num_parallel_batches=1, num_parallel_calls=1)
    ragged = tf.data.Dataset.range(1, 6).map(lambda n: tf.range(n))
    padded = ragged.apply(data.padded_batch_and_drop_remainder(2, [None]))
    assert _elements(padded) == [[[0, 0], [0, 1]], [[0, 1, 2, 0], [0, 1, 2, 3]]]
    shuffled = numbers.apply(data.shuffle_and_repeat(buffer_size=10, count=2, seed=1))
    values = _elements(shuffled)
    assert sorted(values) == sorted(list(range(10)) * 2) and values[:10] != list(range(10))


def test_an_input_fn_written_for_tf_contrib_data(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(8):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)])),
            }))  # fmt: skip
            writer.write(example.SerializeToString())
    estimator.install()
    try:
        contrib = tf.compat.v1.contrib
        spec = {"x": tf.io.FixedLenFeature([1], tf.float32)}
        dataset = tf.data.Dataset.list_files(path).apply(
            contrib.data.parallel_interleave(tf.data.TFRecordDataset, cycle_length=4)
        ).apply(contrib.data.map_and_batch(lambda r: tf.io.parse_single_example(r, spec),
                                           batch_size=3, drop_remainder=True))  # fmt: skip
        batches = [b["x"].numpy().ravel().tolist() for b in dataset]
    finally:
        estimator.uninstall()
    np.testing.assert_array_equal(batches, [[0, 1, 2], [3, 4, 5]])
