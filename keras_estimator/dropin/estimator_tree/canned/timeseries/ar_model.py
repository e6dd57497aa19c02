"""2.15's `canned/timeseries/ar_model.py`: `ARModel` (autoregressive, over windows of
past values and time-of-period features) and its Keras 3 `LSTMPredictionModel`.

Checkpoint names differ from 2.15's for the LSTM's variables (Keras 3 names them
`model/lstm_prediction_model/kernel`, `kernel_1`, ... where tf.keras 2 used the layer path
`.../encoder/lstm_cell/kernel`); the input statistics keep 2.15's names.
"""

from keras_estimator.canned.timeseries.ar_model import ARModel, LSTMPredictionModel

__all__ = ["ARModel", "LSTMPredictionModel"]
