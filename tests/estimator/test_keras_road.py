"""The road into Keras and the notebook experience: `keras_model`, the README's model_fn ->
Keras recipe, compact reprs, `history`, and re-running cells on the same model_dir."""

import logging
import os
import re
import sys

import keras
import matplotlib
import numpy as np
import pytest
import tensorflow as tf
from helpers import ROOT, classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator
from keras_estimator.checkpoint.checkpoint_files import CheckpointMismatchError

README = os.path.join(ROOT, "README.md")


def readme_block(marker):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    match = re.search(rf"<!-- recipe:{marker} -->\n```python\n(.*?)```", text, re.DOTALL)
    assert match, f"README has no recipe:{marker} block"
    return match.group(1)


def test_readme_recipe_moves_a_trained_model_fn_to_plain_keras(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(readme_block("model_fn"), namespace)  # noqa: S102  (the README's own code)
    est, x = namespace["est"], namespace["x"]
    want = np.array([p["probabilities"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x[:16]}).batch(16))])  # fmt: skip
    keras_code = readme_block("keras")
    before_fit, fit_line = (
        keras_code.split("model.compile(")[0],
        "model.compile(" + (keras_code.split("model.compile(")[1]),
    )
    exec(before_fit, namespace)  # noqa: S102
    got = namespace["model"].predict(x[:16], verbose=0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # the same network
    exec(fit_line, namespace)  # noqa: S102  (and Keras trains it on)
    accuracy = namespace["model"].evaluate(x, namespace["y"], verbose=0)[1]
    assert accuracy > 0.9


def test_keras_model_continues_with_fit_evaluate_predict(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=20)
    model = est.keras_model
    assert isinstance(model, keras.Model)
    epochs = []

    class Record(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            epochs.append(dict(logs))

    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(16)
    model.fit(dataset.repeat(), steps_per_epoch=5, epochs=2, callbacks=[Record()], verbose=0)
    assert [int(e["global_step"]) for e in epochs] == [25, 30]  # the model_fn's step counts on
    metrics = model.evaluate(dataset, verbose=0, return_dict=True)
    assert set(metrics) >= {"accuracy", "loss"} and 0.0 <= metrics["accuracy"] <= 1.0
    predictions = model.predict(tf.data.Dataset.from_tensor_slices({"x": x[:5]}).batch(5),
                                verbose=0)  # fmt: skip
    assert predictions["probabilities"].shape == (5, 3)
    assert est.latest_checkpoint().endswith("-30")  # Keras training is saved to model_dir


def _keras_data(x, y, batch=16):
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(batch)


def test_keras_fit_is_saved_and_the_estimator_counts_on_from_it(tmp_path, toy_data):
    """The issue's Done-when: train, fit with Keras, then evaluate() and train() see it."""
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=20)
    at_20 = est.evaluate(dataset_input_fn(x, y, 64))
    est.keras_model.fit(_keras_data(x, y).repeat(), steps_per_epoch=300, verbose=0)
    keras_loss = est.keras_model.evaluate(_keras_data(x, y, 64), verbose=0, return_dict=True)
    assert est.latest_checkpoint() == os.path.join(str(tmp_path), "model.ckpt-320")
    assert os.path.exists(os.path.join(str(tmp_path), "model.ckpt-320.meta"))
    after_fit = est.evaluate(dataset_input_fn(x, y, 64))
    assert after_fit["global_step"] == 320
    assert after_fit["loss"] < at_20["loss"] * 0.7  # the Keras-trained weights
    np.testing.assert_allclose(after_fit["loss"], keras_loss["loss"], rtol=1e-5)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    assert est.get_variable_value("global_step") == 330
    assert est.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 330


def test_keras_training_is_not_saved_over_another_trainer(tmp_path, toy_data):
    """model_dir's lock, held by a trainer, refuses the save at the end of fit: nothing of
    that trainer's checkpoints is overwritten, and the error names the holder."""
    from keras_estimator.checkpoint.model_dir_lock import hold_training_lock

    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    with hold_training_lock(str(tmp_path), is_chief=True):
        with pytest.raises(estimator.ModelDirLockedError, match=str(os.getpid())):
            est.keras_model.fit(_keras_data(x, y).repeat(), steps_per_epoch=3, verbose=0)
    assert est.latest_checkpoint().endswith("model.ckpt-5")
    est.keras_model.fit(_keras_data(x, y).repeat(), steps_per_epoch=3, verbose=0)
    assert est.latest_checkpoint().endswith("model.ckpt-11")  # 3 refused + 3 saved


def test_keras_training_never_saves_backwards_or_nan(tmp_path, toy_data, caplog):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)
    other = make_estimator(tmp_path)
    model = other.keras_model
    model.evaluate(_keras_data(x, y, 64), verbose=0)  # restored at step 5
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=20)  # model_dir moves on to 25
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        model.fit(_keras_data(x, y).repeat(), steps_per_epoch=3, verbose=0)  # step 8
    assert est.latest_checkpoint().endswith("model.ckpt-25")
    assert "is at step 25, written by another trainer" in caplog.text
    kernel = next(v for n, v in est.keras_model.store.global_variables().items()
                  if n.endswith("kernel"))  # fmt: skip
    kernel.assign(np.full(kernel.shape, np.nan, kernel.dtype.as_numpy_dtype))
    with caplog.at_level(logging.ERROR, logger="keras_estimator"):
        est.keras_model.fit(_keras_data(x, y).repeat(), steps_per_epoch=1, verbose=0)
    assert est.latest_checkpoint().endswith("model.ckpt-25")
    assert "hold NaN or infinite values" in caplog.text


def test_interrupted_fit_keeps_the_steps_it_ran(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path)
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=5)

    class Interrupt(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 6:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        est.keras_model.fit(_keras_data(x, y).repeat(), steps_per_epoch=50, verbose=0,
                            callbacks=[Interrupt()])  # fmt: skip
    assert est.latest_checkpoint().endswith("-12")  # 5 + the 7 Keras steps that ran


def test_keras_saving_callbacks_summary_and_export(tmp_path, toy_data):
    x, y = toy_data
    est = make_estimator(tmp_path / "model")
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=10)
    model = est.keras_model
    # summary(): the model_fn's variables and real parameter counts (8*16+16 + 16*3+3).
    lines = []
    model.summary(print_fn=lines.append)
    assert "Trainable params: 195" in lines and any("dense/kernel/Adam" in x for x in lines)
    in_checkpoint = sum(int(np.prod(shape)) for name, shape in
                        tf.train.list_variables(est.latest_checkpoint()))  # fmt: skip
    assert f"Total params: {in_checkpoint:,}" in lines
    # ModelCheckpoint (weights) and BackupAndRestore run inside fit.
    weights = str(tmp_path / "epoch{epoch}.weights.h5")
    backup = str(tmp_path / "backup")
    callbacks = [keras.callbacks.ModelCheckpoint(weights, save_weights_only=True),
                 keras.callbacks.BackupAndRestore(backup)]  # fmt: skip
    model.fit(_keras_data(x, y).repeat(), steps_per_epoch=5, epochs=2, verbose=0,
              callbacks=callbacks)  # fmt: skip
    assert os.path.exists(tmp_path / "epoch1.weights.h5")
    assert os.path.exists(tmp_path / "epoch2.weights.h5")
    # save_weights / load_weights bring back every variable (the global step too).
    kernel = est.get_variable_value("dense/kernel")
    model.load_weights(str(tmp_path / "epoch1.weights.h5"))
    assert int(model.global_step.numpy()) == 15
    model.load_weights(str(tmp_path / "epoch2.weights.h5"))
    assert int(model.global_step.numpy()) == 20
    np.testing.assert_allclose(model.store.variables["dense/kernel"].numpy(), kernel)
    # A .keras file cannot carry a model_fn: the error names export().
    with pytest.raises(NotImplementedError, match=r"export\("):
        model.save(str(tmp_path / "m.keras"))
    # export(): a SavedModel plain TensorFlow serves, giving predict()'s results.
    model.export(str(tmp_path / "served"))
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    served = serve(x=tf.constant(x[:4]))["probabilities"].numpy()
    want = [p["probabilities"] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x[:4]}).batch(4))]  # fmt: skip
    np.testing.assert_allclose(served, np.array(want), rtol=1e-5, atol=1e-6)


def test_keras_model_of_a_new_estimator_over_a_trained_model_dir(tmp_path, toy_data):
    x, y = toy_data
    trained = make_estimator(tmp_path)
    trained.train(dataset_input_fn(x, y, 16, repeat=True), steps=30)
    want = trained.evaluate(dataset_input_fn(x, y, 64))
    fresh = make_estimator(tmp_path)
    model = fresh.keras_model
    assert isinstance(model, keras.Model)  # built from the checkpoint on its first data
    got = model.evaluate(_keras_data(x, y, 64), verbose=0, return_dict=True)
    np.testing.assert_allclose(got["accuracy"], want["accuracy"], rtol=1e-6)
    assert int(model.global_step.numpy()) == 30
    model.fit(_keras_data(x, y).repeat(), steps_per_epoch=4, verbose=0)
    assert fresh.evaluate(dataset_input_fn(x, y, 64))["global_step"] == 34
    # Nothing trained there: a model all the same, whose variables come on its first data.
    empty = make_estimator(tmp_path / "empty").keras_model
    assert isinstance(empty, keras.Model) and empty.store.is_empty()


def test_compact_reprs_show_what_differs_from_defaults(tmp_path):
    def model_fn(features, labels, mode, params):
        del features, labels, params

    assert repr(estimator.RunConfig()) == "RunConfig()"
    config = estimator.RunConfig(save_checkpoints_steps=50, keep_checkpoint_max=2)
    assert repr(config) == (
        "RunConfig(save_checkpoints_steps=50, save_checkpoints_secs=None, keep_checkpoint_max=2)"
    )
    est = estimator.Estimator(model_fn, str(tmp_path), config=config, params={"lr": 0.1})
    assert repr(est) == (
        f"Estimator(model_fn=model_fn, model_dir={str(tmp_path)!r}, params={{'lr': 0.1}}, "
        "config=RunConfig(save_checkpoints_steps=50, save_checkpoints_secs=None, "
        "keep_checkpoint_max=2))"
    )
    spec = estimator.EstimatorSpec("infer", predictions={"y": tf.constant([1.0])})
    assert repr(spec).startswith("EstimatorSpec(mode='infer', predictions={'y': ")
    assert "scaffold" not in repr(spec) and "loss" not in repr(spec)


def test_history_and_its_plot(tmp_path, toy_data, monkeypatch):
    x, y = toy_data
    config = estimator.RunConfig(log_step_count_steps=10)
    est = estimator.Estimator(classifier_model_fn, str(tmp_path), config=config, params={})
    est.train(dataset_input_fn(x, y, 16, repeat=True), steps=30)
    est.evaluate(dataset_input_fn(x, y, 64))
    est.evaluate(dataset_input_fn(x, y, 64), name="holdout")
    history = est.history
    assert sorted(history.loss) == [1, 11, 21, 30]  # each return to Python, then the end
    assert all(np.isfinite(v) for v in history.loss.values())
    assert set(history.evaluations) == {30} and "accuracy" in history.evaluations[30]
    assert set(history.evaluation("holdout")) == {30}
    matplotlib.use("Agg")
    ax = estimator.plot_history(est, "accuracy")
    assert ax.get_xlabel() == "global step" and len(ax.get_lines()) == 2
    # matplotlib is optional for users: without it, plotting says how to get it.
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        estimator.plot_history(est, "accuracy")


def test_rerunning_cells_on_the_same_model_dir(tmp_path, toy_data, caplog):
    x, y = toy_data
    model_dir = str(tmp_path)
    make_estimator(model_dir).train(dataset_input_fn(x, y, 16, repeat=True), max_steps=10)
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        again = make_estimator(model_dir)
        again.train(dataset_input_fn(x, y, 16, repeat=True), max_steps=10)
    assert f"model_dir {model_dir} has a checkpoint at step 10" in caplog.text
    assert "is at step 10 >= max_steps=10" in caplog.text
    assert again.get_variable_value("global_step") == 10

    def changed_model_fn(features, labels, mode, params):
        return classifier_model_fn(features, labels, mode, dict(params, hidden=32))

    changed = make_estimator(model_dir, changed_model_fn)
    with pytest.raises(CheckpointMismatchError) as info:
        changed.train(dataset_input_fn(x, y, 16, repeat=True), steps=1)
    message = str(info.value)
    assert "dense/kernel" in message and "use a new model_dir" in message
