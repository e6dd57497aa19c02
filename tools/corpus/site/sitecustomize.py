# Corpus runs only: tf.estimator's INFO lines ("Saving dict for global step N: ...",
# "loss = ..., step = N") are where the table reads metrics, on both sides alike. A program
# that lowers the verbosity (`tf.logging.set_verbosity(tf.logging.ERROR)`) keeps INFO here:
# only what is logged changes, not what runs.
import logging

_tensorflow_logger = logging.getLogger("tensorflow")
_tensorflow_logger.setLevel(logging.INFO)
_set_level = _tensorflow_logger.setLevel
_tensorflow_logger.setLevel = lambda level: _set_level(
    min(logging._checkLevel(level), logging.INFO)
)
