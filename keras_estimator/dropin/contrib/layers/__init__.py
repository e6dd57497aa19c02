"""`tf.contrib.layers`: initializers, regularizers, layers and `optimize_loss` as TF1 had them.

Layers create their variables with `tf.compat.v1.get_variable` under contrib's scope names,
so TF1 checkpoints restore. Names of `tf.contrib.layers` not listed here raise an error
naming the replacement.
"""

import functools

from keras_estimator.dropin.contrib.layers.convolutional import (
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    convolution,
    convolution1d,
    convolution2d,
    convolution3d,
    max_pool2d,
)
from keras_estimator.dropin.contrib.layers.core import (
    dropout,
    embed_sequence,
    flatten,
    fully_connected,
)
from keras_estimator.dropin.contrib.layers.initializers import (
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)
from keras_estimator.dropin.contrib.layers.normalization import batch_norm, layer_norm
from keras_estimator.dropin.contrib.layers.optimize_loss import (
    OPTIMIZER_CLS_NAMES,
    OPTIMIZER_SUMMARIES,
    optimize_loss,
)
from keras_estimator.dropin.contrib.layers.regularizers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)
from keras_estimator.dropin.contrib.removed import removed_attribute_getattr

linear = functools.partial(fully_connected, activation_fn=None)  # contrib's alias


__getattr__ = removed_attribute_getattr(
    "layers", "tf.compat.v1.layers / keras.layers (or tf_slim.layers)"
)


__all__ = [
    "OPTIMIZER_CLS_NAMES",
    "OPTIMIZER_SUMMARIES",
    "apply_regularization",
    "avg_pool2d",
    "batch_norm",
    "conv1d",
    "conv2d",
    "conv3d",
    "convolution",
    "convolution1d",
    "convolution2d",
    "convolution3d",
    "dropout",
    "embed_sequence",
    "flatten",
    "fully_connected",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "layer_norm",
    "linear",
    "max_pool2d",
    "optimize_loss",
    "sum_regularizer",
    "variance_scaling_initializer",
    "xavier_initializer",
    "xavier_initializer_conv2d",
]
