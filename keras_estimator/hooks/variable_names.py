"""Hook fetches by variable name (`"global_step:0"`, `"dense/kernel"`) in a traced step.

In a TF1 graph a variable's name is also the name of a tensor in that graph, so hooks such
as `LoggingTensorHook({"step": "global_step:0"})` resolved it with `as_graph_element`. The
engine's variables live outside the traced step (it only captures them), so those names
are unknown there. While hooks are begun, this lets such a name resolve to a read of the
variable, made once per graph so that every lookup gets the same tensor.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.seam.internals import hook_tensors_accepting_variables
from keras_estimator.seam.patching import patched

_KEYS = tf.compat.v1.GraphKeys
_READS_ATTR = "_keras_estimator_variable_reads"


def _variables_named(graph: tf.Graph) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in (_KEYS.GLOBAL_VARIABLES, _KEYS.LOCAL_VARIABLES):
        for variable in graph.get_collection(key):
            found.setdefault(variable.name, variable)
    return found


def variable_named(graph: tf.Graph, fetch: Any) -> Any:
    """The variable of `graph`'s collections a hook's string fetch names
    (`"global_step:0"`, `"dense/bias:0"`), or None."""
    if not isinstance(fetch, str) or not fetch.endswith(":0"):
        return None
    return _variables_named(graph).get(fetch)


@contextlib.contextmanager
def variables_resolvable_by_name(graph: tf.Graph) -> Iterator[None]:
    """Within it, `graph.as_graph_element("<variable>:0")` falls back to a variable read."""
    original = graph.as_graph_element
    reads: dict[str, tf.Tensor] = getattr(graph, _READS_ATTR, None) or {}
    setattr(graph, _READS_ATTR, reads)

    def as_graph_element(obj: Any, allow_tensor: bool = True, allow_operation: bool = True):
        try:
            return original(obj, allow_tensor=allow_tensor, allow_operation=allow_operation)
        except (KeyError, ValueError):
            if not (isinstance(obj, str) and allow_tensor and obj.endswith(":0")):
                raise
            if obj not in reads:
                variable = _variables_named(graph).get(obj)
                if variable is None:
                    raise
                # Read like a fetch of the variable object (the global step included).
                with graph.as_default(), tf.name_scope("hook_variable_reads"):
                    reads[obj] = tf.identity(variable.read_value())
            return reads[obj]

    # this traced graph only; and TF's hooks take the variable objects themselves
    with patched(graph, "as_graph_element", as_graph_element), hook_tensors_accepting_variables():
        yield
