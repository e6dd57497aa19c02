"""ModelRuntime: one Estimator's model, compiled loops and event-file writers.

A call flows one way through it: `prepare` traces the mode's step, or reuses the trace
(runtime/traces.py says when), then restores the checkpoint or initialises fresh variables
(init_from_checkpoint, warm start); the call object (TrainCall, EvalCall, PredictCall)
then runs the loop and saves. Nothing here calls back into the Estimator.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator.checkpoint import checkpoint_files as ckpt_lib
from keras_estimator.checkpoint.graph_files import (
    StepGraph,
    TracedStep,
    step_fingerprint,
    traced_step,
)
from keras_estimator.checkpoint.init_from_checkpoint import apply_checkpoint_initializers
from keras_estimator.checkpoint.warm_start import warm_start
from keras_estimator.compat.v1_layers_install import install_v1_layers
from keras_estimator.distribute import parameter_servers
from keras_estimator.distribute.strategies import eval_strategy_of, iterator_spec, strategy_of
from keras_estimator.engine.global_step import GlobalStepVariable
from keras_estimator.engine.loops import ChunkedLoop, Loop, PredictStep
from keras_estimator.engine.model import EstimatorModel, TraceSettings
from keras_estimator.engine.step_passes import skipped_passes
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.hooks.runner import HookRunner
from keras_estimator.hooks.session import HookSession
from keras_estimator.runtime.model_fn_call import ModelFnCaller
from keras_estimator.runtime.scaffold_session import restore_with_saver, run_init_fn
from keras_estimator.runtime.traces import ModelSlot, StepIdentity, Trace
from keras_estimator.seam import internals
from keras_estimator.spec.mode_keys import ModeKeys
from keras_estimator.spec.run_config import RunConfig
from keras_estimator.utils.log import quiet_tf_warning
from keras_estimator.utils.seeding import seeded_python_random

logger = logging.getLogger("keras_estimator")

_RESTORE_ATTEMPTS = 5  # checkpoints deleted by another process's GC while being read


class ModelRuntime:
    """The model an Estimator trains, its compiled loops (one per mode, dataset structure
    and hooks) and its event-file writers; the strategy each mode runs under.

    `model` is None until the first call builds it (or after a fresh start). With an
    eval_distribute that is not the variables' strategy, evaluation has a model of its own
    under it (`model_for`), as tf.estimator 2.15 evaluated in a graph of its own.
    """

    def __init__(self, call_model_fn: ModelFnCaller, warm_start_settings: Any) -> None:
        install_v1_layers()  # model_fns use tf.compat.v1.layers (Keras 3 removed them)
        self.call_model_fn = call_model_fn
        config = call_model_fn.config
        self.model_dir: str = config.model_dir
        self.warm_start_settings = warm_start_settings
        self._strategy: Any = None
        self._distributed_modes: frozenset | None = None  # None: not decided yet
        self._eval_strategy: Any = None  # eval_distribute with variables of its own
        self._trained = ModelSlot()  # the model train() trains, and its traces
        self._apart = ModelSlot()  # evaluation's own model under its own eval_distribute
        if not (
            parameter_servers.has_parameter_servers(config) and config.train_distribute is None
        ):
            self._decide_strategy()  # now: a bad strategy setting fails at construction
        self._writers: dict[str, tf.summary.SummaryWriter] = {}
        self._started_at: int | None = None  # the global step the current train() began at
        self._step_graphs: dict[str, tf.Graph | None] = {}  # the last traced graph per mode
        # (traced graph, its fingerprint, its TF1 graph)
        self._tf1_graph: tuple[Any, bytes, StepGraph] | None = None

    @property
    def config(self) -> RunConfig:
        """The Estimator's RunConfig: the one the model_fn is called with."""
        return self.call_model_fn.config

    def use_strategy(self, strategy: tf.distribute.Strategy, modes: frozenset) -> None:
        """Runs `modes` under `strategy` from now on (TPUEstimator's TPUStrategy)."""
        self._strategy, self._distributed_modes = strategy, modes

    def _decide_strategy(self) -> frozenset:
        """Decides the strategy (once); the modes that run under it."""
        # The ParameterServerStrategy keras_estimator makes for a ps cluster connects to
        # its tasks: made on first use, so an Estimator only constructed (for a hook, an
        # export) does not.
        if self._distributed_modes is None:
            self._strategy, self._distributed_modes = strategy_of(self.config)
            self._eval_strategy = eval_strategy_of(self.config, self._strategy)
        return self._distributed_modes

    @property
    def strategy(self) -> tf.distribute.Strategy | None:
        self._decide_strategy()
        return self._strategy

    @property
    def distributed_modes(self) -> frozenset:
        return self._decide_strategy()

    def strategy_for(self, mode: str) -> tf.distribute.Strategy | None:
        """The strategy a mode runs under: train/eval_distribute; predict never had one."""
        if self._evaluates_apart(mode):
            return self._eval_strategy
        return self.strategy if mode in self.distributed_modes else None

    def _evaluates_apart(self, mode: str) -> bool:
        """EVAL runs on a model of its own, under an eval_distribute of its own."""
        self._decide_strategy()
        return mode == ModeKeys.EVAL and self._eval_strategy is not None

    def _slot(self, mode: str) -> ModelSlot:
        return self._apart if self._evaluates_apart(mode) else self._trained

    def model_for(self, mode: str) -> EstimatorModel | None:
        """The model `mode`'s calls run (evaluation's own under its own eval_distribute)."""
        return self._slot(mode).model

    @property
    def model(self) -> EstimatorModel | None:
        """The model train() trains; None until a call (or `keras_model`) builds it."""
        return self._trained.model

    def prepared_model(self, mode: str | None = None) -> EstimatorModel:
        """The model `mode`'s calls run (default: the trained model), which `prepare`
        built: a RuntimeError before that."""
        model = self.model if mode is None else self.model_for(mode)
        if model is None:
            raise RuntimeError(
                f"No model has been built for mode {mode or ModeKeys.TRAIN!r} yet: a call "
                "builds it in ModelRuntime.prepare. Expected prepare() before its model is "
                "used. Fix: prepare the mode first."
            )
        return model

    def ensure_model(self) -> EstimatorModel:
        """The trained model, built (without variables yet) if no call has built it."""
        if self._trained.model is None:
            self._trained.reset(self.build_model())
        return self._trained.model

    def scope(self, mode: str | None = None) -> contextlib.AbstractContextManager:
        """The strategy's scope for `mode` (None: for building variables), or nothing.

        Modes that do not run distributed are traced and run outside it: their variables
        (metrics) are ordinary ones, and the model's mirrored variables read as one.
        """
        strategy = self.strategy if mode is None else self.strategy_for(mode)
        return strategy.scope() if strategy is not None else contextlib.nullcontext()

    def running(self, mode: str) -> contextlib.AbstractContextManager:
        """Where one call of `mode` runs: outside a strategy scope its caller entered that
        is not the mode's own, as tf.estimator ran each call in a fresh graph. An
        evaluation or export from a saving listener (train_and_evaluate) runs while
        train()'s strategy scope is entered: inside it, the evaluation's metric variables
        would be made per replica (SyncOnRead), and updating them outside a replica fails.
        """
        if tf.distribute.has_strategy() and (
            tf.distribute.get_strategy() is not self.strategy_for(mode)
        ):
            return internals.outside_strategy_scopes()
        return contextlib.nullcontext()

    def latest_checkpoint(self) -> str | None:
        return ckpt_lib.latest_checkpoint(self.model_dir)

    def build_model(self, strategy: Any = None) -> EstimatorModel:
        """A new model with a fresh variable store (export uses one; the runtime's stays),
        its variables under `strategy` (default: the training strategy)."""
        store = VariableStore()
        global_step = GlobalStepVariable.under(strategy or self.strategy)
        store.variables["global_step"] = global_step
        config = self.config
        settings = TraceSettings(config.save_summary_steps, config.is_chief,
                                 config.tf_random_seed, skipped_passes())  # fmt: skip
        return EstimatorModel(self.call_model_fn, store, global_step, settings)

    def prepare(
        self,
        mode: str,
        dataset: tf.data.Dataset,
        checkpoint: str | None,
        hooks: tuple = (),
        writer: tf.summary.SummaryWriter | None = None,
        keep_variables: bool = False,
        follow_latest: bool = False,
    ) -> tuple[Loop | PredictStep, HookRunner]:
        """Builds (once) the model and the compiled loop for `mode`; restores `checkpoint`.

        With `follow_latest` (the checkpoint was model_dir's latest, not one the caller
        named), a checkpoint deleted while it is read (another process trains with
        keep_checkpoint_max) is replaced by the newest one.

        Only the variables the mode's step uses are restored (and must be in the
        checkpoint), as tf.estimator restored the graph it had just built for that mode.
        Returns the loop and the runner of this call's hooks, begun in the trace.
        """
        slot = self._slot(mode)
        apart = slot is self._apart
        writer = None if apart else writer
        prepared = self._prepare(slot, mode, dataset, checkpoint, hooks, writer, keep_variables,
                                 follow_latest)  # fmt: skip
        trained = self._trained.model
        if apart and keep_variables and trained is not None:
            # An in-memory evaluation during train() evaluates the trained values.
            values = trained.store.global_variables()
            for name, variable in slot.model.store.global_variables().items():
                if name in values:
                    variable.assign(values[name].read_value())
        return prepared

    def _prepare(
        self,
        slot: ModelSlot,
        mode: str,
        dataset: tf.data.Dataset,
        checkpoint: str | None,
        hooks: tuple,
        writer: tf.summary.SummaryWriter | None,
        keep_variables: bool,
        follow_latest: bool,
    ) -> tuple[Loop | PredictStep, HookRunner]:
        fresh = slot.model is None or (checkpoint is None and not keep_variables)
        if fresh and not (slot.model is not None and slot.model.store.is_empty()):
            # Without a checkpoint tf.estimator started from fresh initial values. A model
            # with no variables yet (a new Estimator's keras_model) gets its first ones.
            slot.reset(self.build_model(self._eval_strategy if slot is self._apart else None))
        model = slot.model
        store = model.store
        # What can change a trace: the mode and the input's structure (the strategy and
        # the event-file writer are fixed per mode). The caller's hooks cannot: they begin
        # in the traced graph and their fetches are pruned from it.
        key = (mode, repr(dataset.element_spec))
        with slot.trace_dropped_on_failure(key):
            trace = earlier = slot.traces.get(key)
            if trace is not None and trace.per_call:
                # The EstimatorSpec carried hooks or a Scaffold, which tf.estimator's
                # per-call model_fn made anew for every call: call the model_fn again.
                trace = None
            if trace is None:
                store.checkpoint_initializers.clear()
                trace = self._trace(model, mode, dataset, hooks, writer, earlier)
                slot.traces.put(key, trace)
                runner = trace.runner
            else:
                runner = trace.join(HookRunner(list(hooks), HookSession(store, model.global_step)))
            if mode == ModeKeys.TRAIN:
                # The training step's seeded random ops draw from their seeds again, as from
                # 2.15's new graph (engine/random_streams.py). Not at an evaluation or a
                # prediction (one may run inside train(): training's streams go on).
                model.random_streams.restart()
            if trace.keeps_kernel_state and self.config.tf_random_seed is not None:
                # A seeded call's random streams start at the seed, as in 2.15's new graph:
                # a step whose kernels keep them runs on kernels made anew. Other steps keep
                # theirs (their instantiation: 0.15 s a call on the canned DNN).
                internals.clear_kernels()
            scaffold = self.call_model_fn.scaffolds.get(mode)
            if checkpoint is not None:
                self._restore_step(mode, trace, store, scaffold, checkpoint, follow_latest)
            elif fresh:
                # Fresh variables: what TF1 ran as initializers when model_dir had no
                # checkpoint. init_from_checkpoint first; the warm start overrides it;
                # then the Scaffold's init_fn, as 2.15 ran it after the init_op.
                apply_checkpoint_initializers(store.checkpoint_initializers)
                if self.warm_start_settings is not None:
                    variables = store.global_variables()
                    trainable = {name for name, v in variables.items() if v.trainable}
                    warm_start(self.warm_start_settings, variables, trainable)
                run_init_fn(scaffold, self._step_graphs.get(mode), store)
        internals.defer_random_kernel_clears()  # the steps run from here (see reseed)
        return trace.loop, runner

    def _restore_step(self, mode: str, trace: Any, store: Any, scaffold: Any, checkpoint: str,
                      follow_latest: bool) -> None:  # fmt: skip
        """Restores the variables `trace` uses from `checkpoint`: by TF1 names, then with the
        Scaffold's saver; a Scaffold's `tf.train.Checkpoint` alone reads object-based ones."""
        variables = {n: store.variables[n] for n in trace.used if n not in store.local_names}
        if not isinstance(getattr(scaffold, "saver", None), tf.train.Checkpoint):
            self._restore(checkpoint, variables, follow_latest)  # by TF1 names
        restore_with_saver(scaffold, checkpoint, self._step_graphs.get(mode), store, variables)

    def _restore(self, checkpoint: str, variables: dict, follow_latest: bool) -> None:
        for _ in range(_RESTORE_ATTEMPTS):
            try:
                restorer = ckpt_lib.CheckpointRestorer(checkpoint)
                restorer.restore_all(variables)
                break
            except ValueError:
                newest = self.latest_checkpoint() if follow_latest else None
                if tf.io.gfile.exists(checkpoint + ".index") or newest in (None, checkpoint):
                    raise  # a damaged checkpoint, not one garbage-collected meanwhile
                logger.info("Checkpoint %s was deleted while being read; using %s.",
                            checkpoint, newest)  # fmt: skip
                checkpoint = newest
        else:
            raise ckpt_lib.BrokenCheckpointStateError(
                f"Checkpoints in {self.model_dir!r} kept disappearing while being read "
                f"({_RESTORE_ATTEMPTS} attempts, the last {checkpoint!r}): another process "
                "deletes them faster than they can be restored. Fix: pass checkpoint_path= "
                "a checkpoint that stays, or raise that trainer's keep_checkpoint_max. "
                f"Received: model_dir={self.model_dir!r}"
            )
        restorer.raise_if_mismatched()

    def _trace(
        self,
        model: EstimatorModel,
        mode: str,
        dataset: tf.data.Dataset,
        hooks: tuple,
        writer: Any,
        earlier: Trace | None = None,
    ) -> Trace:
        """Traces the step of `mode` (and its loop) with this call's hooks begun in it; or,
        when it is `earlier`'s step, `earlier` with this call's hooks (Trace.adopt)."""
        store = model.store
        runner = HookRunner(list(hooks), HookSession(store, model.global_step))
        caller = self.call_model_fn
        caller.made_per_call = caller.made_scaffold = False
        strategy = self.strategy_for(mode)
        with (
            seeded_python_random(self.config.tf_random_seed),
            self.scope(mode),
            store.creating() as used,
            writer.as_default() if writer is not None else contextlib.nullcontext(),
            # ParameterServerStrategy warns that the step is traced on the coordinator:
            # it is, once, before its concrete function is scheduled onto the workers.
            quiet_tf_warning("invoked without using `ClusterCoordinator.schedule`"),
        ):
            step = model.make_step(mode, dataset.element_spec, strategy, hooks=runner)
            # A step traced with hooks only, run by a loop over that trace (the distributed
            # loops trace the step themselves; PREDICT's step runs alone), may be the same
            # computation as `earlier`'s: then its hooks run on that loop.
            adoptable = (caller.made_per_call and not caller.made_scaffold
                         and mode != ModeKeys.PREDICT)  # fmt: skip
            identity = None
            traced = step.traced
            if adoptable and traced is not None:
                # The ops it runs are a set (a trace's control outputs come in no set order).
                ops = sorted(op.name for op in traced.ops)
                identity = StepIdentity(traced.graph, store.variables, (traced.outputs, ops))
                if earlier is not None and identity == earlier.identity:
                    self._step_graphs[mode] = earlier.graph
                    return earlier.adopt(runner, source=traced.graph)
            loop = model.make_loop(step, mode, strategy)
            if not isinstance(loop, ChunkedLoop | PredictStep):
                # Traced here, in the scopes above: these loops trace the step (PREDICT's
                # step was traced above: it runs alone). The chunked loop calls the step
                # traced above, and is traced when a call first needs it (a first train()
                # may only run a hook's fetch step).
                loop.get_concrete_function(iterator_spec(dataset), tf.TensorSpec([], tf.int64))
            runner.step_ops = loop.step_ops
            ops = loop.step_ops
            self._step_graphs[mode] = (
                step.traced.graph if step.traced is not None else (ops[0].graph if ops else None)
            )
        used.add("global_step")
        graph = step.traced.graph if step.traced is not None else None
        # Distributed loops trace their step themselves: their kernels are taken to keep state.
        keeps_state = getattr(loop, "keeps_kernel_state", True)
        return Trace(loop, used, runner, caller.made_per_call, graph, identity, keeps_state)

    @contextlib.contextmanager
    def summaries_for(self, mode: str) -> Iterator[tf.summary.SummaryWriter | None]:
        """The training event-file writer (TRAIN with save_summary_steps), for `prepare`.

        Creating it opens an event file; if what runs inside fails (a bad model_fn, a bad
        checkpoint, saving_listeners without a saver), the file and a model_dir made for it
        are removed again, so a failure leaves model_dir as it was.
        """
        if (
            mode != ModeKeys.TRAIN
            or not self.config.save_summary_steps
            or not self.config.is_chief  # workers write no summaries, as with tf.estimator
        ):
            yield None
            return
        model_dir = self.model_dir
        fresh = model_dir not in self._writers
        self._started_at = None
        gfile = tf.io.gfile  # model_dir may be gs://, hdfs://, ram://
        existed = set(gfile.listdir(model_dir)) if gfile.isdir(model_dir) else None
        writer = self.summary_writer(model_dir)
        try:
            yield writer
        except BaseException:
            ran = self._started_at is not None and self.global_step_value() != self._started_at
            if fresh and not ran:
                self._writers.pop(model_dir).close()
                # Traces captured the closed writer: the next call traces again.
                self._trained.traces.drop_mode(ModeKeys.TRAIN)
                try:  # best effort: the error that got us here is the one to raise
                    for name in set(gfile.listdir(model_dir)) - (existed or set()):
                        if name.startswith("events.out.tfevents"):
                            gfile.remove(os.path.join(model_dir, name))
                    if existed is None and not gfile.listdir(model_dir):
                        gfile.rmtree(model_dir)
                except (OSError, tf.errors.OpError):
                    logger.warning("Could not remove the event file made for a failed call.")
            raise

    def training_starts_at(self, step: int) -> None:
        """Inside `summaries_for`: training starts at global step `step`. Once a step has
        run, a failure no longer removes the event file (it holds that run's summaries)."""
        self._started_at = step

    def summary_writer(self, directory: str) -> tf.summary.SummaryWriter:
        """One event-file writer per directory for this Estimator (kept open)."""
        writer = self._writers.get(directory)
        if writer is None:
            writer = self._writers[directory] = tf.summary.create_file_writer(directory)
        return writer

    def seed(self) -> None:
        """Seeds TF before input_fn runs, as tf.estimator seeded its fresh graph: eager
        random streams start at the seed (those of a reused step: see `_prepare`)."""
        if self.config.tf_random_seed is not None:
            internals.reseed(self.config.tf_random_seed)

    def flush_model_fn_writers(self, mode: str | None = None) -> None:
        """Summary writers the model_fn made (a host_call's, say) flush when a call ends."""
        model = self.model if mode is None else self.model_for(mode)
        if model is None:
            return
        for writer in model.store.summary_writers:
            writer.flush()

    def step_graph(self, mode: str) -> StepGraph:
        """The TF1 graph of `mode`'s last traced step over the model's variables (what
        graph.pbtxt and the .meta files hold); built once per distinct trace."""
        traced = self._step_graphs.get(mode)
        cached_for, fingerprint, graph = self._tf1_graph or (None, None, None)
        if graph is not None and cached_for is traced:  # identity: a retrace may reuse an id
            return graph
        step = traced_step(traced, self.prepared_model().store.global_variables())
        new_fingerprint = step_fingerprint(step)
        if graph is None or new_fingerprint != fingerprint:
            # A model_fn traced anew for a call (its EstimatorSpec carries hooks) usually
            # makes the same graph: then the TF1 graph, its text and .meta are kept.
            graph = _tf1_step_graph(step)
        self._tf1_graph = (traced, new_fingerprint, graph)  # only the newest
        return graph

    def global_step_value(self, mode: str | None = None) -> int:
        """The global step of the model `mode` runs (default: the trained model)."""
        return int(self.prepared_model(mode).global_step.numpy())


def _tf1_step_graph(step: TracedStep) -> StepGraph:
    try:
        return StepGraph(step)
    except (ValueError, TypeError, tf.errors.OpError) as exc:
        # The variables and their Saver still make a restorable .meta.
        logger.warning("graph.pbtxt / .meta hold the variables only: the traced "
                       "step could not be rebuilt as a TF1 graph (%s).", exc)  # fmt: skip
        return StepGraph(step._replace(graph_def=None))
