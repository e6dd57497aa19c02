"""PredictCall: one `predict()` call, a generator of predictions from its input's batches."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from keras_estimator.engine.loops import PredictStep
from keras_estimator.hooks.step_watcher import StepWatcher
from keras_estimator.runtime.call_scope import in_call
from keras_estimator.runtime.input_pipeline import CallInput
from keras_estimator.runtime.model_runtime import ModelRuntime
from keras_estimator.runtime.predictions import select_keys, split_examples
from keras_estimator.spec.mode_keys import ModeKeys

# Batches run one per call first (tracing the chunked loop costs about as much as ~100
# batches run alone), then in compiled chunks doubling up to _CHUNK batches.
_BATCHES_ALONE = 64
_CHUNK = 32


class PredictCall:
    """Runs one predict() call of an Estimator, lazily.

    Each step runs eagerly (`in_call`); while the generator is suspended at a `yield`, the
    caller's mode (and strategy scope) holds.

    Args:
        runtime: the Estimator's model, traces and writers.
        input_for: `input_for(input_fn, mode)`, the Estimator's input.
    """

    def __init__(self, runtime: ModelRuntime, input_for: Callable) -> None:
        self._runtime, self._input_for = runtime, input_for

    @contextlib.contextmanager
    def _step_scope(self) -> Iterator[None]:
        with in_call(), self._runtime.running(ModeKeys.PREDICT):
            yield

    def run(
        self,
        input_fn: Callable,
        predict_keys: list[str] | None,
        hooks: list,
        callbacks: list,
        checkpoint_for: Callable[[], str | None],
        follow_latest: bool,
        yield_single_examples: bool,
    ) -> Iterator[Any]:
        """Yields the predictions of every batch of `input_fn` (one example, or batch)."""
        runtime = self._runtime

        def examples_of(predictions: Any) -> list:
            return list(split_examples(select_keys(predictions, predict_keys),
                                       yield_single_examples))  # fmt: skip

        with self._step_scope():
            checkpoint = checkpoint_for()
            runtime.seed()
            dataset = self._input_for(input_fn, ModeKeys.PREDICT)
            predict_fn, runner = runtime.prepare(
                ModeKeys.PREDICT, dataset, checkpoint, tuple(hooks), follow_latest=follow_latest
            )
            assert isinstance(predict_fn, PredictStep)  # PREDICT's loop
            watcher = StepWatcher(runner, callbacks, runtime.model, "predict")
            watcher.begin()
            inputs = CallInput(dataset)
        with inputs:  # let go when the generator ends or is closed (see CallInput)
            index, chunk = 0, 0  # chunk: batches per compiled call, once they run in chunks
            while True:
                if not watcher.active and predict_fn.chunkable and index >= _BATCHES_ALONE:
                    # No hook or callback sees the batches: several run in one compiled call.
                    chunk = min(max(2 * chunk, 2), _CHUNK)
                    with self._step_scope():
                        computed = predict_fn.chunk(inputs.iterator, chunk)
                        examples = [e for predictions in computed for e in examples_of(predictions)]
                    yield from examples
                    index += len(computed)
                    if len(computed) < chunk:
                        break
                    continue
                with self._step_scope():
                    batch = next(inputs.iterator, None)
                    if batch is None:
                        watcher.input_ended()
                        break

                    def run_step(fetches: dict, batch: Any = batch) -> tuple[bool, Any, dict]:
                        step = predict_fn.with_fetches(fetches) if fetches else predict_fn
                        predictions, values = step(batch)
                        values = {key: value.numpy() for key, value in values.items()}
                        return True, select_keys(predictions, predict_keys), values

                    predictions, stop = watcher.step(
                        index, run_step, lambda predictions: {"outputs": predictions}
                    )
                    examples = list(split_examples(predictions, yield_single_examples))
                yield from examples
                index += 1
                if stop:
                    break
        with self._step_scope():
            watcher.end({})
            runtime.flush_model_fn_writers()
