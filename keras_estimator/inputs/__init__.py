"""input_fn helpers of canned-estimator tutorials (`tf.estimator.inputs`)."""
