"""Writes an Estimator's PREDICT graph as a SavedModel servable without keras_estimator.

The receiver fn and the model_fn are traced together (TF1 placeholders work there);
each signature is that trace pruned from its inputs to its outputs, as `session.run`
with feeds would have run it. Variables come from a checkpoint into a fresh variable
store, so the Estimator's in-memory state is never touched. The SavedModel is written
to a temporary directory and renamed into place: a failed export leaves nothing behind.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from typing import Any

import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.protobuf import saved_model_pb2

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.checkpoint.warm_start import warm_start_checkpoint
from keras_estimator.engine.graph_scope import tf1_graph_scope
from keras_estimator.export.export_outputs import DEFAULT_SIGNATURE, PREDICT_METHOD, Signature
from keras_estimator.export.receivers import ServingInputReceiver, TensorServingInputReceiver
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.utils.seeding import seeded_python_random

logger = logging.getLogger("keras_estimator")
_SAVED_MODEL_PB = "saved_model.pb"


_CLAIM_ATTEMPTS = 1000  # stamps tried, one second apart, before giving up


def claim_export_dir(export_dir_base: str) -> tuple[str, str]:
    """`(<base>/<stamp>, <base>/temp-<stamp>)` with the temporary directory created by this
    call alone, so concurrent exports (two processes, an exporter and a manual export) in
    one second take distinct stamps.

    The claim is an exclusive mkdir of `temp-<stamp>`, taken only while `<stamp>` does
    not exist: an export renames its temporary directory to `<stamp>` at once, so a
    claim made after that rename sees `<stamp>` on its second look and moves on. On file
    systems without an exclusive mkdir (gs:// and other tf.io.gfile schemes) two exports
    in one second may still pick the same stamp; one of them then fails.
    """
    tf.io.gfile.makedirs(export_dir_base)
    stamp = int(time.time())
    for _ in range(_CLAIM_ATTEMPTS):
        export_dir = os.path.join(export_dir_base, str(stamp))
        temp_dir = os.path.join(export_dir_base, f"temp-{stamp}")
        stamp += 1
        if tf.io.gfile.exists(export_dir):
            continue
        if "://" in temp_dir:
            if tf.io.gfile.exists(temp_dir):
                continue
            tf.io.gfile.makedirs(temp_dir)
            return export_dir, temp_dir
        try:
            os.mkdir(temp_dir)
        except FileExistsError:
            continue  # another export holds this stamp
        if os.path.lexists(export_dir):  # finished by another export since the first look
            os.rmdir(temp_dir)
            continue
        return export_dir, temp_dir
    raise FileExistsError(
        f"Could not claim an export directory in {export_dir_base!r}: the {_CLAIM_ATTEMPTS} "
        "timestamps from now on are all taken (as `<stamp>` or `temp-<stamp>`). Expected a "
        "free timestamp. Fix: remove stale temp-* directories of killed exports, or export to "
        f"another directory. Received: export_dir_base={export_dir_base!r}"
    )


def _check_receiver(receiver: Any) -> None:
    if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
        raise TypeError(
            "serving_input_receiver_fn must return a ServingInputReceiver or "
            f"TensorServingInputReceiver (keras_estimator.export), given: {receiver!r:.200}. "
            "Fix: return ServingInputReceiver(features, receiver_tensors), or use "
            "build_raw_serving_input_receiver_fn / build_parsing_serving_input_receiver_fn. "
            f"Received: type(serving_input_receiver_fn())={type(receiver).__name__}"
        )


def _signatures(receiver: Any, export_outputs: dict) -> tuple[dict[str, Signature], dict]:
    """Every signature tf.estimator would write, and the excluded ones with the reason."""
    groups = [(None, receiver.receiver_tensors)]
    groups += list((receiver.receiver_tensors_alternatives or {}).items())
    signatures, excluded = {}, {}
    for group, tensors in groups:
        for key, output in export_outputs.items():
            name = key if group is None else f"{group}:{key}"
            try:
                signatures[name] = output.signature(tensors)
            except ValueError as exc:
                excluded[name] = str(exc)
    return signatures, excluded


class _Trace:
    """The receiver fn and the PREDICT model_fn, traced into one graph."""

    def __init__(self, model: Any, call_model_fn: Callable, receiver_fn: Callable) -> None:
        self.model = model
        captured: dict[str, Any] = {}

        def build() -> tf.Tensor:
            with tf1_graph_scope(model.store, model.global_step):
                receiver = receiver_fn()
                _check_receiver(receiver)
                captured["receiver"] = receiver
                captured["spec"] = call_model_fn(receiver.features, None, ModeKeys.PREDICT)
            return tf.constant(0)

        with model.store.creating() as used, internals.resources_created() as resources:
            concrete = tf.function(build, autograph=False).get_concrete_function()
        self.used = used | {"global_step"}
        self.resources = resources  # lookup tables: TensorFlow made them outside the trace
        self.receiver, self.spec = captured["receiver"], captured["spec"]
        self._wrapped = internals.graph_pruner(concrete.graph)

    def prune(self, signature: Signature) -> Any:
        return self._wrapped.prune(
            feeds=list(signature.inputs.values()), fetches=dict(signature.outputs)
        )


def _serving_function(pruned: Any, signature: Signature) -> Any:
    specs = [
        tf.TensorSpec(tensor.shape, tensor.dtype, name=key)
        for key, tensor in signature.inputs.items()
    ]

    def serve(*args: tf.Tensor) -> dict[str, tf.Tensor]:
        return pruned(*args)

    return tf.function(serve, input_signature=specs, autograph=False).get_concrete_function()


def _keras_serve_endpoint(pruned: Any, signature: Signature, takes_dict: bool) -> Any:
    """The `serve` function Keras 3's exports have and `keras.layers.TFSMLayer(path)` calls:
    one argument, the features dict (or the one tensor), returning the outputs dict."""
    keys = list(signature.inputs)
    specs = {k: tf.TensorSpec(t.shape, t.dtype, name=k) for k, t in signature.inputs.items()}
    if takes_dict:
        return tf.function(lambda features: pruned(*[features[k] for k in keys]),
                           input_signature=[specs], autograph=False)  # fmt: skip
    (spec,) = specs.values()
    return tf.function(lambda tensor: pruned(tensor), input_signature=[spec], autograph=False)


def _rewrite_saved_model(path: str, methods: dict[str, str], as_text: bool) -> None:
    """Sets classify / regress method names (TF2's saver writes `predict` for all)."""
    pb_path = os.path.join(path, _SAVED_MODEL_PB)
    saved_model = saved_model_pb2.SavedModel()
    saved_model.ParseFromString(tf.io.gfile.GFile(pb_path, "rb").read())
    for name, method in methods.items():
        saved_model.meta_graphs[0].signature_def[name].method_name = method
    if as_text:
        tf.io.gfile.remove(pb_path)
        with tf.io.gfile.GFile(os.path.join(path, "saved_model.pbtxt"), "w") as f:
            f.write(text_format.MessageToString(saved_model))
        return
    with tf.io.gfile.GFile(pb_path, "wb") as f:
        f.write(saved_model.SerializeToString())
    _refresh_fingerprint(path)


def _refresh_fingerprint(path: str) -> None:
    """fingerprint.pb hashes saved_model.pb; write it again for the edited file."""
    fingerprint = internals.saved_model_fingerprint(path)
    if fingerprint is None:
        return
    with tf.io.gfile.GFile(os.path.join(path, "fingerprint.pb"), "wb") as f:
        f.write(fingerprint)


def _check_assets_extra(assets_extra: Any) -> None:
    if assets_extra and not isinstance(assets_extra, dict):
        raise TypeError(
            "assets_extra must be a dict of destination path to source file, but it is not. "
            "Fix: e.g. assets_extra={'vocab.txt': '/path/to/vocab.txt'}. "
            f"Received: assets_extra={assets_extra!r}"
        )
    for dest in assets_extra or {}:
        relative = os.fsdecode(dest) if isinstance(dest, (str, bytes, os.PathLike)) else None
        parts = relative.replace(os.sep, "/").split("/") if relative else []
        if not relative or os.path.isabs(relative) or ".." in parts:
            raise ValueError(
                f"The assets_extra destination {dest!r} is not a relative path inside the "
                "export: each key names where a file is copied under <export>/assets.extra/, "
                "so an absolute path or '..' would write outside the export directory. "
                "Expected a relative path without '..', e.g. 'vocab.txt' or 'sub/vocab.txt'. "
                "Fix: use a relative destination name as the key and the source path as the "
                f"value. Received: assets_extra key={dest!r}"
            )


def _copy_assets_extra(path: str, assets_extra: dict | None) -> None:
    if not assets_extra:
        return
    for dest, source in assets_extra.items():
        target = os.path.join(path, "assets.extra", dest)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)


def _resources_used(resources: list, captured: list, variable_handles: set) -> list:
    """The tables (and other resources) the signatures use, for the SavedModel to track.

    Tracked, a table is re-created and re-initialised when the SavedModel loads, and a
    vocabulary file it reads is copied to the export's `assets/` (its path rewritten), as
    tf.estimator's exports did. Tables made while the model_fn was traced are known; one
    made before (a Keras StringLookup built outside the model_fn) is found from its handle.
    """
    owners = {id(resource.resource_handle): resource for resource in resources}
    used: dict[int, Any] = {}
    for handle in captured:
        if id(handle) in variable_handles or handle.dtype != tf.resource:
            continue
        owner = owners.get(id(handle)) or internals.resource_owner(handle)
        if owner is not None:
            used[id(owner)] = owner
    return list(used.values())


def _check_export_args(mode: str, serving_input_receiver_fn: Any, assets_extra: Any) -> None:
    if mode != ModeKeys.PREDICT:
        raise NotImplementedError(
            "export_saved_model exports only the PREDICT graph, for serving; other "
            "experimental_modes are not supported. Fix: pass experimental_mode=ModeKeys.PREDICT "
            f"(the default). Received: experimental_mode={mode!r}"
        )
    if not callable(serving_input_receiver_fn):
        raise TypeError(
            "serving_input_receiver_fn must be callable, but it is not. Fix: pass a function "
            "returning a ServingInputReceiver, e.g. build_raw_serving_input_receiver_fn(...). "
            f"Received: serving_input_receiver_fn={serving_input_receiver_fn!r}"
        )
    _check_assets_extra(assets_extra)


def _checkpoint_to_export(runtime: Any, checkpoint_path: str | None) -> str:
    """The checkpoint an export restores: the one named, model_dir's latest, or (as
    tf.estimator) an untrained warm-started Estimator's warm-start weights."""
    checkpoint = checkpoint_path or runtime.latest_checkpoint()
    warm_start_settings = runtime.warm_start_settings
    if not checkpoint and warm_start_settings is not None:
        checkpoint = warm_start_checkpoint(warm_start_settings.ckpt_to_initialize_from)
    if not checkpoint:
        raise ValueError(
            f"Couldn't find trained model at {runtime.model_dir}. Expected a checkpoint there "
            "or at checkpoint_path. Fix: call train() first, or pass checkpoint_path=. "
            f"Received: model_dir={runtime.model_dir!r}, checkpoint_path={checkpoint_path!r}"
        )
    if tf.io.gfile.isdir(checkpoint):
        checkpoint = ckpt_lib.latest_checkpoint(checkpoint) or checkpoint
    return checkpoint


def _serving_functions(trace: Any) -> tuple[dict, dict, dict]:
    """`(functions, methods, signatures)`: name -> (serving function, pruned step), the
    non-predict method names, the signatures; the ones that cannot be served are logged."""
    signatures, excluded = _signatures(trace.receiver, trace.spec.export_outputs)
    functions, methods = {}, {}
    for name, signature in signatures.items():
        try:
            pruned = trace.prune(signature)
        except (ValueError, TypeError) as exc:
            excluded[name] = f"its outputs need tensors its inputs do not feed ({exc})"
            continue
        functions[name] = (_serving_function(pruned, signature), pruned)
        if signature.method_name != PREDICT_METHOD:
            methods[name] = signature.method_name
    for name, reason in excluded.items():
        logger.warning("Signature %s is not exported: %s", name, reason)
    if not functions:
        raise ValueError(
            "No signature could be exported for this receiver and these export_outputs: "
            f"{excluded}. Expected at least one servable signature, e.g. a PredictOutput. Fix: "
            "add a PredictOutput to export_outputs, or make the receiver tensors match an "
            f"output. Received: export_outputs keys={sorted(trace.spec.export_outputs or {})}"
        )
    return functions, methods, signatures


def _save_atomically(
    module: tf.Module, export_dir_base: str, functions: dict, methods: dict, as_text: bool,
    assets_extra: dict | None,
) -> str:  # fmt: skip
    """Saves `module` into a new timestamped directory under `export_dir_base`, written
    whole under a temporary name and renamed; on failure nothing of it is left."""
    base_existed = tf.io.gfile.exists(export_dir_base)
    temp_dir = None
    try:
        export_dir, temp_dir = claim_export_dir(export_dir_base)
        tf.saved_model.save(
            module,
            temp_dir,
            signatures={name: function for name, (function, _) in functions.items()},
        )
        _rewrite_saved_model(temp_dir, methods, as_text)
        _copy_assets_extra(temp_dir, assets_extra)
        tf.io.gfile.rename(temp_dir, export_dir)
    except BaseException:
        if temp_dir is not None and tf.io.gfile.exists(temp_dir):  # ours: claimed above
            shutil.rmtree(temp_dir, ignore_errors=True)
        if not base_existed and tf.io.gfile.isdir(export_dir_base):
            if not tf.io.gfile.listdir(export_dir_base):
                tf.io.gfile.rmtree(export_dir_base)  # this call made it: leave no trace
        raise
    return export_dir


def write_saved_model(
    runtime: Any,
    export_dir_base: str,
    serving_input_receiver_fn: Callable,
    assets_extra: dict | None,
    as_text: bool,
    checkpoint_path: str | None,
    mode: str,
    keras_serve: str | None = None,
) -> bytes:
    """Exports the PREDICT graph of `runtime` (a ModelRuntime) as tf.estimator's
    `export_saved_model` did; returns the path. `keras_serve` ("features": a dict, "tensor":
    one tensor) adds the default signature as a `serve` endpoint taking that, for Keras."""
    _check_export_args(mode, serving_input_receiver_fn, assets_extra)
    checkpoint = _checkpoint_to_export(runtime, checkpoint_path)
    model = runtime.build_model()  # a fresh store: the runtime's own stays as it is
    with seeded_python_random(runtime.config.tf_random_seed):
        trace = _Trace(model, runtime.call_model_fn, serving_input_receiver_fn)
    functions, methods, signatures = _serving_functions(trace)
    restorer = ckpt_lib.CheckpointRestorer(checkpoint)
    store = model.store
    restorer.restore_all({n: store.variables[n] for n in trace.used if n not in store.local_names})
    restorer.raise_if_mismatched()

    by_handle = {id(v.handle): v for v in store.variables.values()}
    module = tf.Module()
    captured = [handle for _, pruned in functions.values() for handle in pruned.captured_inputs]
    module.variables_used = [by_handle[id(h)] for h in captured if id(h) in by_handle]
    module.tables_used = _resources_used(trace.resources, captured, set(by_handle))
    if keras_serve is not None:
        default = DEFAULT_SIGNATURE if DEFAULT_SIGNATURE in functions else next(iter(functions))
        module.serve = _keras_serve_endpoint(functions[default][1], signatures[default],
                                             takes_dict=keras_serve == "features")  # fmt: skip
    export_dir = _save_atomically(module, export_dir_base, functions, methods, as_text,
                                  assets_extra)  # fmt: skip
    logger.info("Signatures INCLUDED in export for Predict: %s", sorted(functions))
    logger.info("SavedModel written to: %s", export_dir)
    return export_dir.encode()
