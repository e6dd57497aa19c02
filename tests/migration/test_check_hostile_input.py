"""`check` on hostile input (issue 18 item 7): every per-file problem is reported as the
file's own line and the scan goes on; only regular files are read, never more than the size
cap; notebooks are validated; parsing is bounded; nothing is imported or run."""

import json
import os
import time

import pytest
from helpers import run_python

from keras_estimator.migration import scan

GOOD = "import tensorflow.compat.v1 as tf\nest = tf.estimator.Estimator(None)\n"


def by_name(reports):
    return {os.path.basename(r.path): r for r in reports}


def only_finding(report):
    assert len(report.findings) == 1, report.findings
    return report.findings[0]


@pytest.mark.parametrize(
    "name, content, reason",
    [
        ("list.ipynb", b"[1, 2]", "the top level is a JSON list"),
        ("cells.ipynb", json.dumps({"cells": [1, "x"]}).encode(), "cell 1 is a JSON int"),
        ("source.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": 3}]}).encode(),
         "cell 1's `source` is not a string"),
        ("nocells.ipynb", b'{"metadata": {}}', "no `cells` list"),
        ("deep.ipynb", b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
        ("broken.ipynb", b"{not json", "not JSON"),
        ("rot.py", b"# coding: rot13\nvzcbeg grafbesybj nf gs\n", "not a text encoding"),
        ("nocodec.py", b"# coding: klingon\nx = 1\n", "bad encoding declaration"),
        ("bytes.py", b"import tensorflow as tf\n\xff\xfe\x81 = 1\n", "not decodable as utf-8"),
    ],
)  # fmt: skip
def test_an_unreadable_file_is_reported_and_the_scan_goes_on(tmp_path, name, content, reason):
    (tmp_path / name).write_bytes(content)
    (tmp_path / "zz_good.py").write_text(GOOD)
    reports = by_name(scan([str(tmp_path)]))
    bad = reports[name]
    assert bad.verdict == "unreadable"
    finding = only_finding(bad)
    assert finding.status == "error" and reason in finding.note, finding
    assert [f.api for f in reports["zz_good.py"].findings] == ["tf.estimator.Estimator"]


def test_a_200000_term_expression_is_unreadable_not_a_crash(tmp_path):
    (tmp_path / "long.py").write_text(
        "import tensorflow as tf\nx = " + "+".join(["1"] * 200_000) + "\n"
    )
    (tmp_path / "nested.py").write_text("x = " + "(" * 10_000 + ")" * 10_000 + "\n")
    (tmp_path / "zz_good.py").write_text(GOOD)
    reports = by_name(scan([str(tmp_path)]))
    for name in ("long.py", "nested.py"):
        finding = reports[name].findings[0]
        assert finding.status == "error" and "could not parse" in finding.note, finding
    assert reports["zz_good.py"].verdict == "ok"


def test_only_regular_files_are_read(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")  # reading it would wait for a writer forever
    os.symlink("/dev/zero", tmp_path / "zero.py")  # reading it would never end
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    (tmp_path / "real.py").write_text(GOOD)
    os.symlink(tmp_path / "real.py", tmp_path / "link.py")  # a link to a regular file is read
    started = time.monotonic()
    reports = by_name(scan([str(tmp_path)]))
    assert time.monotonic() - started < 10
    assert "a FIFO" in only_finding(reports["fifo.py"]).note
    assert "a character device" in only_finding(reports["zero.py"]).note
    for name in ("fifo.py", "zero.py", "dangling.py"):
        assert reports[name].verdict == "skipped", name
        assert only_finding(reports[name]).status == "skipped"
    assert reports["link.py"].verdict == reports["real.py"].verdict == "ok"
    # Named on the command line too: still not read.
    assert scan([str(tmp_path / "fifo.py")])[0].verdict == "skipped"


def test_a_huge_file_is_skipped_quickly_with_a_line_saying_so(tmp_path):
    big = tmp_path / "big.py"
    line = "x = tf.logging.info('" + "a" * 100 + "')\n"
    with open(big, "w") as f:
        f.write("import tensorflow as tf\n" + line * 180_000)  # 22 MB
    started = time.monotonic()
    result = run_python("-m", "keras_estimator", "check", str(big), timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[SKIPPED] 22,320,024 bytes" in result.stdout and "limit (--max-size)" in result.stdout
    assert "1 skipped" in result.stdout
    # The cap is the user's: 0.001 MB skips a small file too, with the same line.
    small = tmp_path / "small.py"
    small.write_text(GOOD * 100)
    assert scan([str(small)], max_size=1000)[0].verdict == "skipped"
    notebook = tmp_path / "nb.ipynb"
    cell = {"cell_type": "code", "source": GOOD * 100}
    notebook.write_text(json.dumps({"cells": [cell]}))
    report = scan([str(notebook)], max_size=1000)[0]
    assert report.verdict == "skipped" and "code is over" in report.reason


def test_check_never_runs_or_imports_what_it_scans(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\nimport tensorflow as tf\ntf.Session()\n"
    )
    (tmp_path / "evil.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": f"open({str(marker)!r}, 'w').write('x')\n"},
        {"cell_type": "code", "source": "!touch " + str(marker) + "\n"},
    ]}))  # fmt: skip
    code = (
        "import sys\nfrom keras_estimator.cli.main import main\n"
        f"status = main(['check', {str(tmp_path)!r}])\n"
        "print('TF', sorted(m for m in sys.modules if m.split('.')[0] == 'tensorflow'))\n"
    )
    result = run_python("-c", code, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "TF []" in result.stdout
    assert not marker.exists()
