"""A TensorFlow 1.x text classifier written as BERT-era research code was: `import tensorflow
as tf` with the 1.x API through it (tf.flags, tf.logging, tf.gfile, tf.app.run,
tf.get_variable, tf.layers, tf.contrib, `dim.value`), a model module and a hand-written
optimizer beside it, a TPUEstimator with use_tpu=False. It never ran on TensorFlow 2 as it
is; `keras-estimator run` runs it unchanged (tests/dropin/test_tf1_scripts.py)."""

import collections
import os

import numpy as np
import slot_optimizer
import tensorflow as tf
import tiny_encoder

if os.environ.get("CALL_DISABLE_V2_BEHAVIOR"):  # as many TF 1.x-era scripts began
    tf.disable_v2_behavior()

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", None, "Where checkpoints and results go.")
flags.DEFINE_integer("train_steps", 100, "Training steps.")
flags.DEFINE_integer("batch_size", 16, "Batch size of every mode.")
flags.DEFINE_integer("seq_length", 8, "Tokens per example.")
flags.DEFINE_bool("use_tpu", False, "Whether to use a TPU.")

VOCAB = 20


def write_examples(path, n, seed):
    """Examples whose label is whether token 1 occurs in them."""
    rng = np.random.RandomState(seed)
    with tf.python_io.TFRecordWriter(path) as writer:
        for _ in range(n):
            ids = rng.randint(2, VOCAB, size=FLAGS.seq_length)
            if rng.rand() < 0.5:
                ids[rng.randint(FLAGS.seq_length)] = 1
            features = collections.OrderedDict()
            features["input_ids"] = tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
            features["label"] = tf.train.Feature(
                int64_list=tf.train.Int64List(value=[int(1 in ids)])
            )
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())


def input_fn_builder(path, is_training, drop_remainder):
    spec = {
        "input_ids": tf.FixedLenFeature([FLAGS.seq_length], tf.int64),
        "label": tf.FixedLenFeature([], tf.int64),
    }

    def decode(record):
        example = tf.parse_single_example(record, spec)
        return {name: tf.to_int32(value) for name, value in example.items()}

    def input_fn(params):
        dataset = tf.data.TFRecordDataset(path)
        if is_training:
            dataset = dataset.repeat().shuffle(buffer_size=100, seed=3)
        return dataset.apply(
            tf.contrib.data.map_and_batch(
                decode, batch_size=params["batch_size"], drop_remainder=drop_remainder
            )
        )

    return input_fn


def model_fn(features, labels, mode, params):
    tf.logging.info("*** Features ***")
    for name in sorted(features):
        tf.logging.info("  name = %s, shape = %s", name, features[name].shape)
    is_training = mode == tf.estimator.ModeKeys.TRAIN
    hidden = tiny_encoder.encode(features["input_ids"], VOCAB, 16, is_training)
    width = hidden.shape[-1].value
    output_weights = tf.get_variable(
        "output_weights", [2, width], initializer=tf.truncated_normal_initializer(stddev=0.02)
    )
    logits = tf.matmul(hidden, output_weights, transpose_b=True)
    probabilities = tf.nn.softmax(logits, axis=-1)
    label = features["label"]
    loss = tf.reduce_mean(
        -tf.reduce_sum(tf.one_hot(label, 2) * tf.nn.log_softmax(logits, -1), axis=-1)
    )
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = slot_optimizer.MomentumWithNamedSlots(0.1)
        if FLAGS.use_tpu:
            optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
        grads = tf.gradients(loss, tf.trainable_variables())
        train_op = optimizer.apply_gradients(
            zip(grads, tf.trainable_variables()), global_step=tf.train.get_global_step()
        )
        return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    if mode == tf.estimator.ModeKeys.EVAL:

        def metric_fn(label, logits):
            predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
            return {"eval_accuracy": tf.metrics.accuracy(label, predicted)}

        return tf.contrib.tpu.TPUEstimatorSpec(
            mode=mode, loss=loss, eval_metrics=(metric_fn, [label, logits])
        )
    return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, predictions={"probabilities": probabilities})


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.gfile.MakeDirs(FLAGS.output_dir)
    train_file = os.path.join(FLAGS.output_dir, "train.tf_record")
    eval_file = os.path.join(FLAGS.output_dir, "eval.tf_record")
    write_examples(train_file, 256, seed=0)
    write_examples(eval_file, 64, seed=1)
    run_config = tf.contrib.tpu.RunConfig(
        model_dir=FLAGS.output_dir,
        tf_random_seed=1,
        save_checkpoints_steps=FLAGS.train_steps,
        tpu_config=tf.contrib.tpu.TPUConfig(
            iterations_per_loop=10,
            per_host_input_for_training=tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = tf.contrib.tpu.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn,
        config=run_config,
        train_batch_size=FLAGS.batch_size,
        eval_batch_size=FLAGS.batch_size,
        predict_batch_size=FLAGS.batch_size,
    )
    estimator.train(input_fn_builder(train_file, True, True), max_steps=FLAGS.train_steps)
    result = estimator.evaluate(input_fn_builder(eval_file, False, True), steps=None)
    with tf.gfile.GFile(os.path.join(FLAGS.output_dir, "eval_results.txt"), "w") as writer:
        for key in sorted(result.keys()):
            tf.logging.info("  %s = %s", key, str(result[key]))
            writer.write("%s = %s\n" % (key, str(result[key])))  # noqa: UP031  (1.x style, kept)
    predictions = list(estimator.predict(input_fn_builder(eval_file, False, False)))
    print("PREDICTIONS %d" % len(predictions))  # noqa: UP031
    print("EVAL_ACCURACY %.3f" % result["eval_accuracy"])  # noqa: UP031
    print("TF_CPP_MIN_LOG_LEVEL %s" % os.environ.get("TF_CPP_MIN_LOG_LEVEL"))  # noqa: UP031


if __name__ == "__main__":
    flags.mark_flag_as_required("output_dir")
    tf.app.run()
