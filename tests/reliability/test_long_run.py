"""A long training run: memory stays flat, model_dir stays bounded, event files stay readable.

`scripts/crash/long_run.py` trains one Estimator in chunks of `train(steps=...)` in a fresh
process and reports, after every chunk, its resident memory (VmRSS), the files in model_dir
and the event files read back with `summary_iterator` while the writer is open.

KE_SLOW_TESTS=1: 20,000 steps (40 x 500), checkpoints every 500, summaries every 100.
Default tier: 2,000 steps (20 x 100), checkpoints every 100, summaries every 20.

The memory bound: after warm-up (chunk 5) RSS may rise by less than 20 MB. Allocator noise
measured here is about 2 MB; the leaks worth catching are much larger: one leaked
Estimator + trace per train() call costs about 3 MB a call (35 calls after warm-up in the
slow tier, 15 in the default one), and one leaked KB per step is 17 MB over 17,500 steps.
"""

import json
import os
import subprocess
import sys

SLOW = os.environ.get("KE_SLOW_TESTS") == "1"
# chunks, steps per chunk, save_checkpoints_steps, save_summary_steps, keep_checkpoint_max
CHUNKS, STEPS, SAVE_STEPS, SUMMARY_STEPS, KEEP_MAX = (
    (40, 500, 500, 100, 5) if SLOW else (20, 100, 100, 20, 5)
)
WARM_UP_CHUNK = 5
RSS_GROWTH_LIMIT_MB = 20.0
TIMEOUT = 900 if SLOW else 240
SCRIPT = os.path.join(os.path.dirname(__file__), "scripts", "crash", "long_run.py")


def _expected_checkpoint_files(step):
    """The checkpoint files after training to `step` (every checkpoint is at a save step)."""
    saved = list(range(0, step + 1, SAVE_STEPS))  # the first train() also saves step 0
    names = set()
    for kept in saved[-KEEP_MAX:]:
        names |= {f"model.ckpt-{kept}.index", f"model.ckpt-{kept}.data-00000-of-00001"}
    return names


def _expected_loss_steps(step):
    """Summaries on the first step of each train() call and every N steps after it."""
    steps = []
    for start in range(0, step, STEPS):
        steps += [start + 1 + k for k in range(0, STEPS, SUMMARY_STEPS)]
    return steps


def test_long_run_memory_files_and_event_files_stay_bounded(tmp_path):
    model_dir = str(tmp_path / "model")
    out = str(tmp_path / "summary.json")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_ESTIMATOR_PROGRESS="0")
    env.pop("TF_CONFIG", None)
    args = [CHUNKS, STEPS, SAVE_STEPS, SUMMARY_STEPS, KEEP_MAX]
    proc = subprocess.Popen(
        [sys.executable, SCRIPT, model_dir, *map(str, args), out],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        output = proc.communicate(timeout=TIMEOUT)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0, output[-5000:]
    with open(out) as summary_file:
        summary = json.load(summary_file)
    chunks = summary["chunks"]
    assert len(chunks) == CHUNKS

    rss = [c["rss_mb"] for c in chunks]
    warm = rss[WARM_UP_CHUNK - 1]
    growth = max(rss[WARM_UP_CHUNK - 1 :]) - warm
    print(
        f"\nlong run: {CHUNKS * STEPS} steps in {summary['seconds']}s; RSS MB after chunk "
        f"1: {rss[0]}, {WARM_UP_CHUNK}: {warm}, max after: {max(rss[WARM_UP_CHUNK - 1 :])}, "
        f"end: {rss[-1]}; growth after warm-up {growth:.1f} MB; "
        f"files per chunk: {[len(c['files']) for c in chunks]}\nRSS per chunk: {rss}"
    )

    event_names = None
    records = 0
    for c in chunks:
        step = c["chunk"] * STEPS
        assert c["global_step"] == step
        files = set(c["files"])
        events = {n for n in files if n.startswith("events.out.tfevents")}
        # checkpoint state + keep_checkpoint_max x (.index + .data) + one event file
        assert files == {"checkpoint"} | events | _expected_checkpoint_files(step), (
            c["chunk"],
            sorted(files),
        )
        assert len(files) <= 2 * KEEP_MAX + 2
        # One Estimator writes one event file for the whole run.
        assert len(events) == 1, sorted(events)
        assert event_names is None or events == event_names
        event_names = events
        (read,) = c["events"].values()
        assert read["records"] > records  # it grows, and reads back whole every time
        records = read["records"]
        assert read["tags"]["loss"] == _expected_loss_steps(step), c["chunk"]
        assert set(read["tags"]) <= {"loss", "global_step/sec"}, sorted(read["tags"])

    assert growth < RSS_GROWTH_LIMIT_MB, (
        f"RSS grew {growth:.1f} MB after warm-up (chunk {WARM_UP_CHUNK}): {rss}"
    )
