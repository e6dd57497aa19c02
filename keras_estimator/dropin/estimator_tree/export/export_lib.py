"""2.15's `export.export_lib`: the export namespace plus TensorFlow's SavedModel helpers
(`EXPORT_TAG_MAP`, `SIGNATURE_KEY_MAP`, `get_timestamped_export_dir`, ...)."""

from keras_estimator.dropin.estimator_tree.export.export import (
    UnsupervisedInputReceiver,
    build_supervised_input_receiver_fn_from_input_fn,
    wrap_and_check_input_tensors,
)
from keras_estimator.dropin.tree_names import public_names
from keras_estimator.seam.internals import saved_model_export_utils

globals().update(public_names("keras_estimator.export"))
_saved_model = saved_model_export_utils()
EXPORT_TAG_MAP = _saved_model.EXPORT_TAG_MAP
SIGNATURE_KEY_MAP = _saved_model.SIGNATURE_KEY_MAP
TrainOutput = _saved_model.TrainOutput
build_all_signature_defs = _saved_model.build_all_signature_defs
export_outputs_for_mode = _saved_model.export_outputs_for_mode
get_export_outputs = _saved_model.get_export_outputs
get_temp_export_dir = _saved_model.get_temp_export_dir
get_timestamped_export_dir = _saved_model.get_timestamped_export_dir

__all__ = [
    "EXPORT_TAG_MAP",
    "SIGNATURE_KEY_MAP",
    "TrainOutput",
    "UnsupervisedInputReceiver",
    "build_all_signature_defs",
    "build_supervised_input_receiver_fn_from_input_fn",
    "export_outputs_for_mode",
    "get_export_outputs",
    "get_temp_export_dir",
    "get_timestamped_export_dir",
    "wrap_and_check_input_tensors",
]
