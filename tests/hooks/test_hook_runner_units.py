"""HookRunner and StepWatcher as units, on a three-op traced step: hooks begin in the
trace, fetch its tensors and variables, are walked ahead through quiet steps, stop the
watcher, and end; no Estimator around them."""

import tensorflow as tf

from keras_estimator.engine.loops import TracedStep
from keras_estimator.engine.variable_store import VariableStore
from keras_estimator.hooks.runner import HookRunner
from keras_estimator.hooks.session import HookSession
from keras_estimator.hooks.step_watcher import StepWatcher, scalar_logs

v1 = tf.compat.v1


class _Recorder(v1.train.SessionRunHook):
    """Fetches the step's `doubled` tensor and the weight; stops after `stop_after` runs."""

    def __init__(self, weight, stop_after=None):
        self.weight, self.stop_after, self.seen, self.calls = weight, stop_after, [], []

    def begin(self):
        self.calls.append("begin")
        self.doubled = v1.get_default_graph().get_tensor_by_name("doubled:0")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        return v1.train.SessionRunArgs({"doubled": self.doubled, "w": self.weight})

    def after_run(self, run_context, run_values):
        self.seen.append(run_values.results)
        if self.stop_after is not None and len(self.seen) >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append(("end", float(session.run(self.weight))))


class _Counter(v1.train.SessionRunHook):
    """A hook that fetches nothing and keeps TensorFlow's own after_run: walked ahead."""

    def __init__(self):
        self.before = 0

    def before_run(self, run_context):
        self.before += 1


def _traced_step(hooks):
    """`w.assign_add(1)` then `doubled = 2 * w`, with `hooks` begun in its trace."""
    global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
    weight = tf.Variable(1.0, name="w")
    runner = HookRunner(hooks, HookSession(VariableStore(), global_step))

    @tf.function(autograph=False)
    def step():
        start = tf.identity(global_step.read_value(), name="global_step_read")
        with tf.control_dependencies([weight.assign_add(1.0)]):
            doubled = tf.multiply(weight.read_value(), 2.0, name="doubled")
        runner.attach((), v1.get_default_graph(), start)
        return {"doubled": doubled}

    traced = TracedStep.of(step.get_concrete_function())
    runner.step_ops = traced.ops
    return runner, traced, weight


def _run_with(traced):
    def run(fetches):
        outputs, values = traced.with_fetches(fetches)()
        return True, outputs, {key: value.numpy() for key, value in values.items()}

    return run


def test_a_hook_sees_its_fetches_from_the_step_it_ran_and_stops_the_watcher():
    hook = _Recorder(weight=None, stop_after=2)
    runner, traced, weight = _traced_step([hook])
    hook.weight = weight
    watcher = StepWatcher(runner, [], model=None, kind="train")
    watcher.begin()
    first, stop = watcher.step(0, _run_with(traced), scalar_logs)
    assert not stop and float(first["doubled"]) == 4.0
    assert hook.seen == [{"doubled": 4.0, "w": 1.0}]  # the weight as the step began (2.15)
    _, stop = watcher.step(1, _run_with(traced), scalar_logs)
    assert stop and hook.seen[1] == {"doubled": 6.0, "w": 2.0}
    watcher.end({})
    assert hook.calls == ["begin", "after_create_session", ("end", 3.0)]


def test_hooks_that_fetch_nothing_are_walked_ahead_and_a_fetching_one_is_not():
    counter = _Counter()
    runner, _, _ = _traced_step([counter])
    watcher = StepWatcher(runner, [], model=None, kind="train")
    watcher.begin()
    assert watcher.quiet_steps(5) == 5  # five steps may run as one compiled chunk
    assert counter.before == 5
    fetching = _Recorder(weight=None)
    runner, _, weight = _traced_step([fetching])
    fetching.weight = weight
    assert StepWatcher(runner, [], model=None, kind="train").quiet_steps(5) == 0


def test_the_watchers_logs_are_the_steps_scalar_numbers_only():
    outputs = {
        "loss": tf.constant(0.5),
        "architecture": tf.constant(b"a serialized Summary"),  # AdaNet's text metric
        "vector": tf.constant([1.0, 2.0]),
    }
    assert scalar_logs(outputs) == {"loss": 0.5}
