"""2.15's `exporter`: the Exporter classes and `_SavedModelExporter`, the export call
they share (EasyRec subclasses it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from keras_estimator.export.exporters import (
    BestExporter,
    Exporter,
    FinalExporter,
    LatestExporter,
    _loss_smaller,
    _SavedModelExport,
    _verify_compare_fn_args,
)

__all__ = [
    "BestExporter",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "_loss_smaller",
    "_verify_compare_fn_args",
]


class _SavedModelExporter(Exporter):
    """An Exporter that exports the evaluated checkpoint as a SavedModel each time.

    Args:
        name: the exporter's name (the folder under `model_dir/export`).
        serving_input_receiver_fn: the receiver fn of the export.
        assets_extra: extra assets to copy into the export, as for export_saved_model.
        as_text: whether the SavedModel proto is written as text.

    Example:
        >>> exporter = _SavedModelExporter("serving", serving_input_receiver_fn)
        >>> exporter.export(est, "export/serving", checkpoint_path, eval_result, False)
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable,
        assets_extra: Any = None,
        as_text: bool = False,
    ) -> None:
        self._saved_model_export = _SavedModelExport(
            name, serving_input_receiver_fn, assets_extra, as_text
        )

    @property
    def name(self) -> str:
        return self._saved_model_export.name

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: Any,
        is_the_final_export: bool,
    ) -> Any:
        del eval_result, is_the_final_export
        return self._saved_model_export(estimator, export_path, checkpoint_path)
