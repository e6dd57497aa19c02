"""A long training run: memory stays flat, model_dir stays bounded, event files stay readable.

`scripts/crash/long_run.py` trains one Estimator in chunks of `train(steps=...)` in a fresh
process and reports, after every chunk, its resident memory (VmRSS), the files in model_dir
and the event files read back with `summary_iterator` while the writer is open.

The slow tier (`-m slow`): 20,000 steps (40 x 500), checkpoints every 500, summaries every
100. Default tier: 2,000 steps (20 x 100), checkpoints every 100, summaries every 20.

The memory bound: after warm-up (chunk 5) RSS may rise by less than 20 MB. Allocator noise
measured here is about 2 MB; the leaks worth catching are much larger: one leaked
Estimator + trace per train() call costs about 3 MB a call (35 calls after warm-up in the
slow tier, 15 in the default one), and one leaked KB per step is 17 MB over 17,500 steps.
"""

import json
import os
from typing import NamedTuple

import pytest
from helpers import SCRIPTS, start_python


class Tier(NamedTuple):
    chunks: int  # train(steps=steps) calls
    steps: int  # steps per chunk
    save_steps: int  # save_checkpoints_steps
    summary_steps: int  # save_summary_steps
    keep_max: int  # keep_checkpoint_max
    timeout: int  # seconds for the whole run


DEFAULT = Tier(chunks=20, steps=100, save_steps=100, summary_steps=20, keep_max=5, timeout=240)
SLOW = Tier(chunks=40, steps=500, save_steps=500, summary_steps=100, keep_max=5, timeout=900)
WARM_UP_CHUNK = 5
RSS_GROWTH_LIMIT_MB = 20.0
SCRIPT = os.path.join(SCRIPTS, "crash", "long_run.py")


def _expected_checkpoint_files(tier, step):
    """The checkpoint files after training to `step` (every checkpoint is at a save step)."""
    saved = list(range(0, step + 1, tier.save_steps))  # the first train() also saves step 0
    names = set()
    for kept in saved[-tier.keep_max :]:
        suffixes = ("index", "data-00000-of-00001", "meta")
        names |= {f"model.ckpt-{kept}.{suffix}" for suffix in suffixes}
    return names | {"graph.pbtxt"}  # as 2.15 left model_dir (checkpoint_save_graph_def)


def _expected_loss_steps(tier, step):
    """Summaries on the first step of each train() call and every N steps after it."""
    steps = []
    for start in range(0, step, tier.steps):
        steps += [start + 1 + k for k in range(0, tier.steps, tier.summary_steps)]
    return steps


@pytest.mark.parametrize(
    "tier",
    [
        pytest.param(DEFAULT, id="2000-steps"),
        pytest.param(SLOW, id="20000-steps", marks=pytest.mark.slow),
    ],
)
def test_long_run_memory_files_and_event_files_stay_bounded(tmp_path, tier):
    model_dir = str(tmp_path / "model")
    out = str(tmp_path / "summary.json")
    args = [tier.chunks, tier.steps, tier.save_steps, tier.summary_steps, tier.keep_max]
    proc = start_python(
        SCRIPT, model_dir, *map(str, args), out, env={"KERAS_ESTIMATOR_PROGRESS": "0"}
    )
    try:
        output = proc.communicate(timeout=tier.timeout)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0, output[-5000:]
    with open(out) as summary_file:
        summary = json.load(summary_file)
    chunks = summary["chunks"]
    assert len(chunks) == tier.chunks

    rss = [c["rss_mb"] for c in chunks]
    warm = rss[WARM_UP_CHUNK - 1]
    growth = max(rss[WARM_UP_CHUNK - 1 :]) - warm
    print(
        f"\nlong run: {tier.chunks * tier.steps} steps in {summary['seconds']}s; RSS MB after "
        f"chunk 1: {rss[0]}, {WARM_UP_CHUNK}: {warm}, max after: {max(rss[WARM_UP_CHUNK - 1 :])}, "
        f"end: {rss[-1]}; growth after warm-up {growth:.1f} MB; "
        f"files per chunk: {[len(c['files']) for c in chunks]}\nRSS per chunk: {rss}"
    )

    event_names = None
    records = 0
    for c in chunks:
        step = c["chunk"] * tier.steps
        assert c["global_step"] == step
        files = set(c["files"])
        events = {n for n in files if n.startswith("events.out.tfevents")}
        # checkpoint state + keep_checkpoint_max x (.index + .data + .meta) + graph.pbtxt +
        # one event file
        assert files == {"checkpoint"} | events | _expected_checkpoint_files(tier, step), (
            c["chunk"],
            sorted(files),
        )
        assert len(files) <= 3 * tier.keep_max + 3
        # One Estimator writes one event file for the whole run.
        assert len(events) == 1, sorted(events)
        assert event_names is None or events == event_names
        event_names = events
        (read,) = c["events"].values()
        assert read["records"] > records  # it grows, and reads back whole every time
        records = read["records"]
        assert read["tags"]["loss"] == _expected_loss_steps(tier, step), c["chunk"]
        assert set(read["tags"]) <= {"loss", "global_step/sec"}, sorted(read["tags"])

    assert growth < RSS_GROWTH_LIMIT_MB, (
        f"RSS grew {growth:.1f} MB after warm-up (chunk {WARM_UP_CHUNK}): {rss}"
    )
