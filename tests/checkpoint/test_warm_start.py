"""Warm-starting from real checkpoint files, eagerly, with tf.estimator 2.15's rules.

Expected values marked "TF 2.15" were produced by `tf.compat.v1.train.warm_start` of
tensorflow 2.15.1 on the same checkpoints and vocabularies.
"""

import logging
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from keras_estimator.checkpoint.warm_start import (
    VocabInfo,
    WarmStartSettings,
    resolve_warm_start,
    warm_start,
    warm_start_checkpoint,
)

OLD_EMB = np.arange(12, dtype=np.float32).reshape(4, 3)  # rows: a b c d
OLD_OUT = np.arange(12, dtype=np.float32).reshape(3, 4)  # columns: a b c d


def save_checkpoint(prefix, values, global_step=None):
    """Writes a TF1 name-based checkpoint of `values` ({name: array}); returns its prefix."""
    pathlib.Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    var_list = {name: tf.Variable(value) for name, value in values.items()}
    saver = tf.compat.v1.train.Saver(var_list=var_list)
    return saver.save(None, str(prefix), global_step=global_step, write_meta_graph=False)


def write_vocab(path, tokens):
    path.write_text("".join(t + "\n" for t in tokens))
    return str(path)


def model_vars(spec):
    """({name: tf.Variable of zeros}, trainable names) from {name: (shape, trainable)}."""
    variables = {n: tf.Variable(tf.zeros(shape, tf.float32)) for n, (shape, _) in spec.items()}
    return variables, {n for n, (_, trainable) in spec.items() if trainable}


def values(variables):
    return {n: v.numpy().tolist() for n, v in variables.items()}


@pytest.fixture
def ckpt(tmp_path):
    """A model_dir with model.ckpt-7: trainable-looking and optimizer/bookkeeping variables."""
    return save_checkpoint(
        tmp_path / "model.ckpt",
        {
            "dense/kernel": np.full([2], 5.0, np.float32),
            "dense/kernel/Adam": np.full([2], 6.0, np.float32),
            "v1": np.full([2], 1.0, np.float32),
            "v1/Momentum": np.full([2], 2.0, np.float32),
            "v2": np.full([2], 3.0, np.float32),
            "v2/momentum": np.full([2], 4.0, np.float32),
            "global_step": np.int64(7),
            "emb": OLD_EMB,
            "out": OLD_OUT,
            "bias": np.arange(4, dtype=np.float32),
        },
        global_step=7,
    )


SMALL = {
    "dense/kernel": ([2], True),
    "dense/kernel/Adam": ([2], False),
    "v1": ([2], True),
    "v1/Momentum": ([2], False),
    "v2": ([2], False),
    "v2/momentum": ([2], False),
}


def small_model():
    variables, trainable = model_vars(SMALL)
    variables["global_step"] = tf.Variable(np.int64(0))
    return variables, trainable


# -- settings ------------------------------------------------------------------------------


def test_settings_defaults_and_validation():
    ws = WarmStartSettings("/tmp/x")
    assert ws == ("/tmp/x", ".*", {}, {})
    with pytest.raises(ValueError, match="`ckpt_to_initialize_from` MUST be set"):
        WarmStartSettings("")
    info = VocabInfo("new.txt", 3, 1, "old.txt")
    assert (info.old_vocab_size, info.backup_initializer, info.axis) == (-1, None, 0)
    with pytest.raises(ValueError, match="only supported values for the axis.*Provided axis: 2"):
        VocabInfo("new.txt", 3, 1, "old.txt", axis=2)


def test_resolve_warm_start_inputs(tmp_path, ckpt):
    assert resolve_warm_start(None) is None
    ws = WarmStartSettings(ckpt, vars_to_warm_start=["v1"])
    assert resolve_warm_start(ws) is ws
    assert resolve_warm_start(ckpt) == WarmStartSettings(ckpt)
    assert resolve_warm_start(ckpt.encode()) == WarmStartSettings(ckpt)
    assert resolve_warm_start(pathlib.Path(ckpt)).ckpt_to_initialize_from == ckpt
    # A model_dir stays a directory: its latest checkpoint is taken when warm-starting.
    assert resolve_warm_start(str(tmp_path)).ckpt_to_initialize_from == str(tmp_path)
    assert warm_start_checkpoint(tmp_path) == ckpt
    for bad in (3, [ckpt], {"ckpt": ckpt}, (ckpt,)):
        with pytest.raises(ValueError, match="must be a string or a WarmStartSettings"):
            resolve_warm_start(bad)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        warm_start_checkpoint(tmp_path / "empty")
    with pytest.raises(ValueError, match="no .*nothere.index"):
        warm_start_checkpoint(tmp_path / "nothere")
    variables, trainable = small_model()
    with pytest.raises(ValueError, match="No checkpoint to warm-start from"):
        warm_start(resolve_warm_start(str(tmp_path / "nothere")), variables, trainable)


def test_model_dir_uses_latest_checkpoint(tmp_path, ckpt):
    save_checkpoint(tmp_path / "model.ckpt", {"v1": np.full([2], 9.0, np.float32)}, 9)
    variables, trainable = small_model()
    assert warm_start(resolve_warm_start(str(tmp_path)), variables, {"v1"}) == ["v1"]
    assert values(variables)["v1"] == [9.0, 9.0]


def test_saved_model_dir_uses_its_variables(tmp_path):
    export = tmp_path / "export" / "1700000000"
    save_checkpoint(export / "variables" / "variables", {"v1": np.full([2], 8.0, np.float32)})
    ws = resolve_warm_start(str(export))
    assert ws == WarmStartSettings(str(export / "variables" / "variables"))
    variables, trainable = model_vars({"v1": ([2], True), "v1/Momentum": ([2], False)})
    assert warm_start(ws, variables, trainable) == ["v1"]
    assert values(variables)["v1"] == [8.0, 8.0]


def test_object_based_saved_model(tmp_path):
    """A tf.saved_model.save export: names are found through its object graph, as in TF."""
    module = tf.Module()
    module.kernel = tf.Variable(np.arange(4, dtype=np.float32), name="dense/kernel")
    module.other = tf.Variable(3.0, name="other")
    tf.saved_model.save(module, str(tmp_path / "sm"))
    ws = resolve_warm_start(str(tmp_path / "sm"))
    variables, trainable = model_vars({"dense/kernel": ([4], True), "other": ([], True)})
    assert warm_start(ws, variables, trainable) == ["dense/kernel", "other"]
    assert values(variables) == {"dense/kernel": [0.0, 1.0, 2.0, 3.0], "other": 3.0}
    variables["nothere"] = tf.Variable(0.0)
    with pytest.raises(ValueError, match="object-based checkpoint.*missing: {'nothere'}"):
        warm_start(ws, variables, trainable | {"nothere"})


# -- selection -----------------------------------------------------------------------------


def test_default_selects_trainable_only(ckpt, caplog):
    """'.*' (a string) never touches global_step, slots or other non-trainable variables."""
    variables, trainable = small_model()
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        done = warm_start(WarmStartSettings(ckpt), variables, trainable)
    assert done == ["dense/kernel", "v1"]
    got = values(variables)
    assert got["dense/kernel"] == [5.0, 5.0] and got["v1"] == [1.0, 1.0]
    assert got["dense/kernel/Adam"] == [0.0, 0.0] and got["v2"] == [0.0, 0.0]
    assert got["global_step"] == 0
    lines = [r.getMessage() for r in caplog.records]
    assert "Warm-starting variable: v1; prev_var_name: Unchanged" in lines
    assert "Warm-started 2 variables." in lines


@pytest.mark.parametrize(
    "selection, expected",
    [
        # TF 2.15: a list of regexes selects among ALL variables, global_step included.
        ([".*"], list(SMALL) + ["global_step"]),
        (["v1", "v2[^/]"], ["v1", "v1/Momentum", "v2"]),  # the tf.estimator docstring example
        ("dense/.*", ["dense/kernel"]),  # a string: trainable only, so no dense/kernel/Adam
        ("dense/kernel$", []),  # TF 2.15: names are matched with their ':0'
        ("dense/kernel:0$", ["dense/kernel"]),
        ([], []),
    ],
)
def test_regex_and_list_selection(ckpt, selection, expected):
    variables, trainable = small_model()
    assert warm_start(WarmStartSettings(ckpt, selection), variables, trainable) == expected
    changed = [n for n, v in values(variables).items() if np.any(np.asarray(v) != 0)]
    assert changed == expected


def test_list_of_variables_and_none(ckpt):
    variables, trainable = small_model()
    chosen = [variables["v2/momentum"], variables["v1"]]
    assert warm_start(WarmStartSettings(ckpt, chosen), variables, trainable) == [
        "v1",
        "v2/momentum",
    ]
    assert warm_start(WarmStartSettings(ckpt, None), variables, trainable) == []
    with pytest.raises(ValueError, match="did not create"):
        warm_start(WarmStartSettings(ckpt, [tf.Variable(1.0)]), variables, trainable)


@pytest.mark.parametrize(
    "selection, message",
    [
        (("v1",), "must be a `list` or `str`.  Given type is <class 'tuple'>"),
        (["v1", 3], "must be all `Variable` or all `str`"),
        (b"v1", "must be a `list` or `str`"),
    ],
)
def test_bad_selection_types(ckpt, selection, message):
    variables, trainable = small_model()
    with pytest.raises(ValueError, match=message):
        warm_start(WarmStartSettings(ckpt, selection), variables, trainable)


def test_prev_var_name_mapping(ckpt):
    variables, trainable = model_vars({"new/kernel": ([2], True), "v1": ([2], True)})
    ws = WarmStartSettings(ckpt, var_name_to_prev_var_name={"new/kernel": "dense/kernel"})
    assert warm_start(ws, variables, trainable) == ["new/kernel", "v1"]
    assert values(variables) == {"new/kernel": [5.0, 5.0], "v1": [1.0, 1.0]}
    ws = WarmStartSettings(ckpt, var_name_to_prev_var_name={"typo": "dense/kernel"})
    with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used: {'typo'}"):
        warm_start(ws, variables, trainable)


def test_missing_and_misshaped_variables_assign_nothing(ckpt):
    variables, trainable = model_vars(
        {"v1": ([2], True), "emb": ([4, 4], True), "brand_new": ([3], True)}
    )
    with pytest.raises(ValueError) as err:
        warm_start(WarmStartSettings(ckpt), variables, trainable)
    message = str(err.value)
    assert "Tensor brand_new is not found in" in message and "shape [3]" in message
    assert "Shape of variable emb ([4, 4]) doesn't match with shape of tensor emb ([4, 3])" in (
        message
    )
    assert "Nothing was warm-started" in message
    assert values(variables)["v1"] == [0.0, 0.0]  # v1 was fine, but is left alone too


def test_dtype_mismatch(ckpt):
    variables = {"v1": tf.Variable(tf.zeros([2], tf.float64))}
    with pytest.raises(ValueError, match="v1 is float64.*float32"):
        warm_start(WarmStartSettings(ckpt), variables, {"v1"})


# -- vocabularies --------------------------------------------------------------------------


@pytest.fixture
def vocabs(tmp_path):
    return {
        "old": write_vocab(tmp_path / "old.txt", ["a", "b", "c", "d"]),
        "new": write_vocab(tmp_path / "new.txt", ["c", "x", "a"]),
    }


def test_vocab_rows_with_oov_and_backup(ckpt, vocabs):
    variables, trainable = model_vars({"emb": ([5, 3], True), "v1": ([2], True)})
    info = VocabInfo(
        vocabs["new"], 3, 2, vocabs["old"], backup_initializer=lambda s: tf.fill(s, 7.0)
    )
    ws = WarmStartSettings(ckpt, var_name_to_vocab_info={"emb": info})
    assert warm_start(ws, variables, trainable) == ["emb", "v1"]
    # TF 2.15: row c <- old row 2, x is new, a <- old row 0, then 2 OOV rows.
    seven = [7.0] * 3
    assert values(variables)["emb"] == [[6, 7, 8], seven, [0, 1, 2], seven, seven]
    assert values(variables)["v1"] == [1.0, 1.0]


def test_vocab_rows_defaults_zero_and_old_vocab_size(ckpt, vocabs):
    variables, trainable = model_vars({"emb": ([5, 3], True)})
    info = VocabInfo(vocabs["new"], 3, 2, vocabs["old"], old_vocab_size=2)
    warm_start(WarmStartSettings(ckpt, var_name_to_vocab_info={"emb": info}), variables, trainable)
    # TF 2.15: only a, b of the old vocabulary count, so c is new (zeros).
    assert values(variables)["emb"] == [[0, 0, 0], [0, 0, 0], [0, 1, 2], [0, 0, 0], [0, 0, 0]]


def test_vocab_columns_with_oov_and_keras_initializer(ckpt, vocabs):
    import keras

    variables, trainable = model_vars({"out": ([3, 4], True)})
    info = VocabInfo(
        vocabs["new"],
        3,
        1,
        vocabs["old"],
        backup_initializer=keras.initializers.Constant(7.0),
        axis=1,
    )
    warm_start(WarmStartSettings(ckpt, var_name_to_vocab_info={"out": info}), variables, trainable)
    # TF 2.15: columns c, x (new), a, then one OOV column.
    assert values(variables)["out"] == [[2, 7, 0, 7], [6, 7, 4, 7], [10, 7, 8, 7]]


def test_vocab_only_with_none_and_tf_vocab_info(ckpt, vocabs):
    """vars_to_warm_start=None: only the vocabulary variables; TF's own VocabInfo works."""
    variables, trainable = model_vars({"emb": ([4, 3], True), "v1": ([2], True)})
    info = tf.compat.v1.train.VocabInfo(vocabs["new"], 3, 1, vocabs["old"])
    ws = WarmStartSettings(ckpt, None, {"emb": info}, {})
    assert warm_start(ws, variables, trainable) == ["emb"]
    assert values(variables)["emb"] == [[6, 7, 8], [0, 0, 0], [0, 1, 2], [0, 0, 0]]
    assert values(variables)["v1"] == [0.0, 0.0]


def test_vocab_on_renamed_bias_vector(ckpt, vocabs):
    """A 1-D bias over a vocabulary (TF 2.15 raised IndexError here)."""
    variables, trainable = model_vars({"logits/bias": ([4], True)})
    ws = WarmStartSettings(
        ckpt,
        var_name_to_vocab_info={"logits/bias": VocabInfo(vocabs["new"], 3, 1, vocabs["old"])},
        var_name_to_prev_var_name={"logits/bias": "bias"},
    )
    assert warm_start(ws, variables, trainable) == ["logits/bias"]
    assert values(variables)["logits/bias"] == [2.0, 0.0, 0.0, 0.0]


def vocab_error(ckpt, tmp_path, new, old, shape=(4, 3), **kwargs):
    variables, trainable = model_vars({"emb": (list(shape), True), "v1": ([2], True)})
    new_path = write_vocab(tmp_path / "n.txt", new) if isinstance(new, list) else new
    old_path = write_vocab(tmp_path / "o.txt", old) if isinstance(old, list) else old
    info = VocabInfo(new_path, kwargs.pop("size", 3), kwargs.pop("oov", 1), old_path, **kwargs)
    with pytest.raises((ValueError, TypeError)) as err:
        warm_start(
            WarmStartSettings(ckpt, var_name_to_vocab_info={"emb": info}), variables, trainable
        )
    assert values(variables)["v1"] == [0.0, 0.0]  # nothing assigned
    return str(err.value)


def test_vocab_errors(ckpt, tmp_path):
    abcd = ["a", "b", "c", "d"]
    assert "empty line found" in vocab_error(ckpt, tmp_path, ["c", "", "a"], abcd)
    assert "fewer than the 3" in vocab_error(ckpt, tmp_path, ["c"], abcd)
    assert "twice" in vocab_error(ckpt, tmp_path, ["c", "x", "a"], ["a", "a", "c"])
    assert "more than once" in vocab_error(ckpt, tmp_path, ["a", "a", "c"], abcd)
    assert "expected 10 but got 4" in vocab_error(
        ckpt, tmp_path, ["c"] * 3, abcd, old_vocab_size=10
    )
    assert "more than new_vocab_size (3) + num_oov_buckets (1)" in vocab_error(
        ckpt, tmp_path, ["c", "x", "a"], abcd, shape=(6, 3)
    )
    assert "instead of being equal to num_cols=2" in vocab_error(
        ckpt, tmp_path, ["c", "x", "a"], abcd, shape=(4, 2)
    )
    assert "too small" in vocab_error(ckpt, tmp_path, ["f", "x", "a"], abcd + ["e", "f"])
    assert "Invalid args" in vocab_error(ckpt, tmp_path, ["c", "x", "a"], abcd, size=0)
    assert "must be callable" in vocab_error(
        ckpt, tmp_path, ["c", "x", "a"], abcd, backup_initializer=3.0
    )
    assert "Could not read vocabulary" in vocab_error(
        ckpt, tmp_path, str(tmp_path / "missing.txt"), abcd
    )


def test_unused_vocab_info_is_an_error(ckpt, vocabs):
    variables, trainable = model_vars({"emb": ([4, 3], True)})
    info = VocabInfo(vocabs["new"], 3, 1, vocabs["old"])
    ws = WarmStartSettings(ckpt, [], {"emb": info})
    with pytest.raises(ValueError, match="var_name_to_vocab_info that were not used: {'emb'}"):
        warm_start(ws, variables, trainable)
    assert values(variables)["emb"] == np.zeros([4, 3]).tolist()


def test_vocab_file_line_endings(ckpt, tmp_path):
    """TF 2.15: a trailing \\r is dropped, other whitespace is part of the token."""
    old = tmp_path / "old.txt"
    old.write_bytes(b"a\r\nb \r\nc\nd")  # CRLF, a trailing space, no final newline
    new = write_vocab(tmp_path / "new.txt", ["d", "c", "b", "a"])
    variables, trainable = model_vars({"emb": ([4, 3], True)})
    info = VocabInfo(new, 4, 0, str(old))
    warm_start(WarmStartSettings(ckpt, var_name_to_vocab_info={"emb": info}), variables, trainable)
    assert values(variables)["emb"] == [[9, 10, 11], [6, 7, 8], [0, 0, 0], [0, 1, 2]]


def test_pathlike_settings(ckpt):
    variables, trainable = model_vars({"v1": ([2], True)})
    assert warm_start(WarmStartSettings(pathlib.Path(ckpt)), variables, trainable) == ["v1"]
