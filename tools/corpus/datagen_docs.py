"""Tiny local stand-ins for the datasets TensorFlow's estimator guides download (ours, seeded).

The guides fetch Iris and Titanic CSV files (`tf.keras.utils.get_file`, pandas `read_csv` of
a URL), MNIST (`tf.keras.datasets.mnist`, `tfds.load`), Iris and cats_vs_dogs through
TensorFlow Datasets, and ImageNet weights for MobileNetV2. What `get_file` fetches without a
checksum is written into the run's Keras cache (`$HOME/.keras`, HOME being the work copy's
`.home`), where both Keras 2.15 and Keras 3 take it without a download, so those notebooks
need no edit at all. The rest are small modules of ours (`corpus_tfds`, `corpus_mnist`) that
a data-only `variant` edit imports in place of the download.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tools.corpus import datagen as g

KERAS_CACHE = ".home/.keras"

TITANIC_COLUMNS = (
    "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone"
).split(",")


def titanic_csv(path: Path, rows: int, seed: int) -> Path:
    """Titanic-format rows (the columns of tf-datasets/titanic/*.csv); survival follows sex
    and class, so the guides' linear models have something to learn."""
    rng = np.random.default_rng(seed)
    lines = [",".join(TITANIC_COLUMNS)]
    for _ in range(rows):
        sex = "female" if rng.uniform() < 0.35 else "male"
        klass = ("First", "Second", "Third")[int(rng.choice(3, p=(0.25, 0.2, 0.55)))]
        chance = (0.75 if sex == "female" else 0.2) + (0.15 if klass == "First" else 0.0)
        siblings, parch = int(rng.integers(0, 4)), int(rng.integers(0, 3))
        fields = (
            int(rng.uniform() < chance),
            sex,
            round(float(rng.uniform(1, 70)), 1),
            siblings,
            parch,
            round(float(rng.uniform(5, 90)), 4),
            klass,
            ("unknown", "A", "B", "C", "D", "E", "F")[int(rng.integers(7))],
            ("Southampton", "Cherbourg", "Queenstown", "unknown")[int(rng.integers(4))],
            "y" if siblings + parch == 0 else "n",
        )
        lines.append(",".join(str(f) for f in fields))
    return g.text_file(path, lines)


def iris_csv(path: Path, rows: int, seed: int) -> Path:
    """Iris in the download.tensorflow.org layout: a `rows,4,names...` first line, then four
    measurements and the class id (0-2); the measurements depend on the class."""
    rng = np.random.default_rng(seed)
    centres = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
    lines = [f"{rows},4,setosa,versicolor,virginica"]
    for _ in range(rows):
        label = int(rng.integers(3))
        values = centres[label] + rng.normal(0, 0.3, 4)
        lines.append(",".join(f"{v:.1f}" for v in values) + f",{label}")
    return g.text_file(path, lines)


def titanic_files(folder: Path) -> None:
    """train.csv (160 rows) and eval.csv (64 rows)."""
    titanic_csv(folder / "train.csv", 160, seed=0)
    titanic_csv(folder / "eval.csv", 64, seed=1)


def keras_cache_titanic(work: Path) -> None:
    """train.csv where `get_file("train.csv", <titanic URL>)` looks first."""
    titanic_files(work / KERAS_CACHE / "datasets")


def keras_cache_iris(work: Path) -> None:
    """iris_training.csv / iris_test.csv where `get_file` looks first."""
    iris_csv(work / KERAS_CACHE / "datasets/iris_training.csv", 120, seed=0)
    iris_csv(work / KERAS_CACHE / "datasets/iris_test.csv", 30, seed=1)


def mobilenet_v2_weights(work: Path, size: int = 160) -> None:
    """Random (not ImageNet) MobileNetV2 no-top weights in the legacy HDF5 layout, under
    the name and cache folder `applications.MobileNetV2(weights="imagenet")` downloads to
    (no checksum there), so the guide builds its model without a download on both sides."""
    import h5py
    import keras
    from keras.src.legacy.saving import legacy_h5_format

    name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_{size}_no_top.h5"
    path = work / KERAS_CACHE / "models" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(
        input_shape=(size, size, 3), include_top=False, weights=None
    )
    with h5py.File(path, "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, model)
    keras.backend.clear_session()


TFDS_STANDIN = '''
"""Corpus stand-in for tensorflow_datasets.load (not installed on either side, and the runs
have no network): tiny seeded iris / mnist / cats_vs_dogs with tfds' splits and feature
names, as tf.data Datasets."""
import types

import numpy as np
import tensorflow as tf


class Split:
    TRAIN = "train"
    TEST = "test"
    VALIDATION = "validation"


def _iris(split, rng):
    n = 120 if split == "train" else 30
    labels = rng.integers(0, 3, n)
    centres = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
    features = (centres[labels] + rng.normal(0, 0.3, (n, 4))).astype(np.float32)
    return {"features": features, "label": labels.astype(np.int64)}


def _mnist(split, rng):
    n = 256 if split == "train" else 128
    images = rng.integers(0, 256, (n, 28, 28, 1)) * (rng.uniform(0, 1, (n, 28, 28, 1)) < 0.15)
    return {"image": images.astype(np.uint8), "label": rng.integers(0, 10, n).astype(np.int64)}


def _cats_vs_dogs(split, rng):
    n = 64
    images = rng.integers(0, 256, (n, 64, 64, 3)).astype(np.uint8)
    return {"image": images, "label": rng.integers(0, 2, n).astype(np.int64)}


_BUILDERS = {"iris": (_iris, ("train",)), "mnist": (_mnist, ("train", "test")),
             "cats_vs_dogs": (_cats_vs_dogs, ("train",))}
_KEYS = {"iris": "features", "mnist": "image", "cats_vs_dogs": "image"}


def _dataset(name, split, as_supervised):
    make, splits = _BUILDERS[name]
    if split not in splits:
        raise ValueError(f"corpus_tfds: {name} has no split {split!r} (it has {splits})")
    arrays = make(split, np.random.default_rng(len(split) + len(name)))
    if as_supervised:
        return tf.data.Dataset.from_tensor_slices((arrays[_KEYS[name]], arrays["label"]))
    return tf.data.Dataset.from_tensor_slices(arrays)


def load(name, split=None, as_supervised=False, with_info=False, **kwargs):
    name = name.split(":")[0]
    if name not in _BUILDERS:
        raise ValueError(f"corpus_tfds: no stand-in for {name!r}")
    if split is None:
        result = {s: _dataset(name, s, as_supervised) for s in _BUILDERS[name][1]}
    elif isinstance(split, (list, tuple)):
        result = [_dataset(name, s, as_supervised) for s in split]
    else:
        result = _dataset(name, split, as_supervised)
    if not with_info:
        return result
    make = _BUILDERS[name][0]
    rng = np.random.default_rng(0)
    splits = {s: types.SimpleNamespace(num_examples=len(make(s, rng)["label"]))
              for s in _BUILDERS[name][1]}
    return result, types.SimpleNamespace(name=name, splits=splits)
'''


def tfds_standin(work: Path) -> None:
    g.module_file(work / "corpus_tfds.py", TFDS_STANDIN)


def mnist_standin(work: Path) -> None:
    """`corpus_mnist.load_data()`, like `tf.keras.datasets.mnist.load_data()` (whose download
    Keras checks against a checksum, so the cache cannot hold a stand-in)."""
    g.module_file(work / "corpus_mnist.py", g.MNIST_LOADER)


def premade(work: Path) -> None:
    keras_cache_iris(work)


def linear(work: Path) -> None:
    titanic_files(work / "titanic")


def estimator_guide(work: Path) -> None:
    keras_cache_titanic(work)
    mobilenet_v2_weights(work)
    tfds_standin(work)


def canned_estimators(work: Path) -> None:
    titanic_files(work / "titanic")
