"""Warm-starting: initialising a new model's variables from another model's checkpoint.

The tf.estimator 2.15 contract (`warm_start_from=`, `WarmStartSettings`, `VocabInfo`),
applied eagerly to the name-keyed variables of a model_fn rather than through
`tf.compat.v1.train.warm_start`, which only works on TF1 graphs.

Selection rules, as tf.estimator had them:

* `vars_to_warm_start` a string: a regex `re.match`-ed against the TF1 variable name
  *with its `:0` suffix* (`"dense/kernel"` matches `"dense/kernel:0"`, `"dense/kernel$"`
  matches nothing), among TRAINABLE variables only. The default `'.*'` is every trainable
  variable: no `global_step`, optimizer slots, `beta1_power` or batch-norm statistics.
* a list of strings: the same regexes over ALL (global) variables, so `[".*"]` includes
  `global_step` and optimizer slots; a list of `tf.Variable`s: exactly those.
* `None`: only the trainable variables named in `var_name_to_vocab_info`.
"""

from __future__ import annotations

import collections
import logging
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from keras_estimator.checkpoint.checkpoint_files import listed_checkpoint, open_reader
from keras_estimator.checkpoint.warm_start_vocab import remap_with_vocab

logger = logging.getLogger("keras_estimator")

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        [
            "new_vocab",
            "new_vocab_size",
            "num_oov_buckets",
            "old_vocab",
            "old_vocab_size",
            "backup_initializer",
            "axis",
        ],
    )
):
    """Vocabulary information for warm-starting one variable (`tf.estimator.VocabInfo`).

    Rows (`axis=0`: embeddings, linear weights) or columns (`axis=1`: output layers over
    a class vocabulary) of words in both vocabularies are copied from their old position;
    new words, and the `num_oov_buckets` out-of-vocabulary rows/columns at the end, get
    `backup_initializer` values (zeros when None). Vocabulary files are text, one token per
    line (a trailing `\\r` is dropped; empty lines are an error, as in TensorFlow).

    Args:
        new_vocab: Path of the new vocabulary file (the model being trained).
        new_vocab_size: How many entries of the new vocabulary are used.
        num_oov_buckets: Number of out-of-vocabulary buckets after them.
        old_vocab: Path of the vocabulary file the checkpoint was trained with.
        old_vocab_size: How many leading entries of the old vocabulary were used; -1 (the
            default) means all. Ignored for `axis=1`, as tf.estimator ignored it.
        backup_initializer: Initializer (callable with a shape) for new entries and OOV.
        axis: 0 (rows follow the vocabulary) or 1 (columns do).

    Raises:
        ValueError: `axis` is neither 0 nor 1.

    Example:
        >>> info = VocabInfo("new_vocab.txt", new_vocab_size=100, num_oov_buckets=1,
        ...                  old_vocab="old_vocab.txt")
        >>> info.axis
        0
    """

    def __new__(
        cls,
        new_vocab: str,
        new_vocab_size: int,
        num_oov_buckets: int,
        old_vocab: str,
        old_vocab_size: int = -1,
        backup_initializer: Callable[..., Any] | None = None,
        axis: int = 0,
    ) -> VocabInfo:
        if axis != 0 and axis != 1:
            raise ValueError(
                "The only supported values for the axis argument are 0 "
                f"and 1.  Provided axis: {axis}. Fix: axis=0 for a vocabulary along the rows "
                f"(embeddings), axis=1 along the columns. Received: axis={axis!r}"
            )
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Settings for warm-starting an Estimator (`tf.estimator.WarmStartSettings`).

    Args:
        ckpt_to_initialize_from: A checkpoint prefix, a directory with checkpoints (its
            latest one is used when warm-starting), or a SavedModel directory.
        vars_to_warm_start: A regex string (trainable variables only; the default `'.*'`
            is all of them), a list of regex strings (over all variables), a list of
            `tf.Variable`s, or None (only those in `var_name_to_vocab_info`).
        var_name_to_vocab_info: `{variable name: VocabInfo}` for variables whose
            vocabulary changed.
        var_name_to_prev_var_name: `{variable name: name in the checkpoint}` for renamed
            variables; it does not change which variables are warm-started.

    Raises:
        ValueError: `ckpt_to_initialize_from` is empty.

    Example:
        >>> ws = WarmStartSettings("/tmp/old_model", vars_to_warm_start=".*input_layer.*")
        >>> ws.var_name_to_vocab_info
        {}
    """

    def __new__(
        cls,
        ckpt_to_initialize_from: str | os.PathLike,
        vars_to_warm_start: str | list[Any] | None = ".*",
        var_name_to_vocab_info: Mapping[str, VocabInfo] | None = None,
        var_name_to_prev_var_name: Mapping[str, str] | None = None,
    ) -> WarmStartSettings:
        if not ckpt_to_initialize_from:
            raise ValueError(
                "`ckpt_to_initialize_from` MUST be set in WarmStartSettings. Fix: pass a "
                "checkpoint prefix, a model_dir or a SavedModel directory. "
                f"Received: ckpt_to_initialize_from={ckpt_to_initialize_from!r}"
            )
        for name, info in (var_name_to_vocab_info or {}).items():
            if not all(hasattr(info, f) for f in ("new_vocab", "new_vocab_size", "old_vocab")):
                raise TypeError(
                    f"var_name_to_vocab_info[{name!r}] must be a VocabInfo (ours or "
                    f"tf.compat.v1.train.VocabInfo), given "
                    f"{info!r}. Fix: VocabInfo(new_vocab=..., new_vocab_size=..., "
                    "num_oov_buckets=..., old_vocab=...). "
                    f"Received: type(var_name_to_vocab_info[{name!r}])={type(info).__name__}"
                )
        return super().__new__(
            cls,
            ckpt_to_initialize_from,
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            var_name_to_prev_var_name or {},
        )


def resolve_warm_start(
    warm_start_from: str | bytes | os.PathLike | WarmStartSettings | None,
) -> WarmStartSettings | None:
    """Turns an Estimator's `warm_start_from=` into settings, as tf.estimator 2.15 did.

    A path gives the default settings (`vars_to_warm_start='.*'`: trainable variables
    only) for a checkpoint prefix or a directory of checkpoints; a SavedModel directory
    (one with `variables/variables.index`) is replaced by its `variables/variables`
    checkpoint. Whether a checkpoint exists is checked when warm-starting (as
    tf.estimator did: a model_dir that already has a checkpoint never warm-starts).
    `os.PathLike` is accepted too (tf.estimator 2.15 rejected it).

    Args:
        warm_start_from: None, a path (str, bytes or PathLike) or a `WarmStartSettings`.

    Returns:
        The `WarmStartSettings`, or None when `warm_start_from` is None.

    Raises:
        ValueError: `warm_start_from` is of another type.

    Example:
        >>> resolve_warm_start("/tmp/old_model").vars_to_warm_start
        '.*'
    """
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        if tf.io.gfile.exists(os.path.join(path, "variables", "variables.index")):
            logger.info("Warm-starting from a SavedModel")
            return WarmStartSettings(os.path.join(path, "variables", "variables"))
        return WarmStartSettings(path)
    raise ValueError(
        "warm_start_from must be a string or a WarmStartSettings, "
        f"instead got {type(warm_start_from)}. Fix: pass a checkpoint path, a model_dir, a "
        "SavedModel directory or WarmStartSettings(...). "
        f"Received: warm_start_from={warm_start_from!r}"
    )


class WarmStartCheckpointNotFoundError(tf.errors.NotFoundError, ValueError):
    """ckpt_to_initialize_from names no checkpoint (NotFoundError, as in tf.estimator)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)


def warm_start_checkpoint(ckpt_to_initialize_from: str | bytes | os.PathLike) -> str:
    """The checkpoint prefix that `ckpt_to_initialize_from` names.

    Args:
        ckpt_to_initialize_from: A checkpoint prefix, a directory with a `checkpoint`
            state file (its latest checkpoint), or a SavedModel directory.

    Returns:
        A checkpoint prefix whose `.index` file exists.

    Raises:
        ValueError: No checkpoint is found there.

    Example:
        >>> warm_start_checkpoint("/tmp/old_model")  # doctest: +SKIP
        '/tmp/old_model/model.ckpt-1000'
    """
    path = os.fsdecode(ckpt_to_initialize_from)
    if tf.io.gfile.isdir(path):
        latest = listed_checkpoint(path)
        if latest:
            return latest
        saved_model_vars = os.path.join(path, "variables", "variables")
        if tf.io.gfile.exists(saved_model_vars + ".index"):
            return saved_model_vars
        raise WarmStartCheckpointNotFoundError(
            f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}. "
            "Expected a directory a model was trained in, a SavedModel directory, or a "
            "checkpoint prefix such as model_dir/model.ckpt-1000. Fix: point "
            "ckpt_to_initialize_from at one of those. "
            f"Received: ckpt_to_initialize_from={path!r}"
        )
    if tf.io.gfile.exists(path + ".index"):
        return path
    raise WarmStartCheckpointNotFoundError(
        f"No checkpoint to warm-start from at {path!r}: there is no {path}.index. "
        "Expected a checkpoint prefix such as model_dir/model.ckpt-1000 (without "
        "'.index'), a directory a model was trained in, or a SavedModel directory. Fix: point "
        f"ckpt_to_initialize_from at one of those. Received: ckpt_to_initialize_from={path!r}"
    )


# -- selection -------------------------------------------------------------------------


def _select(
    vars_to_warm_start: Any, variables: Mapping[str, tf.Variable], trainable: set[str]
) -> list[str]:
    """The names tf.compat.v1.get_collection would have returned, in variable order."""
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        logger.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
        pattern = re.compile(vars_to_warm_start or "")
        return [n for n in variables if n in trainable and pattern.match(n + ":0")]
    if not isinstance(vars_to_warm_start, list):
        raise ValueError(
            "`vars_to_warm_start must be a `list` or `str`.  Given type is "
            f"{type(vars_to_warm_start)}. Fix: pass a regex string such as '.*', a list of "
            "regex strings, or a list of Variables. "
            f"Received: vars_to_warm_start={vars_to_warm_start!r}"
        )
    if all(isinstance(v, str) for v in vars_to_warm_start):
        patterns = [re.compile(v) for v in vars_to_warm_start]
        return [n for n in variables if any(p.match(n + ":0") for p in patterns)]
    if all(isinstance(v, tf.Variable) for v in vars_to_warm_start):
        by_id = {id(v): n for n, v in variables.items()}
        unknown = [v.name for v in vars_to_warm_start if id(v) not in by_id]
        if unknown:
            raise ValueError(
                f"vars_to_warm_start lists variables the model_fn did not create: {unknown}. "
                "Expected variables of this model, or their names as regex strings. Fix: "
                "list names (regex strings) instead of Variables from another graph. "
                f"Received: vars_to_warm_start={[v.name for v in vars_to_warm_start]}"
            )
        wanted = {id(v) for v in vars_to_warm_start}
        return [n for n, v in variables.items() if id(v) in wanted]
    raise ValueError(
        "If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  "
        f"Given types are {[type(v) for v in vars_to_warm_start]}. Fix: use names (regex "
        f"strings) only. Received: vars_to_warm_start={vars_to_warm_start!r}"
    )


def _object_graph_names(reader: Any) -> dict[str, str] | None:
    """{variable name: checkpoint key} of an object-based (TF2) checkpoint, else None."""
    if not reader.has_tensor(_OBJECT_GRAPH_KEY):
        return None
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(_OBJECT_GRAPH_KEY))
    return {a.full_name: a.checkpoint_key for node in graph.nodes for a in node.attributes}


class _Plan(NamedTuple):
    name: str
    prev: str
    value: np.ndarray | None  # computed (vocabulary) value, or None: copy `prev` as it is


def warm_start(
    settings: WarmStartSettings,
    variables: Mapping[str, tf.Variable],
    trainable_names: set[str],
) -> list[str]:
    """Initialises `variables` from `settings.ckpt_to_initialize_from`, eagerly.

    Every requested variable is checked (present in the checkpoint, same shape and dtype,
    vocabularies readable) before any is assigned: on an error nothing changes.

    Args:
        settings: What to warm-start from and how (see `WarmStartSettings`).
        variables: The model's global variables by TF1 name (no metric/local variables).
        trainable_names: Which of them are trainable (TRAINABLE_VARIABLES).

    Returns:
        The names of the variables warm-started, in the order of `variables`.

    Raises:
        ValueError: No checkpoint, a requested variable missing from it or of another
            shape or dtype, a bad `vars_to_warm_start`, entries of
            `var_name_to_vocab_info` / `var_name_to_prev_var_name` naming no selected
            variable, or a vocabulary that does not fit.

    Example:
        >>> store = {"dense/kernel": tf.Variable(tf.zeros([2, 3]))}
        >>> warm_start(WarmStartSettings("/tmp/old_model"), store, {"dense/kernel"})
        ... # doctest: +SKIP
        ['dense/kernel']
    """
    logger.info("Warm-starting with WarmStartSettings: %s", settings)
    path = warm_start_checkpoint(settings.ckpt_to_initialize_from)
    logger.info("Warm-starting from: %s", path)
    selection = settings.vars_to_warm_start
    names = _select(selection, variables, set(trainable_names))
    vocab_infos = dict(settings.var_name_to_vocab_info or {})
    renames = dict(settings.var_name_to_prev_var_name or {})
    for label, given in (
        ("var_name_to_prev_var_name", renames),
        ("var_name_to_vocab_info", vocab_infos),
    ):
        unused = set(given) - set(names)
        if unused:
            raise ValueError(
                f"You provided the following variables in {label} that were not used: "
                f"{unused}.  Perhaps you misspelled them?  Here is the list of viable "
                f"variable names: {names}. Fix: use names from that list (and covered by "
                f"vars_to_warm_start). Received: {label} keys {sorted(unused)}"
            )
    names = [n for n in names if selection or n in vocab_infos]

    reader = open_reader(path)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    object_keys = None if renames else _object_graph_names(reader)
    if object_keys is not None:
        missing = {n for n in names if n not in object_keys}
        if missing:
            raise ValueError(
                "Attempting to warm-start from an object-based checkpoint, but found "
                "that the checkpoint did not contain values for all variables. The "
                f"following variables were missing: {missing}. Fix: narrow "
                "vars_to_warm_start to variables the checkpoint holds, or map names with "
                "var_name_to_prev_var_name. "
                f"Received: ckpt_to_initialize_from={settings.ckpt_to_initialize_from!r}"
            )
        renames = {n: object_keys[n] for n in names}

    plans: list[_Plan] = []
    problems: list[str] = []
    for name in names:
        variable = variables[name]
        prev = renames.get(name) or name
        want = variable.shape.as_list()
        dtype = variable.dtype.base_dtype
        if prev not in shapes:
            problems.append(
                f"Tensor {prev} is not found in the checkpoint (wanted for variable "
                f"{name} of shape {want})"
            )
            continue
        have = list(shapes[prev])
        if dtypes[prev].base_dtype != dtype:
            problems.append(
                f"Variable {name} is {dtype.name}{want}, checkpoint tensor {prev} is "
                f"{dtypes[prev].name}{have}"
            )
            continue
        info = vocab_infos.get(name)
        if info is None:
            if have != want:
                problems.append(
                    f"Shape of variable {name} ({want}) doesn't match with shape of tensor "
                    f"{prev} ({have}) from checkpoint reader"
                )
                continue
            plans.append(_Plan(name, prev, None))
            continue
        np_dtype = dtype.as_numpy_dtype
        value = remap_with_vocab(name, want, np_dtype, reader.get_tensor(prev), info, prev)
        plans.append(_Plan(name, prev, value))
    if problems:
        raise ValueError(
            f"Cannot warm-start from {path}: " + "; ".join(problems) + ". Nothing was "
            "warm-started. Fix: map renamed variables with var_name_to_prev_var_name, narrow "
            "vars_to_warm_start, or give VocabInfo for vocabularies that changed. "
            f"Received: ckpt_to_initialize_from={path!r}"
        )

    for plan in plans:
        info = vocab_infos.get(plan.name)
        if info is None:
            logger.info(
                "Warm-starting variable: %s; prev_var_name: %s",
                plan.name,
                plan.prev if plan.prev != plan.name else "Unchanged",
            )
            variables[plan.name].assign(reader.get_tensor(plan.prev))
        else:
            logger.info(
                "Warm-starting variable: %s; current_vocab: %s current_vocab_size: %s "
                "prev_vocab: %s prev_vocab_size: %s current_oov: %s prev_tensor: %s "
                "initializer: %s",
                plan.name,
                info.new_vocab,
                info.new_vocab_size,
                info.old_vocab,
                info.old_vocab_size if (info.old_vocab_size or 0) > 0 else "All",
                info.num_oov_buckets,
                plan.prev if plan.prev != plan.name else "Unchanged",
                info.backup_initializer or "zero-initialized",
            )
            variables[plan.name].assign(plan.value)
    logger.info("Warm-started %d variables.", len(plans))
    return [plan.name for plan in plans]
