"""2.15's `head` package: the v2 heads (`tf.estimator.*Head`)."""
