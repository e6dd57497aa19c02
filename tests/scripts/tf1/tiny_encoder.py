"""The model half of tf1_text_classifier.py, in the style of a TF 1.x research repository
(its own module beside the script, `import tensorflow as tf`, the 1.x API through it)."""

import tensorflow as tf


def get_shape_list(tensor):
    """Static dimensions where known, dynamic ones elsewhere (as TF 1.x code did)."""
    static = tensor.shape.as_list()
    dynamic = tf.shape(tensor)
    return [dim if dim is not None else dynamic[i] for i, dim in enumerate(static)]


def layer_norm(tensor, name=None):
    return tf.contrib.layers.layer_norm(
        inputs=tensor, begin_norm_axis=-1, begin_params_axis=-1, scope=name
    )


def encode(token_ids, vocab_size, width, is_training):
    """Embeds `token_ids` [batch, length] and mean-pools them to [batch, width]."""
    batch_size, length = get_shape_list(token_ids)
    with tf.variable_scope("encoder"):
        table = tf.get_variable(
            "word_embeddings",
            [vocab_size, width],
            initializer=tf.truncated_normal_initializer(stddev=0.02),
        )
        embedded = tf.gather(table, tf.reshape(token_ids, [-1]))
        embedded = tf.reshape(embedded, [batch_size, length, width])
        embedded = layer_norm(embedded, name="LayerNorm")
        if is_training:
            embedded = tf.nn.dropout(embedded, keep_prob=0.9)
        pooled = tf.reduce_mean(embedded, axis=1)
        # TF1 shapes: a dimension is a tf.Dimension, its size `.value`.
        assert isinstance(pooled.shape[-1], tf.Dimension), type(pooled.shape[-1])
        hidden = tf.layers.dense(pooled, pooled.shape[-1].value, activation=tf.tanh, name="pooler")
    return hidden
