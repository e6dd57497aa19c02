"""2.15's `tensorflow_estimator.python.estimator.tpu.*` after install(): every name resolves,
the pieces that mean something off TPU work (hooks in a real Estimator, signals, contexts),
and the TF1-session-only ones raise an error that says what to use instead."""

import importlib
import json
import os
import threading

import numpy as np
import pytest
import tensorflow as tf2
import tensorflow.compat.v1 as tf
from helpers import FIXTURES

import keras_estimator as estimator

TPU_ROOT = "tensorflow_estimator.python.estimator.tpu"


def _legacy(name):
    return importlib.import_module(f"{TPU_ROOT}.{name}")


def _linear_model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _repeating_input_fn():
    rng = np.random.RandomState(0)
    x = rng.rand(32, 3).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)


def test_every_name_of_the_tpu_modules_resolves_to_ours(installed):
    with open(os.path.join(FIXTURES, "module_tree", "tf_estimator_2_15_modules.json")) as f:
        tree = json.load(f)
    missing = {}
    for name, names in tree.items():
        if name == TPU_ROOT or name.startswith(TPU_ROOT + "."):
            module = importlib.import_module(name)
            missing[name] = [n for n in names if not hasattr(module, n)]
    assert len(missing) == 8 and not any(missing.values()), missing
    tpu_estimator = _legacy("tpu_estimator")
    assert tpu_estimator.TPUEstimator is estimator.tpu.TPUEstimator
    assert tpu_estimator.TPUEstimatorSpec is estimator.tpu.TPUEstimatorSpec
    assert _legacy("tpu_config").RunConfig is estimator.tpu.RunConfig
    assert _legacy("tpu_config").TPUConfig is estimator.tpu.TPUConfig
    assert _legacy("_tpu_estimator_embedding").EmbeddingConfigSpec is (
        tf.estimator.tpu.experimental.EmbeddingConfigSpec
    )


def test_captured_object_round_trip_and_queue_context(installed):
    tpu_estimator = _legacy("tpu_estimator")
    box = tpu_estimator._CapturedObject()
    with pytest.raises(RuntimeError, match="capture"):
        box.get()
    box.capture({"queue": 3})
    assert box.get() == {"queue": 3}
    with pytest.raises(RuntimeError, match="already captured"):
        box.capture(4)

    seen, done = [], threading.Event()

    def worker(queue_ctx, out):
        out.extend(queue_ctx.read_iteration_counts())
        done.set()

    queue_ctx = tpu_estimator._OpQueueContext("worker", worker, (seen,))
    queue_ctx.send_next_batch_signal(3)
    queue_ctx.send_next_batch_signal(2)
    queue_ctx.join()
    assert done.is_set() and seen == [3, 2]
    once = tpu_estimator._OpSignalOnceQueueContext("once", worker, (seen := [],))
    once.send_next_batch_signal(5)
    once.send_next_batch_signal(6)
    once.join()
    assert seen == [5]
    assert tpu_estimator._SIGNAL.STOP == -2 and tpu_estimator._SIGNAL.NEXT_BATCH == -1


def test_stop_and_padding_signals_on_a_small_batch(installed):
    tpu_estimator = _legacy("tpu_estimator")
    stop_signals, padding = tpu_estimator._StopSignals, tpu_estimator._PaddingSignals
    running = stop_signals(stop=False, batch_size=3).as_dict()
    assert running["stopping"].shape == (3, 1) and not running["stopping"].numpy().any()
    stopping = stop_signals(stop=True, batch_size=3).as_dict()
    scalar = stop_signals.as_scalar_stopping_signal(stopping)
    assert bool(stop_signals.should_stop(scalar)) is True
    assert stop_signals.should_stop(np.bool_(False)) is False  # a hook's fetched value

    features, labels = {"x": tf2.reshape(tf2.range(4.0), [2, 2])}, tf2.constant([1, 0])
    mask, padded, padded_labels = padding.pad_features_and_labels(features, labels, 4)
    assert mask.numpy().tolist() == [0, 0, 1, 1]
    assert padded["x"].shape == (4, 2) and padded["x"].numpy()[2:].sum() == 0
    assert padded_labels.numpy().tolist() == [1, 0, 0, 0]
    signals = stop_signals(stop=False, batch_size=4, padding_mask=mask).as_dict()
    sliced = padding.slice_tensor_or_dict(padded, signals)
    np.testing.assert_array_equal(sliced["x"].numpy(), features["x"].numpy())


def test_inputs_with_stopping_signals_end_with_a_stop_batch(installed):
    tpu_estimator = _legacy("tpu_estimator")
    dataset = tf.data.Dataset.from_tensor_slices(({"x": np.arange(5.0)}, np.arange(5))).batch(2)
    inputs = tpu_estimator._InputsWithStoppingSignals(dataset, batch_size=2, add_padding=True)
    assert inputs.is_dataset and inputs.dataset_initializer() is None  # eager: ready
    flags, masks = [], []
    for _ in range(4):
        features, labels = inputs.features_and_labels()
        signals = inputs.signals()
        assert features["x"].shape == (2,) and labels.shape == (2,)
        flags.append(bool(tpu_estimator._StopSignals.as_scalar_stopping_signal(signals)))
        masks.append(signals["padding_mask"].numpy().tolist())
    assert flags == [False, False, False, True]
    assert masks[2] == [0, 1]  # the short last batch, padded
    plain = tpu_estimator._Inputs.from_input_fn(({"x": 1}, 2))
    assert not plain.is_dataset and plain.features_and_labels() == ({"x": 1}, 2)


def test_tensor_packer_round_trip(installed):
    packer = _legacy("tpu_estimator").TensorPacker(1, 5)
    original = {f"f{i}": tf2.fill([4, 1], float(i)) for i in range(5)}
    original["wide"] = tf2.ones([4, 3])
    features = dict(original)
    packer.maybe_concatenate_features(features)
    assert sorted(features) == ["_concatenated_small_features_<dtype: 'float32'>", "wide"]
    packer.maybe_split_features(features)
    assert sorted(features) == sorted(original)
    for name, value in original.items():
        np.testing.assert_array_equal(features[name].numpy(), value.numpy())


def test_examples_per_second_hook_reports_in_a_real_estimator_train(installed, tmp_path):
    from tensorflow_estimator.python.estimator.estimator import Estimator
    from tensorflow_estimator.python.estimator.tpu.tpu_estimator import ExamplesPerSecondHook

    hook = ExamplesPerSecondHook(batch_size=8, every_n_steps=2)
    est = Estimator(_linear_model_fn, model_dir=str(tmp_path))
    est.train(_repeating_input_fn, steps=6, hooks=[hook])
    assert est.get_variable_value("global_step") == 6
    rates = hook.last_rates
    assert rates["global_step/sec"] > 0
    assert rates["examples/sec"] == pytest.approx(8 * rates["global_step/sec"])


def test_tpu_stop_at_step_hook_stops_a_real_estimator_train(installed, tmp_path):
    from tensorflow_estimator.python.estimator.tpu import util
    from tensorflow_estimator.python.estimator.tpu.tpu_estimator import _TPUStopAtStepHook

    assert util.parse_iterations_per_loop("2m") == (120, "seconds")
    counter = util.parse_iterations_per_loop(2)
    assert isinstance(counter, util.IterationsPerLoopCounter) and counter.unit == "count"
    hook = _TPUStopAtStepHook(counter, num_steps=5)
    est = estimator.Estimator(_linear_model_fn, model_dir=str(tmp_path))
    est.train(_repeating_input_fn, hooks=[hook])  # endless input: the hook stops it
    assert est.get_variable_value("global_step") == 5
    with pytest.raises(ValueError, match="Exactly one"):
        _TPUStopAtStepHook(counter)


def test_tpu_context_answers_from_a_tpu_run_config(installed):
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_context

    config = tpu_config.RunConfig(
        tpu_config=tpu_config.TPUConfig(
            num_shards=8, per_host_input_for_training=tpu_config.InputPipelineConfig.PER_HOST_V2
        )
    )
    internal = tpu_context._InternalTPUContext(config, 64, 16, 8, use_tpu=False)
    with pytest.raises(RuntimeError, match="with_mode"):
        _ = internal.global_batch_size
    with internal.with_mode(estimator.ModeKeys.TRAIN) as ctx:
        assert (ctx.num_replicas, ctx.num_hosts, ctx.num_of_replicas_per_host) == (8, 1, 8)
        assert ctx.is_running_on_cpu() and ctx.master_job is None
        assert (ctx.batch_size_for_input_fn, ctx.batch_size_for_model_fn) == (64, 64)
        assert ctx.device_for_replica(3) == ("/task:0/device:CPU:0", 3)
        user = tpu_context.TPUContext(ctx, "/device:CPU:0", invocation_index=0, host_id=0)
        assert user.current_input_fn_deployment() == ("/device:CPU:0", 0, 1, 8)
        assert (user.num_replicas, user.num_hosts, user.current_host) == (8, 1, 0)
        in_model_fn = tpu_context.TPUContext(ctx, call_from_input_fn=False)
        assert in_model_fn.device_assignment is None
        with pytest.raises(RuntimeError, match="must not be called from model_fn"):
            _ = in_model_fn.current_host
    with internal.with_mode(estimator.ModeKeys.PREDICT) as ctx:
        assert ctx.global_batch_size == 8

    named = tpu_config.RunConfig(
        tpu_config=tpu_config.TPUConfig(num_shards=8, tpu_job_name="tpu_worker")
    )
    with tpu_context._InternalTPUContext(named, 64, 16, 8, False).with_mode("train") as ctx:
        assert ctx.tpu_device_placement_function(3) == "/job:tpu_worker/task:0/device:TPU:3"
        assert ctx.tpu_host_placement_function(host_id=0) == "/job:tpu_worker/task:0/device:CPU:0"
        assert ctx.tpu_ordinal_function(0)(11) == 3

    # num_shards=1: the one-core context, whose TPU path validates without any TPU.
    one = tpu_config.RunConfig(tpu_config=tpu_config.TPUConfig(num_shards=1))
    one_core = tpu_context._get_tpu_context(one, 64, None, 8, True, True, None)
    assert isinstance(one_core, tpu_context._OneCoreTPUContext)
    with one_core.with_mode(estimator.ModeKeys.TRAIN) as ctx:
        assert not ctx.is_running_on_cpu() and ctx.num_replicas == 1
        assert ctx.batch_size_for_model_fn == 64
    with one_core.with_mode(estimator.ModeKeys.EVAL) as ctx:
        with pytest.raises(ValueError, match="eval_batch_size"):
            ctx.is_running_on_cpu()


def test_replica_context_records_summaries_on_replica_zero_only(installed, tmp_path):
    from tensorflow_estimator.python.estimator.tpu import tpu_context

    writer = tf2.summary.create_file_writer(str(tmp_path))
    written = []
    with writer.as_default():
        for replica in (0, 1):
            with tpu_context._TPUEstimatorReplicaContext(tf2.constant(replica)):
                written.append(bool(tf2.summary.scalar("loss", 1.0, step=replica)))
    assert written == [True, False]


def test_model_fn_wrapper_and_host_calls_run_a_tpu_model_fn_on_cpu(installed):
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_context, tpu_estimator

    seen = {}

    def model_fn(features, labels, mode, params):
        seen.update(params)
        loss = tf.reduce_mean(tf.square(features["x"] - labels))
        return tpu_estimator.TPUEstimatorSpec(
            mode, loss=loss, eval_metrics=(lambda x: {"mean": tf.metrics.mean(x)}, [loss])
        )

    config = tpu_config.RunConfig()
    internal = tpu_context._InternalTPUContext(config, 32, 16, 8, use_tpu=False)
    with tf.Graph().as_default(), internal.with_mode(estimator.ModeKeys.EVAL) as ctx:
        wrapper = tpu_estimator._ModelFnWrapper(model_fn, config, {"lr": 1}, ctx)
        spec = wrapper.call_without_tpu({"x": tf.ones([16, 1])}, tf.zeros([16, 1]), False)
        assert isinstance(spec, estimator.EstimatorSpec) and "mean" in spec.eval_metric_ops
        assert seen == {"lr": 1, "batch_size": 16, "use_tpu": False}

    host_calls = {"host_call": (lambda a, b: a + b, [tf.constant(1), tf.constant(2)])}
    results = tpu_estimator._OutfeedHostCall.create_cpu_hostcall(host_calls)
    assert results["host_call"].numpy() == 3
    outfeed = tpu_estimator._OutfeedHostCall(internal)
    assert outfeed.create_enqueue_op() == [] and outfeed.create_tpu_hostcall() == {}
    outfeed.record(host_calls)
    with pytest.raises(NotImplementedError, match="outfeed"):
        outfeed.create_tpu_hostcall()
    with pytest.raises(ValueError, match="should have two elements"):
        tpu_estimator._OutfeedHostCall.validate({"host_call": (print,)})


def test_graph_helpers_run_in_a_tf1_session(installed):
    tpu_estimator = _legacy("tpu_estimator")
    with tf.Graph().as_default() as graph:
        global_step = tpu_estimator._create_global_step(graph)
        with pytest.raises(ValueError, match="already exists"):
            tpu_estimator._create_global_step(graph)
        counter = tf.get_variable("counter", initializer=0, use_resource=True)
        iterations = tpu_estimator._create_or_get_iterations_per_loop()
        assert tpu_estimator._create_or_get_iterations_per_loop() is iterations
        loop = tpu_estimator._wrap_computation_in_while_loop(
            "/device:CPU:0", lambda: [counter.assign_add(1)]
        )
        with tpu_estimator._CapturingContext("Inside scaffold_fn"):
            doubled = counter * 2  # a host tensor: allowed
        scaffold_fn = tpu_estimator._CapturedObject()
        scaffold_fn.capture(tf.train.Scaffold)
        assert isinstance(tpu_estimator._get_scaffold(scaffold_fn), tf.train.Scaffold)
        with pytest.raises(ValueError, match="TF1 summary op"):
            with tpu_estimator.CatchInvalidHostcallFunctions():
                tf.summary.scalar("loss", 1.0)
        with tf.Session() as session:
            session.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            iterations.load(3, session=session)
            session.run(loop)
            assert session.run([counter, doubled, global_step]) == [3, 6, 0]


def test_loop_control_helpers(installed):
    from tensorflow_estimator.python.estimator.tpu import error_handling, util
    from tensorflow_estimator.python.estimator.tpu import iteration_count_estimator as ice

    counter = ice.IterationCountEstimator(capacity=3)
    assert counter.get(total_secs=10) == 1  # no timing yet
    counter.update(runtime_secs=2.0, count=100)  # 20 ms a step
    assert counter.get(total_secs=10) == 500
    assert counter._buffer_wheel[-1] == ice.RuntimeCounter(2.0, 100, 0.02)

    rendezvous = error_handling.ErrorRendezvous(num_sources=2)
    with rendezvous.catch_errors("outfeed"):
        raise tf.errors.CancelledError(None, None, "session closed")
    with rendezvous.catch_errors("infeed"):
        raise ValueError("bad file name")
    with pytest.raises(ValueError, match="bad file name"):  # the telling one, not the cancel
        rendezvous.raise_errors()
    error_handling.ErrorRendezvous(1).raise_errors()  # nothing recorded: nothing raised

    util.check_positive_integer(np.int64(3), "steps")
    with pytest.raises(ValueError, match="positive"):
        util.check_positive_integer(0, "steps")
    with pytest.raises(TypeError, match="must be int"):
        util.check_positive_integer(1.5, "steps")


def test_embedding_helpers_work_and_the_engine_raises(installed):
    embedding = _legacy("_tpu_estimator_embedding")
    column = tf.tpu.experimental.embedding_column(
        tf2.feature_column.categorical_column_with_identity("ids", 10), dimension=4
    )
    tables, features = embedding.get_configs_from_feature_columns([column])
    assert tables["tbl_ids"].vocabulary_size == 10 and tables["tbl_ids"].dimension == 4
    assert features["ids"].table_id == "tbl_ids"
    assert embedding.get_tpu_embedding_columns([column, "other"]) == [column]
    assert embedding._get_embedding_var_name_from_table_name("tbl_ids") == "ids"
    sparse = embedding._maybe_dense_to_sparse(tf2.constant([[0, 3], [5, 0]]))
    assert sparse.values.numpy().tolist() == [3, 5]
    assert [p.shape[0] for p in embedding._split_tensor(tf2.ones([4, 2]), 2)] == [2, 2]
    feats, labels, enqueue = embedding.split_inputs(None, {"x": 1}, 2, num_cores_per_batch=2)
    assert (feats, labels, len(enqueue)) == ({"x": 1}, 2, 2)
    with pytest.raises(NotImplementedError, match="TF1 session on a TPU"):
        embedding.EmbeddingConfig(None, 8, 8, 1, 1, None)
    with pytest.raises(NotImplementedError, match="embedding"):
        embedding.EmbeddingConfigSpec(feature_columns=[column])


def test_session_only_names_raise_the_clear_error(installed):
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_context, tpu_estimator

    ctx = tpu_context._InternalTPUContext(tpu_config.RunConfig(), 8, 8, 8, use_tpu=False)
    uses = [
        lambda: tpu_estimator.TPUInfeedOutfeedSessionHook(ctx, [], [], None),
        lambda: tpu_estimator.TPUInfeedOutfeedSessionHookForPrediction(ctx, [], [], None),
        lambda: tpu_estimator._train_on_tpu_system(ctx, None, None),
        lambda: tpu_estimator.generate_per_host_enqueue_ops_fn_for_host(ctx, None, None, 0, "", 0),
        lambda: tpu_estimator.inference_on_tpu(None, [], 1, 8, 100),
        lambda: tpu_estimator._ModelFnWrapper(None, None, {}, ctx).convert_to_single_tpu_train_step(
            None
        ),
    ]
    with ctx.with_mode("train") as train_ctx:
        pipeline = tpu_estimator._InputPipeline(lambda params: None, None, train_ctx)
        uses.append(pipeline.generate_infeed_enqueue_ops_and_dequeue_fn)
    for use in uses:
        with pytest.raises(NotImplementedError) as raised:
            use()
        message = str(raised.value)
        assert "runs only inside a TF1 session on a TPU" in message
        assert "tf.distribute" in message and "Fix:" in message
    assert "TPUPartitionedCall" in tpu_estimator.call_computation.__doc__


def test_export_estimator_savedmodel_writes_the_serving_graph(installed, tmp_path):
    from tensorflow_estimator.python.estimator.tpu import tpu_config, tpu_estimator

    def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features["x"], 2)
        if mode == estimator.ModeKeys.PREDICT:
            return tpu_estimator.TPUEstimatorSpec(mode, predictions={"logits": logits})
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
        return tpu_estimator.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def serving_input_receiver_fn():
        x = tf.placeholder(tf.float32, [None, 3])
        return estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    config = tpu_config.RunConfig(model_dir=str(tmp_path / "model"))
    est = tpu_estimator.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=8)
    est.train(lambda params: _repeating_input_fn(), steps=2)
    export_dir = tpu_estimator.export_estimator_savedmodel(
        est, str(tmp_path / "export"), serving_input_receiver_fn
    )
    loaded = tf2.saved_model.load(export_dir.decode())
    outputs = loaded.signatures["serving_default"](x=tf2.ones([2, 3]))
    assert outputs["logits"].shape == (2, 2)
