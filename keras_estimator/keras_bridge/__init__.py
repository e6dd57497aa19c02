"""Keras 3 models meeting Estimators: `DenseFeatures` over feature columns and
`model_to_estimator` (the bridges tf.keras 2.15 had)."""
