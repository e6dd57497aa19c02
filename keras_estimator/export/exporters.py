"""Exporters for `EvalSpec`: when `train_and_evaluate` writes SavedModels (tf.estimator 2.15).

Each exporter calls `estimator.export_saved_model(export_path, serving_input_receiver_fn,
...)`, which writes `<export_path>/<unix timestamp>/`. `LatestExporter` exports after every
evaluation, `FinalExporter` only at the end of training, `BestExporter` when the evaluation
beats the best one so far. Latest and Best keep the newest `exports_to_keep` timestamped
directories and delete older ones.
"""

from __future__ import annotations

import abc
import logging
import os
import shutil
import stat
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.utils.fn_args import fn_args

logger = logging.getLogger("keras_estimator")


class Exporter(abc.ABC):
    """A kind of model export, run by `train_and_evaluate` after each evaluation.

    Subclasses give a `name` (the directory under `model_dir/export`) and `export`.

    Example:
        >>> class CheckpointCopier(Exporter):
        ...     name = "copies"
        ...     def export(self, estimator, export_path, checkpoint_path, eval_result,
        ...                is_the_final_export):
        ...         tf.io.gfile.makedirs(export_path)
        ...         for path in tf.io.gfile.glob(checkpoint_path + ".*"):
        ...             tf.io.gfile.copy(path, os.path.join(export_path, os.path.basename(path)))
        ...         return export_path
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Directory name under the export base directory; not None nor empty."""

    @abc.abstractmethod
    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: dict,
        is_the_final_export: bool,
    ) -> Any:
        """Exports `estimator` at `checkpoint_path` under `export_path`.

        Args:
            estimator: The `Estimator` to export.
            export_path: Directory to write the export into.
            checkpoint_path: The checkpoint to export.
            eval_result: What `Estimator.evaluate` returned for that checkpoint.
            is_the_final_export: True for the export at the end of training (always False
                in `train_and_evaluate` when `TrainSpec.max_steps` is None).

        Returns:
            The path of the export, or None if the export was skipped.
        """


def _check_exports_to_keep(exports_to_keep: int | None, message: str) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(message)


def _is_export_version(name: str) -> bool:
    """A timestamped export directory name: 10 digits, as export_saved_model writes."""
    return len(name) == 10 and name.isdigit()


def garbage_collect_exports(export_dir_base: str, exports_to_keep: int | None) -> list[str]:
    """Deletes all but the `exports_to_keep` newest timestamped exports; returns the deleted.

    Only entries named by a 10-digit timestamp count; the largest are the newest. None
    keeps everything. Only real directories are deleted, and never through a link: a
    timestamped entry that is a link (or a file) is left alone with a warning, and links
    inside an export are removed, never followed.

    Example:
        >>> garbage_collect_exports("model_dir/export/latest", 5)
    """
    if exports_to_keep is None or not tf.io.gfile.isdir(export_dir_base):
        return []
    names = [name.rstrip("/") for name in tf.io.gfile.listdir(export_dir_base)]
    versions = sorted((int(name), name) for name in names if _is_export_version(name))
    deleted = []
    for _, name in versions[: max(len(versions) - exports_to_keep, 0)]:
        path = os.path.join(export_dir_base, name)
        if _delete_export(path):
            deleted.append(path)
    return deleted


def _delete_export(path: str) -> bool:
    """Deletes the export directory `path`; True when it was deleted."""
    if "://" in path:  # gs://, hdfs://, ...: no links there
        try:
            tf.io.gfile.rmtree(path)
            return True
        except tf.errors.NotFoundError as exc:
            logger.warning("Can not delete %s recursively: %s", path, exc)
            return False
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(mode):  # a link (to a directory or not), a file, ...
        kind = "a link" if stat.S_ISLNK(mode) else "not a directory"
        logger.warning(
            "Leaving %s alone: it is named like an export, but it is %s, and export garbage "
            "collection deletes only real export directories. Remove it yourself if it is "
            "not needed.",
            path,
            kind,
        )
        return False
    try:
        shutil.rmtree(path)  # removes the links inside the tree, never what they point at
    except OSError as exc:
        logger.warning("Can not delete %s recursively: %s", path, exc)
    return not os.path.lexists(path)


def _check_name(name: Any) -> None:
    """An exporter's name is one directory under export/: its garbage collection deletes
    old exports there, so a name reaching elsewhere would delete another exporter's."""
    if not isinstance(name, str):
        return  # None, empty or not a string: EvalSpec says so, as in tf.estimator
    separators = {s for s in ("/", os.sep, os.altsep) if s}
    if name in (".", "..") or any(s in name for s in separators):
        raise ValueError(
            f"The exporter name {name!r} is not a single directory name: exports go to "
            "model_dir/export/<name>, and a name with a path separator or '..' would put "
            "them (and delete old ones, with exports_to_keep) outside that directory. "
            "Expected a plain name such as 'serving'. Fix: rename the exporter, e.g. "
            f"{_plain(name)!r}. Received: name={name!r}"
        )


def _plain(name: str) -> str:
    parts = name.replace(os.altsep or "/", "/").replace(os.sep, "/").split("/")
    return "_".join(p for p in parts if p not in ("", ".", "..")) or "serving"


class _SavedModelExport:
    """The `export_saved_model` call the exporters share."""

    def __init__(
        self,
        name: str,
        # None only from BestExporter's default (as tf.estimator's): export_saved_model
        # then raises TypeError (not callable).
        serving_input_receiver_fn: Callable | None,
        assets_extra: Any,
        as_text: bool,
    ) -> None:
        _check_name(name)
        self.name = name
        self._receiver_fn, self._assets_extra, self._as_text = (
            serving_input_receiver_fn,
            assets_extra,
            as_text,
        )

    def __call__(self, estimator: Any, export_path: str, checkpoint_path: str) -> Any:
        return estimator.export_saved_model(
            export_path,
            self._receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )


class LatestExporter(Exporter):
    """Exports after every evaluation; keeps the newest `exports_to_keep` exports.

    Args:
        name: Unique name; exports go to `model_dir/export/<name>/<timestamp>`.
        serving_input_receiver_fn: Takes no arguments, returns a `ServingInputReceiver`.
        assets_extra: `{destination relative to assets.extra: source path}` to copy.
        as_text: Write the SavedModel proto as text.
        exports_to_keep: How many exports to keep (> 0); None keeps all.

    Example:
        >>> exporter = LatestExporter("latest", serving_input_receiver_fn, exports_to_keep=3)
        >>> eval_spec = EvalSpec(eval_input_fn, exporters=exporter)
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable,
        assets_extra: dict | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_exports_to_keep(
            exports_to_keep, "`exports_to_keep`, if provided, must be positive number"
        )
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._export.name

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: dict,
        is_the_final_export: bool,
    ) -> Any:
        result = self._export(estimator, export_path, checkpoint_path)
        garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(Exporter):
    """Exports once, at the end of training (`is_the_final_export`).

    Args:
        name: Unique name; the export goes to `model_dir/export/<name>/<timestamp>`.
        serving_input_receiver_fn: Takes no arguments, returns a `ServingInputReceiver`.
        assets_extra: `{destination relative to assets.extra: source path}` to copy.
        as_text: Write the SavedModel proto as text.

    Example:
        >>> eval_spec = EvalSpec(eval_input_fn,
        ...                      exporters=FinalExporter("final", serving_input_receiver_fn))
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable,
        assets_extra: dict | None = None,
        as_text: bool = False,
    ) -> None:
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)

    @property
    def name(self) -> str:
        return self._export.name

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: dict,
        is_the_final_export: bool,
    ) -> Any:
        if not is_the_final_export:
            return None
        logger.info("Performing the final export in the end of training.")
        return self._export(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result: dict, current_eval_result: dict) -> bool:
    """True if `current_eval_result["loss"]` is smaller than the best one's."""
    if not best_eval_result or "loss" not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or "loss" not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


def _verify_compare_fn_args(compare_fn: Callable) -> None:
    args = set(fn_args(compare_fn))
    for required in ("best_eval_result", "current_eval_result"):
        if required not in args:
            raise ValueError(f"compare_fn ({compare_fn}) must include {required} argument.")
    unexpected = list(args - {"best_eval_result", "current_eval_result"})
    if unexpected:
        raise ValueError(f"compare_fn ({compare_fn}) has following not expected args: {unexpected}")


def _event_eval_results(pattern: str) -> list[dict]:
    """One dict of scalar values per summary event in the files matching `pattern`."""
    results = []
    for path in tf.io.gfile.glob(pattern):
        records = []
        try:
            for record in tf.data.TFRecordDataset(path):
                records.append(record.numpy())
        except tf.errors.DataLossError as exc:
            logger.warning("Skipping the rest of %s (corrupted: %s).", path, exc)
        for record in records:
            event = tf.compat.v1.Event.FromString(record)
            values = {}
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    values[value.tag] = value.simple_value
                elif value.HasField("tensor") and not value.tensor.tensor_shape.dim:
                    try:
                        values[value.tag] = float(tf.make_ndarray(value.tensor))
                    except (TypeError, ValueError):
                        continue  # a string summary, such as a checkpoint path
            if values:
                results.append(values)
    return results


class BestExporter(Exporter):
    """Exports when an evaluation is better than the best one so far (by `compare_fn`).

    At its first export for an Estimator's `model_dir` it reads the eval results already
    written there (`event_file_pattern`, relative to model_dir) and keeps the best one; as
    in tf.estimator 2.15, that first export is always performed, and later ones only when
    `compare_fn(best_eval_result=..., current_eval_result=...)` returns True.

    Args:
        name: Unique name; exports go to `model_dir/export/<name>/<timestamp>`.
        serving_input_receiver_fn: Takes no arguments, returns a `ServingInputReceiver`.
        event_file_pattern: Eval event files relative to model_dir; None skips reading them.
        compare_fn: `(best_eval_result, current_eval_result) -> bool`, True when current is
            better. Defaults to a smaller `loss`.
        assets_extra: `{destination relative to assets.extra: source path}` to copy.
        as_text: Write the SavedModel proto as text.
        exports_to_keep: How many exports to keep (> 0); None keeps all.

    Example:
        >>> def higher_accuracy(best_eval_result, current_eval_result):
        ...     return current_eval_result["accuracy"] > best_eval_result["accuracy"]
        >>> exporter = BestExporter("best", serving_input_receiver_fn,
        ...                         compare_fn=higher_accuracy, exports_to_keep=2)
    """

    def __init__(
        self,
        name: str = "best_exporter",
        serving_input_receiver_fn: Callable | None = None,
        event_file_pattern: str | None = "eval/*.tfevents.*",
        compare_fn: Callable[..., bool] = _loss_smaller,
        assets_extra: dict | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        if compare_fn is None:
            raise ValueError("`compare_fn` must not be None.")
        _verify_compare_fn_args(compare_fn)
        self._compare_fn = compare_fn
        self._export = _SavedModelExport(name, serving_input_receiver_fn, assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        self._model_dir: str | None = None
        self._best_eval_result: dict | None = None
        self._has_exported = False
        _check_exports_to_keep(
            exports_to_keep,
            f"`exports_to_keep`, if provided, must be a positive number. Got {exports_to_keep}",
        )
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._export.name

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: dict,
        is_the_final_export: bool,
    ) -> Any:
        if self._event_file_pattern and self._model_dir != estimator.model_dir:
            logger.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._best_of(
                _event_eval_results(os.path.join(self._model_dir, self._event_file_pattern))
            )
        if (
            self._best_eval_result is not None
            and self._has_exported
            and not self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result
            )
        ):
            return None
        logger.info("Performing best model export.")
        self._best_eval_result = eval_result
        result = self._export(estimator, export_path, checkpoint_path)
        garbage_collect_exports(export_path, self._exports_to_keep)
        self._has_exported = True
        return result

    def _best_of(self, results: list[dict]) -> dict | None:
        best = None
        for result in results:
            if best is None or self._compare_fn(best, result):
                best = result
        return best
