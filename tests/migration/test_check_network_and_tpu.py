"""`check` blocks on what fails here for a reason written in the code: a Keras dataset or
`get_file` download that is not in Keras' cache, a download call, a `gs://` path the code
uses, and `TPUClusterResolver` built unconditionally where no TPU is visible. It does not
block on flag defaults, help texts, patterns, cached files or guarded code."""

import glob
import textwrap

import pytest
from helpers import run_python

from keras_estimator.migration import exit_status, scan


@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    """An empty Keras cache (`$KERAS_HOME`) for the test."""
    home = tmp_path / "keras_home"
    (home / "datasets").mkdir(parents=True)
    monkeypatch.setenv("KERAS_HOME", str(home))
    return home


def findings(tmp_path, source, name="job.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    (report,) = scan([str(path)])
    shown = [(f.line, f.api, f.status) for f in report.findings if f.status != "supported"]
    return shown, report


def test_a_keras_dataset_blocks_until_it_is_in_the_cache(tmp_path, keras_home):
    source = """\
        import tensorflow as tf
        from tensorflow.keras.datasets import boston_housing

        mnist = tf.keras.datasets.mnist
        (x, y), _ = mnist.load_data()
        (a, b), _ = boston_housing.load_data()
    """
    shown, report = findings(tmp_path, source)
    assert shown == [
        (2, "keras.datasets.boston_housing.load_data", "unsupported"),
        (4, "keras.datasets.mnist.load_data", "unsupported"),
    ]
    mnist = next(f for f in report.findings if "mnist" in f.api)
    assert "downloads the mnist dataset from the network" in mnist.note
    assert f"no {keras_home}/datasets/mnist.npz" in mnist.note
    assert report.verdict == "blocked" and exit_status([report]) == 1

    (keras_home / "datasets" / "mnist.npz").write_bytes(b"cached")
    (keras_home / "datasets" / "boston_housing.npz").write_bytes(b"cached")
    shown, report = findings(tmp_path, source)
    assert shown == [] and exit_status([report]) == 0


def test_download_calls_block_unless_a_file_exists_test_guards_them(tmp_path, keras_home):
    shown, report = findings(tmp_path, """\
        import os
        import urllib.request
        from urllib.request import urlopen
        import tensorflow as tf

        urllib.request.urlretrieve("https://example.com/a.csv", "a.csv")
        page = urlopen("https://example.com/b.csv").read()
        path = tf.keras.utils.get_file("c.csv", origin="https://example.com/c.csv")

        def maybe_download(name):
            if not os.path.exists(name):
                urllib.request.urlretrieve("https://example.com/" + name, name)
            return name
    """)  # fmt: skip
    assert shown == [
        (6, "urllib.request.urlretrieve", "unsupported"),
        (7, "urllib.request.urlopen", "unsupported"),
        (8, "keras.utils.get_file", "unsupported"),
        (12, "urllib.request.urlretrieve", "caveat"),
    ]
    assert "fails when that code runs without network access" in report.findings[1].note
    assert "only where a file-exists test finds no file" in report.findings[-1].note

    (keras_home / "datasets" / "c.csv").write_text("x\n1\n")
    shown, _ = findings(
        tmp_path, "import tensorflow as tf\ntf.keras.utils.get_file('c.csv', 'u')\n"
    )
    assert shown == []  # get_file reads the cached copy


def test_gcs_paths_the_code_uses_block_and_flag_defaults_do_not(tmp_path):
    shown, report = findings(tmp_path, '''\
        """Reads gs://bucket/data when asked."""
        import argparse
        import os
        import re
        from absl import flags

        parser = argparse.ArgumentParser()
        parser.add_argument("--data", default="gs://bucket/train.csv", help="a gs:// path")
        flags.DEFINE_string("eval", "gs://bucket/eval.csv", "a gs://bucket path")
        DATA = os.getenv("DATA", "gs://bucket/data")

        def local(path):
            return path.startswith("gs://") or re.search("gs://(.*?)/(.*)", path)

        def paths(bucket, prefix):
            one = "gs://{}/preproc/{}*".format(bucket, prefix)
            two = f"gs://{bucket}/preproc/eval*"
            three = "gs://" + bucket + "/train*"
            four = "gs://fixed-bucket/model"
            return one, two, three, four
    ''')  # fmt: skip
    assert shown == [(i, "gs:// path", "unsupported") for i in (16, 17, 18, 19)]
    assert "needs network access and GCS credentials" in report.findings[0].note
    assert report.findings[0].replacement.startswith("a local path")


TPU_JOB = """\
import tensorflow as tf

FLAGS_TPU = ""
USE_TPU = False

def guarded():
    if USE_TPU:
        return tf.distribute.cluster_resolver.TPUClusterResolver(FLAGS_TPU)
    return None

def main():
    guarded()
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
        FLAGS_TPU if USE_TPU else "")
    print("RESOLVED", resolver)

main()
"""


def test_an_unconditional_tpu_resolver_blocks_where_no_tpu_is_visible(tmp_path, monkeypatch):
    for name in ("TPU_NAME", "COLAB_TPU_ADDR", "TPU_IP_ADDRESS", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS"):
        monkeypatch.delenv(name, raising=False)
    shown, report = findings(tmp_path, TPU_JOB)
    if glob.glob("/dev/accel*"):  # a TPU VM: the resolver finds its TPU
        assert shown == []
        return
    assert shown == [(13, "TPUClusterResolver", "unsupported")]  # not the guarded one
    assert "Please provide a TPU Name" in report.findings[-1].note
    assert "use_tpu=False" in report.findings[-1].replacement
    # run agrees: the unconditional resolver raises here.
    run = run_python("-m", "keras_estimator", "run", str(tmp_path / "job.py"))
    assert run.returncode == 1 and "Please provide a TPU Name" in run.stderr, run.stderr[-2000:]

    monkeypatch.setenv("TPU_NAME", "my-tpu")  # a named TPU: check cannot tell it is not there
    shown, _ = findings(tmp_path, TPU_JOB)
    assert shown == []
