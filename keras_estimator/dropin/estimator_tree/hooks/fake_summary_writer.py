"""2.15's `hooks/fake_summary_writer`: a summary writer that keeps what it is given, for
tests of hooks that write summaries (2.15's tests, and libraries', used it).

`FakeSummaryWriter.install()` makes `tf.compat.v1.summary.FileWriter` this class until
`uninstall()`; each writer records summaries, graphs and meta graphs by step.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

_V1 = tf.compat.v1


class FakeSummaryWriter:
    """Records `add_summary` / `add_graph` / `add_session_log` calls instead of writing.

    Example:
        >>> FakeSummaryWriter.install()
        >>> writer = tf.compat.v1.summary.FileWriter("logdir")
        >>> writer.add_summary(summary, 3); writer.summaries[3]
        >>> FakeSummaryWriter.uninstall()
    """

    _replaced_class: Any = None

    @staticmethod
    def install() -> None:
        if FakeSummaryWriter._replaced_class:
            raise ValueError("FakeSummaryWriter already installed.")
        FakeSummaryWriter._replaced_class = _V1.summary.FileWriter
        _V1.summary.FileWriter = FakeSummaryWriter

    @staticmethod
    def uninstall() -> None:
        if not FakeSummaryWriter._replaced_class:
            raise ValueError("FakeSummaryWriter not installed.")
        _V1.summary.FileWriter = FakeSummaryWriter._replaced_class
        FakeSummaryWriter._replaced_class = None

    def __init__(self, logdir: str, graph: Any = None) -> None:
        self._logdir = logdir
        self._graph = graph
        self._summaries: dict[int, list] = {}
        self._added_graphs: list = []
        self._added_meta_graphs: list = []
        self._added_session_logs: list = []
        self._added_run_metadata: dict = {}

    @property
    def summaries(self) -> dict:
        return self._summaries

    def add_summary(self, summ: Any, current_global_step: int) -> None:
        if isinstance(summ, bytes):
            summ = tf.compat.v1.Summary.FromString(summ)
        self._summaries.setdefault(current_global_step, []).append(summ)

    def add_graph(self, graph: Any, global_step: int | None = None, graph_def: Any = None) -> None:
        self._added_graphs.append(graph if graph is not None else graph_def)

    def add_meta_graph(self, meta_graph_def: Any, global_step: int | None = None) -> None:
        self._added_meta_graphs.append(meta_graph_def)

    def add_session_log(self, session_log: Any, global_step: int | None = None) -> None:
        self._added_session_logs.append(session_log)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: int | None = None) -> None:
        self._added_run_metadata[tag] = run_metadata

    def flush(self) -> None:
        pass

    def reopen(self) -> None:
        pass

    def close(self) -> None:
        pass

    def get_logdir(self) -> str:
        return self._logdir
