"""`tf.estimator.export`: receivers, export outputs and exporters for SavedModel export."""

from keras_estimator.export.export_outputs import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)
from keras_estimator.export.exporters import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
)
from keras_estimator.export.receivers import (
    ServingInputReceiver,
    SupervisedInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
    build_raw_supervised_input_receiver_fn,
)

__all__ = [
    "BestExporter",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "ClassificationOutput",
    "EvalOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "SupervisedInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
    "build_raw_supervised_input_receiver_fn",
]
