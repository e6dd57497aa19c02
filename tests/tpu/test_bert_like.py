"""Acceptance test of `keras_estimator.tpu`: a BERT-style run_classifier on CPU (use_tpu=False).

The model, optimizer, input_fn and model_fn below are written the way google-research/bert's
run_classifier.py / modeling.py / optimization.py are (TF1 variable scopes, tf.get_variable,
tf.layers.dense, a hand-written Adam with weight decay that increments the global step in its
own train_op, TPUEstimatorSpec with scaffold_fn and eval_metrics). The flow pretrains the
encoder with one head, then fine-tunes a fresh head from that checkpoint via
`tf.train.init_from_checkpoint` inside `scaffold_fn`, evaluates and predicts.

The same file runs against tf.estimator's own TPUEstimator (TF 2.15) to prove the test right:

    cd tests && KE_TEST_BACKEND=legacy python -m pytest -q -p no:cacheprovider --noconftest \
        test_bert_like.py
"""

import os

BACKEND = os.environ.get("KE_TEST_BACKEND", "keras_estimator")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

if BACKEND == "legacy":
    import tensorflow.compat.v1 as tf

    estimator = tf.estimator
    tpu = tf.estimator.tpu
else:
    import tensorflow.compat.v1 as tf

    import keras_estimator as estimator  # first: installs tf.compat.v1.layers
    from keras_estimator import tpu

import collections  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# --------------------------------------------------------------------------------------------
# modeling.py, tiny
# --------------------------------------------------------------------------------------------

BERT_CONFIG = {
    "vocab_size": 30,
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
}
SEQ_LENGTH = 8
PAD, CLS, SEP, MASK = 0, 1, 2, 4
MARKER = 5  # the fine-tuning task: does token 5 appear in the sequence?
PRETRAIN_MARKER = 6  # the pretraining task, a different one: does token 6 appear?


def gelu(x):
    """Gaussian error linear unit, tanh approximation."""
    cdf = 0.5 * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def create_initializer(initializer_range=0.02):
    return tf.truncated_normal_initializer(stddev=initializer_range)


def get_shape_list(tensor):
    """Static dimensions where known, dynamic scalars elsewhere."""
    shape = tensor.shape.as_list()
    dynamic = tf.shape(tensor)
    return [dim if dim is not None else dynamic[i] for i, dim in enumerate(shape)]


def dropout(input_tensor, dropout_prob):
    if dropout_prob is None or dropout_prob == 0.0:
        return input_tensor
    return tf.nn.dropout(input_tensor, rate=dropout_prob)


def layer_norm(input_tensor, name="LayerNorm"):
    with tf.variable_scope(name):
        width = input_tensor.shape[-1]
        beta = tf.get_variable("beta", [width], initializer=tf.zeros_initializer())
        gamma = tf.get_variable("gamma", [width], initializer=tf.ones_initializer())
        mean, variance = tf.nn.moments(input_tensor, [-1], keep_dims=True)
        return (input_tensor - mean) * tf.rsqrt(variance + 1e-12) * gamma + beta


def layer_norm_and_dropout(input_tensor, dropout_prob):
    return dropout(layer_norm(input_tensor), dropout_prob)


def embedding_lookup(input_ids, vocab_size, embedding_size, initializer_range, use_one_hot):
    embedding_table = tf.get_variable(
        "word_embeddings",
        [vocab_size, embedding_size],
        initializer=create_initializer(initializer_range),
    )
    flat_ids = tf.reshape(input_ids, [-1])
    if use_one_hot:
        output = tf.matmul(tf.one_hot(flat_ids, depth=vocab_size), embedding_table)
    else:
        output = tf.gather(embedding_table, flat_ids)
    batch_size, seq_length = get_shape_list(input_ids)
    return tf.reshape(output, [batch_size, seq_length, embedding_size]), embedding_table


def embedding_postprocessor(input_tensor, token_type_ids, config):
    batch_size, seq_length, width = get_shape_list(input_tensor)
    output = input_tensor
    token_type_table = tf.get_variable(
        "token_type_embeddings",
        [config["type_vocab_size"], width],
        initializer=create_initializer(config["initializer_range"]),
    )
    one_hot_ids = tf.one_hot(tf.reshape(token_type_ids, [-1]), depth=config["type_vocab_size"])
    token_type_embeddings = tf.matmul(one_hot_ids, token_type_table)
    output += tf.reshape(token_type_embeddings, [batch_size, seq_length, width])
    full_position_embeddings = tf.get_variable(
        "position_embeddings",
        [config["max_position_embeddings"], width],
        initializer=create_initializer(config["initializer_range"]),
    )
    position_embeddings = tf.slice(full_position_embeddings, [0, 0], [seq_length, -1])
    output += tf.reshape(position_embeddings, [1, seq_length, width])
    return layer_norm_and_dropout(output, config["hidden_dropout_prob"])


def create_attention_mask(input_mask):
    """[batch, seq] 0/1 -> [batch, from_seq, to_seq] float."""
    batch_size, seq_length = get_shape_list(input_mask)
    to_mask = tf.cast(tf.reshape(input_mask, [batch_size, 1, seq_length]), tf.float32)
    return tf.ones([batch_size, seq_length, 1], tf.float32) * to_mask


def attention_layer(layer_input, attention_mask, batch_size, seq_length, config):
    """Self-attention over a [batch * seq, hidden] matrix; returns the same shape."""
    num_heads = config["num_attention_heads"]
    head_size = config["hidden_size"] // num_heads
    initializer = create_initializer(config["initializer_range"])

    def dense(name):
        return tf.layers.dense(
            layer_input, num_heads * head_size, name=name, kernel_initializer=initializer
        )

    def split_heads(tensor):
        tensor = tf.reshape(tensor, [batch_size, seq_length, num_heads, head_size])
        return tf.transpose(tensor, [0, 2, 1, 3])

    query, key, value = (split_heads(dense(name)) for name in ("query", "key", "value"))
    scores = tf.matmul(query, key, transpose_b=True) * (1.0 / math.sqrt(float(head_size)))
    adder = (1.0 - tf.expand_dims(attention_mask, axis=1)) * -10000.0
    probs = dropout(tf.nn.softmax(scores + adder), config["attention_probs_dropout_prob"])
    context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])
    return tf.reshape(context, [batch_size * seq_length, num_heads * head_size])


def transformer_model(input_tensor, attention_mask, config):
    batch_size, seq_length, hidden_size = get_shape_list(input_tensor)
    initializer = create_initializer(config["initializer_range"])
    prev_output = tf.reshape(input_tensor, [-1, hidden_size])
    all_layer_outputs = []
    for layer_idx in range(config["num_hidden_layers"]):
        with tf.variable_scope(f"layer_{layer_idx}"):
            layer_input = prev_output
            with tf.variable_scope("attention"):
                with tf.variable_scope("self"):
                    attention_output = attention_layer(
                        layer_input, attention_mask, batch_size, seq_length, config
                    )
                with tf.variable_scope("output"):
                    attention_output = tf.layers.dense(
                        attention_output, hidden_size, kernel_initializer=initializer
                    )
                    attention_output = dropout(attention_output, config["hidden_dropout_prob"])
                    attention_output = layer_norm(attention_output + layer_input)
            with tf.variable_scope("intermediate"):
                intermediate_output = tf.layers.dense(
                    attention_output,
                    config["intermediate_size"],
                    activation=gelu,
                    kernel_initializer=initializer,
                )
            with tf.variable_scope("output"):
                layer_output = tf.layers.dense(
                    intermediate_output, hidden_size, kernel_initializer=initializer
                )
                layer_output = dropout(layer_output, config["hidden_dropout_prob"])
                layer_output = layer_norm(layer_output + attention_output)
            prev_output = layer_output
            all_layer_outputs.append(
                tf.reshape(layer_output, [batch_size, seq_length, hidden_size])
            )
    return all_layer_outputs[-1]


class BertModel:
    def __init__(
        self,
        config,
        is_training,
        input_ids,
        input_mask,
        token_type_ids,
        use_one_hot_embeddings=False,
        scope=None,
    ):
        config = dict(config)
        if not is_training:
            config["hidden_dropout_prob"] = 0.0
            config["attention_probs_dropout_prob"] = 0.0
        with tf.variable_scope(scope, default_name="bert"):
            with tf.variable_scope("embeddings"):
                self.embedding_output, self.embedding_table = embedding_lookup(
                    input_ids,
                    config["vocab_size"],
                    config["hidden_size"],
                    config["initializer_range"],
                    use_one_hot_embeddings,
                )
                self.embedding_output = embedding_postprocessor(
                    self.embedding_output, token_type_ids, config
                )
            with tf.variable_scope("encoder"):
                attention_mask = create_attention_mask(input_mask)
                self.sequence_output = transformer_model(
                    self.embedding_output, attention_mask, config
                )
            with tf.variable_scope("pooler"):
                first_token_tensor = tf.squeeze(self.sequence_output[:, 0:1, :], axis=1)
                self.pooled_output = tf.layers.dense(
                    first_token_tensor,
                    config["hidden_size"],
                    activation=tf.tanh,
                    kernel_initializer=create_initializer(config["initializer_range"]),
                )

    def get_pooled_output(self):
        return self.pooled_output


def get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    """{checkpoint name: variable name} for every trainable variable the checkpoint holds."""
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        name_to_variable[re.match(r"^(.*):\d+$", var.name).group(1)] = var
    assignment_map = collections.OrderedDict()
    initialized_variable_names = {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized_variable_names[name] = 1
        initialized_variable_names[name + ":0"] = 1
    return assignment_map, initialized_variable_names


# --------------------------------------------------------------------------------------------
# optimization.py
# --------------------------------------------------------------------------------------------


class AdamWeightDecayOptimizer(tf.train.Optimizer):
    """Adam with decoupled L2 weight decay; slots are plain variables named <var>/adam_{m,v}."""

    def __init__(
        self,
        learning_rate,
        weight_decay_rate=0.0,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=None,
        name="AdamWeightDecayOptimizer",
    ):
        super().__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for grad, param in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = self._get_variable_name(param.name)
            m = tf.get_variable(
                name=param_name + "/adam_m",
                shape=param.shape.as_list(),
                dtype=tf.float32,
                trainable=False,
                initializer=tf.zeros_initializer(),
            )
            v = tf.get_variable(
                name=param_name + "/adam_v",
                shape=param.shape.as_list(),
                dtype=tf.float32,
                trainable=False,
                initializer=tf.zeros_initializer(),
            )
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = tf.multiply(self.beta_2, v) + tf.multiply(1.0 - self.beta_2, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            next_param = param - self.learning_rate * update
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        for pattern in self.exclude_from_weight_decay or []:
            if re.search(pattern, param_name) is not None:
                return False
        return True

    def _get_variable_name(self, param_name):
        match = re.match("^(.*):\\d+$", param_name)
        return match.group(1) if match is not None else param_name


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
    """Linear warmup then linear decay; clips by global norm; bumps the global step itself.

    use_tpu is kept for the signature: BERT wraps the optimizer in CrossShardOptimizer there,
    which is left out as it is TensorFlow's, not the estimator's.
    """
    del use_tpu
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
    learning_rate = tf.train.polynomial_decay(
        learning_rate, global_step, num_train_steps, end_learning_rate=0.0, power=1.0, cycle=False
    )
    if num_warmup_steps:
        global_steps_int = tf.cast(global_step, tf.int32)
        warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
        warmup_percent_done = tf.cast(global_steps_int, tf.float32) / tf.cast(
            warmup_steps_int, tf.float32
        )
        warmup_learning_rate = init_lr * warmup_percent_done
        is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
        learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup_learning_rate
    optimizer = AdamWeightDecayOptimizer(
        learning_rate=learning_rate,
        weight_decay_rate=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"],
    )
    tvars = tf.trainable_variables()
    grads = tf.gradients(loss, tvars)
    grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
    # AdamWeightDecayOptimizer does not touch global_step: the train_op does it.
    new_global_step = global_step + 1
    train_op = tf.group(train_op, [global_step.assign(new_global_step)])
    return train_op


# --------------------------------------------------------------------------------------------
# run_classifier.py
# --------------------------------------------------------------------------------------------


def input_fn_builder(input_file, seq_length, is_training, drop_remainder):
    name_to_features = {
        "input_ids": tf.FixedLenFeature([seq_length], tf.int64),
        "input_mask": tf.FixedLenFeature([seq_length], tf.int64),
        "segment_ids": tf.FixedLenFeature([seq_length], tf.int64),
        "label_ids": tf.FixedLenFeature([], tf.int64),
        "is_real_example": tf.FixedLenFeature([], tf.int64),
    }

    def _decode_record(record, name_to_features):
        example = tf.io.parse_single_example(record, name_to_features)
        # tf.Example only supports int64, but the TPU only supports int32.
        for name in list(example.keys()):
            t = example[name]
            if t.dtype == tf.int64:
                t = tf.cast(t, tf.int32)
            example[name] = t
        return example

    def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=100)
        d = d.apply(
            tf.data.experimental.map_and_batch(
                lambda record: _decode_record(record, name_to_features),
                batch_size=batch_size,
                drop_remainder=drop_remainder,
            )
        )
        return d

    return input_fn


def create_model(
    bert_config,
    is_training,
    input_ids,
    input_mask,
    segment_ids,
    labels,
    num_labels,
    use_one_hot_embeddings,
    head_scope=None,
):
    """The classifier head; head_scope="cls/seq_relationship" is the pretraining variant."""
    model = BertModel(
        config=bert_config,
        is_training=is_training,
        input_ids=input_ids,
        input_mask=input_mask,
        token_type_ids=segment_ids,
        use_one_hot_embeddings=use_one_hot_embeddings,
    )
    output_layer = model.get_pooled_output()
    hidden_size = output_layer.shape[-1]
    with tf.variable_scope(head_scope or tf.get_variable_scope()):
        output_weights = tf.get_variable(
            "output_weights",
            [num_labels, hidden_size],
            initializer=tf.truncated_normal_initializer(stddev=0.02),
        )
        output_bias = tf.get_variable(
            "output_bias", [num_labels], initializer=tf.zeros_initializer()
        )
    with tf.variable_scope("loss"):
        if is_training:
            output_layer = tf.nn.dropout(output_layer, rate=0.1)
        logits = tf.matmul(output_layer, output_weights, transpose_b=True)
        logits = tf.nn.bias_add(logits, output_bias)
        probabilities = tf.nn.softmax(logits, axis=-1)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot_labels = tf.one_hot(labels, depth=num_labels, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
        loss = tf.reduce_mean(per_example_loss)
        return loss, per_example_loss, logits, probabilities


def model_fn_builder(
    bert_config,
    num_labels,
    init_checkpoint,
    learning_rate,
    num_train_steps,
    num_warmup_steps,
    use_tpu,
    use_one_hot_embeddings,
    head_scope=None,
    trace=None,
):
    """BERT's model_fn; `trace` (a dict of lists) records what the estimator did with it."""
    trace = trace if trace is not None else collections.defaultdict(list)

    def model_fn(features, labels, mode, params):
        tf.logging.info("*** Features ***")
        for name in sorted(features.keys()):
            tf.logging.info("  name = %s, shape = %s", name, features[name].shape)
        trace["model_fn_params"].append((mode, dict(params)))

        input_ids = features["input_ids"]
        input_mask = features["input_mask"]
        segment_ids = features["segment_ids"]
        label_ids = features["label_ids"]
        if "is_real_example" in features:
            is_real_example = tf.cast(features["is_real_example"], dtype=tf.float32)
        else:
            is_real_example = tf.ones(tf.shape(label_ids), dtype=tf.float32)

        is_training = mode == estimator.ModeKeys.TRAIN
        total_loss, per_example_loss, logits, probabilities = create_model(
            bert_config,
            is_training,
            input_ids,
            input_mask,
            segment_ids,
            label_ids,
            num_labels,
            use_one_hot_embeddings,
            head_scope,
        )

        tvars = tf.trainable_variables()
        initialized_variable_names = {}
        scaffold_fn = None
        if init_checkpoint:
            assignment_map, initialized_variable_names = get_assignment_map_from_checkpoint(
                tvars, init_checkpoint
            )
            trace["assignment_map"].append(dict(assignment_map))
            if use_tpu:

                def tpu_scaffold():
                    trace["scaffold_fn_calls"].append(mode)
                    tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                    return tf.train.Scaffold()

                scaffold_fn = tpu_scaffold
            else:
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)

        tf.logging.info("**** Trainable Variables ****")
        for var in tvars:
            init_string = ", *INIT_FROM_CKPT*" if var.name in initialized_variable_names else ""
            tf.logging.info("  name = %s, shape = %s%s", var.name, var.shape, init_string)

        if mode == estimator.ModeKeys.TRAIN:
            train_op = create_optimizer(
                total_loss, learning_rate, num_train_steps, num_warmup_steps, use_tpu
            )
            output_spec = tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn
            )
        elif mode == estimator.ModeKeys.EVAL:

            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(
                    labels=label_ids, predictions=predictions, weights=is_real_example
                )
                loss = tf.metrics.mean(values=per_example_loss, weights=is_real_example)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
            output_spec = tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=scaffold_fn
            )
        else:
            output_spec = tpu.TPUEstimatorSpec(
                mode=mode, predictions={"probabilities": probabilities}, scaffold_fn=scaffold_fn
            )
        return output_spec

    return model_fn


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------

TRAIN_BATCH_SIZE, EVAL_BATCH_SIZE, PREDICT_BATCH_SIZE = 16, 8, 8
PRETRAIN_STEPS, FINE_TUNE_STEPS, MORE_STEPS = 30, 150, 5
PRETRAIN_LR, FINE_TUNE_LR = 1e-3, 1e-3  # higher rates get stuck at chance for some seeds
NUM_EVAL, NUM_PREDICT = 64, 21  # 21: the last predict batch is partial (5 of 8)


def make_examples(n, seed, marker=MARKER):
    """[CLS] tokens [SEP] padded to SEQ_LENGTH; label 1 iff token `marker` appears."""
    rng = np.random.RandomState(seed)
    examples = []
    for i in range(n):
        label = i % 2
        length = rng.randint(3, SEQ_LENGTH - 1)  # content tokens, leaves room for CLS, SEP
        tokens = list(rng.randint(PRETRAIN_MARKER + 1, BERT_CONFIG["vocab_size"], size=length))
        for other in {MARKER, PRETRAIN_MARKER} - {marker}:  # noise: the other task's token
            if rng.rand() < 0.5:
                tokens[rng.randint(length)] = other
        if label:
            for pos in rng.choice(length, size=rng.randint(1, 3), replace=False):
                tokens[pos] = marker
        input_ids = [CLS, *tokens, SEP]
        input_mask = [1] * len(input_ids)
        padding = [PAD] * (SEQ_LENGTH - len(input_ids))
        examples.append(
            {
                "input_ids": input_ids + padding,
                "input_mask": input_mask + padding,
                "segment_ids": [0] * SEQ_LENGTH,
                "label_ids": [label],
                "is_real_example": [1],
            }
        )
    order = rng.permutation(n)
    return [examples[i] for i in order]


def write_tfrecord(path, examples):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in examples:
            features = {
                name: tf.train.Feature(
                    int64_list=tf.train.Int64List(value=[int(v) for v in values])
                )
                for name, values in example.items()
            }
            record = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(record.SerializeToString())
    return str(path)


def recording(input_fn, log, tag):
    """Wraps an input_fn(params) to record the params TPUEstimator passes it."""

    def wrapped(params):
        log.append((tag, dict(params)))
        return input_fn(params)

    return wrapped


def run_config(model_dir):
    return tpu.RunConfig(
        cluster=None,
        master=None,
        model_dir=model_dir,
        save_checkpoints_steps=1000,
        tf_random_seed=1234,
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=10,
            num_shards=8,
            per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )


def encoder_variable_names(checkpoint):
    return sorted(
        name
        for name, _ in tf.train.list_variables(checkpoint)
        if name.startswith("bert/") and not name.endswith(("/adam_m", "/adam_v"))
    )


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """Pretrain, fine-tune from the pretrained checkpoint, train more, evaluate, predict."""
    tmp = tmp_path_factory.mktemp("bert_like")
    pretrain_file = write_tfrecord(
        tmp / "pretrain.tf_record", make_examples(512, seed=3, marker=PRETRAIN_MARKER)
    )
    train_file = write_tfrecord(tmp / "train.tf_record", make_examples(512, seed=0))
    eval_file = write_tfrecord(tmp / "eval.tf_record", make_examples(NUM_EVAL, seed=1))
    predict_examples = make_examples(NUM_PREDICT, seed=2)
    predict_file = write_tfrecord(tmp / "predict.tf_record", predict_examples)
    out = {"tmp": tmp, "predict_labels": [e["label_ids"][0] for e in predict_examples]}

    # Pretraining: the same bert/ encoder under a cls/ head; use_tpu=False throughout.
    pre_trace = collections.defaultdict(list)
    pre_inputs = []
    pretrain = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(
            BERT_CONFIG,
            num_labels=2,
            init_checkpoint=None,
            learning_rate=PRETRAIN_LR,
            num_train_steps=PRETRAIN_STEPS,
            num_warmup_steps=3,
            use_tpu=False,
            use_one_hot_embeddings=False,
            head_scope="cls/seq_relationship",
            trace=pre_trace,
        ),
        config=run_config(str(tmp / "pretrain")),
        params={"task": "pretraining"},
        train_batch_size=TRAIN_BATCH_SIZE,
        eval_batch_size=EVAL_BATCH_SIZE,
        predict_batch_size=PREDICT_BATCH_SIZE,
    )
    pretrain_input_fn = input_fn_builder(pretrain_file, SEQ_LENGTH, True, True)
    pretrain.train(recording(pretrain_input_fn, pre_inputs, "train"), max_steps=PRETRAIN_STEPS)
    out.update(pre_trace=pre_trace, pre_inputs=pre_inputs)
    out["pre_ckpt"] = tf.train.latest_checkpoint(str(tmp / "pretrain"))

    # Fine-tuning: a new model_dir; init_checkpoint goes through scaffold_fn (use_tpu=True is
    # given to model_fn_builder only), while the TPUEstimator itself runs on CPU.
    trace = collections.defaultdict(list)
    inputs = []
    fine = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(
            BERT_CONFIG,
            num_labels=2,
            init_checkpoint=out["pre_ckpt"],
            learning_rate=FINE_TUNE_LR,
            num_train_steps=FINE_TUNE_STEPS + MORE_STEPS,
            num_warmup_steps=6,
            use_tpu=True,
            use_one_hot_embeddings=True,
            trace=trace,
        ),
        config=run_config(str(tmp / "fine")),
        train_batch_size=TRAIN_BATCH_SIZE,
        eval_batch_size=EVAL_BATCH_SIZE,
        predict_batch_size=PREDICT_BATCH_SIZE,
    )
    train_input_fn = input_fn_builder(train_file, SEQ_LENGTH, True, True)
    fine.train(recording(train_input_fn, inputs, "train"), max_steps=FINE_TUNE_STEPS)
    out["step_after_train"] = fine.get_variable_value("global_step")
    out["fine_after_train"] = tf.train.latest_checkpoint(str(tmp / "fine"))
    out["scaffold_calls_after_train"] = list(trace["scaffold_fn_calls"])
    # A second train() resumes from model_dir: the pretrained values are not applied again.
    fine.train(recording(train_input_fn, inputs, "train"), steps=MORE_STEPS)
    out["step_after_more"] = fine.get_variable_value("global_step")
    out["fine_final"] = tf.train.latest_checkpoint(str(tmp / "fine"))

    eval_input_fn = input_fn_builder(eval_file, SEQ_LENGTH, False, False)
    out["eval"] = fine.evaluate(recording(eval_input_fn, inputs, "eval"), steps=None)
    predict_input_fn = input_fn_builder(predict_file, SEQ_LENGTH, False, False)
    out["predictions"] = list(fine.predict(recording(predict_input_fn, inputs, "predict")))
    out.update(trace=trace, inputs=inputs, fine=fine)
    return out


def test_pretraining_checkpoint_has_the_bert_encoder_and_its_own_head(flow):
    names = dict(tf.train.list_variables(flow["pre_ckpt"]))
    assert flow["pre_ckpt"].endswith(f"model.ckpt-{PRETRAIN_STEPS}")
    assert tf.train.load_variable(flow["pre_ckpt"], "global_step") == PRETRAIN_STEPS
    assert names["bert/embeddings/word_embeddings"] == [30, 16]
    assert names["bert/embeddings/position_embeddings"] == [16, 16]
    assert names["bert/embeddings/token_type_embeddings"] == [2, 16]
    for prefix in ("bert/embeddings/", "bert/encoder/layer_1/output/"):
        assert names[prefix + "LayerNorm/beta"] == [16]
        assert names[prefix + "LayerNorm/gamma"] == [16]
    for part in ("query", "key", "value"):
        assert names[f"bert/encoder/layer_0/attention/self/{part}/kernel"] == [16, 16]
    assert names["bert/encoder/layer_1/attention/output/dense/kernel"] == [16, 16]
    assert names["bert/encoder/layer_1/intermediate/dense/kernel"] == [16, 32]
    assert names["bert/encoder/layer_1/output/dense/kernel"] == [32, 16]
    assert names["bert/pooler/dense/kernel"] == [16, 16]
    assert names["cls/seq_relationship/output_weights"] == [2, 16]
    # The optimizer's tf.get_variable slots are saved next to their variables.
    assert names["bert/embeddings/word_embeddings/adam_m"] == [30, 16]
    assert names["cls/seq_relationship/output_bias/adam_v"] == [2]
    assert "output_weights" not in names


def test_fine_tune_starts_from_pretrained_encoder_once(flow):
    pre, tmp = flow["pre_ckpt"], flow["tmp"]
    encoder = encoder_variable_names(pre)
    assert len(encoder) == 5 + 2 * 16 + 2  # embeddings, 2 layers, pooler
    # The assignment map (built in every model_fn call) maps exactly the encoder, 1:1.
    for assignment_map in flow["trace"]["assignment_map"]:
        assert assignment_map == {name: name for name in encoder}
    # Applied before the first step: model.ckpt-0 holds the pretrained encoder and a fresh
    # classifier head, and nothing of the pretraining head or its optimizer slots.
    step0 = str(tmp / "fine" / "model.ckpt-0")
    step0_names = dict(tf.train.list_variables(step0))
    assert tf.train.load_variable(step0, "global_step") == 0
    for name in encoder:
        np.testing.assert_array_equal(
            tf.train.load_variable(step0, name), tf.train.load_variable(pre, name), err_msg=name
        )
        # Adam slots start at zero: they were not mapped.
        assert not tf.train.load_variable(step0, name + "/adam_m").any(), name
    assert step0_names["output_weights"] == [2, 16]
    assert not any(name.startswith("cls/") for name in step0_names)
    # Applied once: training moved every encoder weight away from the pretrained values ...
    after_train = flow["fine_after_train"]
    assert after_train.endswith(f"model.ckpt-{FINE_TUNE_STEPS}")
    for name in encoder:
        assert not np.array_equal(
            tf.train.load_variable(after_train, name), tf.train.load_variable(pre, name)
        ), name
    for name in (
        "bert/embeddings/word_embeddings",
        "bert/encoder/layer_0/attention/self/query/kernel",
    ):
        assert not np.allclose(
            tf.train.load_variable(after_train, name), tf.train.load_variable(pre, name)
        ), name
    # ... and the second train() went on from there rather than from the pretrained values.
    final = flow["fine_final"]
    assert final.endswith(f"model.ckpt-{FINE_TUNE_STEPS + MORE_STEPS}")
    kernel = "bert/encoder/layer_0/attention/self/query/kernel"
    np.testing.assert_allclose(
        tf.train.load_variable(final, kernel),
        tf.train.load_variable(after_train, kernel),
        atol=0.05,
    )
    assert not np.array_equal(
        tf.train.load_variable(final, kernel), tf.train.load_variable(after_train, kernel)
    )


def test_scaffold_fn_is_called_on_cpu_once_per_model_fn_call(flow):
    # tf.estimator builds a graph (calls model_fn) per train() call; an implementation may
    # reuse the first one for the second train(), so only the order of modes is pinned.
    modes = [mode for mode, _ in flow["trace"]["model_fn_params"]]
    assert [mode for i, mode in enumerate(modes) if mode not in modes[:i]] == [
        estimator.ModeKeys.TRAIN,
        estimator.ModeKeys.EVAL,
        estimator.ModeKeys.PREDICT,
    ]
    assert modes.count(estimator.ModeKeys.TRAIN) in (1, 2)
    # Called right after model_fn in every mode (TPUEstimatorSpec.as_estimator_spec on CPU).
    assert flow["scaffold_calls_after_train"] == [estimator.ModeKeys.TRAIN]
    assert flow["trace"]["scaffold_fn_calls"] == modes


def test_params_carry_the_batch_size_of_each_mode(flow):
    batch = {
        estimator.ModeKeys.TRAIN: TRAIN_BATCH_SIZE,
        estimator.ModeKeys.EVAL: EVAL_BATCH_SIZE,
        estimator.ModeKeys.PREDICT: PREDICT_BATCH_SIZE,
    }
    # On CPU the global batch size, not divided by num_shards; no 'context' key; the model_fn
    # (not the input_fn) gets use_tpu=False; the user's params come along.
    assert flow["pre_inputs"] == [("train", {"task": "pretraining", "batch_size": 16})]
    assert flow["pre_trace"]["model_fn_params"] == [
        (estimator.ModeKeys.TRAIN, {"task": "pretraining", "batch_size": 16, "use_tpu": False})
    ]
    assert flow["inputs"] == [
        ("train", {"batch_size": TRAIN_BATCH_SIZE}),
        ("train", {"batch_size": TRAIN_BATCH_SIZE}),
        ("eval", {"batch_size": EVAL_BATCH_SIZE}),
        ("predict", {"batch_size": PREDICT_BATCH_SIZE}),
    ]
    for mode, params in flow["trace"]["model_fn_params"]:
        assert params == {"batch_size": batch[mode], "use_tpu": False}, mode
    # The estimator's own params are not changed by it.
    assert flow["fine"].params == {}


def test_global_step_counts_train_steps_once(flow):
    # The train_op increments global_step itself (the optimizer does not): one per step.
    assert flow["step_after_train"] == FINE_TUNE_STEPS
    assert flow["step_after_more"] == FINE_TUNE_STEPS + MORE_STEPS
    assert flow["fine"].get_variable_value("global_step") == FINE_TUNE_STEPS + MORE_STEPS


def test_evaluate_returns_the_metric_fn_metrics(flow):
    result = flow["eval"]
    assert set(result) == {"eval_accuracy", "eval_loss", "loss", "global_step"}
    assert result["global_step"] == FINE_TUNE_STEPS + MORE_STEPS
    assert result["eval_accuracy"] >= 0.9, result
    # Equal batches: the mean of the per-batch losses is the mean per-example loss.
    np.testing.assert_allclose(result["eval_loss"], result["loss"], rtol=1e-4)
    assert result["eval_loss"] < math.log(2) * 0.75
    assert (flow["tmp"] / "fine" / "eval").is_dir()


def test_predict_yields_probabilities_for_every_example(flow):
    predictions = flow["predictions"]
    assert len(predictions) == NUM_PREDICT  # the partial last batch included
    for row in predictions:
        assert set(row) == {"probabilities"}
        assert row["probabilities"].shape == (2,)
        np.testing.assert_allclose(row["probabilities"].sum(), 1.0, rtol=1e-5)
    predicted = np.argmax([row["probabilities"] for row in predictions], axis=1)
    assert np.mean(predicted == np.array(flow["predict_labels"])) >= 0.85


def test_reserved_params_keys_are_rejected(tmp_path):
    model_fn = model_fn_builder(BERT_CONFIG, 2, None, 1e-3, 10, 1, False, False)
    for params in ({"batch_size": 4}, {"context": None, "lr": 1e-3}):
        with pytest.raises(ValueError, match="are reserved keys but existed in params"):
            tpu.TPUEstimator(
                model_fn=model_fn,
                config=run_config(str(tmp_path)),
                params=params,
                use_tpu=False,
                train_batch_size=TRAIN_BATCH_SIZE,
            )
    # 'use_tpu' is not reserved.
    tpu.TPUEstimator(
        model_fn=model_fn,
        config=run_config(str(tmp_path)),
        params={"use_tpu": False},
        use_tpu=False,
        train_batch_size=TRAIN_BATCH_SIZE,
    )
