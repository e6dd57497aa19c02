"""BERT-era TPUEstimator programs (google-research's BERT, ALBERT, ELECTRA), run off TPU.

Each pre-trains (BERT also fine-tunes) a transformer of a few thousand weights on tiny
random data of ours: masked-LM TFRecords, a model config JSON, a vocabulary. For 2.15 they
need their `tf.contrib` uses swapped for what TF 2.15 kept (`tf.compat.v1.estimator.tpu`,
`tf.data.experimental`, `tf.distribute.cluster_resolver`, `tf_slim.layer_norm`); the
2.15 venv needs `pip install tf-slim` for that last one.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools.corpus import datagen as g
from tools.corpus.recipe import Edit, Recipe, tf1

BERT = ("google-research/bert", "eedf5716ce1268e56f0a50264a88cafad334ac61")
ALBERT = ("google-research/albert", "b772393d3dae115b493258ce8e37c17b2cc62100")
ELECTRA = ("google-research/electra", "8a46635f32083ada044d7e9ad09604742600ee7b")

SEQ, PREDICTIONS, VOCAB = 16, 3, 60
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _masked_lm_tfrecord(path: Path, rows: int = 256) -> None:
    """Pre-training examples as BERT's create_pretraining_data.py writes them."""
    g.tfrecord_file(
        path,
        {
            "input_ids": g.ints(SEQ, 0, VOCAB),
            "input_mask": g.ints(SEQ, 1, 2),
            "segment_ids": g.ints(SEQ, 0, 2),
            "masked_lm_positions": g.ints(PREDICTIONS, 1, SEQ),
            "masked_lm_ids": g.ints(PREDICTIONS, 0, VOCAB),
            "masked_lm_weights": g.floats(PREDICTIONS, 1.0, 1.0),
            "next_sentence_labels": g.ints(1, 0, 2),
        },
        rows=rows,
    )


def _vocabulary(path: Path) -> None:
    words = [f"w{i}" for i in range(VOCAB - len(SPECIAL_TOKENS))]
    g.text_file(path, [*SPECIAL_TOKENS, *words])


def _bert_config(path: Path, **overrides: object) -> None:
    config = {
        "vocab_size": VOCAB, "hidden_size": 16, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 24, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": SEQ, "type_vocab_size": 2, "initializer_range": 0.02,
    }  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**config, **overrides}))


def bert_pretraining_data(work: Path) -> None:
    _bert_config(work / "data/bert_config.json")
    _masked_lm_tfrecord(work / "data/examples.tfrecord")


def bert_classifier_data(work: Path) -> None:
    """MRPC-format TSVs (Quality, two ids, two sentences) over the vocabulary's words."""
    _bert_config(work / "data/bert_config.json")
    _vocabulary(work / "data/vocab.txt")
    words = g.words([f"w{i}" for i in range(VOCAB - len(SPECIAL_TOKENS))], 4, 7)
    for split, rows in (("train", 64), ("dev", 32), ("test", 16)):
        g.csv_file(
            work / f"data/{split}.tsv",
            {"Quality": g.integer(0, 2), "#1 ID": g.integer(0, 9999),
             "#2 ID": g.integer(0, 9999), "#1 String": words, "#2 String": words},
            rows=rows, delimiter="\t", seed=len(split),
        )  # fmt: skip


def albert_data(work: Path) -> None:
    # The program is the package `albert` (`from albert import modeling`), run from its
    # parent: a link named albert to the copy makes the copy that package.
    (work / "albert").symlink_to(".", target_is_directory=True)
    config = {
        "vocab_size": VOCAB, "embedding_size": 5, "hidden_size": 14, "num_hidden_layers": 3,
        "num_hidden_groups": 1, "num_attention_heads": 2, "intermediate_size": 19,
        "inner_group_num": 1, "down_scale_factor": 1, "hidden_act": "gelu",
        "hidden_dropout_prob": 0, "attention_probs_dropout_prob": 0,
        "max_position_embeddings": SEQ, "type_vocab_size": 2, "initializer_range": 0.02,
    }  # fmt: skip
    (work / "data").mkdir(exist_ok=True)
    (work / "data/albert_config.json").write_text(json.dumps(config))
    _masked_lm_tfrecord(work / "data/examples.tfrecord", rows=512)


def electra_data(work: Path) -> None:
    _vocabulary(work / "data/vocab.txt")
    g.tfrecord_file(
        work / "data/pretrain_tfrecords/pretrain_data.tfrecord-0",
        {"input_ids": g.ints(SEQ, 5, VOCAB), "input_mask": g.ints(SEQ, 1, 2),
         "segment_ids": g.ints(SEQ, 0, 1)},
        rows=512,
    )  # fmt: skip


def _no_contrib(file: str, *, layer_norm: bool = False, tpu: bool = True) -> tuple[Edit, ...]:
    """BERT's TF 1 file on 2.15: the v1 API, and what its tf.contrib names became."""
    edits = [tf1(file)]
    if tpu:
        edits.append(
            Edit(file, "tf.contrib.tpu.TPUEstimatorSpec", "tf.estimator.tpu.TPUEstimatorSpec")
        )
    if layer_norm:
        edits += [
            Edit(file, "import six\n", "import six\nimport tf_slim\n"),
            Edit(file, "tf.contrib.layers.layer_norm", "tf_slim.layer_norm"),
        ]
    return tuple(edits)


def _bert_main_edits(file: str) -> tuple[Edit, ...]:
    return (
        *_no_contrib(file),
        Edit(file, "tf.contrib.cluster_resolver.", "tf.distribute.cluster_resolver."),
        Edit(file, "tf.contrib.tpu.InputPipelineConfig", "tf.estimator.tpu.InputPipelineConfig"),
        Edit(file, "tf.contrib.tpu.RunConfig", "tf.estimator.tpu.RunConfig"),
        Edit(file, "tf.contrib.tpu.TPUConfig", "tf.estimator.tpu.TPUConfig"),
        Edit(file, "tf.contrib.tpu.TPUEstimator(", "tf.estimator.tpu.TPUEstimator("),
        Edit(file, "tf.contrib.data.", "tf.data.experimental."),
    )


_BERT_SHARED_EDITS = (
    *_no_contrib("modeling.py", layer_norm=True, tpu=False),
    tf1("optimization.py"),
    Edit("optimization.py", "tf.contrib.tpu.CrossShardOptimizer", "tf.tpu.CrossShardOptimizer"),
)

BERT_ERA: list[Recipe] = [
    Recipe(
        name="bert-pretraining",
        repo=BERT[0],
        commit=BERT[1],
        folder=".",
        entry="run_pretraining.py",
        args=(
            "--input_file=data/examples.tfrecord",
            "--output_dir={work}/model",
            "--do_train=True",
            "--do_eval=True",
            "--bert_config_file=data/bert_config.json",
            "--train_batch_size=8",
            "--eval_batch_size=8",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}",
            "--num_train_steps=100",
            "--num_warmup_steps=10",
            "--learning_rate=1e-3",
            "--max_eval_steps=10",
            "--save_checkpoints_steps=50",
        ),  # fmt: skip
        kind="TPUEstimator (use_tpu off), TF 1 `import tensorflow`, contrib.data "
        "parallel_interleave + map_and_batch, contrib layer_norm, TFRecords, eval metrics",
        data=bert_pretraining_data,
        edits=(*_bert_main_edits("run_pretraining.py"), *_BERT_SHARED_EDITS),
        timeout=600,
    ),
    Recipe(
        name="bert-classifier",
        repo=BERT[0],
        commit=BERT[1],
        folder=".",
        entry="run_classifier.py",
        args=(
            "--task_name=MRPC",
            "--do_train=true",
            "--do_eval=true",
            "--do_predict=true",
            "--data_dir=data",
            "--vocab_file=data/vocab.txt",
            "--bert_config_file=data/bert_config.json",
            f"--max_seq_length={SEQ}",
            "--train_batch_size=8",
            "--eval_batch_size=8",
            "--predict_batch_size=8",
            "--learning_rate=1e-3",
            "--num_train_epochs=3.0",
            "--output_dir={work}/model",
        ),  # fmt: skip
        kind="TPUEstimator fine-tuning: tokenization, TSV -> TFRecords written by the "
        "program, train + eval + predict to test_results.tsv",
        data=bert_classifier_data,
        edits=(
            *_bert_main_edits("run_classifier.py"),
            *_BERT_SHARED_EDITS,
            Edit(
                "tokenization.py",
                "import tensorflow as tf\n",
                "import tensorflow.compat.v1 as tf\n",
            ),
        ),
        timeout=600,
        note="from scratch: --init_checkpoint (a pre-trained checkpoint) was tried by hand",
    ),
    Recipe(
        name="albert-pretraining",
        repo=ALBERT[0],
        commit=ALBERT[1],
        folder=".",
        entry="-m albert.run_pretraining",
        args=(
            "--input_file=data/examples.tfrecord",
            "--albert_config_file=data/albert_config.json",
            "--output_dir={work}/model",
            "--do_train",
            "--do_eval",
            "--nouse_tpu",
            "--train_batch_size=8",
            "--eval_batch_size=8",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PREDICTIONS}",
            "--num_train_steps=200",
            "--save_checkpoints_steps=100",
            "--max_eval_steps=20",
            "--learning_rate=0.001",
        ),  # fmt: skip
        kind="TPUEstimator from tensorflow.compat.v1 + `from tensorflow.contrib import tpu`, "
        "LAMB optimizer, absl flags, package -m, TFRecords",
        data=albert_data,
        edits=(
            Edit(
                "run_pretraining.py",
                "from tensorflow.contrib import cluster_resolver as contrib_cluster_resolver",
                "from tensorflow.compat.v1.distribute import cluster_resolver as "
                "contrib_cluster_resolver",
            ),
            Edit(
                "run_pretraining.py",
                "from tensorflow.contrib import tpu as contrib_tpu",
                "contrib_tpu = tf_estimator.tpu",
            ),
            Edit(
                "optimization.py",
                "from tensorflow.contrib import tpu as contrib_tpu",
                "from tensorflow.compat.v1 import tpu as contrib_tpu",
            ),
            Edit(
                "modeling.py",
                "from tensorflow.contrib import layers as contrib_layers",
                "import tf_slim as contrib_layers",
            ),
        ),
        timeout=600,
    ),
    Recipe(
        name="electra-pretraining",
        repo=ELECTRA[0],
        commit=ELECTRA[1],
        folder=".",
        entry="run_pretraining.py",
        args=(
            "--data-dir",
            "data",
            "--model-name",
            "tiny",
            "--hparams",
            json.dumps(
                {
                    "debug": True,
                    "vocab_size": VOCAB,
                    "max_seq_length": SEQ,
                    "model_hparam_overrides": {
                        "hidden_size": 32,
                        "num_hidden_layers": 2,
                        "num_attention_heads": 2,
                        "intermediate_size": 37,
                    },
                    "num_train_steps": 40,
                    "save_checkpoints_steps": 20,
                    "num_warmup_steps": 5,
                }
            ),
        ),  # fmt: skip
        kind="TPUEstimator generator + discriminator (use_tpu off), training hooks, "
        "tensorflow.compat.v1 + contrib layer_norm, TFRecords",
        data=electra_data,
        edits=(
            Edit(
                "model/modeling.py",
                "from tensorflow.contrib import layers as contrib_layers",
                "import tf_slim as contrib_layers",
            ),
        ),
        timeout=600,
    ),
]
