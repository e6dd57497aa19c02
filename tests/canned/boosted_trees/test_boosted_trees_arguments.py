"""BoostedTrees arguments as tf.estimator 2.8 checked them, and BoostedTreesEstimator with a
head of one's own."""

import pytest
import tensorflow as tf
from bt_data import columns, eval_input, train_input

import keras_estimator as estimator


@pytest.mark.parametrize("kwargs, message", [
    ({"n_trees": 0}, "Expected n_trees > 0"),
    ({"max_depth": 0}, "Expected max_depth > 0"),
    ({"learning_rate": 0.0}, "Expected learning_rate > 0"),
    ({"l2_regularization": -1.0}, "Expected l2_regularization >= 0"),
    ({"min_node_weight": -1.0}, "Expected min_node_weight >= 0"),
    ({"tree_complexity": 0.1}, "Tree complexity have no effect unless pruning mode"),
    ({"pruning_mode": "post"}, "For pruning, tree_complexity must be positive"),
    ({"pruning_mode": "later", "tree_complexity": 0.1}, "pruning_mode must be one of"),
    ({"n_classes": 3, "center_bias": True}, "center_bias not yet support with n_classes > 2"),
    ({"train_in_memory": True, "n_batches_per_layer": 2}, "n_batches_per_layer should be set as 1"),
])  # fmt: skip
def test_invalid_arguments_raise_as_in_2_8(kwargs, message):
    kwargs = {"n_batches_per_layer": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        estimator.BoostedTreesClassifier(columns(), **kwargs)


def test_columns_the_trees_cannot_split_on_are_refused():
    categorical = tf.feature_column.categorical_column_with_identity("c", 3)
    with pytest.raises(ValueError, match="Wrap a categorical column in"):
        estimator.BoostedTreesRegressor([categorical], n_batches_per_layer=1)
    embedded = tf.feature_column.embedding_column(categorical, 2)
    with pytest.raises(ValueError, match="EmbeddingColumn"):
        estimator.BoostedTreesRegressor([embedded], n_batches_per_layer=1)
    with pytest.raises(ValueError, match="n_batches_per_layer must be a positive integer"):
        estimator.BoostedTreesRegressor(columns(), n_batches_per_layer=0)


def test_boosted_trees_estimator_takes_a_head(data, tmp_path):
    x, _, target = data["train"]
    head = estimator.RegressionHead()
    est = estimator.BoostedTreesEstimator(
        columns(), n_batches_per_layer=1, head=head, model_dir=str(tmp_path), n_trees=5,
        max_depth=3, learning_rate=0.5,
    )  # fmt: skip
    est.train(train_input(x, target, batch=len(x)))
    x_test, _, target_test = data["test"]
    assert est.evaluate(eval_input(x_test, target_test))["average_loss"] < 0.1
    assert est.get_variable_value("boosted_trees/ensemble/num_finalized_trees") == 5


def test_names_resolve_at_the_top_level_and_in_v1():
    from keras_estimator import v1

    for name in ("BoostedTreesClassifier", "BoostedTreesRegressor", "BoostedTreesEstimator"):
        assert getattr(v1, name) is getattr(estimator, name)
        assert name in estimator.__all__
