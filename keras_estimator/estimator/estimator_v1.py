"""`tf.compat.v1.estimator.Estimator`: the Estimator class of the TF1 API (tf.estimator 2.15).

In tf.estimator 2.15 the v1 and v2 `Estimator` were two classes (the v2 one a subclass of
the v1 one, both running a model_fn the same way); code that checks
`isinstance(est, tf.compat.v1.estimator.Estimator)` or subclasses it expects a class of
its own. The v1 canned estimators (`keras_estimator.v1.DNNClassifier`, ...) derive from it.
"""

from __future__ import annotations

from keras_estimator.estimator import estimator as estimator_lib


class Estimator(estimator_lib.Estimator):
    """The Estimator of `tf.compat.v1.estimator`: the same model_fn contract and methods
    (`export_savedmodel` included) as `keras_estimator.Estimator`.

    Example:
        >>> from keras_estimator import v1 as estimator
        >>> est = estimator.Estimator(model_fn, model_dir="runs/a")
        >>> est.train(input_fn, steps=100)
    """
