"""The public `Estimator`: train / evaluate / predict / export, as the tf.estimator docs
describe them. The machinery is in `keras_estimator.runtime`."""
