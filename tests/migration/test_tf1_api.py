"""`migration.tf1_api`: which files use TF1-only names on TF 2's `tensorflow` (what
`keras-estimator run` reads to choose its TF1 mode, and `check` reports)."""

import json
import os

import pytest
from helpers import FIXTURES, run_python

from keras_estimator.migration.tf1_api import (
    NAMES_PATH,
    tf1_only_prefix,
    tf1_only_uses,
    uses_tf1_api,
)

TF1_ON_TF2 = {
    "logging": "import tensorflow as tf\ntf.logging.set_verbosity(tf.logging.INFO)\n",
    "bare import": "import tensorflow\nsess = tensorflow.Session()\n",
    "from import": "from tensorflow import logging\nlogging.info('x')\n",
    "from submodule": "from tensorflow.train import Optimizer\n",
    "subclass": "import tensorflow as tf\nclass Opt(tf.train.Optimizer):\n    pass\n",
    "flags alias": "import tensorflow as tf\nflags = tf.flags\nFLAGS = flags.FLAGS\n",
    "contrib attribute": "import tensorflow as tf\nf = tf.contrib.data.parallel_interleave\n",
    "contrib chain with import": (
        "import tensorflow as tf\nimport tensorflow.contrib.slim\ntf.contrib.slim.conv2d(x, 3)\n"
    ),
    "in a function": "import tensorflow as tf\ndef f():\n    return tf.get_variable('w', [1])\n",
    "layers": "import tensorflow as tf\ny = tf.layers.dense(x, 3)\n",
    "placeholder": "import tensorflow as tf\nx = tf.placeholder(tf.float32)\n",
    "gfile and app": "import tensorflow as tf\ntf.gfile.Exists('a')\ntf.app.run()\n",
}
NOT_TF1_ON_TF2 = {
    "compat.v1 import": "import tensorflow.compat.v1 as tf\ntf.logging.info('x')\n",
    "from compat.v1": "from tensorflow.compat.v1 import logging\n",
    "from compat import v1": "from tensorflow.compat import v1 as tf\ntf.Session()\n",
    "reassigned": "import tensorflow as tf\ntf = tf.compat.v1\ntf.Session()\n",
    "try v1 first": (
        "try:\n    import tensorflow.compat.v1 as tf\nexcept ImportError:\n"
        "    import tensorflow as tf\ntf.Session()\n"
    ),
    # install() makes the module `tensorflow.contrib` importable; only the attribute
    # `tf.contrib` of TF 2's `tensorflow` needs the TF1 mode.
    "contrib import": "import tensorflow.contrib.slim as slim\nslim.conv2d(x, 3)\n",
    "from contrib": "from tensorflow.contrib import tpu\ntpu.TPUEstimator\n",
    "compat chain": "import tensorflow as tf\ntf.compat.v1.Session()\n",
    "tf2 names": "import tensorflow as tf\nm = tf.keras.layers.Dense(3)\ntf.train.Checkpoint()\n",
    "estimator": "import tensorflow as tf\ne = tf.estimator.Estimator(fn)\n",
    "no import": "tf.logging.info('x')\n",
    "syntax error": "import tensorflow as tf\ntf.logging.info(\n",
    "other tf": "import tf\ntf.logging.info('x')\n",
}


@pytest.mark.parametrize("source", TF1_ON_TF2.values(), ids=TF1_ON_TF2.keys())
def test_tf1_names_on_a_tf2_import_are_tf1_api(source):
    assert uses_tf1_api(source)


@pytest.mark.parametrize("source", NOT_TF1_ON_TF2.values(), ids=NOT_TF1_ON_TF2.keys())
def test_compat_v1_tf2_names_and_non_tensorflow_are_not(source):
    assert not uses_tf1_api(source)


def test_each_use_names_the_tf1_only_prefix_and_its_line():
    source = (
        "import tensorflow as tf\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "opt = tf.train.AdamOptimizer(0.1)\n"
        "ok = tf.train.Checkpoint()\n"
        "w = tf.compat.v1.get_variable('w', [1])\n"
    )
    found = [(u.line, u.path, u.tf1_only) for u in tf1_only_uses(source)]
    assert found == [
        (2, "logging.set_verbosity", "logging"),
        (2, "logging.INFO", "logging"),
        (3, "train.AdamOptimizer", "train.AdamOptimizer"),
    ]
    assert tf1_only_prefix("train.Optimizer.minimize") == "train.Optimizer"
    assert tf1_only_prefix("train.Checkpoint") is None
    assert tf1_only_prefix("") is None


def test_hostile_source_is_false_not_an_error():
    deep = "import tensorflow as tf\nx = " + "+".join(["1"] * 200_000) + "\ntf.Session()\n"
    nested = "import tensorflow as tf\nx = " + "(" * 5000 + ")" * 5000 + "\n"
    for source in (deep, nested, "import tensorflow as tf\x00\n"):
        assert uses_tf1_api(source) in (True, False)


def test_names_file_matches_the_installed_tensorflow():
    result = run_python(os.path.join(FIXTURES, "make_tf1_only_names.py"), "--print", timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    generated = json.loads(result.stdout)
    with open(NAMES_PATH, encoding="utf-8") as f:
        committed = json.load(f)
    missing = set(generated["names"]) - set(committed["names"])
    extra = set(committed["names"]) - set(generated["names"])
    assert not missing and not extra, (
        f"tf1_only_names.json is stale for TensorFlow {generated['tensorflow_version']}: "
        f"missing {sorted(missing)[:20]}, extra {sorted(extra)[:20]}. Fix: run "
        "python tests/fixtures/make_tf1_only_names.py"
    )
    for name in ("logging", "flags", "app", "gfile", "train.Optimizer", "get_variable",
                 "layers", "contrib", "Session", "placeholder"):  # fmt: skip
        assert name in committed["names"], name


def test_tf1_api_imports_no_tensorflow():
    code = (
        "import sys\n"
        "from keras_estimator.migration.tf1_api import uses_tf1_api\n"
        "assert uses_tf1_api('import tensorflow as tf\\ntf.Session()\\n')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')))\n"
    )
    result = run_python("-c", code, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
