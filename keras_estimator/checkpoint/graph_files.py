"""model_dir's graph files as tf.estimator 2.15 left them: `graph.pbtxt` and the `.meta`
MetaGraphDef written with each checkpoint.

keras_estimator traces the model_fn into a tf.function graph whose variables are
captured handles. `StepGraph` rebuilds it as a TF1 graph: one resource variable per
checkpointed variable (VarHandleOp with its TF1 name), the traced step imported with its
captured handles mapped onto them, and a `tf.compat.v1.train.Saver` over the checkpoint's
names. `graph.pbtxt` is its GraphDef as text (TensorBoard's graph view, tools that read
it); the MetaGraphDef is usable by `tf.compat.v1.train.import_meta_graph` followed by
`saver.restore(session, checkpoint)` in a TF1 session, as 2.15's were.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import re
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator.utils.log import quiet_tf_warning

logger = logging.getLogger("keras_estimator")

GRAPH_FILE = "graph.pbtxt"
# Temporary file names from the OS, not the process-wide `random` (a user's seeded stream;
# the graph's thread writes at moments of its own).
_TEMP_NAMES = random.SystemRandom()


class _Saver(tf.compat.v1.train.Saver):
    """Saver with TensorFlow's own `build`: a StepGraph built on its thread while the main
    thread calls a model_fn (which patches Saver.build away: seam savers_without_ops)
    still gets its save and restore ops."""

    build = tf.compat.v1.train.Saver.build


def variable_handles(variable: Any) -> list[Any]:
    """The eager resource handles behind a variable (one per replica if distributed)."""
    values = getattr(variable, "values", None)
    parts = list(values) if isinstance(values, tuple) else [variable]
    return [part.handle for part in parts if hasattr(part, "handle")]


class TracedStep(NamedTuple):
    """What a `StepGraph` is built from, read where the step was traced: the StepGraph may
    be built on another thread while hooks add their fetches to the traced graph."""

    graph_def: Any  # the traced step's GraphDef (None: the variables only)
    captured: dict[str, str]  # a captured input's name -> the checkpointed variable it is
    # (name, dtype, shape, trainable) of each checkpointed variable, by name
    variables: tuple[tuple[str, tf.DType, tf.TensorShape, bool], ...]


def traced_step(step_graph: tf.Graph | None, variables: dict[str, tf.Variable]) -> TracedStep:
    """The TracedStep of a traced step graph (or None) over `variables`."""
    specs = []
    for name, variable in sorted(variables.items()):
        base = getattr(variable, "values", None)
        first = base[0] if isinstance(base, tuple) else variable
        specs.append((name, first.dtype.base_dtype, first.shape, bool(first.trainable)))
    if step_graph is None:
        return TracedStep(None, {}, tuple(specs))
    names = {id(h): name for name, v in variables.items() for h in variable_handles(v)}
    captured = {
        internal.name: names[id(external)]
        for external, internal in getattr(step_graph, "captures", ())
        if id(external) in names
    }
    return TracedStep(step_graph.as_graph_def(add_shapes=True), captured, tuple(specs))


def step_fingerprint(step: TracedStep) -> bytes:
    """A digest of everything a `StepGraph` is built from: the traced step's GraphDef, which
    of its captured inputs is which checkpointed variable, and the variables' names, dtypes,
    shapes and trainability. Equal digests make equal StepGraphs, so a retrace of the same
    model_fn (a new call that tf.estimator 2.15 also rebuilt) reuses the one already made."""
    digest = hashlib.sha256()
    for name, dtype, shape, trainable in step.variables:
        digest.update(repr((name, dtype.name, shape, trainable)).encode())
    if step.graph_def is not None:
        digest.update(repr(sorted(step.captured.items())).encode())
        digest.update(canonical_graph_def(step.graph_def))
    return digest.digest()


def canonical_graph_def(graph_def: Any) -> bytes:
    """The serialized GraphDef with its library's functions renamed by what they are and
    sorted: a retrace names its `tf.cond` branches anew (`..._cond_true_389` becomes
    `..._cond_true_1278`), which also reorders the library."""
    if not graph_def.library.function and not graph_def.library.gradient:
        return graph_def.SerializeToString(deterministic=True)  # nothing to rename
    canonical = type(graph_def)()
    canonical.CopyFrom(graph_def)
    functions = list(canonical.library.function)
    stems = [re.sub(r"_\d+$", "", function.signature.name) for function in functions]
    order = sorted(range(len(functions)), key=lambda index: (stems[index], index))
    renamed = {
        functions[index].signature.name: f"{stems[index]}#{rank}"
        for rank, index in enumerate(order)
    }

    def rename_nodes(nodes: Any) -> None:
        for node in nodes:
            node.op = renamed.get(node.op, node.op)
            for value in node.attr.values():
                if value.HasField("func"):
                    value.func.name = renamed.get(value.func.name, value.func.name)
                for func in value.list.func:
                    func.name = renamed.get(func.name, func.name)

    rename_nodes(canonical.node)
    for function in functions:
        function.signature.name = renamed[function.signature.name]
        rename_nodes(function.node_def)
    for gradient in canonical.library.gradient:
        gradient.function_name = renamed.get(gradient.function_name, gradient.function_name)
        gradient.gradient_func = renamed.get(gradient.gradient_func, gradient.gradient_func)
    parts = sorted(
        (function.signature.name, function.SerializeToString(deterministic=True))
        for function in functions
    )
    canonical.library.ClearField("function")
    return b"".join([canonical.SerializeToString(deterministic=True)] + [p for _, p in parts])


class StepGraph:
    """The TF1 graph of one traced step over the checkpoint's variables (see module doc)."""

    def __init__(self, step: TracedStep) -> None:
        graph, self.imported = self._build(step)
        try:
            graph_def = graph.as_graph_def(add_shapes=True)
        except KeyError as exc:
            # An imported step with tf.cond inside tf.cond can lose a nested branch
            # function from the graph's library: leave the step out.
            logger.debug("The traced step is left out of graph.pbtxt / .meta: %r", exc)
            graph, self.imported = self._build(step._replace(graph_def=None))
            graph_def = graph.as_graph_def(add_shapes=True)
        self.graph, self.graph_def = graph, graph_def
        self._meta: bytes | None = None
        self._pbtxt: str | None = None  # graph.pbtxt's text, made once for every call

    def _build(self, step: TracedStep) -> tuple[tf.Graph, bool]:
        graph = tf.Graph()
        with graph.as_default():
            made = {}
            for name, dtype, shape, trainable in step.variables:
                initializer = tf.compat.v1.zeros_initializer()
                if not shape.is_fully_defined():  # a variable that changes shape (KMeans')
                    shape, initializer = None, tf.zeros([0], dtype)
                made[name] = tf.compat.v1.get_variable(
                    name, shape=shape, dtype=dtype, trainable=trainable,
                    use_resource=True, initializer=initializer, validate_shape=shape is not None,
                )  # fmt: skip
            imported = step.graph_def is not None and self._import(step, made)
            with quiet_tf_warning("Saver is deprecated"):
                self._saver = _Saver(var_list=made, sharded=False)
        return graph, imported

    @staticmethod
    def _import(step: TracedStep, made: dict) -> bool:
        """Imports the traced step, its captured variable handles fed by `made`'s."""
        input_map = {internal: made[name].handle for internal, name in step.captured.items()}
        try:
            tf.graph_util.import_graph_def(step.graph_def, input_map=input_map, name="step")
        except (ValueError, TypeError, tf.errors.OpError) as exc:
            logger.debug("The traced step is left out of graph.pbtxt / .meta: %s", exc)
            return False
        return True

    def meta_graph(self) -> bytes:
        """The serialized MetaGraphDef (built once)."""
        if self._meta is None:
            with self.graph.as_default():
                meta = self._saver.export_meta_graph(clear_devices=True, strip_default_attrs=True)
            self._meta = meta.SerializeToString()
        return self._meta

    def write_graph_pbtxt(self, model_dir: str) -> str:
        """Writes `graph.pbtxt` atomically."""
        if self._pbtxt is None:
            self._pbtxt = graph_text(self.graph_def)
        path = os.path.join(model_dir, GRAPH_FILE)
        write_atomically(path, self._pbtxt.encode("utf-8"))
        return path


def graph_text(graph_def: Any) -> str:
    """A GraphDef in protobuf text format, as `text_format.Parse` reads it back.

    `str()` formats in protobuf's C backend (upb) when it is installed, ~8x faster than
    `text_format.MessageToString` in Python (5 ms vs 45 ms for a small model's graph); it
    orders map entries (node attributes) differently, which parsing does not see. With
    the pure-Python backend `str()` is `MessageToString`.
    """
    return str(graph_def)


def write_atomically(path: str, data: bytes) -> None:
    """`path` holds `data` or is untouched: written to `<path>.tempstate<n>`, then renamed."""
    temp = f"{path}.tempstate{_TEMP_NAMES.getrandbits(63)}"
    try:
        with tf.io.gfile.GFile(temp, "wb") as f:
            f.write(data)
        tf.io.gfile.rename(temp, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(temp):
            tf.io.gfile.remove(temp)
        raise
