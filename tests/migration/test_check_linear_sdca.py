"""`keras-estimator check` reports LinearSDCA (tf.estimator.experimental and
tf.compat.v1.estimator.experimental) as supported: a script training a linear model with it
passes the check."""

import json

from helpers import run_python

SDCA_SOURCE = """\
import tensorflow as tf

columns = [tf.feature_column.numeric_column("x")]
sdca = tf.estimator.experimental.LinearSDCA("example_id", symmetric_l2_regularization=2.0)
est = tf.estimator.LinearClassifier(columns, optimizer=sdca)
v1_sdca = tf.compat.v1.estimator.experimental.LinearSDCA(example_id_column="example_id")
v1_est = tf.compat.v1.estimator.LinearRegressor(columns, optimizer=v1_sdca)
"""


def check(*args):
    return run_python(
        "-m", "keras_estimator", "check", *args, timeout=120, env={"TF_CPP_MIN_LOG_LEVEL": "3"}
    )  # fmt: skip


def test_check_reports_linear_sdca_supported(tmp_path):
    script = tmp_path / "sdca.py"
    script.write_text(SDCA_SOURCE)
    result = check(str(script))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sdca.py:4: [ok] tf.estimator.experimental.LinearSDCA" in result.stdout

    result = check(str(script), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    findings = json.loads(result.stdout)["findings"]
    sdca = [f for f in findings if f["api"].endswith("LinearSDCA")]
    assert [f["line"] for f in sdca] == [4, 6]
    assert {f["status"] for f in sdca} == {"supported"}
    assert {f["status"] for f in findings} == {"supported"}
