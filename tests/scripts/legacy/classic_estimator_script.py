"""An unmodified legacy tf.estimator script in the classic TF1 style (it runs on TF 2.15 with
tensorflow-estimator as it is, and on TF 2.21 under `python -m keras_estimator run`)."""

import os

import numpy as np
import tensorflow.compat.v1 as tf

flags = tf.flags
flags.DEFINE_string("model_dir", None, "Where to write checkpoints and the export.")
flags.DEFINE_integer("train_steps", 300, "Training steps.")
FLAGS = flags.FLAGS


def write_tfrecord(path, n=300):
    rng = np.random.RandomState(0)
    x = rng.randn(n, 4).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1)
    with tf.io.TFRecordWriter(path) as writer:
        for features, label in zip(x, y):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=features)),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }))  # fmt: skip
            writer.write(example.SerializeToString())


def input_fn(path, training):
    def parse(record):
        spec = {
            "x": tf.io.FixedLenFeature([4], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64),
        }
        features = tf.io.parse_single_example(record, spec)
        label = features.pop("label")
        return features, label

    dataset = tf.data.TFRecordDataset(path).map(parse)
    if training:
        dataset = dataset.shuffle(300, seed=1).repeat()
    return dataset.batch(32)


def model_fn(features, labels, mode, params):
    net = tf.layers.dense(features["x"], params["hidden"], activation=tf.nn.relu)
    logits = tf.layers.dense(net, 3)
    predictions = {"class": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(
            mode,
            predictions=predictions,
            export_outputs={"serving_default": tf.estimator.export.PredictOutput(predictions)},
        )
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.metrics.accuracy(labels, predictions["class"])}
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    data = os.path.join(FLAGS.model_dir, "data.tfrecord")
    tf.gfile.MakeDirs(FLAGS.model_dir)
    write_tfrecord(data)
    config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=100)
    est = tf.estimator.Estimator(model_fn, config=config, params={"hidden": 16})
    train_spec = tf.estimator.TrainSpec(lambda: input_fn(data, True), max_steps=FLAGS.train_steps)
    eval_spec = tf.estimator.EvalSpec(lambda: input_fn(data, False), steps=None, throttle_secs=0)
    metrics, _ = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    with tf.Graph().as_default():
        serving_features = {"x": tf.placeholder(tf.float32, [None, 4], name="x")}
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(serving_features)
    export_dir = est.export_saved_model(os.path.join(FLAGS.model_dir, "export"), receiver_fn)
    print("ACCURACY %.3f" % metrics["accuracy"])  # noqa: UP031  (legacy style, kept)
    print("EXPORTED %s" % export_dir.decode())  # noqa: UP031
    if metrics["accuracy"] < 0.8:
        raise SystemExit(3)


if __name__ == "__main__":
    tf.app.run()
