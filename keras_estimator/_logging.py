"""The `keras_estimator` logger follows TensorFlow's, as tf.estimator's log lines did.

tf.estimator logged through the `tensorflow` logger, so `tf.compat.v1.logging.set_verbosity
(tf.compat.v1.logging.INFO)` is how legacy scripts ask for "loss = ..., step = ..." lines.
Making `tensorflow` the parent of the `keras_estimator` logger keeps our own logger name
(configure it directly to override) while its records reach TensorFlow's handler and level.
"""

from __future__ import annotations

import logging

LOGGER_NAME = "keras_estimator"


def follow_tensorflow_logger() -> None:
    logger = logging.getLogger(LOGGER_NAME)
    tensorflow_logger = logging.getLogger("tensorflow")
    if logger.parent is not tensorflow_logger:
        logger.parent = tensorflow_logger
        # Levels are cached per logger; a new parent changes the effective level.
        logging.getLogger().manager._clear_cache()
