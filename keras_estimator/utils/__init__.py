"""Small helpers every room may use: model_fn argument names, the `keras_estimator`
logger, seeding a trace. They import nothing of keras_estimator but the seam."""
