"""`tf.contrib` for legacy estimator scripts: the pieces BERT-era code used most.

`install()` puts this package at `tf.compat.v1.contrib` (and `tensorflow.contrib` for
`from tensorflow.contrib import tpu`). Anything else of `tf.contrib` is gone from
TensorFlow; `keras-estimator check` names a replacement for each use.
"""

from keras_estimator.dropin.contrib import cluster_resolver, data, layers, tpu

__all__ = ["cluster_resolver", "data", "layers", "tpu"]
