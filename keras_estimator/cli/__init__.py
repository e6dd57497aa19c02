"""The `keras-estimator` command (`python -m keras_estimator`): run, check, demo.

`--help` and `check` never import TensorFlow; `run` and `demo` import it once they start.
"""

from keras_estimator.cli.main import main

__all__ = ["main"]
