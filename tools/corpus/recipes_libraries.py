"""Libraries built on tf.estimator, run through their own examples: TF-Ranking, DeepCTR and
AdaNet.

Each library is installed unmodified from PyPI (`Recipe.pip`: `pip install --no-deps
--target` into a side folder put on both sides' `PYTHONPATH`; their metadata pins an old
TensorFlow, hence no dependencies) and its examples come from the repository at the
release's commit. The data is ours: ELWC (ExampleListWithContext) TFRecords and LETOR lines
for TF-Ranking, criteo-like CSV and TFRecords for DeepCTR, Boston-housing-like arrays and
Fashion-MNIST idx files for AdaNet's tutorials.

DeepCTR's two estimator examples build a DeepFMEstimator; one recipe per model class of
`deepctr.estimator` runs the TFRecord example with that class instead (a `variant` edit,
applied in every case: the model a user of the library picks).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.corpus import datagen as g
from tools.corpus.datagen_docs import KERAS_CACHE
from tools.corpus.recipe import Edit, Recipe

# tensorflow/ranking at the 0.5.5 release ("Update dependency requirements for tensorflow
# and version", 2024-03-18): its tensorflow_ranking/ equals the 0.5.5 wheel's, file for file.
RANKING = ("tensorflow/ranking", "5b1d1338c1cb76507466d062e2d48bae57b17ac4")
RANKING_PIP = ("tensorflow-ranking==0.5.5", "tensorflow-serving-api==2.15.1")
DEEPCTR = ("shenweichen/DeepCTR", "694d6d9986d1ef3fca6e6d44eea0915114637744")  # tag v0.9.4
DEEPCTR_PIP = ("deepctr==0.9.4",)
# tensorflow/adanet at the 0.9.0 release ("AdaNet release 0.9.0."): its adanet/ equals the
# 0.9.0 wheel's, file for file (the wheel lacks the tests and testing_utils.py).
ADANET = ("tensorflow/adanet", "e524035ba6871809e2dbd28349c1574019f6fc57")
ADANET_PIP = ("adanet==0.9.0",)
# The pandas example's preprocessing and metrics (scikit-learn, and what it imports).
SKLEARN_PIP = ("scikit-learn==1.6.1", "scipy==1.15.3", "joblib==1.4.2", "threadpoolctl==3.5.0")

WORDS = tuple(f"w{i}" for i in range(40))


def _vocabulary(path: Path) -> None:
    g.text_file(path, list(WORDS))


def ranking_elwc(work: Path) -> None:
    """tf_ranking_tfrecord.py's features: query tokens (context), document tokens, a graded
    relevance and a document weight (examples); and the token vocabulary."""
    context = {"query_tokens": g.tokens(WORDS, 1, 5)}
    examples = {
        "document_tokens": g.tokens(WORDS, 1, 8),
        "relevance": g.ints(1, 0, 5),
        "doc_weight": g.floats(1, 0.5, 1.5),
    }
    g.elwc_file(work / "corpus_data/train.tfrecord", context, examples, rows=64, seed=1)
    g.elwc_file(work / "corpus_data/eval.tfrecord", context, examples, rows=32, seed=2)
    _vocabulary(work / "corpus_data/vocab.txt")


def ranking_libsvm(work: Path) -> None:
    for split, seed in (("train", 1), ("vali", 2), ("test", 3)):
        g.libsvm_ranking_file(work / f"corpus_data/{split}.txt", queries=24, seed=seed)


RANKING_FEATURES = 6


def ranking_numeric_elwc(work: Path) -> None:
    """The canned examples' features: custom_features_1..N and a graded `utility`."""
    examples: dict[str, g.Feature] = {
        f"custom_features_{i}": g.floats(1, -1, 1) for i in range(1, RANKING_FEATURES + 1)
    }
    examples["utility"] = g.ints(1, 0, 5)
    for split, seed in (("train", 1), ("vali", 2)):
        g.elwc_file(work / f"corpus_data/{split}.tfrecord", {}, examples, rows=64, seed=seed)


def ranking_notebook_data(work: Path) -> None:
    """handling_sparse_features.ipynb downloads the ANTIQUE ELWC files to /tmp (its `!wget`
    lines are dropped): ours, written there. Its model folder is removed, as its own
    `! rm -rf` does before training."""
    context = {"query_tokens": g.tokens(WORDS, 1, 5)}
    examples = {"document_tokens": g.tokens(WORDS, 1, 8), "relevance": g.ints(1, 0, 5)}
    g.elwc_file(Path("/tmp/train.tfrecords"), context, examples, rows=64, seed=1)
    g.elwc_file(Path("/tmp/test.tfrecords"), context, examples, rows=32, seed=2)
    _vocabulary(Path("/tmp/vocab.txt"))
    shutil.rmtree("/tmp/ranking_model_dir", ignore_errors=True)


def _tfrecord_recipe(name: str, kind: str, extra: tuple[str, ...] = ()) -> Recipe:
    return Recipe(
        name=name,
        repo=RANKING[0],
        commit=RANKING[1],
        folder="tensorflow_ranking/examples",
        entry="tf_ranking_tfrecord.py",
        args=(
            "--train_path=corpus_data/train.tfrecord",
            "--eval_path=corpus_data/eval.tfrecord",
            "--vocab_path=corpus_data/vocab.txt",
            "--model_dir={work}/model",
            "--data_format=example_list_with_context",
            "--weights_feature_name=doc_weight",
            "--num_train_steps=60",
            "--batch_size=8",
            "--hidden_layer_dims=16,8",
            "--dropout_rate=0.2",
            *extra,
        ),
        kind=kind,
        data=ranking_elwc,
        pip=RANKING_PIP,
        timeout=400,
    )


def _canned_recipe(name: str, entry: str, kind: str) -> Recipe:
    # tensorflow_ranking.extension.pipeline, which the canned examples import, is not in
    # the 0.5.5 wheel: they run from the repository's root, whose tensorflow_ranking (the
    # wheel's files and pipeline.py) comes first on the path.
    return Recipe(
        name=name,
        repo=RANKING[0],
        commit=RANKING[1],
        folder=".",
        entry=f"tensorflow_ranking/examples/{entry}",
        args=(
            "--train_input_pattern=corpus_data/train.tfrecord",
            "--eval_input_pattern=corpus_data/vali.tfrecord",
            "--model_dir={work}/model",
            f"--num_features={RANKING_FEATURES}",
            "--list_size=6",
            "--batch_size=8",
            "--num_train_steps=60",
            "--num_eval_steps=4",
            "--hidden_layer_dims=16,8",
        ),
        kind=kind,
        data=ranking_numeric_elwc,
        pip=RANKING_PIP,
        pythonpath=(".",),
        timeout=400,
    )


RANKING_RECIPES: list[Recipe] = [
    _tfrecord_recipe(
        "tfr-tfrecord-elwc",
        "TF-Ranking: make_groupwise_ranking_fn + ranking head in an Estimator, ELWC "
        "TFRecords, vocabulary embeddings, train_and_evaluate + LatestExporter",
    ),
    _tfrecord_recipe(
        "tfr-tfrecord-din",
        "TF-Ranking: as tfr-tfrecord-elwc with tfr.keras DocumentInteractionAttention "
        "(Keras layers in the model_fn), listwise serving export",
        ("--use_document_interaction=True", "--listwise_inference=True"),
    ),
    Recipe(
        name="tfr-libsvm",
        repo=RANKING[0],
        commit=RANKING[1],
        folder="tensorflow_ranking/examples",
        entry="tf_ranking_libsvm.py",
        args=(
            "--train_path=corpus_data/train.txt",
            "--vali_path=corpus_data/vali.txt",
            "--test_path=corpus_data/test.txt",
            "--output_dir={work}/model",
            "--num_features=8",
            "--list_size=6",
            "--train_batch_size=8",
            "--num_train_steps=60",
            "--hidden_layer_dims=16,8",
        ),
        kind="TF-Ranking: groupwise ranking Estimator on LETOR numpy arrays, iterator-"
        "initializer hook, pairwise loss, LatestExporter, final evaluate",
        data=ranking_libsvm,
        pip=RANKING_PIP,
        timeout=400,
    ),
    Recipe(
        name="tfr-libsvm-multihead",
        repo=RANKING[0],
        commit=RANKING[1],
        folder="tensorflow_ranking/examples",
        entry="tf_ranking_libsvm.py",
        args=(
            "--train_path=corpus_data/train.txt",
            "--vali_path=corpus_data/vali.txt",
            "--test_path=corpus_data/test.txt",
            "--output_dir={work}/model",
            "--num_features=8",
            "--list_size=6",
            "--train_batch_size=8",
            "--num_train_steps=60",
            "--hidden_layer_dims=16,8",
            "--secondary_loss=sigmoid_cross_entropy_loss",
        ),
        kind="TF-Ranking: as tfr-libsvm with create_multi_ranking_head (two heads, "
        "multi-objective)",
        data=ranking_libsvm,
        pip=RANKING_PIP,
        timeout=400,
    ),
    _canned_recipe(
        "tfr-canned-dnn",
        "tf_ranking_canned_dnn.py",
        "TF-Ranking: tfr.estimator.make_dnn_ranking_estimator + extension RankingPipeline "
        "(train_and_evaluate, exporters), numeric ELWC",
    ),
    _canned_recipe(
        "tfr-canned-gam",
        "tf_ranking_canned_gam.py",
        "TF-Ranking: tfr.estimator.make_gam_ranking_estimator (neural GAM) + RankingPipeline",
    ),
    Recipe(
        name="tfr-sparse-features-notebook",
        repo=RANKING[0],
        commit=RANKING[1],
        folder="tensorflow_ranking/examples",
        entry="handling_sparse_features.ipynb",
        kind="TF-Ranking notebook: ELWC protos built with tensorflow_serving's input_pb2, "
        "tf.estimator.Estimator over make_groupwise_ranking_fn, train_and_evaluate, predict",
        data=ranking_notebook_data,
        pip=RANKING_PIP,
        variant=(
            # The notebook's 15000 steps, and a model folder inside the work copy.
            Edit(
                "handling_sparse_features.ipynb",
                "_NUM_TRAIN_STEPS = 15 * 1000",
                "_NUM_TRAIN_STEPS = 60",
            ),
            Edit(
                "handling_sparse_features.ipynb",
                '_MODEL_DIR = "/tmp/ranking_model_dir"',
                '_MODEL_DIR = "ranking_model_dir"',
            ),
            Edit("handling_sparse_features.ipynb", "_LIST_SIZE = 50", "_LIST_SIZE = 6"),
        ),
        timeout=400,
        note="the step count, model folder and list size are variant edits (every case)",
    ),
]

CRITEO_SPARSE = tuple(f"C{i}" for i in range(1, 27))
CRITEO_DENSE = tuple(f"I{i}" for i in range(1, 14))


def criteo_tfrecords(work: Path) -> None:
    """run_estimator_tfrecord_classification.py's inputs: C1..C26 ids below its 1000
    buckets, I1..I13 in [0, 1), a 0/1 label (float), one value each."""
    features: dict[str, g.Feature] = {name: g.ints(1, 0, 50) for name in CRITEO_SPARSE}
    features.update({name: g.floats(1) for name in CRITEO_DENSE})
    features["label"] = lambda rng: ("float", [float(rng.integers(0, 2))])
    g.tfrecord_file(work / "criteo_sample.tr.tfrecords", features, rows=2048, seed=1)
    g.tfrecord_file(work / "criteo_sample.te.tfrecords", features, rows=256, seed=2)


def criteo_csv(work: Path) -> None:
    """run_estimator_pandas_classification.py's criteo_sample.txt: label, I1..I13 (counts,
    some missing), C1..C26 (hex ids, some missing)."""
    columns: dict[str, g.Column] = {"label": g.integer(0, 2)}
    columns.update({name: g.choice(["", "0", "1", "3", "12", "150"]) for name in CRITEO_DENSE})
    hex_ids = ["", "05db9164", "68fd1e64", "8cf07265", "be589b51", "5a9ed9b0", "287130e0"]
    columns.update({name: g.choice(hex_ids) for name in CRITEO_SPARSE})
    g.csv_file(work / "criteo_sample.txt", columns, rows=400, seed=1)


DEEPCTR_MODELS = (
    "DeepFM", "WDL", "DCN", "AutoInt", "FiBiNET", "AFM", "NFM", "PNN", "CCPM", "FNN",
    "xDeepFM", "DeepFEFM", "FwFM",
)  # fmt: skip
TFRECORD_EXAMPLE = "run_estimator_tfrecord_classification.py"


def _deepctr_model(model: str) -> Recipe:
    variant: tuple[Edit, ...] = ()
    if model != "DeepFM":
        build = "model = DeepFMEstimator(linear_feature_columns, dnn_feature_columns,"
        columns = (
            "dnn_feature_columns"
            if model == "PNN"
            else "linear_feature_columns, dnn_feature_columns"
        )
        variant = (
            Edit(
                TFRECORD_EXAMPLE,
                "from deepctr.estimator import DeepFMEstimator",
                f"from deepctr.estimator import {model}Estimator",
            ),
            Edit(TFRECORD_EXAMPLE, build, f"model = {model}Estimator({columns},"),
        )
    return Recipe(
        name=f"deepctr-{model.lower()}",
        repo=DEEPCTR[0],
        commit=DEEPCTR[1],
        folder="examples",
        entry=TFRECORD_EXAMPLE,
        kind=f"DeepCTR {model}Estimator: Keras layers in a canned-style model_fn (deepctr's "
        "own head), feature columns, TFRecords, train + evaluate",
        data=criteo_tfrecords,
        pip=DEEPCTR_PIP,
        variant=variant,
        timeout=400,
    )


DEEPCTR_RECIPES: list[Recipe] = [
    *(_deepctr_model(model) for model in DEEPCTR_MODELS),
    Recipe(
        name="deepctr-deepfm-pandas",
        repo=DEEPCTR[0],
        commit=DEEPCTR[1],
        folder="examples",
        entry="run_estimator_pandas_classification.py",
        kind="DeepCTR DeepFMEstimator: pandas input_fn, scikit-learn preprocessing, train + "
        "predict (prints LogLoss/AUC)",
        data=criteo_csv,
        pip=DEEPCTR_PIP + SKLEARN_PIP,
        timeout=400,
    ),
]


def adanet_boston(work: Path) -> None:
    """adanet_objective.ipynb loads Boston housing (a download whose hash Keras checks, so
    the cache cannot stand in): our loader module, which a variant edit imports. And the
    alias of TensorFlow's old tracking module that 2.15 needs (`ADANET_TRACKING`)."""
    g.module_file(work / "corpus_boston.py", g.BOSTON_LOADER)
    g.module_file(work / "corpus_tracking.py", g.TRACKING_ALIAS)


def adanet_fashion_mnist(work: Path) -> None:
    """Fashion-MNIST's four idx files (tiny random images) in the run's Keras cache, where
    `fashion_mnist.load_data()` takes them (no checksum) on both sides: no edit. And the
    tracking alias."""
    g.mnist_idx_files(work / KERAS_CACHE / "datasets/fashion-mnist", train=512, test=128)
    g.module_file(work / "corpus_tracking.py", g.TRACKING_ALIAS)


def adanet_tracking(notebook: str) -> Edit:
    """What 2.15 needs for AdaNet 0.9.0: adanet/core/estimator.py imports
    `tensorflow.python.training.tracking.graph_view` in every model_fn call, a module TF 2.11
    moved to `tensorflow.python.checkpoint`; our alias (datagen.TRACKING_ALIAS) first."""
    return Edit(
        notebook,
        "import adanet\n",
        "import corpus_tracking  # corpus: TF 2.11 moved what adanet imports\nimport adanet\n",
    )


TUTORIALS = "adanet/examples/tutorials"


def _colab_cells(notebook: str, log_dir: str) -> tuple[Edit, ...]:
    """The TensorBoard-through-ngrok cell (`get_ipython()`, a shell line continued onto the
    next one) goes; `/tmp/models`, shared by every run, becomes a folder of the work copy."""
    edits = [
        Edit(
            notebook,
            f"get_ipython().system_raw(\n    'tensorboard --logdir {{}} --host 0.0.0.0 --port "
            f"6006 &'\n    .format({log_dir})\n)",
            "pass  # corpus: no TensorBoard",
        ),
        Edit(notebook, "get_ipython().system_raw('./ngrok http 6006 &')", "pass"),
        Edit(
            notebook,
            "\n    \"import sys, json; print(json.load(sys.stdin)['tunnels'][0]['public_url'])\"",
            "",
        ),
    ]
    if log_dir == "LOG_DIR":
        edits.append(Edit(notebook, "LOG_DIR = '/tmp/models'", "LOG_DIR = 'models'"))
    return tuple(edits)


ADANET_OBJECTIVE = "adanet_objective.ipynb"
CUSTOMIZING = "customizing_adanet.ipynb"
ADANET_TPU = "adanet_tpu.ipynb"

ADANET_RECIPES: list[Recipe] = [
    Recipe(
        name="adanet-objective",
        repo=ADANET[0],
        commit=ADANET[1],
        folder=TUTORIALS,
        entry=ADANET_OBJECTIVE,
        kind="AdaNet tutorial: adanet.Estimator (subnetwork Builder/Generator of tf.layers, "
        "ComplexityRegularizedEnsembler, learned mixture weights), RegressionHead, "
        "train_and_evaluate, three runs",
        data=adanet_boston,
        pip=ADANET_PIP,
        variant=(
            Edit(
                ADANET_OBJECTIVE,
                "    tf.keras.datasets.boston_housing.load_data())",
                "    __import__('corpus_boston').load_data())  # corpus: no download",
            ),
            Edit(
                ADANET_OBJECTIVE,
                'TRAIN_STEPS = 60000  #@param {type:"integer"}',
                'TRAIN_STEPS = 300  #@param {type:"integer"}',
            ),
            *_colab_cells(ADANET_OBJECTIVE, "LOG_DIR"),
        ),
        edits=(adanet_tracking(ADANET_OBJECTIVE),),
        timeout=600,
        note="the data loader, step count, model folder and the Colab TensorBoard cell are "
        "variant edits (every case)",
    ),
    Recipe(
        name="adanet-customizing",
        repo=ADANET[0],
        commit=ADANET[1],
        folder=TUTORIALS,
        entry=CUSTOMIZING,
        kind="AdaNet tutorial: LinearClassifier baseline, adanet.Estimator with "
        "adanet.examples.simple_dnn (feature columns), a Keras-layers CNN Builder with "
        "cosine decay, train_and_evaluate, predict",
        data=adanet_fashion_mnist,
        pip=ADANET_PIP,
        variant=(
            Edit(
                CUSTOMIZING,
                'TRAIN_STEPS = 5000  #@param {type:"integer"}',
                'TRAIN_STEPS = 200  #@param {type:"integer"}',
            ),
            *_colab_cells(CUSTOMIZING, "LOG_DIR"),
        ),
        edits=(adanet_tracking(CUSTOMIZING),),
        timeout=900,
        note="the step counts (three cells), model folder and the Colab TensorBoard cell are "
        "variant edits (every case)",
    ),
    Recipe(
        name="adanet-tpu",
        repo=ADANET[0],
        commit=ADANET[1],
        folder=TUTORIALS,
        entry=ADANET_TPU,
        kind="AdaNet tutorial: adanet.TPUEstimator (use_tpu off), tf.contrib.tpu RunConfig "
        "and TPUConfig, contrib multi_class_head, Keras-layers CNN Builder",
        data=adanet_fashion_mnist,
        pip=ADANET_PIP,
        variant=(
            Edit(ADANET_TPU, "from google.colab import auth\n", ""),
            Edit(
                ADANET_TPU,
                "MODEL_DIR = 'gs://{}/{}'.format(",
                "MODEL_DIR = 'model/{}/{}'.format(",
            ),
            Edit(ADANET_TPU, "use_tpu=True,", "use_tpu=False,"),
            # Off TPU its cross-replica sum has no kernel (2.15 fails on it): not wrapped.
            Edit(
                ADANET_TPU,
                "    optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)\n",
                "",
            ),
            Edit(
                ADANET_TPU,
                'TRAIN_STEPS = 1000  #@param {type:"integer"}',
                'TRAIN_STEPS = 40  #@param {type:"integer"}',
            ),
            Edit(
                ADANET_TPU,
                'BATCH_SIZE = 512  #@param {type:"integer"}',
                'BATCH_SIZE = 64  #@param {type:"integer"}',
            ),
            *_colab_cells(ADANET_TPU, "MODEL_DIR"),
        ),
        edits=(
            adanet_tracking(ADANET_TPU),
            Edit(ADANET_TPU, "tf.contrib.tpu.RunConfig", "tf.estimator.tpu.RunConfig"),
            Edit(ADANET_TPU, "tf.contrib.tpu.TPUConfig", "tf.estimator.tpu.TPUConfig"),
            # The v2 head takes the v2 reduction names (SUM_OVER_BATCH_SIZE).
            Edit(
                ADANET_TPU,
                "tf.contrib.estimator.multi_class_head(\n"
                "    n_classes=10, loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)",
                "tf.estimator.MultiClassHead(\n"
                "    n_classes=10,\n"
                "    loss_reduction=tf.compat.v2.losses.Reduction.SUM_OVER_BATCH_SIZE)",
            ),
        ),
        timeout=600,
        note="no TPU and no Colab: use_tpu, the CrossShardOptimizer wrap, the gs:// model "
        "folder, the colab import, the steps and batch size are variant edits; the tf.contrib "
        "names are 2.15's edits",
    ),
]

LIBRARIES: list[Recipe] = RANKING_RECIPES + DEEPCTR_RECIPES + ADANET_RECIPES
