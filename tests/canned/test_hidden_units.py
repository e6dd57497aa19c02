"""`hidden_units` as tf.estimator 2.15 took them: each width through int(), so a flag's
`"16 8".split(" ")` trains, and what int() refuses is refused."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator import v1 as estimator_v1

COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,))]


def input_fn():
    x = np.random.RandomState(0).rand(8, 2).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, (x[:, 0] > 0.5).astype(np.int64))).batch(4)


def hidden_kernel_shapes(est):
    names = sorted(n for n in est.get_variable_names() if n.startswith("dnn/hiddenlayer_"))
    return [est.get_variable_value(n).shape for n in names if n.endswith("/kernel")]


@pytest.mark.parametrize("namespace", [estimator, estimator_v1], ids=["v2", "v1"])
def test_string_and_float_widths_train_as_ints(tmp_path, namespace):
    est = namespace.DNNClassifier(["16", "8"], COLUMNS, str(tmp_path / "strings"))
    est.train(input_fn, steps=1)
    assert hidden_kernel_shapes(est) == [(2, 16), (16, 8)]
    # 2.15 truncated a float width as int() does: 16.5 -> 16.
    est = namespace.DNNRegressor([16.5, b" 4"], COLUMNS, str(tmp_path / "floats"))
    est.train(input_fn, steps=1)
    assert hidden_kernel_shapes(est) == [(2, 16), (16, 4)]


def test_combined_estimator_takes_string_widths(tmp_path):
    est = estimator.DNNLinearCombinedClassifier(
        str(tmp_path), dnn_feature_columns=COLUMNS, dnn_hidden_units=["3"]
    )
    est.train(input_fn, steps=1)
    assert hidden_kernel_shapes(est) == [(2, 3)]


@pytest.mark.parametrize(
    "hidden_units, message",
    [
        (["16.5"], "'16.5' is not (invalid literal for int() with base 10: '16.5')"),
        (["x"], "'x' is not (invalid literal for int() with base 10: 'x')"),
        ([None], "None is not (int() argument must be"),
        (["-3"], "hidden_units must be positive integers"),
        ([0], "hidden_units must be positive integers"),
        ("16", "hidden_units must be a list of layer widths"),
    ],
)
def test_widths_int_refuses_are_refused_at_construction(tmp_path, hidden_units, message):
    with pytest.raises(ValueError) as info:
        estimator.DNNClassifier(hidden_units, COLUMNS, str(tmp_path))
    assert message in str(info.value)
    assert str(info.value).endswith(f"hidden_units={hidden_units!r}")
