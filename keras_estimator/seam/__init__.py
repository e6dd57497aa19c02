"""The one place that touches TensorFlow and Keras internals.

`internals` imports every `tensorflow.python.*` / `keras.src.*` name and private attribute
keras_estimator relies on, checks at import that each is where it is expected (an
ImportError naming the TensorFlow / Keras versions otherwise), and offers them as named
functions. `patching` is the one way anything of TensorFlow or Keras is replaced for a
while: reference-counted and thread-safe. `legacy_paths` holds the module paths of the
removed tf.estimator (plain strings; it imports nothing).

Nothing outside this package imports `tensorflow.python` or `keras.src`.
"""
