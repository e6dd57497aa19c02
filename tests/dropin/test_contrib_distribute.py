"""`tf.contrib.distribute` under install(): the strategies TF1 estimator trainers built for
`RunConfig(train_distribute=...)` (`MirroredStrategy(num_gpus=N)` in tf-estimator-tutorials'
multi-GPU trainer) are TensorFlow 2's, over the devices TF 1's contrib chose."""

import logging

import pytest
import tensorflow as tf
from helpers import dataset_input_fn, make_estimator

from keras_estimator.migration import lookup

v1 = tf.compat.v1


def _devices(strategy):
    return [tf.DeviceSpec.from_string(d).device_type for d in strategy.extended.worker_devices]


def test_num_gpus_zero_is_a_mirrored_strategy_on_the_cpu(installed):
    for strategy in (
        v1.contrib.distribute.MirroredStrategy(num_gpus=0),
        v1.contrib.distribute.MirroredStrategy(num_gpus_per_worker=0),
    ):
        assert isinstance(strategy, tf.distribute.MirroredStrategy)
        assert _devices(strategy) == ["CPU"] and strategy.num_replicas_in_sync == 1
    from tensorflow.contrib.distribute import MirroredStrategy

    given = MirroredStrategy(
        devices=["/cpu:0"], cross_tower_ops=tf.distribute.ReductionToOneDevice()
    )
    assert _devices(given) == ["CPU"]
    assert isinstance(given.extended._cross_device_ops, tf.distribute.ReductionToOneDevice)


def test_arguments_that_cannot_work_raise_saying_how_to_fix(installed):
    contrib = v1.contrib.distribute
    visible = len(tf.config.list_logical_devices("GPU"))
    asked = max(2, visible + 1)  # one absent GPU is soft-placed on the CPU (below)
    with pytest.raises(ValueError, match=rf"sees {visible}.*Received: num_gpus={asked}"):
        contrib.MirroredStrategy(num_gpus=asked)
    with pytest.raises(ValueError, match="not both.*Received: num_gpus=1, num_gpus_per_worker=1"):
        contrib.MirroredStrategy(num_gpus=1, num_gpus_per_worker=1)
    with pytest.raises(ValueError, match=r"Fix: pass devices=\[...\] only"):
        contrib.MirroredStrategy(devices=["/cpu:0"], num_gpus=0)
    with pytest.raises(ValueError, match="whole number.*Received: num_gpus_per_worker=-1"):
        contrib.MirroredStrategy(num_gpus_per_worker=-1)
    with pytest.raises(ValueError, match="Received: all_reduce_alg='ring'"):
        contrib.AllReduceCrossDeviceOps("ring")
    absent = [f"/gpu:{i}" for i in range(visible + 2)]  # devices= too, beyond the visible GPUs
    with pytest.raises(ValueError, match=rf"given {visible + 2} GPU devices.*Received: devices="):
        contrib.MirroredStrategy(devices=absent)
    with pytest.raises(AttributeError, match="CollectiveAllReduceStrategy is not provided.*Fix"):
        _ = contrib.CollectiveAllReduceStrategy
    assert lookup("tf.contrib.distribute.CollectiveAllReduceStrategy")["status"] == "unsupported"
    assert lookup("tf.contrib.distribute.MirroredStrategy")["status"] == "supported"


@pytest.mark.skipif(
    bool(tf.config.list_logical_devices("GPU")), reason="a GPU is visible: num_gpus=1 is that GPU"
)
def test_one_gpu_where_none_is_visible_runs_on_the_cpu_as_tf1_soft_placement(installed, caplog):
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        strategy = v1.contrib.distribute.MirroredStrategy(num_gpus=1)
    assert _devices(strategy) == ["CPU"] and strategy.num_replicas_in_sync == 1
    assert "sees no GPU, so its one replica runs on the CPU" in caplog.text


def test_cross_device_ops_and_one_device(installed):
    contrib = v1.contrib.distribute
    assert isinstance(contrib.AllReduceCrossDeviceOps(), tf.distribute.NcclAllReduce)
    packed = contrib.AllReduceCrossDeviceOps("hierarchical_copy", num_packs=2)
    assert isinstance(packed, tf.distribute.HierarchicalCopyAllReduce)
    # TF 1.14's small-gradient aggregation arguments are accepted (TF 2 has none).
    tf1_arguments = contrib.AllReduceCrossDeviceOps(
        "nccl", 1, agg_small_grads_max_bytes=0, agg_small_grads_max_group=10
    )
    assert isinstance(tf1_arguments, tf.distribute.NcclAllReduce)
    one = contrib.OneDeviceStrategy("/cpu:0")
    assert isinstance(one, tf.distribute.OneDeviceStrategy) and _devices(one) == ["CPU"]
    with one.scope():
        assert contrib.has_distribution_strategy() and contrib.get_distribution_strategy() is one
        assert contrib.in_cross_replica_context()

        def step(value):  # in a replica: its context all-reduces with TF 1's ReduceOp names
            return contrib.get_replica_context().all_reduce(contrib.ReduceOp.SUM, value)

        summed = one.run(step, args=(tf.constant([1.0, 2.0]),))
    assert one.experimental_local_results(summed)[0].numpy().tolist() == [1.0, 2.0]
    assert contrib.ReduceOp.MEAN is tf.distribute.ReduceOp.MEAN


def test_an_estimator_trains_under_the_contrib_strategy(installed, tmp_path, toy_data):
    x, y = toy_data
    distribution = v1.contrib.distribute.MirroredStrategy(num_gpus=0)
    est = make_estimator(tmp_path, train_distribute=distribution, tf_random_seed=1)
    est.train(dataset_input_fn(x, y, repeat=True), steps=40)
    assert est.get_variable_value("global_step") == 40
    assert est.evaluate(dataset_input_fn(x, y))["accuracy"] > 0.6
