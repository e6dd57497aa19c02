"""The three modes a `model_fn` is called in."""


class ModeKeys:
    """Standard names for model modes, as in `tf.estimator.ModeKeys`.

    * `TRAIN`: training mode.
    * `EVAL`: evaluation mode.
    * `PREDICT`: inference mode.

    Example:
        >>> ModeKeys.PREDICT
        'infer'
    """

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
