"""One round of train_and_evaluate's evaluation: evaluate a checkpoint, run the exporters."""

from __future__ import annotations

import os
from typing import Any


def evaluate_and_export(
    estimator: Any, eval_spec: Any, max_steps: int | None, checkpoint: str
) -> tuple[dict, list]:
    """Evaluates `checkpoint` with `eval_spec`; each exporter writes to model_dir/export/<name>.

    `is_the_final_export` is True once the global step reached `max_steps` (never when it
    is None), as in tf.estimator.
    """
    result = estimator.evaluate(
        eval_spec.input_fn,
        steps=eval_spec.steps,
        hooks=list(eval_spec.hooks),
        checkpoint_path=checkpoint,
        name=eval_spec.name,
    )
    final = bool(max_steps) and result["global_step"] >= max_steps
    base = os.path.join(os.fspath(estimator.model_dir), "export")
    exports = [
        exporter.export(
            estimator=estimator,
            export_path=os.path.join(base, exporter.name),
            checkpoint_path=checkpoint,
            eval_result=result,
            is_the_final_export=final,
        )
        for exporter in eval_spec.exporters
    ]
    return result, exports
