"""The seam's contract: the internals keras_estimator relies on are where it expects them,
nothing else reaches into TensorFlow / Keras, patches are reference-counted and undone,
and importing keras_estimator changes nothing in TensorFlow."""

import ast
import importlib.metadata
import os
import re
import textwrap
import threading

import tensorflow as tf
from helpers import ROOT, run_python

import keras_estimator
from keras_estimator.seam import internals, patching

PACKAGE = os.path.join(ROOT, "keras_estimator")


def test_every_internal_is_where_the_seam_expects_it():
    assert internals.check_internals() == []


def test_no_module_outside_the_seam_imports_tensorflow_or_keras_internals():
    """No import statement (nor `importlib.import_module("...")`) outside seam/ names
    tensorflow.python or keras.src. The scanner of `check` may speak of them in strings."""
    offenders = []
    internal = re.compile(r"^(tensorflow\.python|keras\.src)(\.|$)")
    for folder, _, files in os.walk(PACKAGE):
        if os.path.relpath(folder, PACKAGE).split(os.sep)[0] == "seam":
            continue
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    modules = [node.module or ""]
                elif (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    modules = [str(node.args[0].value)]
                else:
                    continue
                if any(internal.match(module) for module in modules):
                    offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert offenders == []


def test_patched_restores_the_original_when_threads_leave_in_any_order():
    class Owner:
        value = "original"

    entered, release = threading.Barrier(4), threading.Event()
    seen = []

    def replica(index):
        with patching.patched(Owner, "value", "replacement"):
            entered.wait()
            seen.append(Owner.value)
            release.wait()
        # The threads leave one by one; the first to leave must not restore early.

    threads = [threading.Thread(target=replica, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    entered.wait()
    assert Owner.value == "replacement"
    release.set()
    for thread in threads:
        thread.join()
    assert seen == ["replacement"] * 3
    assert Owner.value == "original"
    assert (Owner, "value") not in patching.active_patches()


def test_a_patch_left_by_an_error_is_still_undone():
    class Owner:
        value = 1

    try:
        with patching.patched(Owner, "value", 2):
            raise KeyError("boom")
    except KeyError:
        pass
    assert Owner.value == 1


def test_attribute_patch_only_if_missing_never_replaces_and_undo_removes_what_it_added():
    class Owner:
        present = "mine"

    kept = patching.AttributePatch(Owner, "present", "theirs", only_if_missing=True)
    added = patching.AttributePatch(Owner, "absent", "theirs", only_if_missing=True)
    assert not kept.applied and Owner.present == "mine"
    assert added.applied and Owner.absent == "theirs"
    added.undo()
    added.undo()  # idempotent
    assert not hasattr(Owner, "absent")


def test_the_version_is_written_once():
    assert keras_estimator.__version__ == importlib.metadata.version("keras-estimator")


_IMPORT_CHANGES_NOTHING = textwrap.dedent(
    """
    import sys
    import keras_estimator
    assert "tensorflow" not in sys.modules, "import keras_estimator imported TensorFlow"
    import tensorflow as tf
    assert keras_estimator.Estimator is not None and keras_estimator.DNNClassifier
    ours = sys.modules["keras_estimator.compat.layers"]  # loaded, not installed
    assert tf.compat.v1.layers is not ours, "a public name patched TensorFlow"
    assert not hasattr(tf, "estimator") or tf.estimator is not keras_estimator
    keras_estimator.Estimator(lambda features, labels, mode: None)
    assert tf.compat.v1.layers is ours, "the first Estimator installs the v1 layers"
    print("ok")
    """
)


def test_importing_changes_nothing_in_tensorflow_until_the_first_estimator():
    result = run_python("-c", _IMPORT_CHANGES_NOTHING)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


_CLI_WITHOUT_TENSORFLOW = textwrap.dedent(
    """
    import sys
    from keras_estimator.cli import main
    try:
        main(["--help"])
    except SystemExit:
        pass
    main(["check", sys.argv[1]])
    assert "tensorflow" not in sys.modules and "keras" not in sys.modules
    print("no tensorflow")
    """
)


def test_help_and_check_do_not_import_tensorflow(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text("import tensorflow as tf\nest = tf.estimator.Estimator(model_fn=None)\n")
    result = run_python("-c", _CLI_WITHOUT_TENSORFLOW, str(script))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[ok] tf.estimator.Estimator" in result.stdout
    assert result.stdout.strip().endswith("no tensorflow")


_SUMMARIES_AFTER_MIRRORED_TRAINING = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras_estimator as estimator
    from keras_estimator.seam import internals, patching

    v1 = tf.compat.v1
    original = internals._v1_summary._should_invoke_v2_op

    def model_fn(features, labels, mode):
        logits = v1.layers.dense(features["x"], 2)
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        v1.summary.scalar("my_loss", loss)
        step = v1.train.get_global_step()
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x = np.random.RandomState(0).randn(64, 4).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    config = estimator.RunConfig(
        model_dir=__import__("sys").argv[1], save_summary_steps=1,
        train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    est = estimator.Estimator(model_fn, config=config)
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8),
              steps=6)
    assert internals._v1_summary._should_invoke_v2_op is original, "the patch leaked"
    # Only the v1 layers stay installed (for good, by design).
    assert {attr for _, attr in patching.active_patches()} <= {"layers"}, patching.active_patches()
    # The user's own v1 summary under a v2 writer still writes to that writer.
    writer = tf.summary.create_file_writer(__import__("sys").argv[2])
    with writer.as_default(step=1):
        v1.summary.scalar("after_training", 1.0)
    writer.flush()
    tags = {value.tag for path in tf.io.gfile.glob(__import__("sys").argv[2] + "/events*")
            for event in tf.compat.v1.train.summary_iterator(path)
            for value in event.summary.value}
    assert "after_training" in tags, tags
    print("ok")
    """
)


def test_v1_summary_patch_does_not_leak_after_training_under_mirrored_strategy(tmp_path):
    result = run_python(
        "-c", _SUMMARIES_AFTER_MIRRORED_TRAINING, str(tmp_path / "model"), str(tmp_path / "user")
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def test_internals_name_the_tensorflow_objects_they_stand_for():
    # The named functions answer for real TensorFlow objects, not for look-alikes.
    saver_hook = tf.compat.v1.train.CheckpointSaverHook("/tmp/unused_dir", save_steps=7)
    settings = internals.saver_hook_settings(saver_hook)
    assert settings.save_steps == 7 and settings.save_secs is None
    assert settings.save_path.endswith("model.ckpt")
    logging_hook = tf.compat.v1.train.LoggingTensorHook({"x": "x:0"}, at_end=True)
    assert internals.logs_at_end(logging_hook)
    assert internals.final_ops(tf.compat.v1.train.FinalOpsHook({"a": tf.constant(1)})) is not None
    assert internals.final_ops(logging_hook) is None


def test_prune_graph_runs_only_what_the_fetches_need_like_session_run():
    # session.run(fetches) semantics on a traced step: an assignment no fetch needs does
    # not run; one fetched as an operation does; call-time arguments flow in.
    counter = tf.Variable(0.0)
    untouched = tf.Variable(0.0)
    seen = {}

    def step(x):
        doubled = x * 2.0
        seen["bump"] = counter.assign_add(x).op
        untouched.assign_add(100.0)
        seen["doubled"] = doubled
        return doubled

    concrete = tf.function(step, autograph=False).get_concrete_function(tf.TensorSpec([]))
    graph = concrete.graph
    fetch = internals.prune_graph(graph, 1, ({"twice": seen["doubled"]}, [seen["bump"]]))
    values, ops = fetch(tf.constant(1.5))
    assert float(values["twice"]) == 3.0 and ops == [None]
    assert float(counter.numpy()) == 1.5 and float(untouched.numpy()) == 0.0
    only_read = internals.prune_graph(graph, 1, [seen["doubled"]])
    assert float(only_read(tf.constant(4.0))[0]) == 8.0
    assert float(counter.numpy()) == 1.5  # nothing fetched the assignment this time

    with tf.Graph().as_default():
        foreign = tf.constant(1.0, name="outside_the_step")
    try:
        internals.prune_graph(graph, 1, [foreign])
    except ValueError as exc:
        assert "not an op of the traced step" in str(exc) and "outside_the_step" in str(exc)
    else:
        raise AssertionError("fetching a tensor of another graph must raise")


def test_prune_graph_feeds_a_capture_made_after_the_trace_after_call_time_captures():
    # A hook's fetch of a variable the step never read captures it after the trace, behind
    # the values the step captures at call time (a strategy's collective keys); each input
    # still gets its own value.
    weight, late, call_time = tf.Variable(2.0), tf.Variable(5.0), tf.Variable(100.0)

    def step(x):
        graph = tf.compat.v1.get_default_graph()
        spec = tf.TensorSpec([], tf.float32)
        at_call = graph.capture_call_time_value(lambda: call_time.read_value() + 0.0, spec)
        return {"z": x * weight + at_call}

    concrete = tf.function(step, autograph=False).get_concrete_function(tf.TensorSpec([]))
    graph = concrete.graph
    z = graph.structured_outputs["z"]
    with graph.as_default():
        fetched_late = tf.identity(late.read_value())
    values = internals.prune_graph(graph, 1, {"z": z, "late": fetched_late})(tf.constant(3.0))
    assert float(values["z"]) == 106.0 and float(values["late"]) == 5.0
    call_time.assign(200.0)  # read at each call, as the traced function does
    assert float(internals.prune_graph(graph, 1, [z])(tf.constant(1.0))[0]) == 202.0


_RESEED_CLEARS_ONLY_WHAT_RAN_AGAIN = textwrap.dedent(
    """
    import tensorflow as tf
    from keras_estimator.seam import internals

    @tf.function
    def compiled_draw():  # a kernel keeping its stream, inside a compiled function
        return tf.random.uniform([3], seed=7)

    def eager_draw():
        return tf.random.uniform([3], seed=5).numpy().tolist()

    internals.reseed(1)
    first_eager, first_compiled = eager_draw(), compiled_draw().numpy().tolist()
    internals.reseed(1)
    # Nothing eager ran again yet: the compiled function's kernel goes on.
    assert compiled_draw().numpy().tolist() != first_compiled
    # The eager draw of the last seed runs again: it starts at the seed, and the clear
    # that takes restarts the compiled one too.
    assert eager_draw() == first_eager
    assert compiled_draw().numpy().tolist() == first_compiled
    # Within one seed, a kernel goes on, as in TF's eager mode.
    assert eager_draw() != first_eager
    internals.reseed(1)
    internals.reseed(1)  # a call that drew nothing eagerly between
    assert eager_draw() == first_eager
    # Once a call's steps run, a repeat waits for the next reseed: clearing then would
    # restart the step's own streams in the middle of the call.
    assert compiled_draw().numpy().tolist() == first_compiled  # restarted by that clear
    internals.reseed(1)
    internals.defer_random_kernel_clears()
    assert eager_draw() != first_eager
    assert compiled_draw().numpy().tolist() != first_compiled
    internals.reseed(1)
    assert eager_draw() == first_eager
    print("ok")
    """
)


def test_reseed_restarts_an_eager_random_kernel_when_it_runs_again_and_keeps_the_rest():
    """A seeded call sets the seed without TF's clear of every kernel; the clear comes when
    an eager random kernel of an earlier seed is about to run again while the call sets up
    (its stream must start at the seed, as in 2.15's new graph per call), or at the next
    reseed when that happens once the call's steps run."""
    result = run_python("-c", _RESEED_CLEARS_ONLY_WHAT_RAN_AGAIN)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
