"""Module paths of the removed tf.estimator that legacy code imports (plain strings).

They name modules of TensorFlow's and tensorflow-estimator's own trees that no longer
exist; `install()` provides them and `keras-estimator check` recognises them. Kept here,
beside the rest of what names TensorFlow's internals, and importing nothing.
"""

ESTIMATOR_MODULE_ROOTS = ("tensorflow_estimator.python.estimator", "tensorflow.python.estimator")
GUARDED_ROOTS = ("tensorflow_estimator", "tensorflow.python.estimator", "tensorflow.contrib")

# TensorFlow 2.11 moved `tensorflow.python.training.tracking` to `tensorflow.python.trackable`
# and `tensorflow.python.checkpoint`; code of the estimator era imports the old modules
# (AdaNet's graph_view). Old module -> where TensorFlow 2.21 keeps it.
MOVED_TRACKING_MODULES = {
    "tensorflow.python.training.tracking.base": "tensorflow.python.trackable.base",
    "tensorflow.python.training.tracking.data_structures": (
        "tensorflow.python.trackable.data_structures"
    ),
    "tensorflow.python.training.tracking.graph_view": "tensorflow.python.checkpoint.graph_view",
    "tensorflow.python.training.tracking.tracking": "tensorflow.python.trackable.autotrackable",
    "tensorflow.python.training.tracking.util": "tensorflow.python.checkpoint.checkpoint",
}
