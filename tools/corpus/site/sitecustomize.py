# Corpus runs only: tf.estimator's INFO lines ("Saving dict for global step N: ...",
# "loss = ..., step = N") are where the table reads metrics, on both sides alike.
import logging

logging.getLogger("tensorflow").setLevel(logging.INFO)
