"""A matrix of malformed inputs across the public API: the error, its message, model_dir after.

Every case starts from a copy of one model_dir trained 3 steps (`model.ckpt-0`, `model.ckpt-3`,
an event file; next to it an empty directory `empty/`). The case builds a good Estimator on
it, snapshots the whole case directory (names, sizes, mtimes, contents), performs ONE bad
call and asserts:

1. the exception type tf.estimator 2.15 raised (where it raised an incidental one, such as an
   AttributeError from deep inside, or nothing at all: a ValueError / TypeError);
2. a message that names the offending argument and what was expected (the regex below);
3. the case directory is byte-for-byte unchanged (no checkpoint, event file, export or
   directory left behind by the failed call);
4. the good Estimator still resumes from model_dir: `train(steps=1)` reaches global step 4.

Areas: model_fn = model_fn signatures and return values, spec = EstimatorSpec fields,
input_fn = input_fn return shapes and types, config = RunConfig arguments and TF_CONFIG,
hooks = hooks and saving listeners, export = export receivers and export outputs,
warm_start = warm-start settings, checkpoint = checkpoint paths. "2.15 raised" was checked
against tensorflow-estimator 2.15.0 running the same calls: "same" is the asserted type;
AttributeError is an incidental one from inside; "nothing" means 2.15 accepted the input
(an unknown spec mode ran; a model_dir that is a file failed later; a checkpoint of other
shapes was silently restored into the bigger variables).

| id                                   | bad call                                                | raises        | 2.15 raised    | message names                       |
|--------------------------------------|---------------------------------------------------------|---------------|----------------|-------------------------------------|
| model_fn-none                        | Estimator(None)                                         | ValueError    | same           | model_fn                            |
| model_fn-not_callable                | Estimator("model_fn")                                   | TypeError     | same           | model_fn, callable                  |
| model_fn-without_features            | model_fn(labels, mode)                                  | ValueError    | same           | model_fn, features                  |
| model_fn-unexpected_arg              | model_fn(features, labels, mode, batch_size)            | ValueError    | same           | model_fn, batch_size                |
| model_fn-params_not_accepted         | params= to a model_fn without params                    | ValueError    | same           | model_fn, params                    |
| model_fn-returns_dict_in_train       | train: model_fn returns {"loss": ...}                   | ValueError    | same           | model_fn, EstimatorSpec             |
| model_fn-returns_none_in_evaluate    | evaluate: model_fn returns None                         | ValueError    | same           | model_fn, EstimatorSpec             |
| model_fn-returns_tuple_in_predict    | predict: model_fn returns (predictions,)                | ValueError    | same           | model_fn, EstimatorSpec             |
| model_fn-takes_no_labels             | input_fn has labels, model_fn(features, mode)           | ValueError    | same           | model_fn, labels                    |
| spec-train_without_loss              | TRAIN spec, loss=None                                   | ValueError    | same           | loss                                |
| spec-train_without_train_op          | TRAIN spec, train_op=None                               | ValueError    | same           | train_op                            |
| spec-loss_not_scalar                 | TRAIN spec, loss of shape [4]                           | ValueError    | same           | loss, scalar                        |
| spec-loss_python_float               | EVAL spec, loss=1.0                                     | TypeError     | same           | loss, Tensor                        |
| spec-loss_from_another_graph         | EVAL spec, loss made in another tf.Graph                | ValueError    | same           | loss, default graph                 |
| spec-train_op_string                 | TRAIN spec, train_op="minimize"                         | TypeError     | same           | train_op, Operation or Tensor       |
| spec-prediction_not_tensor           | PREDICT spec, predictions={"classes": [0, 1]}           | TypeError     | same           | predictions[classes], Tensor        |
| spec-predict_without_predictions     | PREDICT spec, predictions=None                          | ValueError    | same           | predictions                         |
| spec-eval_metric_ops_list            | EVAL spec, eval_metric_ops=[...]                        | TypeError     | same           | eval_metric_ops, dict               |
| spec-eval_metric_ops_tensor_value    | EVAL spec, eval_metric_ops={"m": tensor}                | TypeError     | same           | eval_metric_ops, (value, update_op) |
| spec-training_hooks_not_hooks        | TRAIN spec, training_hooks=[object()]                   | TypeError     | same           | training_hooks, SessionRunHook      |
| spec-scaffold_wrong_type             | TRAIN spec, scaffold="scaffold"                         | TypeError     | same           | scaffold, tf.train.Scaffold         |
| spec-unknown_mode                    | EstimatorSpec(mode="training")                          | ValueError    | nothing        | mode                                |
| input_fn-not_callable                | train(input_fn="train.csv")                             | TypeError     | same           | input_fn, callable                  |
| input_fn-returns_none                | input_fn returns None                                   | TypeError     | same           | input_fn, Dataset                   |
| input_fn-returns_string              | input_fn returns "train.csv"                            | TypeError     | same           | input_fn, Dataset                   |
| input_fn-returns_three_tuple         | input_fn returns (features, labels, weights)            | ValueError    | same           | input_fn, (features, labels)        |
| input_fn-dataset_of_triples          | Dataset of (features, labels, weights)                  | ValueError    | same           | input_fn, (features, labels)        |
| input_fn-unsupplied_arg              | input_fn(batch_size)                                    | TypeError     | same           | input_fn, batch_size                |
| input_fn-batch_size_mismatch         | features [8, 8] with labels [4]                         | ValueError    | same           | input_fn, batch                     |
| config-both_save_checkpoints         | save_checkpoints_steps=1 and save_checkpoints_secs=1    | ValueError    | same           | both arguments                      |
| config-negative_checkpoint_steps     | save_checkpoints_steps=-1                               | ValueError    | same           | save_checkpoints_steps, >= 0        |
| config-string_checkpoint_steps       | save_checkpoints_steps="10"                             | TypeError     | same           | save_checkpoints_steps              |
| config-negative_keep_checkpoint_max  | keep_checkpoint_max=-1                                  | ValueError    | same           | keep_checkpoint_max, >= 0           |
| config-zero_log_step_count_steps     | log_step_count_steps=0                                  | ValueError    | same           | log_step_count_steps, > 0           |
| config-float_random_seed             | tf_random_seed=1.5                                      | ValueError    | same           | tf_random_seed, integer             |
| config-session_config_dict           | session_config={"allow_soft_placement": True}           | ValueError    | same           | session_config, ConfigProto         |
| config-config_is_dict                | Estimator(config={"model_dir": ...})                    | ValueError    | same           | config, RunConfig                   |
| config-model_dir_conflict            | Estimator(model_dir=a, config=RunConfig(model_dir=b))   | ValueError    | same           | model_dir                           |
| config-replace_is_chief              | RunConfig().replace(is_chief=False)                     | ValueError    | same           | is_chief                            |
| config-tf_config_not_json            | TF_CONFIG="{not json"                                   | ValueError    | same           | TF_CONFIG / JSON                    |
| config-tf_config_no_task_type        | TF_CONFIG cluster without task type                     | ValueError    | same           | TF_CONFIG, task type                |
| config-tf_config_unknown_job         | TF_CONFIG task type "trainer" not in cluster            | ValueError    | same           | trainer, TF_CONFIG                  |
| config-tf_config_negative_index      | TF_CONFIG task index -1                                 | ValueError    | same           | task index                          |
| config-tf_config_model_dir_conflict  | TF_CONFIG model_dir differs from model_dir=             | ValueError    | same           | model_dir                           |
| hooks-train_object                   | train(hooks=[object()])                                 | TypeError     | same           | hooks, SessionRunHook               |
| hooks-train_string                   | train(hooks="StopAtStepHook")                           | TypeError     | same           | hooks, SessionRunHook               |
| hooks-evaluate_object                | evaluate(hooks=[object()])                              | TypeError     | same           | hooks, SessionRunHook               |
| hooks-predict_object                 | predict(hooks=[object()])                               | TypeError     | same           | hooks, SessionRunHook               |
| hooks-listener_not_listener          | train(saving_listeners=["x"])                           | TypeError     | same           | saving_listeners                    |
| hooks-listener_without_saver         | saving_listeners with no checkpoint saving configured   | ValueError    | same           | saving_listeners, CheckpointSaver   |
| hooks-fetch_unknown_tensor           | a hook fetches "nope:0"                                 | ValueError    | same           | fetch, nope:0                       |
| hooks-before_run_returns_dict        | a hook's before_run returns a dict                      | TypeError     | AttributeError | before_run, SessionRunArgs          |
| export-receiver_fn_not_callable      | export_saved_model(dir, "receiver")                     | TypeError     | same           | serving_input_receiver_fn           |
| export-receiver_fn_returns_dict      | serving_input_receiver_fn returns {"x": placeholder}    | TypeError     | AttributeError | serving_input_receiver_fn           |
| export-receiver_features_none        | ServingInputReceiver(None, ...)                         | ValueError    | same           | features                            |
| export-receiver_tensor_not_tensor    | ServingInputReceiver(..., {"x": 3})                     | ValueError    | same           | receiver_tensor x, Tensor           |
| export-receiver_tensors_key_int      | ServingInputReceiver({"x": x}, {1: x})                  | ValueError    | same           | receiver_tensors keys               |
| export-raw_receiver_features_list    | build_raw_serving_input_receiver_fn([x])                | ValueError    | AttributeError | features, dict                      |
| export-outputs_without_default       | two export_outputs, none "serving_default"              | ValueError    | same           | export_outputs, serving_default     |
| export-outputs_value_not_output      | export_outputs={"a": tensor}                            | TypeError     | same           | export_outputs, ExportOutput        |
| export-classification_int_classes    | ClassificationOutput(classes=int64 tensor)              | ValueError    | same           | classes, string                     |
| export-regression_int_value          | RegressionOutput(value=int64 tensor)                    | ValueError    | same           | value, float                        |
| export-predict_output_int_key        | PredictOutput({1: tensor})                              | ValueError    | same           | key, string                         |
| export-assets_extra_list             | export_saved_model(assets_extra=["vocab.txt"])          | TypeError     | AttributeError | assets_extra, dict                  |
| export-missing_checkpoint_path       | export_saved_model(checkpoint_path=model.ckpt-99)       | ValueError    | same           | checkpoint, model.ckpt-99           |
| warm_start-empty_checkpoint          | WarmStartSettings("")                                   | ValueError    | same           | ckpt_to_initialize_from             |
| warm_start-wrong_type                | Estimator(warm_start_from=123)                          | ValueError    | same           | warm_start_from                     |
| warm_start-missing_path              | warm_start_from=<nothing there>, train into a fresh dir | NotFoundError | same           | nothere                             |
| warm_start-vars_to_warm_start_int    | WarmStartSettings(vars_to_warm_start=5)                 | ValueError    | same           | vars_to_warm_start                  |
| warm_start-unused_prev_var_name      | var_name_to_prev_var_name={"typo/kernel": ...}          | ValueError    | same           | var_name_to_prev_var_name, typo     |
| warm_start-shape_mismatch            | warm-start hidden=32 from hidden=16                     | ValueError    | same           | dense/kernel, shape                 |
| warm_start-vocab_axis                | VocabInfo(axis=2)                                       | ValueError    | same           | axis                                |
| warm_start-vocab_info_not_vocab_info | var_name_to_vocab_info={"dense/kernel": "vocab.txt"}    | TypeError     | AttributeError | var_name_to_vocab_info / VocabInfo  |
| checkpoint-evaluate_missing_prefix   | evaluate(checkpoint_path=model.ckpt-99)                 | ValueError    | same           | checkpoint, model.ckpt-99           |
| checkpoint-predict_missing_prefix    | predict(checkpoint_path=model.ckpt-99)                  | ValueError    | same           | checkpoint, model.ckpt-99           |
| checkpoint-evaluate_empty_dir        | evaluate(checkpoint_path=<empty dir>)                   | ValueError *  | DataLossError  | empty                               |
| checkpoint-evaluate_state_file       | evaluate(checkpoint_path=model_dir/checkpoint)          | DataLossError | same           | checkpoint                          |
| checkpoint-model_dir_is_file         | Estimator(model_dir=model_dir/checkpoint)               | ValueError    | nothing        | model_dir, directory                |
| checkpoint-unknown_variable          | get_variable_value("nope/kernel")                       | NotFoundError | same           | nope/kernel                         |
| checkpoint-different_model_in_dir    | train a hidden=32 model_fn in the hidden=16 model_dir   | ValueError    | nothing        | dense/kernel                        |
| checkpoint-variable_missing_in_dir   | evaluate a model_fn with one more variable, extra/w     | NotFoundError | same           | extra/w                             |
"""  # noqa: E501

import json
import os
import shutil
from collections import namedtuple
from hashlib import sha1

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from helpers import classifier_model_fn, dataset_input_fn, make_estimator

import keras_estimator as estimator

MODEL, EMPTY = "model", "empty"
_rng = np.random.RandomState(0)
X = _rng.randn(64, 8).astype(np.float32)
Y = np.argmax(X[:, :3], axis=1).astype(np.int64)

TRAIN, EVAL, PREDICT = estimator.ModeKeys.TRAIN, estimator.ModeKeys.EVAL, estimator.ModeKeys.PREDICT
train_input = dataset_input_fn(X, Y, 16, repeat=True)
eval_input = dataset_input_fn(X, Y, 32)
predict_input = dataset_input_fn(X, batch_size=32)


class Ctx:
    """What a case's bad call gets: the case root, its model_dir and a good Estimator on it."""

    def __init__(self, root, setenv):
        self.root = root
        self.model_dir = os.path.join(root, MODEL)
        self.empty_dir = os.path.join(root, EMPTY)
        self.setenv = setenv
        self.est = make_estimator(self.model_dir)

    def path(self, *parts):
        """A path in the case root (not created)."""
        return os.path.join(self.root, *parts)

    def make(self, model_fn=classifier_model_fn, model_dir=None, **kwargs):
        """An Estimator on model_dir (or another dir) with `model_fn`."""
        if model_fn is classifier_model_fn:
            kwargs.setdefault("params", {})
        return estimator.Estimator(model_fn, model_dir=model_dir or self.model_dir, **kwargs)

    def export(self, receiver_fn, **kwargs):
        """Exports the good Estimator into model_dir/export (a failure must leave nothing)."""
        return self.est.export_saved_model(
            os.path.join(self.model_dir, "export"), receiver_fn, **kwargs
        )


# -- building blocks of the bad calls --------------------------------------------------------


def altered(broken_mode, **changes):
    """A model_fn returning the classifier's spec, with `changes` made in `broken_mode`.

    A change is a value, or a callable of the good spec returning the value.
    """

    def model_fn(features, labels, mode):
        spec = classifier_model_fn(features, labels, mode, {})
        if mode != broken_mode:
            return spec
        values = {k: v(spec) if callable(v) else v for k, v in changes.items()}
        return spec._replace(**values)

    return model_fn


def returning(value):
    """A model_fn that builds the classifier, then returns `value(spec)` instead of a spec."""

    def model_fn(features, labels, mode):
        return value(classifier_model_fn(features, labels, mode, {}))

    return model_fn


def receiver_fn(make=None):
    """A serving_input_receiver_fn for x [None, 8]; `make(x)` builds what it returns."""

    def fn():
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        if make is None:
            return estimator.export.ServingInputReceiver({"x": x}, {"x": x})
        return make(x)

    return fn


def export_outputs(outputs):
    """A model_fn whose PREDICT spec has `export_outputs=outputs(spec)`."""
    return altered(PREDICT, export_outputs=outputs)


def other_graph_loss(spec):
    with tf.Graph().as_default():
        return tf.constant(1.0)


CLUSTER = {"chief": ["h:0"], "worker": ["h:1"]}


def tf_config(value):
    return lambda c: (
        c.setenv("TF_CONFIG", value if isinstance(value, str) else json.dumps(value)),
        c.make(),
    )


class FetchHook(tf.train.SessionRunHook):
    def __init__(self, request):
        self.request = request

    def before_run(self, run_context):
        return self.request


def bigger_model_fn(features, labels, mode, params):
    return classifier_model_fn(features, labels, mode, dict(params, hidden=32))


def extra_variable_model_fn(features, labels, mode):
    spec = classifier_model_fn(features, labels, mode, {})
    extra = tf.get_variable("extra/w", [], initializer=tf.zeros_initializer())
    return spec._replace(loss=spec.loss + extra)


def no_checkpoints_config():
    return estimator.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)


# -- the matrix -------------------------------------------------------------------------------

Case = namedtuple("Case", "id call error match")

CASES = [
    # model_fn signatures and return values
    Case("model_fn-none", lambda c: c.make(None), ValueError, r"model_fn must be provided"),
    Case(
        "model_fn-not_callable",
        lambda c: c.make("model_fn"),
        TypeError,
        r"model_fn must be callable",
    ),
    Case(
        "model_fn-without_features",
        lambda c: c.make(lambda labels, mode: None),
        ValueError,
        r"model_fn .* must include features argument",
    ),
    Case(
        "model_fn-unexpected_arg",
        lambda c: c.make(lambda features, labels, mode, batch_size: None),
        ValueError,
        r"model_fn .* has following not expected args: \['batch_size'\]",
    ),
    Case(
        "model_fn-params_not_accepted",
        lambda c: c.make(lambda features, labels, mode: None, params={"lr": 1}),
        ValueError,
        r"model_fn .* does not include params argument",
    ),
    Case(
        "model_fn-returns_dict_in_train",
        lambda c: c.make(returning(lambda s: {"loss": s.loss})).train(train_input, steps=1),
        ValueError,
        r"model_fn should return an EstimatorSpec",
    ),
    Case(
        "model_fn-returns_none_in_evaluate",
        lambda c: c.make(returning(lambda s: None)).evaluate(eval_input),
        ValueError,
        r"model_fn should return an EstimatorSpec",
    ),
    Case(
        "model_fn-returns_tuple_in_predict",
        lambda c: next(c.make(returning(lambda s: (s.predictions,))).predict(predict_input)),
        ValueError,
        r"model_fn should return an EstimatorSpec",
    ),
    Case(
        "model_fn-takes_no_labels",
        lambda c: c.make(
            lambda features, mode: classifier_model_fn(features, None, mode, {})
        ).evaluate(eval_input),
        ValueError,
        r"model_fn does not take labels, but input_fn returns labels",
    ),
    # EstimatorSpec fields
    Case(
        "spec-train_without_loss",
        lambda c: c.make(altered(TRAIN, loss=None)).train(train_input, steps=1),
        ValueError,
        r"Missing loss",
    ),
    Case(
        "spec-train_without_train_op",
        lambda c: c.make(altered(TRAIN, train_op=None)).train(train_input, steps=1),
        ValueError,
        r"Missing train_op",
    ),
    Case(
        "spec-loss_not_scalar",
        lambda c: c.make(altered(TRAIN, loss=lambda s: tf.fill([4], s.loss))).train(
            train_input, steps=1
        ),
        ValueError,
        r"Loss must be scalar",
    ),
    Case(
        "spec-loss_python_float",
        lambda c: c.make(altered(EVAL, loss=1.0)).evaluate(eval_input),
        TypeError,
        r"loss must be Tensor",
    ),
    Case(
        "spec-loss_from_another_graph",
        lambda c: c.make(altered(EVAL, loss=other_graph_loss)).evaluate(eval_input),
        ValueError,
        r"loss with .* must be from the default graph",
    ),
    Case(
        "spec-train_op_string",
        lambda c: c.make(altered(TRAIN, train_op="minimize")).train(train_input, steps=1),
        TypeError,
        r"train_op must be Operation or Tensor",
    ),
    Case(
        "spec-prediction_not_tensor",
        lambda c: next(
            c.make(altered(PREDICT, predictions={"classes": [0, 1]})).predict(predict_input)
        ),  # fmt: skip
        TypeError,
        r"predictions\[classes\] must be Tensor",
    ),
    Case(
        "spec-predict_without_predictions",
        lambda c: next(c.make(altered(PREDICT, predictions=None)).predict(predict_input)),
        ValueError,
        r"Missing predictions",
    ),
    Case(
        "spec-eval_metric_ops_list",
        lambda c: c.make(
            altered(EVAL, eval_metric_ops=lambda s: list(s.eval_metric_ops.values()))
        ).evaluate(eval_input),
        TypeError,
        r"eval_metric_ops must be a dict",
    ),
    Case(
        "spec-eval_metric_ops_tensor_value",
        lambda c: c.make(altered(EVAL, eval_metric_ops=lambda s: {"m": s.loss})).evaluate(
            eval_input
        ),
        TypeError,
        r"eval_metric_ops must be \(metric_value, update_op\) tuples",
    ),
    Case(
        "spec-training_hooks_not_hooks",
        lambda c: c.make(altered(TRAIN, training_hooks=[object()])).train(train_input, steps=1),
        TypeError,
        r"hooks must be SessionRunHook instances.*training_hooks",
    ),
    Case(
        "spec-scaffold_wrong_type",
        lambda c: c.make(altered(TRAIN, scaffold="scaffold")).train(train_input, steps=1),
        TypeError,
        r"scaffold must be tf.train.Scaffold",
    ),
    Case(
        "spec-unknown_mode",
        lambda c: c.make(
            lambda features, labels, mode: estimator.EstimatorSpec(
                "training", loss=tf.reduce_mean(features["x"])
            )
        ).evaluate(eval_input),
        ValueError,
        r"mode.*training",
    ),
    # input_fn return shapes and types
    Case(
        "input_fn-not_callable",
        lambda c: c.est.train("train.csv", steps=1),
        TypeError,
        r"input_fn must be callable",
    ),
    Case(
        "input_fn-returns_none",
        lambda c: c.est.train(lambda: None, steps=1),
        TypeError,
        r"input_fn returned None; expected a tf.data.Dataset",
    ),
    Case(
        "input_fn-returns_string",
        lambda c: c.est.train(lambda: "train.csv", steps=1),
        TypeError,
        r"input_fn returned 'train.csv' .*expected a tf.data.Dataset",
    ),
    Case(
        "input_fn-returns_three_tuple",
        lambda c: c.est.evaluate(
            lambda: ({"x": tf.constant(X)}, tf.constant(Y), tf.ones([64])),
        ),
        ValueError,
        r"input_fn returned a tuple of 3 elements; expected .*\(features, labels\)",
    ),
    Case(
        "input_fn-dataset_of_triples",
        lambda c: c.est.train(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y, Y)).batch(8), steps=1
        ),
        ValueError,
        r"input_fn returned a Dataset whose elements are tuples of 3; expected \(features",
    ),
    Case(
        "input_fn-unsupplied_arg",
        lambda c: c.est.train(lambda batch_size: None, steps=1),
        TypeError,
        r"input_fn has arguments \['batch_size'\]",
    ),
    Case(
        "input_fn-batch_size_mismatch",
        lambda c: c.est.train(lambda: ({"x": tf.constant(X[:8])}, tf.constant(Y[:4])), steps=1),
        ValueError,
        r"features and labels returned by input_fn have different batch sizes",
    ),
    # RunConfig arguments and TF_CONFIG
    Case(
        "config-both_save_checkpoints",
        lambda c: estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1),
        ValueError,
        r"save_checkpoints_steps.* and .*save_checkpoints_secs.* cannot be both set",
    ),
    Case(
        "config-negative_checkpoint_steps",
        lambda c: c.make(config=estimator.RunConfig(save_checkpoints_steps=-1)),
        ValueError,
        r"save_checkpoints_steps should be >= 0",
    ),
    Case(
        "config-string_checkpoint_steps",
        lambda c: c.make(config=estimator.RunConfig(save_checkpoints_steps="10")),
        TypeError,
        r"save_checkpoints_steps",
    ),
    Case(
        "config-negative_keep_checkpoint_max",
        lambda c: c.make(config=estimator.RunConfig(keep_checkpoint_max=-1)),
        ValueError,
        r"keep_checkpoint_max should be >= 0",
    ),
    Case(
        "config-zero_log_step_count_steps",
        lambda c: c.make(config=estimator.RunConfig(log_step_count_steps=0)),
        ValueError,
        r"log_step_count_steps should be > 0",
    ),
    Case(
        "config-float_random_seed",
        lambda c: c.make(config=estimator.RunConfig(tf_random_seed=1.5)),
        ValueError,
        r"tf_random_seed must be integer",
    ),
    Case(
        "config-session_config_dict",
        lambda c: estimator.RunConfig(session_config={"allow_soft_placement": True}),
        ValueError,
        r"session_config must be instance of ConfigProto",
    ),
    Case(
        "config-config_is_dict",
        lambda c: c.make(config={"model_dir": c.model_dir}),
        ValueError,
        r"config must be an instance of `?RunConfig",
    ),
    Case(
        "config-model_dir_conflict",
        lambda c: c.make(config=estimator.RunConfig(model_dir=c.path("other"))),
        ValueError,
        r"`model_dir` are set both in constructor and `RunConfig`, but with different values",
    ),
    Case(
        "config-replace_is_chief",
        lambda c: estimator.RunConfig().replace(is_chief=False),
        ValueError,
        r"Replacing is_chief is not supported",
    ),
    Case(
        "config-tf_config_not_json",
        tf_config("{not json"),
        ValueError,
        r"TF_CONFIG is not valid JSON",
    ),
    Case(
        "config-tf_config_no_task_type",
        tf_config({"cluster": CLUSTER, "task": {"index": 0}}),
        ValueError,
        r'If "cluster" is set in TF_CONFIG, task type must be set',
    ),
    Case(
        "config-tf_config_unknown_job",
        tf_config({"cluster": CLUSTER, "task": {"type": "trainer", "index": 0}}),
        ValueError,
        r"(?s)trainer.*TF_CONFIG",
    ),
    Case(
        "config-tf_config_negative_index",
        tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": -1}}),
        ValueError,
        r"Task index must be non-negative",
    ),
    Case(
        "config-tf_config_model_dir_conflict",
        tf_config({"model_dir": "/somewhere/else"}),
        ValueError,
        r"model_dir.* are set both in constructor and `RunConfig`",
    ),
    # hooks
    Case(
        "hooks-train_object",
        lambda c: c.est.train(train_input, steps=1, hooks=[object()]),
        TypeError,
        r"[Hh]ooks must be (a )?SessionRunHook",
    ),
    Case(
        "hooks-train_string",
        lambda c: c.est.train(train_input, steps=1, hooks="StopAtStepHook"),
        TypeError,
        r"[Hh]ooks must be (a )?SessionRunHook",
    ),
    Case(
        "hooks-evaluate_object",
        lambda c: c.est.evaluate(eval_input, hooks=[object()]),
        TypeError,
        r"[Hh]ooks must be (a )?SessionRunHook",
    ),
    Case(
        "hooks-predict_object",
        lambda c: next(c.est.predict(predict_input, hooks=[object()])),
        TypeError,
        r"[Hh]ooks must be (a )?SessionRunHook",
    ),
    Case(
        "hooks-listener_not_listener",
        lambda c: c.est.train(train_input, steps=1, saving_listeners=["x"]),
        TypeError,
        r"saving_listeners must be a list of CheckpointSaverListener",
    ),
    Case(
        "hooks-listener_without_saver",
        lambda c: c.make(config=no_checkpoints_config()).train(
            train_input, steps=1, saving_listeners=[tf.train.CheckpointSaverListener()]
        ),
        ValueError,
        r"There should be a CheckpointSaverHook to use saving_listeners",
    ),
    Case(
        "hooks-fetch_unknown_tensor",
        lambda c: c.est.train(
            train_input, steps=1, hooks=[FetchHook(tf.train.SessionRunArgs({"n": "nope:0"}))]
        ),
        ValueError,
        r"fetch.*nope:0",
    ),
    Case(
        "hooks-before_run_returns_dict",
        lambda c: c.est.train(train_input, steps=1, hooks=[FetchHook({"n": "global_step:0"})]),
        TypeError,
        r"before_run.*SessionRunArgs",
    ),
    # export receivers and outputs
    Case(
        "export-receiver_fn_not_callable",
        lambda c: c.export("receiver"),
        TypeError,
        r"serving_input_receiver_fn must be callable",
    ),
    Case(
        "export-receiver_fn_returns_dict",
        lambda c: c.export(receiver_fn(lambda x: {"x": x})),
        TypeError,
        r"serving_input_receiver_fn must return a ServingInputReceiver",
    ),
    Case(
        "export-receiver_features_none",
        lambda c: c.export(receiver_fn(lambda x: estimator.export.ServingInputReceiver(None, x))),
        ValueError,
        r"features must be defined",
    ),
    Case(
        "export-receiver_tensor_not_tensor",
        lambda c: c.export(
            receiver_fn(lambda x: estimator.export.ServingInputReceiver({"x": x}, {"x": 3}))
        ),
        ValueError,
        r"receiver_tensor x must be a Tensor",
    ),
    Case(
        "export-receiver_tensors_key_int",
        lambda c: c.export(
            receiver_fn(lambda x: estimator.export.ServingInputReceiver({"x": x}, {1: x}))
        ),
        ValueError,
        r"receiver_tensors? keys must be strings: 1",
    ),
    Case(
        "export-raw_receiver_features_list",
        lambda c: c.export(
            estimator.export.build_raw_serving_input_receiver_fn([tf.TensorSpec([None, 8])])
        ),
        ValueError,
        r"features must be a dict",
    ),
    Case(
        "export-outputs_without_default",
        lambda c: c.make(
            export_outputs(
                lambda s: {
                    "a": estimator.export.PredictOutput(s.predictions),
                    "b": estimator.export.PredictOutput(s.predictions),
                }
            )
        ).export_saved_model(os.path.join(c.model_dir, "export"), receiver_fn()),
        ValueError,
        r"Multiple export_outputs were provided, but none of them is specified as the default",
    ),
    Case(
        "export-outputs_value_not_output",
        lambda c: c.make(
            export_outputs(lambda s: {"a": s.predictions["classes"]})
        ).export_saved_model(os.path.join(c.model_dir, "export"), receiver_fn()),
        TypeError,
        r"Values in export_outputs must be ExportOutput",
    ),
    Case(
        "export-classification_int_classes",
        lambda c: c.make(
            export_outputs(
                lambda s: {
                    "a": estimator.export.ClassificationOutput(classes=s.predictions["classes"])
                }  # noqa: E501
            )
        ).export_saved_model(os.path.join(c.model_dir, "export"), receiver_fn()),
        ValueError,
        r"Classification classes must be a string Tensor",
    ),
    Case(
        "export-regression_int_value",
        lambda c: c.make(
            export_outputs(
                lambda s: {"a": estimator.export.RegressionOutput(s.predictions["classes"])}
            )
        ).export_saved_model(os.path.join(c.model_dir, "export"), receiver_fn()),
        ValueError,
        r"Regression output value must be a float32 Tensor",
    ),
    Case(
        "export-predict_output_int_key",
        lambda c: c.make(
            export_outputs(
                lambda s: {"a": estimator.export.PredictOutput({1: s.predictions["classes"]})}
            )
        ).export_saved_model(os.path.join(c.model_dir, "export"), receiver_fn()),
        ValueError,
        r"Prediction output key must be a string",
    ),
    Case(
        "export-assets_extra_list",
        lambda c: c.export(receiver_fn(), assets_extra=["vocab.txt"]),
        TypeError,
        r"assets_extra must be a dict",
    ),
    Case(
        "export-missing_checkpoint_path",
        lambda c: c.export(receiver_fn(), checkpoint_path=c.path(MODEL, "model.ckpt-99")),
        ValueError,
        r"checkpoint.*model\.ckpt-99",
    ),
    # warm-start settings
    Case(
        "warm_start-empty_checkpoint",
        lambda c: estimator.WarmStartSettings(""),
        ValueError,
        r"`ckpt_to_initialize_from` MUST be set",
    ),
    Case(
        "warm_start-wrong_type",
        lambda c: c.make(model_dir=c.path("fresh"), warm_start_from=123),
        ValueError,
        r"warm_start_from must be a string or a WarmStartSettings",
    ),
    Case(
        "warm_start-missing_path",
        lambda c: c.make(model_dir=c.path("fresh"), warm_start_from=c.path("nothere")).train(
            train_input, steps=1
        ),
        tf.errors.NotFoundError,
        r"nothere",
    ),
    Case(
        "warm_start-vars_to_warm_start_int",
        lambda c: c.make(
            model_dir=c.path("fresh"),
            warm_start_from=estimator.WarmStartSettings(c.model_dir, vars_to_warm_start=5),
        ).train(train_input, steps=1),
        ValueError,
        r"vars_to_warm_start must be a `list` or `str`",
    ),
    Case(
        "warm_start-unused_prev_var_name",
        lambda c: c.make(
            model_dir=c.path("fresh"),
            warm_start_from=estimator.WarmStartSettings(
                c.model_dir, var_name_to_prev_var_name={"typo/kernel": "dense/kernel"}
            ),
        ).train(train_input, steps=1),
        ValueError,
        r"var_name_to_prev_var_name that were not used: .*typo/kernel",
    ),
    Case(
        "warm_start-shape_mismatch",
        lambda c: c.make(
            bigger_model_fn, model_dir=c.path("fresh"), params={}, warm_start_from=c.model_dir
        ).train(train_input, steps=1),
        ValueError,
        r"Shape of variable dense/(kernel|bias)",
    ),
    Case(
        "warm_start-vocab_axis",
        lambda c: estimator.VocabInfo("new.txt", 3, 1, "old.txt", axis=2),
        ValueError,
        r"supported values for the axis argument are 0 and 1",
    ),
    Case(
        "warm_start-vocab_info_not_vocab_info",
        lambda c: c.make(
            model_dir=c.path("fresh"),
            warm_start_from=estimator.WarmStartSettings(
                c.model_dir, var_name_to_vocab_info={"dense/kernel": "vocab.txt"}
            ),
        ).train(train_input, steps=1),
        TypeError,
        r"VocabInfo",
    ),
    # checkpoint paths
    Case(
        "checkpoint-evaluate_missing_prefix",
        lambda c: c.est.evaluate(eval_input, checkpoint_path=c.path(MODEL, "model.ckpt-99")),
        ValueError,
        r"checkpoint.*model\.ckpt-99",
    ),
    Case(
        "checkpoint-predict_missing_prefix",
        lambda c: next(
            c.est.predict(predict_input, checkpoint_path=c.path(MODEL, "model.ckpt-99"))
        ),
        ValueError,
        r"checkpoint.*model\.ckpt-99",
    ),
    Case(
        "checkpoint-evaluate_empty_dir",
        lambda c: c.est.evaluate(eval_input, checkpoint_path=c.empty_dir),
        ValueError,  # * a directory is read as its latest checkpoint here; none: ValueError
        EMPTY,
    ),
    Case(
        "checkpoint-evaluate_state_file",
        lambda c: c.est.evaluate(eval_input, checkpoint_path=c.path(MODEL, "checkpoint")),
        tf.errors.DataLossError,
        r"checkpoint",
    ),
    Case(
        "checkpoint-model_dir_is_file",
        lambda c: c.make(model_dir=c.path(MODEL, "checkpoint")),
        ValueError,
        r"model_dir .* is a file; expected a directory",
    ),
    Case(
        "checkpoint-unknown_variable",
        lambda c: c.est.get_variable_value("nope/kernel"),
        tf.errors.NotFoundError,
        r"nope/kernel",
    ),
    Case(
        "checkpoint-different_model_in_dir",
        lambda c: c.make(bigger_model_fn, params={}).train(train_input, steps=1),
        ValueError,
        r"dense/kernel",
    ),
    Case(
        "checkpoint-variable_missing_in_dir",
        lambda c: c.make(extra_variable_model_fn).evaluate(eval_input),
        tf.errors.NotFoundError,
        r"extra/w",
    ),
]

AREAS = ("model_fn", "spec", "input_fn", "config", "hooks", "export", "warm_start", "checkpoint")


# -- the checks -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A case root: model/ trained 3 steps by a good Estimator, and an empty dir."""
    root = tmp_path_factory.mktemp("bad_input_template")
    os.makedirs(root / EMPTY)
    est = make_estimator(root / MODEL)
    est.train(train_input, steps=3)
    return root


def snapshot(root):
    """{relative path: (size, mtime_ns, sha1)} for files, None for directories."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(directory, name), root)] = None
        for name in files:
            path = os.path.join(directory, name)
            stat = os.stat(path)
            with open(path, "rb") as f:
                digest = sha1(f.read()).hexdigest()
            found[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns, digest)
    return found


def test_the_matrix_covers_every_area():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 45
    for area in AREAS:
        assert sum(i.startswith(area + "-") for i in ids) >= 4, area
    assert {i.split("-")[0] for i in ids} == set(AREAS)
    for case_id in ids:
        assert f"| {case_id} " in __doc__, f"{case_id} is missing from the module docstring"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case, template, tmp_path, monkeypatch):
    root = str(tmp_path / "case")
    shutil.copytree(template, root)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    c = Ctx(root, monkeypatch.setenv)
    before = snapshot(root)

    with pytest.raises(case.error) as raised:
        case.call(c)
    message = str(raised.value)
    assert raised.match(case.match), f"message does not match {case.match!r}: {message}"

    monkeypatch.delenv("TF_CONFIG", raising=False)
    after = snapshot(root)
    changed = sorted(
        k
        for k in set(before) | set(after)
        if k not in before or k not in after or before[k] != after[k]
    )
    assert not changed, f"the failed call changed the case directory: {changed}"

    c.est.train(train_input, steps=1)
    assert c.est.get_variable_value("global_step") == 4
