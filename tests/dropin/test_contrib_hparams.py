"""tf.contrib.training.HParams after install(): its documented behaviour, re-implemented."""

import json

import pytest
import tensorflow as tf

import keras_estimator as estimator
from keras_estimator.dropin.contrib import training
from keras_estimator.dropin.contrib.training import HParams, parse_values


def test_values_attributes_and_typed_parse():
    hparams = HParams(learning_rate=0.1, num_hidden_units=100, activation="relu",
                      use_bias=True, layers=[64, 32], dropouts=[0.1])  # fmt: skip
    assert hparams.learning_rate == 0.1 and hparams.layers == [64, 32]
    result = hparams.parse("learning_rate=3,num_hidden_units=7, activation=tanh,"
                           "use_bias=false,layers=[128 64,32],dropouts=[0.5, 1]")  # fmt: skip
    assert result is hparams
    assert hparams.values() == {"learning_rate": 3.0, "num_hidden_units": 7,
                                "activation": "tanh", "use_bias": False,
                                "layers": [128, 64, 32], "dropouts": [0.5, 1.0]}  # fmt: skip
    assert isinstance(hparams.learning_rate, float)  # an int literal cast to the float type
    assert hparams.parse("use_bias=1").use_bias is True  # TF1: bool(int(value))
    assert hparams.parse("layers[1]=16").layers == [128, 16, 32]
    assert "layers" in hparams and "nope" not in hparams
    assert str(hparams).startswith("[('activation', 'tanh'), ('dropouts', [0.5, 1.0])")
    assert repr(hparams).startswith("HParams([('activation'")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("num_hidden_units=0.5", "Could not parse hparam 'num_hidden_units' of type 'int'"),
        ("use_bias=maybe", "Could not parse hparam 'use_bias' of type 'bool'"),
        ("unknown=1", "Unknown hyperparameter type for unknown"),
        ("learning_rate=0.1,learning_rate=0.2", "Multiple assignments to variable"),
        ("learning_rate", "Malformed hyperparameter value"),
        ("layers[0]=[1,2]", "Assignment of a list to a list index"),
        ("learning_rate=[0.1,0.2]", "Must not pass a list for single-valued parameter"),
        ("layers=5", "Must pass a list for multi-valued parameter"),
    ],
)
def test_parse_errors_are_tf1s(values, message):
    hparams = HParams(learning_rate=0.1, num_hidden_units=100, use_bias=True, layers=[4])
    with pytest.raises(ValueError, match=message):
        hparams.parse(values)


def test_set_add_delete_override_and_casting_rules():
    hparams = HParams(rate=0.1, steps=10, name="a", flag=False)
    hparams.set_hparam("rate", 2)  # int -> float is fine
    assert hparams.rate == 2.0 and isinstance(hparams.rate, float)
    for name, value in [("steps", 2.5), ("name", 3), ("flag", 1), ("steps", True), ("rate", "x")]:
        with pytest.raises(ValueError, match="Could not cast hparam"):
            hparams.set_hparam(name, value)
    with pytest.raises(KeyError):
        hparams.set_hparam("missing", 1)
    hparams.add_hparam("extra", [1, 2])
    with pytest.raises(ValueError, match="reserved"):
        hparams.add_hparam("rate", 1.0)
    with pytest.raises(ValueError, match="reserved"):
        hparams.add_hparam("parse", 1)  # a method name
    with pytest.raises(ValueError, match="cannot be empty"):
        hparams.add_hparam("empty", [])
    hparams.del_hparam("extra")
    assert "extra" not in hparams and not hasattr(hparams, "extra")
    assert hparams.override_from_dict({"steps": 5, "name": "b"}) is hparams
    assert (hparams.steps, hparams.name) == (5, "b")
    assert hparams.get("steps", 0) == 5 and hparams.get("missing", 7) == 7
    with pytest.raises(ValueError, match="incompatible with default"):
        hparams.get("steps", "text")
    with pytest.raises(NotImplementedError, match="hparam_def"):
        HParams(hparam_def=object())


def test_json_round_trip_leaves_out_callables():
    hparams = HParams(rate=0.1, layers=[3, 4], name="model", fn=len)
    text = hparams.to_json(sort_keys=True)
    assert json.loads(text) == {"rate": 0.1, "layers": [3, 4], "name": "model"}
    other = HParams(rate=0.0, layers=[1], name="", fn=len)
    other.parse_json('{"rate": 0.5, "layers": [7, 8, 9], "name": "x"}')
    assert other.values()["layers"] == [7, 8, 9] and other.rate == 0.5
    with pytest.raises(ValueError, match="Could not cast"):
        other.parse_json('{"layers": [1.5]}')
    assert parse_values("a=1,b=[x,y]", {"a": int, "b": str}) == {"a": 1, "b": ["x", "y"]}
    assert parse_values("z=1", {"a": int}, ignore_unknown=True) == {}


def test_hparams_are_tf_contrib_training_after_install(tmp_path):
    estimator.install()
    try:
        assert tf.compat.v1.contrib.training.HParams is HParams
        from tensorflow.contrib.training import HParams as imported

        assert imported is HParams
        from tensorflow.contrib.training.python.training import hparam

        assert hparam.HParams is HParams  # the module path XLNet imported
        assert training.checkpoints_iterator is tf.compat.v1.train.checkpoints_iterator
        assert list(training.checkpoints_iterator(str(tmp_path), timeout=0.01)) == []
    finally:
        estimator.uninstall()
