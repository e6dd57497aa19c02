"""2.15's `tools/checkpoint_converter.py`: v1-optimizer canned checkpoints, made v2-restorable.

A canned estimator of `tf.compat.v1.estimator` (DNN, Linear, DNNLinearCombined) trains with
`tf.compat.v1.train` optimizers, whose slots are checkpointed next to each variable
(`dnn/hiddenlayer_0/kernel/t_0/Adagrad`, `linear/linear_model/x/weights/part_0/Ftrl_1`,
`head/beta1_power`). The v2 canned estimators (`keras_estimator.DNNClassifier`, ...) train
with Keras-style optimizers whose state is `training/<Optimizer>/<variable>/<slot>` plus
the hyperparameters as scalar variables (`training/Adagrad/learning_rate`). The converter
reads a v1 checkpoint and writes one the v2 estimators restore (warm start, or as their
model_dir), with the model variables and the global step unchanged:

| v1 optimizer | v1 slots | v2 variables |
|---|---|---|
| Adagrad | `Adagrad` | `training/Adagrad/<var>/accumulator` |
| Ftrl | `Ftrl`, `Ftrl_1` | `training/Ftrl/<var>/accumulator`, `.../linear` |
| Adam | `Adam`, `Adam_1`, `beta1_power`, `beta2_power` | `.../m`, `.../v`, `beta_1`, `beta_2` |
| RMSProp | `RMSProp` (`RMSProp_1` dropped) | `training/RMSprop/<var>/rms` |
| GradientDescent | none | only hyperparameters (`training/SGD/...`) |

The hyperparameters (`HP_IN_GRAPH`) are read from the v1 graph (`graph.pbtxt` or the
checkpoint's `.meta`), where the v1 optimizer left them as constants; one not there gets the
default of the Keras optimizer in `OPT_V2_INSTANCE` (decay: 0).

Where this differs from 2.15's converter (whose output the v2 estimators restore the same):
2.15 compared `"<Optimizer>/<node>"` with bare hyperparameter names, so it never found one
in the graph and always wrote the Keras defaults (learning rate 0.001 instead of, e.g., the
v1 DNN's 0.05, which the v2 estimator then trained on); here they are found. 2.15 computed
Adam's `beta_1` as `beta1_power ** (1 / global_step)`; the v1 power after `t` steps is
`beta1 ** (t + 1)`, so here it is `beta1_power ** (1 / (global_step + 1))` (0.9, not 0.8866
after 7 steps). 2.15 also copied the other optimizer's v1 slots of a DNNLinearCombined model
under their v1 names (unused by v2); here only model variables are copied. `source_graph`
may be None: then `<source_checkpoint>.meta` is read when it exists.

Usage:
    python -m keras_estimator.dropin.estimator_tree.tools.checkpoint_converter dnn \\
        /tmp/model/model.ckpt-100 /tmp/model/graph.pbtxt /tmp/converted/model.ckpt-100

Example:
    >>> convert_checkpoint("dnn", "/tmp/v1/model.ckpt-100", "/tmp/v1/graph.pbtxt",
    ...                    "/tmp/v2/model.ckpt-100")
    >>> est = keras_estimator.DNNClassifier([10, 10], columns, model_dir="/tmp/v2")
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import keras
import numpy as np
import tensorflow as tf
from google.protobuf import message, text_format

logger = logging.getLogger("keras_estimator")

# The v1 optimizer name (as in v1 slot names) -> the v2 optimizer's variable scope.
OPT_NAME_V1_TO_V2 = {
    "Adagrad": "Adagrad",
    "RMSProp": "RMSprop",
    "Ftrl": "Ftrl",
    "Adam": "Adam",
    "SGD": "SGD",
}

# Hyperparameters a v1 optimizer keeps in the checkpoint -> their v2 variable.
HP_IN_CKPT = {
    "Adam": {
        "beta1_power": "training/Adam/beta_1",
        "beta2_power": "training/Adam/beta_2",
    },
}

# A v1 slot's name (the last part of its variable name) -> the v2 slot (None: dropped).
OPT_VAR_NAME_V1_TO_V2: dict[str, dict[str, str | None]] = {
    "Adam": {"Adam": "m", "Adam_1": "v"},
    "Ftrl": {"Ftrl": "accumulator", "Ftrl_1": "linear"},
    "RMSProp": {"RMSProp": "rms", "RMSProp_1": None},
    "Adagrad": {"Adagrad": "accumulator"},
}

# The v2 optimizer's hyperparameter variables, taken from the v1 graph.
HP_IN_GRAPH = {
    "Adam": ["decay", "learning_rate"],
    "Ftrl": [
        "decay",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "beta",
        "learning_rate",
        "learning_rate_power",
    ],
    "RMSProp": ["decay", "learning_rate", "momentum", "rho"],
    "Adagrad": ["decay", "learning_rate"],
    "SGD": ["decay", "learning_rate", "momentum"],
}

_KERAS_CLASSES = {
    "Adagrad": keras.optimizers.Adagrad,
    "Adam": keras.optimizers.Adam,
    "Ftrl": keras.optimizers.Ftrl,
    "RMSProp": keras.optimizers.RMSprop,
    "SGD": keras.optimizers.SGD,
}

# The v1 optimizer's name scope in the graph, where it is not its slot name.
_GRAPH_SCOPE_V1 = {"SGD": "GradientDescent"}
# (v1 optimizer, v2 hyperparameter) -> the v1 graph constant holding it, where the names
# differ; None: v1 had no such hyperparameter (v1 RMSProp's `decay` is Keras' `rho`; v1
# Ftrl's l2 is the `x` of `l2 + beta / (2 * lr)`).
_GRAPH_NODE_V1 = {
    ("RMSProp", "rho"): "decay",
    ("RMSProp", "decay"): None,
    ("Ftrl", "l2_regularization_strength"): "add/x",
}
_ESTIMATOR_TYPES = ("dnn", "linear", "combined")
# `<variable>/t_0` (DNN) and `<variable>/part_0` (Linear): the v1 slots' partition infix.
_PARTITION = re.compile(r"^(?P<base>.+)/(?:t|part)_(?P<index>\d+)$")


class _KerasOptimizers(Mapping):
    """v1 optimizer name -> a default Keras 3 optimizer, created when first looked up.

    Creating a Keras optimizer creates variables, so none is created at import (a script
    may import this module inside a v1 graph); each is created in the eager context.
    """

    def __init__(self, classes: dict[str, type]) -> None:
        self._classes = classes
        self._instances: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._instances:
            cls = self._classes[name]
            with tf.init_scope():
                self._instances[name] = cls()
        return self._instances[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)

    def __repr__(self) -> str:
        return f"OPT_V2_INSTANCE({', '.join(self._classes)})"


# The Keras optimizers whose defaults fill hyperparameters the v1 graph does not hold.
OPT_V2_INSTANCE = _KerasOptimizers(_KERAS_CLASSES)


def _v2_default(opt_name_v1: str, hp_name: str) -> float:
    """The default of `hp_name` for the v2 optimizer of `opt_name_v1` (decay: 0)."""
    if hp_name == "decay":  # the legacy learning-rate decay; Keras 3 has none
        return 0.0
    try:
        config = OPT_V2_INSTANCE[opt_name_v1].get_config()
    except NotImplementedError:  # eager execution disabled: read the constructor defaults
        parameters = inspect.signature(_KERAS_CLASSES[opt_name_v1]).parameters
        config = {name: p.default for name, p in parameters.items()}
    return float(config[hp_name])


def _add_new_variable(
    initial_value: Any,
    var_name_v2: str,
    var_name_v1: str,
    var_map: dict[str, np.ndarray],
    var_names_map: dict[str, str],
) -> None:
    """Records a variable of the converted checkpoint.

    Unlike 2.15's, which created a `tf.Variable` in the current graph, this records the
    value: `convert_checkpoint` writes them all at the end.

    Args:
        initial_value: The variable's value (array, tensor or number; a Python float is
            stored as float32).
        var_name_v2: Its name in the converted checkpoint.
        var_name_v1: What it came from (a v1 variable, or a graph node), for the log.
        var_map: v2 name -> value; updated.
        var_names_map: v2 name -> v1 name; updated.

    Example:
        >>> _add_new_variable(0.05, "training/Adagrad/learning_rate", "learning_rate", {}, {})
    """
    value = np.asarray(initial_value)
    if value.dtype == np.float64:
        value = value.astype(np.float32)
    var_map[var_name_v2] = value
    var_names_map[var_name_v2] = var_name_v1


def _add_opt_variable(
    opt_name_v2: str,
    var_name_v1: str,
    idx: int,
    suffix_v2: str,
    reader: Any,
    var_map: dict[str, np.ndarray],
    var_names_map: dict[str, str],
) -> None:
    """Records the v2 slot `training/<opt_name_v2>/<var_name_v1[:idx]><suffix_v2>`.

    Args:
        opt_name_v2: The v2 optimizer's scope (`OPT_NAME_V1_TO_V2` value).
        var_name_v1: The v1 slot variable, read from `reader`.
        idx: Where, in `var_name_v1`, the model variable's name ends (its `/` included).
        suffix_v2: The v2 slot name (`accumulator`, `m`, ...).
        reader: A checkpoint reader (`tf.train.load_checkpoint`).
        var_map: v2 name -> value; updated.
        var_names_map: v2 name -> v1 name; updated.

    Example:
        >>> name = "dnn/logits/kernel/t_0/Adagrad"
        >>> _add_opt_variable("Adagrad", name, len("dnn/logits/kernel/"), "accumulator",
        ...                   reader, var_map, names)
        >>> sorted(var_map)  # ['training/Adagrad/dnn/logits/kernel/accumulator']
    """
    var_name_v2 = f"training/{opt_name_v2}/{var_name_v1[:idx]}{suffix_v2}"
    _add_new_variable(reader.get_tensor(var_name_v1), var_name_v2, var_name_v1, var_map,
                      var_names_map)  # fmt: skip


def _slot_owner(var_name: str) -> str | None:
    """The v1 optimizer whose slot or in-checkpoint hyperparameter `var_name` is, or None."""
    last = var_name.rsplit("/", 1)[-1]
    for opt_name, slots in OPT_VAR_NAME_V1_TO_V2.items():
        if last in slots or last in HP_IN_CKPT.get(opt_name, {}):
            return opt_name
    return None


def _model_variable_end(var_name: str, slot: str) -> int:
    """Where the model variable's name (with its `/`) ends in the v1 slot `var_name`."""
    base = var_name[: -len(slot) - 1]
    partition = _PARTITION.match(base)
    if partition:
        if int(partition.group("index")) != 0:
            raise ValueError(
                f"The v1 slot {var_name!r} belongs to partition {partition.group('index')} "
                "of a partitioned variable; the converter handles unpartitioned variables "
                "(`<variable>/part_0/<slot>`, `<variable>/t_0/<slot>`) only. Fix: train the "
                "v1 estimator without a partitioner, or convert the slots yourself."
            )
        base = partition.group("base")
    return len(base) + 1


def _convert_variables_in_ckpt(
    opt_name_v1: str,
    reader: Any,
    variable_names: list[str],
    var_map: dict[str, np.ndarray],
    var_names_map: dict[str, str],
    est_type: str,
) -> None:
    """Converts the checkpoint's variables for one v1 optimizer.

    The model variables (every variable that is no optimizer's slot) are kept as they are;
    `opt_name_v1`'s slots become v2 slots; its hyperparameters kept in the checkpoint
    (Adam's `beta1_power`, `beta2_power`) become `beta_1`, `beta_2`.

    Args:
        opt_name_v1: A key of `OPT_NAME_V1_TO_V2`.
        reader: A checkpoint reader (`tf.train.load_checkpoint`).
        variable_names: The checkpoint's variable names.
        var_map: v2 name -> value; updated.
        var_names_map: v2 name -> v1 name; updated.
        est_type: `'dnn'`, `'linear'` or `'combined'` (the slots' `t_0` / `part_0` infix
            is recognised whatever the type).

    Raises:
        ValueError: `est_type` or `opt_name_v1` is unknown, or a slot belongs to a
            partition other than the first.

    Example:
        >>> reader = tf.train.load_checkpoint("/tmp/v1/model.ckpt-100")
        >>> names = sorted(reader.get_variable_to_shape_map())
        >>> var_map, var_names_map = {}, {}
        >>> _convert_variables_in_ckpt("Adagrad", reader, names, var_map, var_names_map, "dnn")
    """
    _check_type(est_type)
    if opt_name_v1 not in OPT_NAME_V1_TO_V2:
        raise ValueError(
            f"Unknown v1 optimizer {opt_name_v1!r}. Expected one of "
            f"{sorted(OPT_NAME_V1_TO_V2)}. Fix: pass the name the v1 optimizer gave its slots."
        )
    opt_name_v2 = OPT_NAME_V1_TO_V2[opt_name_v1]
    slots = OPT_VAR_NAME_V1_TO_V2.get(opt_name_v1, {})
    hp_ckpt = HP_IN_CKPT.get(opt_name_v1, {})
    for var_name in variable_names:
        owner = _slot_owner(var_name)
        last = var_name.rsplit("/", 1)[-1]
        if owner is None:  # a model variable (or the global step): unchanged
            _add_new_variable(reader.get_tensor(var_name), var_name, var_name, var_map,
                              var_names_map)  # fmt: skip
        elif owner != opt_name_v1:
            continue
        elif last in hp_ckpt:
            # v1 Adam's beta1_power is beta1 ** (t + 1) after t steps; Keras keeps beta_1.
            step = float(reader.get_tensor("global_step"))
            power = np.asarray(reader.get_tensor(var_name), np.float64)
            _add_new_variable(power ** (1.0 / (step + 1.0)), hp_ckpt[last], var_name, var_map,
                              var_names_map)  # fmt: skip
        elif (slot_v2 := slots[last]) is not None:
            idx = _model_variable_end(var_name, last)
            _add_opt_variable(opt_name_v2, var_name, idx, slot_v2, reader, var_map,
                              var_names_map)  # fmt: skip


def _read_graph_def(path: str) -> Any:
    """The GraphDef in `path`: a text or binary GraphDef, or a (binary or text) MetaGraphDef."""
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(
            f"No graph file at {path!r}. Expected the v1 model_dir's graph.pbtxt or the "
            "checkpoint's .meta file. Fix: pass the path of one of them (or None to use "
            "the optimizers' default hyperparameters)."
        )
    with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
    candidates = [tf.compat.v1.MetaGraphDef, tf.compat.v1.GraphDef]
    if not path.endswith(".meta"):
        candidates.reverse()
    for proto_class in candidates:
        for parse in (_parse_text, _parse_binary):
            proto = parse(proto_class, data)
            if proto is None:
                continue
            graph_def = proto.graph_def if proto_class is tf.compat.v1.MetaGraphDef else proto
            if graph_def.node or graph_def.library.function:
                return graph_def
    raise ValueError(
        f"{path!r} holds neither a GraphDef nor a MetaGraphDef. Expected the graph.pbtxt a "
        "v1 estimator wrote, or a checkpoint's .meta file. Fix: pass one of them."
    )


def _parse_text(proto_class: type, data: bytes) -> Any:
    try:
        return text_format.Parse(data.decode("utf-8"), proto_class())
    except (text_format.ParseError, UnicodeDecodeError):
        return None


def _parse_binary(proto_class: type, data: bytes) -> Any:
    proto = proto_class()
    try:
        proto.ParseFromString(data)
    except message.DecodeError:
        return None
    return proto


def _graph_constants(path: str) -> dict[str, float]:
    """Node name -> value of every scalar floating-point constant of the graph in `path`
    (its functions' too), in the graph's order."""
    graph_def = _read_graph_def(path)
    nodes = list(graph_def.node)
    for function in graph_def.library.function:
        nodes.extend(function.node_def)
    constants: dict[str, float] = {}
    for node in nodes:
        if node.op != "Const" or "value" not in node.attr:
            continue
        value = tf.make_ndarray(node.attr["value"].tensor)
        if value.shape == () and np.issubdtype(value.dtype, np.floating):
            constants.setdefault(node.name, float(value))
    return constants


def _find_constant(constants: dict[str, float], scope: str, node: str) -> tuple[str, float] | None:
    """The first constant named `.../<scope>/<node>` (or `<scope>/<node>`), or None."""
    suffix = f"{scope}/{node}"
    for name, value in constants.items():
        if name == suffix or name.endswith("/" + suffix):
            return name, value
    return None


def _convert_hyper_params_in_graph(
    graph_from_path: str | None,
    opt_name_v1: str,
    var_map: dict[str, np.ndarray],
    var_names_map: dict[str, str],
) -> None:
    """Records the v2 optimizer's hyperparameter variables (`HP_IN_GRAPH`).

    A v1 optimizer leaves each hyperparameter in its graph as a constant
    `.../<Optimizer>/<name>` (`dnn/head/Adagrad/learning_rate`); each found becomes
    `training/<v2 name>/<name>`, each not found gets the Keras optimizer's default.

    Args:
        graph_from_path: The v1 graph: graph.pbtxt (text GraphDef), a binary GraphDef, or
            a checkpoint's .meta (MetaGraphDef). None: every hyperparameter gets its default.
        opt_name_v1: A key of `HP_IN_GRAPH`.
        var_map: v2 name -> value; updated.
        var_names_map: v2 name -> graph node (or hyperparameter) name; updated.

    Raises:
        FileNotFoundError: `graph_from_path` does not exist.
        ValueError: it holds no graph, or `opt_name_v1` is unknown.

    Example:
        >>> var_map, var_names_map = {}, {}
        >>> _convert_hyper_params_in_graph("/tmp/v1/graph.pbtxt", "Adagrad", var_map,
        ...                                var_names_map)
        >>> float(var_map["training/Adagrad/learning_rate"])
        0.05
    """
    if opt_name_v1 not in HP_IN_GRAPH:
        raise ValueError(
            f"Unknown v1 optimizer {opt_name_v1!r}. Expected one of {sorted(HP_IN_GRAPH)}. "
            "Fix: pass the name the v1 optimizer gave its slots."
        )
    constants = _graph_constants(graph_from_path) if graph_from_path else {}
    opt_name_v2 = OPT_NAME_V1_TO_V2[opt_name_v1]
    scope = _GRAPH_SCOPE_V1.get(opt_name_v1, opt_name_v1)
    for hp_name in HP_IN_GRAPH[opt_name_v1]:
        hp_name_v2 = f"training/{opt_name_v2}/{hp_name}"
        node = _GRAPH_NODE_V1.get((opt_name_v1, hp_name), hp_name)
        found = _find_constant(constants, scope, node) if node else None
        if found:
            logger.info("Hyperparameter %s = %s, from the graph's %s", hp_name_v2, found[1],
                        found[0])  # fmt: skip
            _add_new_variable(found[1], hp_name_v2, found[0], var_map, var_names_map)
        else:
            value = _v2_default(opt_name_v1, hp_name)
            logger.info("Hyperparameter %s = %s (not in the graph: the default)", hp_name_v2,
                        value)  # fmt: skip
            _add_new_variable(value, hp_name_v2, hp_name, var_map, var_names_map)


def _check_type(estimator_type: str) -> None:
    if estimator_type not in _ESTIMATOR_TYPES:
        raise ValueError(
            f"Unknown estimator_type {estimator_type!r}. Expected one of {_ESTIMATOR_TYPES} "
            "(DNN*, Linear*, DNNLinearCombined* canned estimators). Fix: pass one of them."
        )


def _find_optimizers(variable_names: list[str]) -> dict[str, set[str]]:
    """v1 optimizer -> the top-level scopes (`dnn`, `linear`, ...) of the variables it trained."""
    found: dict[str, set[str]] = {}
    for var_name in variable_names:
        owner = _slot_owner(var_name)
        last = var_name.rsplit("/", 1)[-1]
        if owner and last in OPT_VAR_NAME_V1_TO_V2[owner]:
            found.setdefault(owner, set()).add(var_name.split("/", 1)[0])
    return found


def _linear_optimizer(found: dict[str, set[str]]) -> str:
    """Which of a DNNLinearCombined model's optimizers trained its linear part."""
    for opt_name, scopes in found.items():
        if "linear" in scopes and "dnn" in scopes:
            raise ValueError(
                f"Both parts of the DNNLinearCombined model were trained by {opt_name}; the "
                "converter cannot tell their v2 optimizers apart (2.15's could not either). "
                "Fix: convert a model whose dnn_optimizer and linear_optimizer differ."
            )
    linear = [name for name, scopes in found.items() if "linear" in scopes]
    return linear[0] if linear else "SGD"


def _resolve_checkpoint(source_checkpoint: str) -> str:
    if tf.io.gfile.isdir(source_checkpoint):
        latest = tf.train.latest_checkpoint(source_checkpoint)
        if latest:
            return latest
    if not tf.io.gfile.exists(source_checkpoint + ".index"):
        raise FileNotFoundError(
            f"No checkpoint at {source_checkpoint!r} (expected {source_checkpoint}.index). "
            "Fix: pass a checkpoint prefix such as /tmp/model/model.ckpt-100 (or a model_dir "
            "holding a `checkpoint` file)."
        )
    return source_checkpoint


def _write_checkpoint(var_map: dict[str, np.ndarray], target_checkpoint: str) -> None:
    """Saves `var_map` (name -> value) with a v1 Saver: `.index`, `.data`, `.meta` and the
    directory's `checkpoint` file. Values are fed, so no graph holds them (no 2 GB limit)."""
    directory = os.path.dirname(target_checkpoint)
    if directory:
        tf.io.gfile.makedirs(directory)
    with tf.Graph().as_default():
        feeds, variables = {}, {}
        for index, (name, value) in enumerate(sorted(var_map.items())):
            placeholder = tf.compat.v1.placeholder(tf.as_dtype(value.dtype), value.shape)
            variables[name] = tf.compat.v1.Variable(placeholder, name=f"v{index}",
                                                    use_resource=True)  # fmt: skip
            feeds[placeholder] = value
        # Relative paths in the `checkpoint` file: the directory can be moved or copied.
        saver = tf.compat.v1.train.Saver(var_list=variables, save_relative_paths=True)
        with tf.compat.v1.Session() as session:
            session.run([v.initializer for v in variables.values()], feed_dict=feeds)
            saver.save(session, target_checkpoint)


def convert_checkpoint(
    estimator_type: str,
    source_checkpoint: str,
    source_graph: str | None,
    target_checkpoint: str,
) -> None:
    """Converts a v1-optimizer canned estimator checkpoint into one v2 estimators restore.

    Args:
        estimator_type: `'dnn'`, `'linear'` or `'combined'` (DNNLinearCombined).
        source_checkpoint: The v1 checkpoint prefix (`/tmp/model/model.ckpt-100`), or a
            model_dir (its latest checkpoint).
        source_graph: The v1 graph, for the hyperparameters: the model_dir's graph.pbtxt or
            the checkpoint's .meta. None: `<source_checkpoint>.meta` if it exists, else the
            Keras optimizers' defaults.
        target_checkpoint: The converted checkpoint's prefix; its directory is created and
            gets a `checkpoint` file, so it can be a v2 estimator's model_dir.

    Raises:
        ValueError: an unknown `estimator_type`; a DNNLinearCombined model whose two parts
            used the same optimizer (two SGDs included); a partitioned slot.
        FileNotFoundError: no checkpoint at `source_checkpoint`, or no `source_graph`.

    Example:
        >>> convert_checkpoint("linear", "/tmp/v1", "/tmp/v1/graph.pbtxt",
        ...                    "/tmp/v2/model.ckpt-100")
        >>> keras_estimator.LinearRegressor(columns, warm_start_from="/tmp/v2")
    """
    _check_type(estimator_type)
    source_checkpoint = _resolve_checkpoint(source_checkpoint)
    if source_graph is None and tf.io.gfile.exists(source_checkpoint + ".meta"):
        source_graph = source_checkpoint + ".meta"
    if source_graph is not None and not tf.io.gfile.exists(source_graph):
        _read_graph_def(source_graph)  # raises FileNotFoundError, before anything is read
    if source_graph is None:
        logger.warning("No graph for %s: the optimizers' hyperparameters get Keras' defaults",
                       source_checkpoint)  # fmt: skip
    reader = tf.train.load_checkpoint(source_checkpoint)
    variable_names = sorted(reader.get_variable_to_shape_map())
    found = _find_optimizers(variable_names)
    var_map: dict[str, np.ndarray] = {}
    var_names_map: dict[str, str] = {}
    if estimator_type == "combined":
        if not found:
            raise ValueError(
                "Both parts of the DNNLinearCombined model were trained by SGD (no optimizer "
                "slot is in the checkpoint); the converter cannot tell their v2 optimizers "
                "apart (2.15's could not either). Fix: convert a model whose dnn_optimizer "
                "and linear_optimizer differ."
            )
        linear_opt = _linear_optimizer(found)
        if len(found) == 1:
            found.setdefault("SGD", set())
        # The linear optimizer counts its own steps (the dnn one uses the global step).
        _add_new_variable(reader.get_tensor("global_step"),
                          f"training/{OPT_NAME_V1_TO_V2[linear_opt]}/iter", "global_step",
                          var_map, var_names_map)  # fmt: skip
    elif not found:
        found["SGD"] = set()  # GradientDescent keeps no slot
    for opt_name_v1 in found:
        _convert_variables_in_ckpt(opt_name_v1, reader, variable_names, var_map,
                                   var_names_map, estimator_type)  # fmt: skip
        _convert_hyper_params_in_graph(source_graph, opt_name_v1, var_map, var_names_map)
    for name_v2, name_v1 in var_names_map.items():
        logger.info("Converted %s -> %s", name_v1, name_v2)
    logger.info("Writing the converted checkpoint %s", target_checkpoint)
    _write_checkpoint(var_map, target_checkpoint)


def main(argv: list[str] | None = None) -> int:
    """The command line: `estimator_type source_checkpoint source_graph target_checkpoint`.

    Args:
        argv: The arguments (default: `sys.argv[1:]`).

    Returns:
        0 once the converted checkpoint is written.

    Raises:
        SystemExit: the arguments are wrong (argparse's usage message).

    Example:
        >>> main(["dnn", "/tmp/v1/model.ckpt-100", "/tmp/v1/graph.pbtxt",
        ...       "/tmp/v2/model.ckpt-100"])
        0
    """
    parser = argparse.ArgumentParser(
        description="Converts a tf.compat.v1 canned estimator checkpoint (v1 optimizers) "
        "into one the v2 canned estimators (Keras optimizers) restore."
    )
    parser.add_argument("estimator_type", choices=list(_ESTIMATOR_TYPES),
                        help="the canned estimator: linear, dnn or combined")  # fmt: skip
    parser.add_argument("source_checkpoint", help="the v1 checkpoint prefix to read")
    parser.add_argument("source_graph", help="the v1 graph.pbtxt (or .meta) to read")
    parser.add_argument("target_checkpoint", help="the converted checkpoint prefix to write")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    convert_checkpoint(args.estimator_type, args.source_checkpoint, args.source_graph,
                       args.target_checkpoint)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
