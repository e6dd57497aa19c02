"""The speed benchmarks' workloads, written once for every implementation they compare.

The same legacy code (TF1-style model_fns, tf.data input_fns, a canned DNNClassifier over
feature columns) runs on the original tf.estimator 2.15 when this module is imported under
TensorFlow 2.15 with tensorflow-estimator, and on keras_estimator otherwise; the same
models hand-written in idiomatic Keras 3 sit next to them. Used by bench_speed_table.py,
bench_core.py and bench_canned.py.

Workloads (`workload(name, data_dir)`); evaluation and prediction run over test sets of
3,000+ examples (the 360 test digits repeated):

- mlp_digits: the bundled 8x8 digits, dense 256-256 with dropout 0.2, Adam 1e-3, batch 64,
  accuracy in EVAL, a LoggingTensorHook every 100 iterations in training_hooks.
- cnn_tfrecord: the digits written once to TFRecord files, parsed per example
  (parse_single_example, decode_raw, reshape), shuffled, repeated, batched by 64 (no
  prefetch, as legacy input_fns had); conv32-pool-conv64-pool-dense128, GradientDescent.
- wide_mlp: 512-dim synthetic features, 4 x 1024 relu, batch 256, Momentum 0.9. The data
  comes from seeded stateless random ops inside the input_fn: a numpy array would become a
  16 MB graph constant that tf.estimator re-serializes (graph.pbtxt) on every train().
- canned_dnn: a census-like table (two numeric columns, a 5-word vocabulary, a 1000-bucket
  hashed column) through DNNClassifier([64, 32]) over feature columns, Adagrad 0.05,
  batch 128; in Keras 3, preprocessing layers.

Example:
    >>> import speed_workloads
    >>> work = speed_workloads.workload("mlp_digits", "/tmp/data")
    >>> est = work.make_estimator("/tmp/model")
    >>> est.train(work.train_input_fn, steps=10)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

LEGACY_TF = tuple(int(part) for part in tf.__version__.split(".")[:2]) < (2, 16)
# A hand-written Keras 3 run leaves keras_estimator unimported (its memory, its patches).
KERAS_ONLY = os.environ.get("SPEED_WORKLOADS_KERAS_ONLY") == "1"
if LEGACY_TF:  # TF 2.15: the original tf.estimator; Keras 2 there is not compared
    estimator = tf.estimator
    keras = None
else:
    import keras

    if KERAS_ONLY:
        estimator = None
    else:
        import keras_estimator as estimator

v1 = tf.compat.v1
DIGITS_NPZ = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "keras_estimator", "demo", "digits.npz"
)
DIGITS_TRAIN = 1437  # of 1797: an 80/20 split
PREDICT_EXAMPLES = 3000  # test sets are repeated up to at least this many examples
DIGITS_BATCH = 64
WIDE_BATCH = 256
WIDE_DIM = 512
WIDE_SIZES = {"train": 16384, "test": 4096}
CANNED_BATCH = 128
WORDS = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]


# -- data ------------------------------------------------------------------------------


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """All 1797 digits: images as float32 [n, 64] in [0, 1], labels int64."""
    with np.load(DIGITS_NPZ) as data:
        x = data["images"].reshape(-1, 64).astype(np.float32) / 16.0
        return x, data["labels"].astype(np.int64)


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test); the test set repeated to PREDICT_EXAMPLES."""
    x, y = load_digits()
    order = np.random.RandomState(0).permutation(len(y))
    train, test = order[:DIGITS_TRAIN], order[DIGITS_TRAIN:]
    return x[train], y[train], _repeated(x[test]), _repeated(y[test])


def _repeated(array: np.ndarray) -> np.ndarray:
    copies = -(-PREDICT_EXAMPLES // len(array))
    return np.concatenate([array] * copies)


def write_digits_tfrecords(directory: str) -> dict[str, str]:
    """Writes digits_{train,test}.tfrecord (pixels 0..16 as raw uint8 bytes, int64 label)
    into `directory` unless they are there; returns their paths by split."""
    x_train, y_train, x_test, y_test = digits_split()
    paths = {}
    for split, (images, labels) in {"train": (x_train, y_train), "test": (x_test, y_test)}.items():
        path = paths[split] = os.path.join(directory, f"digits_{split}.tfrecord")
        if os.path.exists(path):
            continue
        os.makedirs(directory, exist_ok=True)
        with tf.io.TFRecordWriter(path + ".part") as writer:
            for image, label in zip(np.round(images * 16).astype(np.uint8), labels):
                writer.write(_digit_example(image, label).SerializeToString())
        os.replace(path + ".part", path)
    return paths


def _digit_example(image: np.ndarray, label: int) -> tf.train.Example:
    image_bytes = tf.train.BytesList(value=[image.tobytes()])
    feature = {
        "image": tf.train.Feature(bytes_list=image_bytes),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


def synthetic(split: str) -> tuple[tf.Tensor, tf.Tensor]:
    """WIDE_DIM normal features and labels from a fixed linear teacher (10 classes); the
    same values in graph mode (inside an input_fn) and eagerly."""
    seed = {"train": 1, "test": 2}[split]
    x = tf.random.stateless_normal([WIDE_SIZES[split], WIDE_DIM], seed=[seed, 2024])
    teacher = tf.random.stateless_normal([WIDE_DIM, 10], seed=[3, 2024])
    return x, tf.argmax(tf.matmul(x, teacher), axis=1, output_type=tf.int64)


def census_like(n: int = 20000, seed: int = 0) -> tuple[dict, np.ndarray]:
    rng = np.random.RandomState(seed)
    features = {
        "age": rng.randint(18, 80, n).astype(np.float32),
        "hours": rng.randint(10, 70, n).astype(np.float32),
        "education": rng.choice(WORDS, n),
        "occupation": np.array([f"occ_{i}" for i in rng.randint(0, 1000, n)]),
    }
    score = (features["age"] - 45) / 15 + np.isin(features["education"], WORDS[2:4]) * 1.5
    return features, (score + rng.randn(n) * 0.5 > 0.5).astype(np.int64)


# -- input pipelines (the estimator's input_fns and Keras' datasets) --------------------


def array_dataset(
    features: Any, labels: Any = None, *, batch: int, training: bool, shuffle: int = 1000
) -> tf.data.Dataset:
    """from_tensor_slices, then shuffle + repeat when training, then batch."""
    data = tf.data.Dataset.from_tensor_slices(features if labels is None else (features, labels))
    if training:
        data = data.shuffle(shuffle).repeat()
    return data.batch(batch)


def tfrecord_dataset(path: str, *, training: bool, key: str | None = "image") -> tf.data.Dataset:
    """Digits from a TFRecord file: images [8, 8, 1] float32, as {key: image} or bare."""

    def parse(serialized):
        parsed = tf.io.parse_single_example(
            serialized,
            {
                "image": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
            },
        )
        image = tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8), [8, 8, 1])
        image = tf.cast(image, tf.float32) / 16.0
        return ({key: image} if key else image), parsed["label"]

    data = tf.data.TFRecordDataset(path).map(parse)
    if training:
        data = data.shuffle(2000).repeat()
    return data.batch(DIGITS_BATCH)


def _features_only(data: tf.data.Dataset) -> tf.data.Dataset:
    return data.map(lambda features, labels: features)


def canned_dataset(
    features: dict, labels: np.ndarray | None = None, *, training: bool = True
) -> tf.data.Dataset:
    data = tf.data.Dataset.from_tensor_slices(features if labels is None else (features, labels))
    if training:
        data = data.shuffle(5000, seed=1).repeat()
    return data.batch(CANNED_BATCH).prefetch(2)


# -- TF1-style model_fns ----------------------------------------------------------------


def _classifier_spec(mode, logits, labels, make_optimizer, make_hooks=None):
    """The usual tail of a legacy classification model_fn."""
    classes = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        predictions = {"classes": classes, "probabilities": tf.nn.softmax(logits)}
        return estimator.EstimatorSpec(mode, predictions=predictions)
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        accuracy = v1.metrics.accuracy(labels, classes)
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    train_op = make_optimizer().minimize(loss, v1.train.get_global_step())
    hooks = make_hooks(loss) if make_hooks else None
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=hooks)


def _mlp_logits(features, mode):
    net = features["x"]
    for units in (256, 256):
        net = v1.layers.dense(net, units, activation=tf.nn.relu)
        net = v1.layers.dropout(net, 0.2, training=mode == estimator.ModeKeys.TRAIN)
    return v1.layers.dense(net, 10)


def mlp_model_fn(features, labels, mode, params):
    """Dense 256-256 with dropout 0.2 on features["x"], Adam 1e-3."""
    logits = _mlp_logits(features, mode)
    return _classifier_spec(mode, logits, labels, lambda: v1.train.AdamOptimizer(1e-3))


def mlp_logging_hook_model_fn(features, labels, mode, params):
    """The MLP with the LoggingTensorHook legacy scripts attach (every 100 iterations)."""
    logits = _mlp_logits(features, mode)
    return _classifier_spec(
        mode,
        logits,
        labels,
        lambda: v1.train.AdamOptimizer(1e-3),
        lambda loss: [estimator.LoggingTensorHook({"loss": loss}, every_n_iter=100)],
    )


def cnn_model_fn(features, labels, mode, params):
    """conv32-pool-conv64-pool-dense128 on features["image"], GradientDescent 0.05."""
    net = tf.reshape(features["image"], [-1, 8, 8, 1])
    net = v1.layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu)
    net = v1.layers.max_pooling2d(net, 2, 2)
    net = v1.layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu)
    net = v1.layers.max_pooling2d(net, 2, 2)
    net = v1.layers.flatten(net)
    net = v1.layers.dense(net, 128, activation=tf.nn.relu)
    logits = v1.layers.dense(net, 10)
    return _classifier_spec(mode, logits, labels, lambda: v1.train.GradientDescentOptimizer(0.05))


def wide_mlp_model_fn(features, labels, mode, params):
    """4 x 1024 relu on features["x"], Momentum 0.9."""
    net = features["x"]
    for _ in range(4):
        net = v1.layers.dense(net, 1024, activation=tf.nn.relu)
    logits = v1.layers.dense(net, 10)
    return _classifier_spec(
        mode, logits, labels, lambda: v1.train.MomentumOptimizer(0.01, momentum=0.9)
    )


def feature_columns() -> list:
    fc = tf.feature_column
    return [
        fc.numeric_column("age", normalizer_fn=lambda v: (v - 49.0) / 18.0),
        fc.numeric_column("hours", normalizer_fn=lambda v: (v - 40.0) / 17.0),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list("education", WORDS)),
        fc.embedding_column(fc.categorical_column_with_hash_bucket("occupation", 1000), 8),
    ]


def adagrad() -> Any:
    if LEGACY_TF:
        return tf.keras.optimizers.legacy.Adagrad(0.05)
    return keras.optimizers.Adagrad(0.05)


def dnn_classifier(model_dir: str) -> Any:
    """The canned DNNClassifier of canned_dnn, with the default RunConfig but a seed."""
    return estimator.DNNClassifier(
        hidden_units=[64, 32],
        feature_columns=feature_columns(),
        model_dir=model_dir,
        optimizer=adagrad,
        config=estimator.RunConfig(tf_random_seed=1),
    )


def custom_estimator(model_fn: Callable) -> Callable[[str], Any]:
    def make(model_dir: str) -> Any:
        config = estimator.RunConfig(tf_random_seed=1)
        return estimator.Estimator(model_fn, model_dir=model_dir, config=config, params={})

    return make


# -- the same models hand-written in Keras 3 ---------------------------------------------


def _compiled(model, optimizer, metric=None) -> Any:
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[metric or keras.metrics.SparseCategoricalAccuracy()],
    )
    return model


def keras_mlp() -> Any:
    layers = keras.layers
    model = keras.Sequential(
        [
            keras.Input((64,)),
            layers.Dense(256, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(256, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(10),
        ]
    )
    return _compiled(model, keras.optimizers.Adam(1e-3))


def keras_cnn() -> Any:
    layers = keras.layers
    model = keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(128, activation="relu"),
            layers.Dense(10),
        ]
    )
    return _compiled(model, keras.optimizers.SGD(0.05))


def keras_wide_mlp() -> Any:
    layers = keras.layers
    hidden = [layers.Dense(1024, activation="relu") for _ in range(4)]
    model = keras.Sequential([keras.Input((WIDE_DIM,)), *hidden, layers.Dense(10)])
    return _compiled(model, keras.optimizers.SGD(0.01, momentum=0.9))


def keras_census_model() -> Any:
    layers = keras.layers
    inputs = {
        "age": keras.Input((1,), name="age"),
        "hours": keras.Input((1,), name="hours"),
        "education": keras.Input((1,), dtype="string", name="education"),
        "occupation": keras.Input((1,), dtype="string", name="occupation"),
    }
    age = layers.Normalization(mean=49.0, variance=18.0**2)(inputs["age"])
    hours = layers.Normalization(mean=40.0, variance=17.0**2)(inputs["hours"])
    education = layers.StringLookup(vocabulary=WORDS, num_oov_indices=0, output_mode="one_hot")(
        inputs["education"]
    )
    occupation = layers.Hashing(1000)(inputs["occupation"])
    occupation = layers.Flatten()(layers.Embedding(1000, 8)(occupation))
    net = layers.Concatenate()([age, hours, education, occupation])
    net = layers.Dense(64, activation="relu")(net)
    net = layers.Dense(32, activation="relu")(net)
    model = keras.Model(inputs, layers.Dense(1)(net))
    model.compile(
        optimizer=adagrad(),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)],
    )
    return model


def census_columns(features: dict) -> dict:
    """The census features shaped for keras_census_model's (1,)-shaped inputs."""
    return {name: values[:, None] for name, values in features.items()}


# -- the workloads of bench_speed_table.py ------------------------------------------------


@dataclasses.dataclass
class Workload:
    """One workload: how each implementation trains, evaluates and predicts it.

    `steps` timed training steps follow `warmup` untimed ones; the estimator's input_fns
    and the Keras datasets are built by the callables, inside the timed calls.
    """

    name: str
    steps: int
    warmup: int
    make_estimator: Callable[[str], Any]
    train_input_fn: Callable[[], tf.data.Dataset]
    eval_input_fn: Callable[[], tf.data.Dataset]
    predict_input_fn: Callable[[], tf.data.Dataset]
    keras_model: Callable[[], Any]
    keras_train: Callable[[], tf.data.Dataset]
    keras_eval: Callable[[], tf.data.Dataset]
    keras_predict: Callable[[], tf.data.Dataset]


WORKLOADS = ("mlp_digits", "cnn_tfrecord", "wide_mlp", "canned_dnn")


def workload(name: str, data_dir: str) -> Workload:
    """The workload called `name`; cnn_tfrecord writes its TFRecords into data_dir once."""
    if name == "mlp_digits":
        x_train, y_train, x_test, y_test = digits_split()
        batch = DIGITS_BATCH
        return Workload(
            name,
            steps=4000,
            warmup=200,
            make_estimator=custom_estimator(mlp_logging_hook_model_fn),
            train_input_fn=lambda: array_dataset(
                {"x": x_train}, y_train, batch=batch, training=True
            ),
            eval_input_fn=lambda: array_dataset({"x": x_test}, y_test, batch=batch, training=False),
            predict_input_fn=lambda: array_dataset({"x": x_test}, batch=batch, training=False),
            keras_model=keras_mlp,
            keras_train=lambda: array_dataset(x_train, y_train, batch=batch, training=True),
            keras_eval=lambda: array_dataset(x_test, y_test, batch=batch, training=False),
            keras_predict=lambda: array_dataset(x_test, batch=batch, training=False),
        )
    if name == "cnn_tfrecord":
        paths = write_digits_tfrecords(data_dir)
        train, test = paths["train"], paths["test"]
        return Workload(
            name,
            steps=2000,
            warmup=200,
            make_estimator=custom_estimator(cnn_model_fn),
            train_input_fn=lambda: tfrecord_dataset(train, training=True),
            eval_input_fn=lambda: tfrecord_dataset(test, training=False),
            predict_input_fn=lambda: _features_only(tfrecord_dataset(test, training=False)),
            keras_model=keras_cnn,
            keras_train=lambda: tfrecord_dataset(train, training=True, key=None),
            keras_eval=lambda: tfrecord_dataset(test, training=False, key=None),
            keras_predict=lambda: _features_only(tfrecord_dataset(test, training=False, key=None)),
        )
    if name == "wide_mlp":
        batch = WIDE_BATCH

        def data(split: str, *, labels: bool = True, key: str | None = "x") -> tf.data.Dataset:
            x, y = synthetic(split)
            features = {key: x} if key else x
            return array_dataset(
                features, y if labels else None, batch=batch, training=split == "train",
                shuffle=4096,
            )  # fmt: skip

        return Workload(
            name,
            steps=300,
            warmup=20,
            make_estimator=custom_estimator(wide_mlp_model_fn),
            train_input_fn=lambda: data("train"),
            eval_input_fn=lambda: data("test"),
            predict_input_fn=lambda: data("test", labels=False),
            keras_model=keras_wide_mlp,
            keras_train=lambda: data("train", key=None),
            keras_eval=lambda: data("test", key=None),
            keras_predict=lambda: data("test", labels=False, key=None),
        )
    if name == "canned_dnn":
        features, labels = census_like()
        test_features, test_labels = census_like(PREDICT_EXAMPLES + 1000, seed=1)
        columns, test_columns = census_columns(features), census_columns(test_features)
        return Workload(
            name,
            steps=2000,
            warmup=100,
            make_estimator=dnn_classifier,
            train_input_fn=lambda: canned_dataset(features, labels),
            eval_input_fn=lambda: canned_dataset(test_features, test_labels, training=False),
            predict_input_fn=lambda: canned_dataset(test_features, training=False),
            keras_model=keras_census_model,
            keras_train=lambda: canned_dataset(columns, labels),
            keras_eval=lambda: canned_dataset(test_columns, test_labels, training=False),
            keras_predict=lambda: canned_dataset(test_columns, training=False),
        )
    raise ValueError(
        f"Unknown workload: expected one of {', '.join(WORKLOADS)}. Received: name={name!r}"
    )
