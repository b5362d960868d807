"""``tf.distribute`` with one replica: the custom-training-loop pattern of tensorflow.org's
"Custom training with tf.distribute.Strategy" tutorial gives the same losses and weights as the
plain loop, and the strategy API answers as TF's does for one replica."""
import numpy as np
import pytest

import minitf as tf

RNG = np.random.default_rng(3)
X = RNG.normal(size=(16, 3)).astype("float32")
Y = (X @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.1).astype("float32")
GLOBAL_BATCH = 8


def _model():
    tf.random.set_seed(5)
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])


def _plain_losses():
    model, opt = _model(), tf.keras.optimizers.SGD(0.1)
    losses = []
    for i in range(0, 16, GLOBAL_BATCH):
        x, y = X[i:i + GLOBAL_BATCH], Y[i:i + GLOBAL_BATCH]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        losses.append(float(loss))
    return losses, [w.numpy() for w in model.weights]


def test_tutorial_loop_under_a_strategy_matches_the_plain_loop():
    strategy = tf.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    with strategy.scope():
        model, opt = _model(), tf.keras.optimizers.SGD(0.1)
        assert tf.distribute.get_strategy() is strategy and tf.distribute.has_strategy()
    assert not tf.distribute.has_strategy()
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(GLOBAL_BATCH)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.square(model(x) - y)[:, 0]
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(x, y):
        per_replica = strategy.run(train_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    losses = [float(distributed_step(x, y)) for x, y in dist_dataset]
    want_losses, want_weights = _plain_losses()
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    for w, want in zip(model.weights, want_weights):
        np.testing.assert_allclose(w.numpy(), want, rtol=1e-6)


def test_reduce_over_an_axis_datasets_from_function_and_replica_context():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    values = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(strategy.reduce("SUM", values, axis=0).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(strategy.reduce(tf.distribute.ReduceOp.MEAN, values,
                                                  axis=None).numpy(), values.numpy())
    with pytest.raises(ValueError, match="ReduceOp"):
        strategy.reduce("MAX", values, axis=None)
    seen = []

    def dataset_fn(context):
        seen.append((context.num_input_pipelines, context.input_pipeline_id,
                     context.get_per_replica_batch_size(64)))
        return tf.data.Dataset.range(3)

    ds = strategy.distribute_datasets_from_function(dataset_fn)
    assert [int(v) for v in ds] == [0, 1, 2] and seen == [(1, 0, 64)]
    context = tf.distribute.get_replica_context()
    assert context.num_replicas_in_sync == 1 and context.replica_id_in_sync_group == 0
    assert float(context.all_reduce("SUM", tf.constant(2.5))) == 2.5
    assert strategy.experimental_local_results(values) == (values,)
    assert tf.distribute.experimental.MultiWorkerMirroredStrategy().num_replicas_in_sync == 1


def test_variables_accept_tfs_replica_arguments():
    v = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN,
                    synchronization=tf.VariableSynchronization.ON_READ, validate_shape=True)
    assert float(v.numpy()) == 1.0
    layer = tf.keras.layers.Dense(1)
    layer.build((None, 2))
    w = layer.add_weight(name="w", shape=(2,), aggregation=tf.VariableAggregation.SUM)
    assert tuple(w.shape) == (2,)
