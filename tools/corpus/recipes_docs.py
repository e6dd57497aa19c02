"""TensorFlow's own estimator guides (tensorflow/docs): every notebook there that runs
`tf.estimator` / `tf.compat.v1.estimator`, its code cells run as one script.

The notebooks run unmodified but for their downloads, which get tiny local stand-ins of ours
(datagen_docs.py): files `tf.keras.utils.get_file` finds in the run's Keras cache (no edit),
else a data-only `variant` (applied in every case) pointing at a local CSV or importing
`corpus_tfds` / `corpus_mnist`. `!pip` and `%` lines are neutralised by the runner.

The migration guides (site/en/guide/migrate) set a TF1 half (Estimator) beside a TF2 half
(Keras 2's `model.fit`, `tf.keras.optimizers.legacy`, TF-DF, portpicker servers); the corpus
runs the TF1 half: a `variant` stops the script where the TF2 half begins (`stop_before`) or
turns a TF2 cell between two TF1 cells into a string (`skip_between`). Two other variants
move an absolute `/tmp/...` model_dir into the work copy (runs of one case must not resume
from another's checkpoints).

Not added: site/en/guide/migrate/tf1_vs_tf2.ipynb and upgrade.ipynb name tf.estimator only
in prose and shell lines (`tf_upgrade_v2` on a clone of tensorflow/models).
"""

from __future__ import annotations

from tools.corpus import datagen_docs as d
from tools.corpus.recipe import Edit, Recipe

DOCS_REPO = "tensorflow/docs"
DOCS_COMMIT = "7c3650212740204359d4ceae481abc79345541be"  # 2026-03-11

MIGRATE = "site/en/guide/migrate"
TITANIC = "https://storage.googleapis.com/tf-datasets/titanic/"
MNIST_STANDIN = "import corpus_mnist as mnist  # corpus: local stand-in for the download"
TFDS_STANDIN = "import corpus_tfds as tfds  # corpus: local stand-in for tfds downloads"


def stop_before(notebook: str, anchor: str) -> Edit:
    """Ends the script where `anchor` (the first line of the TF2 half) first occurs."""
    stop = "raise SystemExit  # corpus: the TF 2 half is not run\n"
    return Edit(notebook, anchor, stop + anchor)


def skip_between(notebook: str, after: str, through: str) -> tuple[Edit, Edit]:
    """Turns the code after `after` (the last line of a TF1 cell) through `through` (the last
    line of the TF2 cell that follows) into a string; both anchors occur once."""
    return (
        Edit(notebook, after, after + "\n_corpus_tf2_cell_not_run = r'''"),
        Edit(notebook, through, through + "\n'''"),
    )


def tfds_variant(notebook: str) -> Edit:
    return Edit(notebook, "import tensorflow_datasets as tfds", TFDS_STANDIN)


def mnist_variant(notebook: str) -> Edit:
    return Edit(notebook, "mnist = tf.keras.datasets.mnist", MNIST_STANDIN)


def titanic_variant(notebook: str) -> tuple[Edit, Edit]:
    """pandas `read_csv` of the Titanic URLs -> the local copies."""
    return (
        Edit(notebook, f"'{TITANIC}train.csv'", "'titanic/train.csv'"),
        Edit(notebook, f"'{TITANIC}eval.csv'", "'titanic/eval.csv'"),
    )


def _docs(name: str, folder: str, entry: str, kind: str, **fields: object) -> Recipe:
    return Recipe(
        name=name,
        repo=DOCS_REPO,
        commit=DOCS_COMMIT,
        folder=folder,
        entry=entry,
        kind=kind,
        **fields,  # type: ignore[arg-type]
    )


_CANNED = "canned_estimators.ipynb"
_TPU = "tpu_estimator.ipynb"

DOCS: list[Recipe] = [
    _docs(
        "docs-premade",
        "site/en/tutorials/estimator",
        "premade.ipynb",
        "canned DNNClassifier on Iris (get_file CSV, pandas), train 5000 steps, evaluate, predict",
        data=d.premade,
        note="Iris CSVs in the Keras cache: no edit",
    ),
    _docs(
        "docs-linear",
        "site/en/tutorials/estimator",
        "linear.ipynb",
        "canned LinearClassifier on Titanic (pandas), vocabulary + crossed columns, "
        "DenseFeatures, predict, sklearn ROC",
        data=d.linear,
        variant=titanic_variant("linear.ipynb"),
        pip=("scikit-learn==1.6.1", "scipy==1.15.3", "joblib==1.4.2", "threadpoolctl==3.5.0"),
        note="Titanic URLs -> local CSVs; scikit-learn for the notebook's last cell",
    ),
    _docs(
        "docs-keras-model-to-estimator",
        "site/en/tutorials/estimator",
        "keras_model_to_estimator.ipynb",
        "tf.keras.estimator.model_to_estimator (Sequential, 'dense_input'), tfds Iris",
        data=d.tfds_standin,
        variant=(tfds_variant("keras_model_to_estimator.ipynb"),),
        note="tfds.load('iris') -> corpus_tfds",
    ),
    _docs(
        "docs-estimator-guide",
        "site/en/guide",
        "estimator.ipynb",
        "guide: LinearClassifier (make_csv_dataset), model_to_estimator MobileNetV2, "
        "object-based checkpoints in a model_fn, export_saved_model, MirroredStrategy",
        data=d.estimator_guide,
        variant=(tfds_variant("estimator.ipynb"),),
        note="Titanic CSV and (random) MobileNetV2 weights in the Keras cache; "
        "tfds.load('cats_vs_dogs') -> corpus_tfds",
    ),
    _docs(
        "docs-migrate-estimator",
        MIGRATE,
        "migrating_estimator.ipynb",
        "migrate guide TF1 half: custom model_fn, tf1.layers, Adagrad, train + evaluate",
        variant=(
            stop_before(
                "migrating_estimator.ipynb",
                "dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)",
            ),
        ),
    ),
    _docs(
        "docs-migrate-canned-estimators",
        MIGRATE,
        _CANNED,
        "migrate guide TF1 half: Linear/DNN/DNNLinearCombined Estimator + BinaryClassHead, "
        "Keras legacy Ftrl with tf1 exponential_decay",
        data=d.canned_estimators,
        variant=(
            *titanic_variant(_CANNED),
            Edit(_CANNED, "import tensorflow_decision_forests as tfdf\n", ""),
            *skip_between(
                _CANNED,
                "linear_estimator.evaluate(input_fn=_eval_input_fn, steps=10)",
                "linear_model.evaluate(x_eval, y_eval, return_dict=True)",
            ),
            *skip_between(
                _CANNED,
                "dnn_estimator.evaluate(input_fn=_eval_input_fn, steps=10)",
                "dnn_model.evaluate(x_eval, y_eval, return_dict=True)",
            ),
            stop_before(_CANNED, "optimizer = create_sample_optimizer('tf2')"),
        ),
        # The guide recodes a column with a chained `replace(..., inplace=True)`, which
        # pandas 3 (copy on write) no longer writes back: the column stays strings and the
        # numeric column's Cast fails, on any estimator. It runs with the pandas 2 the
        # 2.15 venv has.
        pip=("pandas>=2.2,<3", "pytz"),
        note="Titanic URLs -> local CSVs; the TF-DF import belongs to the TF2 half; pandas 2 "
        "(its chained inplace replace does nothing on pandas 3)",
    ),
    _docs(
        "docs-migrate-checkpoint-saver",
        MIGRATE,
        "checkpoint_saver.ipynb",
        "migrate guide TF1 half: DNNClassifier, save_checkpoints_steps=1, numpy_input_fn, "
        "train_and_evaluate",
        data=d.mnist_standin,
        variant=(
            mnist_variant("checkpoint_saver.ipynb"),
            stop_before("checkpoint_saver.ipynb", "def create_model():"),
        ),
    ),
    _docs(
        "docs-migrate-early-stopping",
        MIGRATE,
        "early_stopping.ipynb",
        "migrate guide TF1 half: make_early_stopping_hook (20 s), train_and_evaluate, tfds MNIST",
        data=d.tfds_standin,
        variant=(
            tfds_variant("early_stopping.ipynb"),
            stop_before("early_stopping.ipynb", "(ds_train, ds_test), ds_info = tfds.load("),
        ),
    ),
    _docs(
        "docs-migrate-evaluator",
        MIGRATE,
        "evaluator.ipynb",
        "migrate guide TF1 half: DNNClassifier, numpy_input_fn, train_and_evaluate",
        data=d.mnist_standin,
        variant=(
            mnist_variant("evaluator.ipynb"),
            stop_before("evaluator.ipynb", "def create_model():"),
        ),
    ),
    _docs(
        "docs-migrate-fault-tolerance",
        MIGRATE,
        "fault_tolerance.ipynb",
        "migrate guide TF1 half: SessionRunHook interrupting train, resume from model_dir",
        data=d.mnist_standin,
        variant=(
            mnist_variant("fault_tolerance.ipynb"),
            stop_before("fault_tolerance.ipynb", "class InterruptAtEpoch("),
        ),
    ),
    _docs(
        "docs-migrate-logging-stop-hook",
        MIGRATE,
        "logging_stop_hook.ipynb",
        "migrate guide TF1 half: StopAtStepHook + LoggingTensorHook as training_hooks",
        variant=(stop_before("logging_stop_hook.ipynb", "class StopAtStepCallback("),),
    ),
    _docs(
        "docs-migrate-metrics-optimizers",
        MIGRATE,
        "metrics_optimizers.ipynb",
        "migrate guide TF1 half: tf1.metrics.accuracy eval_metric_ops, estimator add_metrics",
        variant=(
            stop_before(
                "metrics_optimizers.ipynb",
                "dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)",
            ),
        ),
    ),
    _docs(
        "docs-migrate-checkpoints",
        MIGRATE,
        "migrating_checkpoints.ipynb",
        "migrate guide (whole): TF1 Saver / TF2 Checkpoint, Estimator with a Checkpoint as "
        "Scaffold saver, warm_start_from a TF1 checkpoint",
    ),
    _docs(
        "docs-migrate-feature-columns",
        MIGRATE,
        "migrating_feature_columns.ipynb",
        "migrate guide: tf1 feature columns through DenseFeatures, DNNClassifier "
        "train + predict, Keras preprocessing layers",
        variant=(
            *skip_between(
                "migrating_feature_columns.ipynb",
                "call_feature_columns(columns, input_dict)",
                "model(input_dict)",
            ),
            # Its TF2 half (Keras preprocessing layers after the estimator) is not run: Keras
            # 3 takes no TensorFlow op on a KerasTensor (tf.expand_dims(inputs['weight'])).
            Edit(
                "migrating_feature_columns.ipynb",
                "next(estimator.predict(_predict_fn))",
                "next(estimator.predict(_predict_fn))\n"
                "raise SystemExit  # corpus: the TF 2 half is not run",
            ),
        ),
        note="TF2 cells not run: Keras 3 takes no dict_values in Concatenate(), no TF op on "
        "a KerasTensor",
    ),
    _docs(
        "docs-migrate-debugging",
        MIGRATE,
        "migration_debugging.ipynb",
        "migrate guide TF1 half: an estimator-style model_fn (EstimatorSpec) run in a "
        "tf1 Session under DeterministicRandomTestTool",
        variant=(stop_before("migration_debugging.ipynb", "class SimpleModel(tf.keras.Model):"),),
    ),
    _docs(
        "docs-migrate-mirrored-strategy",
        MIGRATE,
        "mirrored_strategy.ipynb",
        "migrate guide TF1 half: tf1 MirroredStrategy in RunConfig, train_and_evaluate",
        variant=(
            stop_before(
                "mirrored_strategy.ipynb",
                "dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)",
            ),
        ),
    ),
    _docs(
        "docs-migrate-multi-worker",
        MIGRATE,
        "multi_worker_cpu_gpu_training.ipynb",
        "migrate guide TF1 half: TF_CONFIG set and removed, train_and_evaluate",
        variant=(stop_before("multi_worker_cpu_gpu_training.ipynb", "import portpicker"),),
    ),
    _docs(
        "docs-migrate-saved-model",
        MIGRATE,
        "saved_model.ipynb",
        "migrate guide TF1 half: SavedModelBuilder, simple_save, Estimator "
        "export_saved_model with PredictOutput, tf.Module save",
        variant=(
            # The runner comments out `!saved_model_cli ... \` but not its continuation line.
            Edit(
                "saved_model.ipynb",
                "\n --signature_def serving_default",
                "\n# --signature_def serving_default",
            ),
            stop_before("saved_model.ipynb", "inp = tf.keras.Input(3)"),
        ),
    ),
    _docs(
        "docs-migrate-sessionrunhook",
        MIGRATE,
        "sessionrunhook_callback.ipynb",
        "migrate guide TF1 half: a custom SessionRunHook passed to train",
        variant=(stop_before("sessionrunhook_callback.ipynb", "class CustomCallback("),),
    ),
    _docs(
        "docs-migrate-tensorboard",
        MIGRATE,
        "tensorboard.ipynb",
        "migrate guide TF1 half: DNNClassifier summaries every step, train_and_evaluate",
        data=d.mnist_standin,
        variant=(
            mnist_variant("tensorboard.ipynb"),
            stop_before("tensorboard.ipynb", "def create_model():"),
        ),
    ),
    _docs(
        "docs-migrate-tpu-estimator",
        MIGRATE,
        _TPU,
        "migrate guide TF1 half: TPUEstimator + TPUEstimatorSpec (use_tpu off), params",
        variant=(
            stop_before(
                _TPU, "cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver"
            ),
        ),
        edits=(
            Edit(
                _TPU,
                "cluster_resolver = tf1.distribute.cluster_resolver.TPUClusterResolver(tpu='')",
                "cluster_resolver = None  # corpus: no TPU",
            ),
            Edit(
                _TPU,
                "    train_batch_size=8,",
                "    use_tpu=False,  # corpus\n    train_batch_size=8,",
            ),
        ),
        note="needs a TPU as written (2.15 raises too); edits: no resolver, use_tpu=False",
    ),
    _docs(
        "docs-migrate-tpu-embedding",
        MIGRATE,
        "tpu_embedding.ipynb",
        "TPUEstimator with EmbeddingConfigSpec (probe: needs tensorflow_recommenders, a TPU)",
        note="probe: tensorflow_recommenders is installed on neither side, and it needs a TPU",
    ),
    _docs(
        "docs-multi-worker-with-estimator",
        "site/en/tutorials/distribute",
        "multi_worker_with_estimator.ipynb",
        "MultiWorkerMirroredStrategy (one worker), graph mode, Keras layers in a model_fn, "
        "tfds MNIST, train_and_evaluate",
        data=d.tfds_standin,
        variant=(
            tfds_variant("multi_worker_with_estimator.ipynb"),
            Edit(
                "multi_worker_with_estimator.ipynb",
                "model_dir='/tmp/multiworker'",
                "model_dir='multiworker'",
            ),
        ),
        note="tfds.load('mnist') -> corpus_tfds; model_dir inside the work copy",
    ),
    _docs(
        "docs-r1-distribute-strategy",
        "site/en/r1/guide",
        "distribute_strategy.ipynb",
        "r1 guide (whole, tf.compat.v1): MirroredStrategy with Keras, LinearRegressor with "
        "train/eval_distribute, a Session training loop",
    ),
    _docs(
        "docs-r1-keras",
        "site/en/r1/guide",
        "keras.ipynb",
        "r1 guide (whole, tf.compat.v1): tf.keras, then model_to_estimator with tf.train "
        "optimizers and a MirroredStrategy RunConfig",
        variant=(Edit("keras.ipynb", "model_dir='/tmp/model_dir'", "model_dir='model_dir'"),),
        note="model_dir inside the work copy",
    ),
    _docs(
        "docs-hub-cord19-embeddings",
        "site/en/hub/tutorials",
        "cord_19_embeddings.ipynb",
        "custom model_fn over a TF Hub embedding, tfds builder (probe: needs hub, tfds, network)",
        note="probe: tensorflow_hub / tensorflow_datasets / seaborn are installed on neither "
        "side, and the module and the dataset are downloads",
    ),
]
