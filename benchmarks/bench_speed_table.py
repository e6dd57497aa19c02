"""Every speed figure of keras_estimator next to tf.estimator 2.15 and hand-written Keras 3,
as medians and paired ratios, in one markdown table.

Each (implementation, workload) runs in a fresh child process, so the first step's time
and the peak memory belong to that run alone. A child measures, in order:

- first train(): a new Estimator over an empty model_dir and `train(input_fn, steps=1)`
  (Keras 3: build + compile + `fit` of 1 step), tracing included;
- second train(): another `train(steps=1)` in the same process (Keras 3: `fit` 1 step);
- steady steps/s: `train(steps=N)` after a warm-up `train()` (Keras 3:
  `fit(steps_per_epoch=N)`, default steps_per_execution);
- evaluate(): the first evaluation, over the whole test set (Keras 3: `model.evaluate`);
- predict ex/s: `list(est.predict(input_fn))`, the first prediction, over a test set of
  3,000+ examples (Keras 3: `model.predict`);
- peak RSS (ru_maxrss) at the end.

A fourth column, the bare loop, is the limit these kernels allow: keras_estimator's own
traced train step run `N` times by one `tf.function` holding a `tf.while_loop` over the same
dataset (no hooks, savers, summaries or Python per step); only its steady steps/s is
measured. `--contended` measures everything a second time beside one CPU-bound process
(a Python busy loop), the shared machine on which a run must not collapse.

The workloads are speed_workloads.py's (mlp_digits, cnn_tfrecord, wide_mlp, canned_dnn).
Estimators keep their default RunConfig (checkpoints, summaries, step counter); only log
output is kept to warnings. The order of the implementations rotates every repetition: the
machine is shared and noisy, so read the paired ratios rather than absolute figures.

    python benchmarks/bench_speed_table.py --legacy-python /tmp/venv215/bin/python --out speed.md
    python benchmarks/bench_speed_table.py --legacy-python /tmp/venv215/bin/python --contended
    python benchmarks/bench_speed_table.py --reps 1 --steps-scale 0.1   # smoke run

`--legacy-python` names an interpreter with tensorflow==2.15.1 and tensorflow-estimator
2.15.0 (keras_estimator is not imported there); without it the tf.estimator 2.15 columns are
left out.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from speed_workloads import Workload

OURS, LEGACY, KERAS = "keras_estimator", "tf.estimator 2.15", "Keras 3"
BARE = "bare loop"  # keras_estimator's traced step in one tf.while_loop: the kernels' limit
RATIO_HEADERS = {BARE: "ours vs bare loop", LEGACY: "ours vs 2.15", KERAS: "ours vs Keras 3"}
# (key, label, direction): "time" ratios are theirs/ours, "rate" ones ours/theirs (both >1
# when keras_estimator is faster); "memory" ones ours/theirs (<1 when it uses less).
METRICS = (
    ("first_train_s", "first train() s", "time"),
    ("second_train_s", "second train() s", "time"),
    ("steps_per_s", "steady steps/s", "rate"),
    ("eval_s", "evaluate() s", "time"),
    ("predict_ex_per_s", "predict ex/s", "rate"),
    ("peak_rss_mb", "peak RSS MB", "memory"),
)


# -- the child: one implementation, one workload ------------------------------------------


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def measure_estimator(work: Workload, steps: int, warmup: int) -> dict:
    with tempfile.TemporaryDirectory() as model_dir:

        def first_train():
            est = work.make_estimator(model_dir)
            est.train(work.train_input_fn, steps=1)
            return est

        first, est = _timed(first_train)
        second, _ = _timed(lambda: est.train(work.train_input_fn, steps=1))
        est.train(work.train_input_fn, steps=warmup)
        steady, _ = _timed(lambda: est.train(work.train_input_fn, steps=steps))
        eval_s, _ = _timed(lambda: est.evaluate(work.eval_input_fn))
        predict_s, predictions = _timed(lambda: list(est.predict(work.predict_input_fn)))
        return _figures(first, second, steps / steady, eval_s, len(predictions) / predict_s)


def measure_bare(work: Workload, steps: int, warmup: int) -> dict:
    """The limit: keras_estimator's own traced train step, run `steps` times by one
    `tf.function` holding a `tf.while_loop` over a new iterator of the same input_fn's
    dataset: no hooks, no savers, no Python per step. Only steady steps/s is measured (the
    other figures are left out)."""
    import speed_workloads
    import tensorflow as tf

    from keras_estimator.runtime.input_pipeline import with_parallel_input

    with tempfile.TemporaryDirectory() as model_dir:
        est = work.make_estimator(model_dir)
        est.train(work.train_input_fn, steps=warmup)  # traces the step, as train() does
        dataset = with_parallel_input(work.train_input_fn())
        step_fn = _traced_train_step(est, dataset)

        @tf.function(autograph=False)
        def loop(iterator, num_steps):
            def body(i):
                outputs = step_fn(iterator.get_next())
                with tf.control_dependencies(tf.nest.flatten(outputs)):
                    return i + 1

            return tf.while_loop(lambda i: i < num_steps, body, [tf.constant(0, tf.int64)])

        loop(iter(dataset), tf.constant(1, tf.int64))  # traced and compiled outside the timing
        # Timed from a new iterator over the pipeline train() runs (the input_fn's dataset
        # with keras_estimator's parallel rewrites), as every train() call starts one: a
        # shuffle buffer filled, the pipeline's threads started. Its deletion is not timed.
        iterators = []

        def run() -> object:
            iterators.append(iter(with_parallel_input(work.train_input_fn())))
            return loop(iterators[-1], tf.constant(steps, tf.int64))

        with est._runtime.scope(speed_workloads.estimator.ModeKeys.TRAIN):
            steady, _ = _timed(run)
    return {"steps_per_s": steps / steady, "peak_rss_mb": _peak_rss_mb()}


def _traced_train_step(est: object, dataset: object) -> Callable:
    """The train step keras_estimator traced for `dataset` (its private runtime: this is
    a measurement of the engine, not a use of the public API)."""
    import speed_workloads

    train = speed_workloads.estimator.ModeKeys.TRAIN
    trace = est._runtime._trained.traces.get((train, repr(dataset.element_spec)))
    step_fn = getattr(trace.loop, "_step_fn", None) if trace is not None else None
    if step_fn is None:
        raise RuntimeError(f"No single-device traced train step found (loop: {trace!r}).")
    return step_fn


def measure_keras(work: Workload, steps: int, warmup: int) -> dict:
    import keras

    keras.utils.set_random_seed(1)

    def first_fit():
        model = work.keras_model()
        train = work.keras_train()
        model.fit(train, epochs=1, steps_per_epoch=1, verbose=0)
        return model, train

    first, (model, train) = _timed(first_fit)
    second, _ = _timed(lambda: model.fit(train, epochs=1, steps_per_epoch=1, verbose=0))
    model.fit(train, epochs=1, steps_per_epoch=warmup, verbose=0)
    steady, _ = _timed(lambda: model.fit(train, epochs=1, steps_per_epoch=steps, verbose=0))
    eval_s, _ = _timed(lambda: model.evaluate(work.keras_eval(), verbose=0))
    predict_s, predictions = _timed(lambda: model.predict(work.keras_predict(), verbose=0))
    return _figures(first, second, steps / steady, eval_s, len(predictions) / predict_s)


def _figures(first, second, steps_per_s, eval_s, predict_ex_per_s) -> dict:
    return {
        "first_train_s": first,
        "second_train_s": second,
        "steps_per_s": steps_per_s,
        "eval_s": eval_s,
        "predict_ex_per_s": predict_ex_per_s,
        "peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(impl: str, names: str, data_dir: str, steps_scale: float) -> None:
    """Measures workload `names` on `impl` (estimator or keras) and prints one JSON line;
    `prepare` instead builds every workload in `names` once (writing their data files)."""
    import logging

    if impl == "keras":
        os.environ["SPEED_WORKLOADS_KERAS_ONLY"] = "1"
    import speed_workloads
    import tensorflow as tf

    tf.get_logger().setLevel("WARNING")
    logging.getLogger("keras_estimator").setLevel(logging.WARNING)
    if impl == "prepare":  # once, before any timed run: the names checked, TFRecords written
        for each in names.split(","):
            speed_workloads.workload(each, data_dir)
        return
    work = speed_workloads.workload(names, data_dir)
    steps = max(1, round(work.steps * steps_scale))
    warmup = max(1, round(work.warmup * steps_scale))
    measure = {"keras": measure_keras, "bare": measure_bare}.get(impl, measure_estimator)
    figures = measure(work, steps, warmup)
    if impl == "keras" and "keras_estimator" in sys.modules:
        raise RuntimeError("The hand-written Keras 3 run imported keras_estimator.")
    versions = {"tensorflow": tf.__version__}
    if speed_workloads.LEGACY_TF:
        versions["tensorflow-estimator"] = importlib.metadata.version("tensorflow-estimator")
    else:
        versions["keras"] = speed_workloads.keras.__version__
        if impl in ("estimator", "bare"):
            versions["keras_estimator"] = speed_workloads.estimator.__version__
    figures.update(workload=names, steps=steps, warmup=warmup, versions=versions)
    print(json.dumps(figures), flush=True)


# -- the parent: alternating runs, then the table ------------------------------------------


def run_one(python: str, impl: str, name: str, data_dir: str, scale: float) -> dict | None:
    command = [python, os.path.abspath(__file__), "--child", impl, "--workloads", name]
    command += ["--data-dir", data_dir, "--steps-scale", str(scale)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        print(f"  FAILED ({done.returncode}): {done.stderr[-3000:]}", file=sys.stderr)
        return None
    return json.loads(lines[-1])


def _labels(args: argparse.Namespace) -> list[str]:
    return [OURS, BARE] + ([LEGACY] if args.legacy_python else []) + [KERAS]


def run_all(args: argparse.Namespace, workloads: list[str], data_dir: str) -> dict:
    impls = [(OURS, sys.executable, "estimator"), (BARE, sys.executable, "bare")]
    if args.legacy_python:
        impls.append((LEGACY, args.legacy_python, "estimator"))
    impls.append((KERAS, sys.executable, "keras"))
    runs: dict = {name: {label: [] for label, _, _ in impls} for name in workloads}
    for rep in range(args.reps):
        order = impls[rep % len(impls) :] + impls[: rep % len(impls)]
        for name in workloads:
            for label, python, impl in order:
                start = time.perf_counter()
                result = run_one(python, impl, name, data_dir, args.steps_scale)
                runs[name][label].append(result)
                took = time.perf_counter() - start
                summary = _progress(result) if result else "failed"
                print(f"[rep {rep + 1}/{args.reps}] {name} {label}: {summary} ({took:.0f} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
    return runs


def _progress(result: dict) -> str:
    if "first_train_s" not in result:  # the bare loop
        return f"{result['steps_per_s']:.0f} steps/s, {result['peak_rss_mb']:.0f} MB"
    return (
        f"first {result['first_train_s']:.2f} s, second {result['second_train_s']:.2f} s, "
        f"{result['steps_per_s']:.0f} steps/s, eval {result['eval_s']:.2f} s, "
        f"predict {result['predict_ex_per_s']:.0f} ex/s, {result['peak_rss_mb']:.0f} MB"
    )


def _median(results: list[dict | None], key: str) -> str:
    values = [r[key] for r in results if r and key in r]
    if not values:
        return "—"
    value = statistics.median(values)
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _ratio(ours: list, theirs: list, key: str, direction: str) -> str:
    ratios = []
    for a, b in zip(ours, theirs):
        if a and b and key in a and key in b:
            ratios.append(b[key] / a[key] if direction == "time" else a[key] / b[key])
    if not ratios:
        return "—"
    text = f"{statistics.median(ratios):.2f}x"
    if len(ratios) > 1:
        text += f" ({min(ratios):.2f}–{max(ratios):.2f})"
    return text


def table(runs: dict, labels: list[str]) -> list[str]:
    others = [label for label in labels if label != OURS]
    header = ["workload", "metric", *labels, *(RATIO_HEADERS[label] for label in others)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, by_impl in runs.items():
        for key, label, direction in METRICS:
            cells = [name, label, *(_median(by_impl[impl], key) for impl in labels)]
            cells += [_ratio(by_impl[OURS], by_impl[other], key, direction) for other in others]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _versions(runs: dict) -> str:
    seen: dict[str, dict] = {}
    for by_impl in runs.values():
        for label, results in by_impl.items():
            for result in results:
                if result and label not in seen:
                    seen[label] = result["versions"]
    parts = []
    for label, versions in seen.items():
        described = ", ".join(f"{k} {v}" for k, v in versions.items())
        parts.append(f"{label}: {described}")
    return "; ".join(parts)


def cpu_model() -> str:
    """The processor's model name (Linux /proc/cpuinfo; else `platform.processor()`)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    """A calibration of this machine: the best of `repeats` float32 `size`x`size` matmuls,
    in GFLOP/s, through TensorFlow (what the workloads' kernels run on)."""
    import tensorflow as tf

    a = tf.random.stateless_uniform([size, size], seed=[1, 2])
    tf.linalg.matmul(a, a).numpy()  # warm up the kernel
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tf.linalg.matmul(a, a).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def report(args: argparse.Namespace, passes: dict[str, dict], argv: list[str]) -> str:
    """The table of each pass ("quiet", and "contended" with `--contended`)."""
    labels = _labels(args)
    first = next(iter(passes.values()))
    steps = {
        name: next((r["steps"] for rs in by_impl.values() for r in rs if r), None)
        for name, by_impl in first.items()
    }
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"`{shlex.join(['python', 'benchmarks/bench_speed_table.py', *argv])}`",
        "",
        f"{now}; {os.cpu_count()} CPUs ({platform.machine()}, {cpu_model()}; "
        f"1024x1024 float32 matmul {matmul_gflops():.0f} GFLOP/s); {args.reps} repetition(s), "
        f"medians; timed steps: " + ", ".join(f"{k} {v}" for k, v in steps.items()) + ".",
        _versions(first) + ".",
    ]
    for name, runs in passes.items():
        lines += ["", f"**{PASSES[name]}**", "", *table(runs, labels)]
    lines += [
        "",
        "Ratios (ours: keras_estimator) are paired per repetition: the median, and the range "
        "over repetitions. Above 1 means keras_estimator is faster; for peak RSS they are "
        "ours/theirs (below 1 means it uses less). The bare loop is keras_estimator's own "
        "traced train step run by one tf.function holding a tf.while_loop over the same "
        "dataset (no hooks, savers or Python per step): the most these kernels give; only "
        "its steady steps/s is measured.",
    ]
    return "\n".join(lines) + "\n"


PASSES = {
    "quiet": "Quiet: nothing else started by the benchmark",
    "contended": "Contended: one CPU-bound process (a Python busy loop) runs beside each "
    "measurement",
}


@contextlib.contextmanager
def competing_process() -> Iterator[None]:
    """One CPU-bound process for the duration: what a shared machine does to a run."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        busy.kill()
        busy.wait()


def _compile_to_bytecode() -> None:
    """keras_estimator and these benchmarks compiled to bytecode first, as pip compiles an
    installed package: an editable install where Python writes no bytecode
    (PYTHONDONTWRITEBYTECODE, as on our shared machine) would otherwise compile its source
    inside the first train() it times, while TensorFlow, Keras and tf.estimator 2.15 come
    compiled (0.04-0.07 s of keras_estimator's first train(), measured)."""
    import compileall
    import importlib.util

    origin = importlib.util.find_spec("keras_estimator").origin
    for directory in (os.path.dirname(origin), os.path.dirname(os.path.abspath(__file__))):
        compileall.compile_dir(directory, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--legacy-python", default=None, help="interpreter with TF 2.15")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workloads", default="mlp_digits,cnn_tfrecord,wide_mlp,canned_dnn")
    parser.add_argument("--steps-scale", type=float, default=1.0, help="multiplies step counts")
    parser.add_argument("--out", default=None, help="also write the table to this .md file")
    parser.add_argument(
        "--contended",
        action="store_true",
        help="after the quiet pass, measure everything again beside a CPU-bound process",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.workloads, args.data_dir, args.steps_scale)
        return
    workloads = [name for name in args.workloads.split(",") if name]
    _compile_to_bytecode()
    with tempfile.TemporaryDirectory() as data_dir:
        prepare = [sys.executable, os.path.abspath(__file__), "--child", "prepare"]
        prepare += ["--workloads", ",".join(workloads), "--data-dir", data_dir]
        done = subprocess.run(prepare, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"Preparing the workloads failed:\n{done.stderr[-3000:]}")
        passes = {"quiet": run_all(args, workloads, data_dir)}
        if args.contended:
            with competing_process():
                passes["contended"] = run_all(args, workloads, data_dir)
    text = report(args, passes, sys.argv[1:])
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
