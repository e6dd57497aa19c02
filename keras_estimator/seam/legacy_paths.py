"""Module paths of the removed tf.estimator that legacy code imports (plain strings).

They name modules of TensorFlow's and tensorflow-estimator's own trees that no longer
exist; `install()` provides them and `keras-estimator check` recognises them. Kept here,
beside the rest of what names TensorFlow's internals, and importing nothing.
"""

ESTIMATOR_MODULE_ROOTS = ("tensorflow_estimator.python.estimator", "tensorflow.python.estimator")
GUARDED_ROOTS = ("tensorflow_estimator", "tensorflow.python.estimator", "tensorflow.contrib")
