"""The names tf.estimator 2.15's model_to_estimator gave compiled Keras metrics.

With TF2 behaviour, tf.keras 2 named each compiled metric as the user wrote it (`"mae"`,
`"accuracy"`), as Keras 3 does. A script that turned TF2 behaviour off
(`tf.compat.v1.disable_v2_behavior()` / `disable_eager_execution()`) compiled in tf.keras
2's graph mode, which named string metrics by the function they stand for (`"mae"` ->
`mean_absolute_error`, `"mse"` -> `mean_squared_error`) and `"accuracy"` / `"acc"` as
`acc`, prefixed by the output name for several outputs (`dense_mean_absolute_error`):
the evaluation dicts of such scripts have those keys. `install()`'s switches record that
the script asked for graph mode (`ask_for_graph_mode_names`).
"""

from __future__ import annotations

from typing import Any

# tf.keras 2 graph mode: a string metric -> its name there (the metric function's name).
_GRAPH_MODE_NAMES = {
    "accuracy": "acc",
    "acc": "acc",
    "crossentropy": "ce",
    "ce": "ce",
    "mse": "mean_squared_error",
    "MSE": "mean_squared_error",
    "mae": "mean_absolute_error",
    "MAE": "mean_absolute_error",
    "mape": "mean_absolute_percentage_error",
    "MAPE": "mean_absolute_percentage_error",
    "msle": "mean_squared_logarithmic_error",
    "MSLE": "mean_squared_logarithmic_error",
}

_graph_mode_names = False


def ask_for_graph_mode_names(asked: bool) -> None:
    """Whether the running script turned TF2 behaviour off (so metrics get tf.keras 2's
    graph-mode names); `install()`'s `disable_v2_behavior` sets it, `uninstall()` clears it."""
    global _graph_mode_names
    _graph_mode_names = asked


def graph_mode_names_asked() -> bool:
    return _graph_mode_names


def _string_metrics(metrics: Any) -> set[str]:
    """Every metric given to `compile()` as a string (in a list, or a dict / list of lists
    by output)."""
    if isinstance(metrics, str):
        return {metrics}
    if isinstance(metrics, dict):
        return set().union(*(_string_metrics(m) for m in metrics.values())) if metrics else set()
    if isinstance(metrics, (list, tuple)):
        return set().union(*(_string_metrics(m) for m in metrics)) if metrics else set()
    return set()


def tf_keras2_metric_names(
    names: list[str], compiled_metrics: Any, output_names: list[str], graph_mode: bool
) -> dict[str, str]:
    """Keras 3 metric name -> the name 2.15's model_to_estimator reported for it.

    Args:
        names: The compiled metrics' names, as Keras 3 reports them.
        compiled_metrics: The `metrics` argument of `compile()` (from the compile config).
        output_names: The model's output names (prefixes of per-output metric names).
        graph_mode: Whether the script had asked for graph mode (`graph_mode_names_asked()`
            when the model was converted).

    Returns:
        A dict covering `names`; each maps to itself unless graph mode was asked for and
        the metric was given as one of tf.keras 2's short strings.
    """
    renamed = {name: name for name in names}
    if not graph_mode:
        return renamed
    given = _string_metrics(compiled_metrics) & set(_GRAPH_MODE_NAMES)
    prefixes = [""] + [f"{output}_" for output in output_names]
    for name in names:
        for prefix in prefixes:
            short = name[len(prefix) :] if name.startswith(prefix) else None
            if short in given:
                renamed[name] = prefix + _GRAPH_MODE_NAMES[short]
                break
    return renamed


__all__ = ["ask_for_graph_mode_names", "graph_mode_names_asked", "tf_keras2_metric_names"]
