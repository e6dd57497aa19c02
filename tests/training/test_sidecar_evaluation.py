"""train_and_evaluate under TF_CONFIG: a chief process trains while the evaluator task
(this process) evaluates and exports each new checkpoint until max_steps."""

import json
import os

import tensorflow.compat.v1 as tf
from helpers import SCRIPTS, classifier_model_fn, dataset_input_fn, free_ports, start_python

import keras_estimator as estimator

SCRIPT = os.path.join(SCRIPTS, "train_as_chief.py")


def test_evaluator_task_evaluates_checkpoints_while_the_chief_trains(
    tmp_path, toy_data, monkeypatch
):
    (port,) = free_ports(1)
    model_dir = str(tmp_path / "model")
    chief = start_python(SCRIPT, port, model_dir, "300")
    try:
        cluster = {"chief": [f"127.0.0.1:{port}"]}
        monkeypatch.setenv(
            "TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "evaluator", "index": 0}})
        )
        config = estimator.RunConfig(model_dir=model_dir)
        assert config.task_type == "evaluator" and not config.is_chief
        est = estimator.Estimator(classifier_model_fn, config=config, params={})
        x, y = toy_data
        export_fn = estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.TensorSpec([None, 8], tf.float32)}
        )
        result, exports = estimator.train_and_evaluate(
            est,
            estimator.TrainSpec(lambda: None, max_steps=300),
            estimator.EvalSpec(
                dataset_input_fn(x, y, 64),
                start_delay_secs=0,
                throttle_secs=1,
                exporters=[estimator.export.FinalExporter("final", export_fn)],
            ),
        )
        output = chief.communicate(timeout=300)[0]
    finally:
        chief.kill()
    assert chief.returncode == 0, output[-3000:]
    assert result["global_step"] == 300  # it stopped at the final checkpoint
    assert len(exports) == 1 and os.path.isdir(exports[0])  # the final export happened
    evaluated = estimator.experimental.read_eval_metrics(est.eval_dir())
    assert max(evaluated) == 300 and all("accuracy" in m for m in evaluated.values())
