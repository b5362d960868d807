"""Port of tensorflow.org's guide "Training checkpoints"
(https://www.tensorflow.org/guide/checkpoint), without the dataset iterator in the checkpoint.

Behaviours and values from the guide: ``CheckpointManager(max_to_keep=3)`` saving every 10
steps numbers files ``ckpt-1``...``ckpt-5`` over 50 steps; a restarted run restores ``ckpt-5``
(step 51), continues to ``ckpt-10`` and keeps ``ckpt-8``, ``ckpt-9``, ``ckpt-10``; restoring into
a model that is not built yet assigns the values on its first call ("delayed restorations").
Losses after restoring equal those of an uninterrupted run (optimizer slots included).
"""
import os

import numpy as np
import pytest

import minitf as tf


class Net(tf.keras.Model):
    """A simple linear model."""

    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


def toy_dataset():
    inputs = np.arange(10, dtype=np.float32).reshape(10, 1) * np.ones((1, 1), np.float32)
    outputs = np.arange(5, dtype=np.float32)[None, :] * 2 + np.zeros((10, 1), np.float32)
    return inputs, outputs


def train_step(net, example, optimizer):
    x, y = example
    with tf.GradientTape() as tape:
        output = net(x)
        loss = tf.reduce_mean(tf.abs(output - y))
    variables = net.trainable_variables
    gradients = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(gradients, variables))
    return float(loss)


def train_and_checkpoint(net, opt, directory, steps=50):
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    restored_from = manager.latest_checkpoint
    ckpt.restore(manager.latest_checkpoint)
    saved, losses = [], []
    for _ in range(steps):
        losses.append(train_step(net, toy_dataset(), opt))
        ckpt.step.assign_add(1)
        if int(ckpt.step) % 10 == 0:
            saved.append((int(ckpt.step), manager.save()))
    return restored_from, saved, losses, manager


def test_manager_numbering_and_max_to_keep(tmp_path):
    directory = os.path.join(str(tmp_path), "tf_ckpts")
    tf.random.set_seed(1)
    net, opt = Net(), tf.keras.optimizers.Adam(0.1)
    restored, saved, _, manager = train_and_checkpoint(net, opt, directory)
    assert restored is None
    assert [os.path.basename(p) for _, p in saved] == [f"ckpt-{i}" for i in range(1, 6)]
    assert [s for s, _ in saved] == [10, 20, 30, 40, 50]
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3", "ckpt-4", "ckpt-5"]
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-3.h5", "ckpt-4.h5", "ckpt-5.h5"]
    assert tf.train.latest_checkpoint(directory) == os.path.join(directory, "ckpt-5")

    # A restarted program: fresh objects, restored from ckpt-5, continuing the numbering.
    net2, opt2 = Net(), tf.keras.optimizers.Adam(0.1)
    restored, saved, _, manager = train_and_checkpoint(net2, opt2, directory)
    assert os.path.basename(restored) == "ckpt-5"
    assert [s for s, _ in saved] == [60, 70, 80, 90, 100]
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-8", "ckpt-9", "ckpt-10"]


def test_restored_run_continues_exactly(tmp_path):
    directory = os.path.join(str(tmp_path), "ck")
    tf.random.set_seed(2)
    net, opt = Net(), tf.keras.optimizers.Adam(0.1)
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net)
    for _ in range(5):
        train_step(net, toy_dataset(), opt)
    path = ckpt.save(os.path.join(directory, "ckpt"))
    continued = [train_step(net, toy_dataset(), opt) for _ in range(5)]

    net2, opt2 = Net(), tf.keras.optimizers.Adam(0.1)
    status = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt2, net=net2).restore(path)
    with pytest.raises(AssertionError, match="not built yet"):
        status.assert_consumed()  # net2 has no variables until its first call
    resumed = [train_step(net2, toy_dataset(), opt2) for _ in range(5)]
    status.assert_consumed()
    np.testing.assert_allclose(resumed, continued, rtol=1e-6)
    assert int(opt2.iterations) == 10


def test_delayed_restoration_of_a_layer(tmp_path):
    path = os.path.join(str(tmp_path), "layer")
    layer = tf.keras.layers.Dense(5)
    layer(tf.ones([1, 3]))
    tf.train.Checkpoint(layer=layer).write(path)

    fresh = tf.keras.layers.Dense(5)
    status = tf.train.Checkpoint(layer=fresh).read(path)
    assert fresh.weights == []
    fresh(tf.ones([1, 3]))
    np.testing.assert_array_equal(fresh.kernel.numpy(), layer.kernel.numpy())
    status.assert_consumed()


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(TypeError, match="cannot be checkpointed"):
        tf.train.Checkpoint(data=[1, 2, 3])
    v = tf.Variable(tf.zeros([2]))
    path = tf.train.Checkpoint(v=v).write(os.path.join(str(tmp_path), "v"))
    with pytest.raises(ValueError, match="shape"):
        tf.train.Checkpoint(v=tf.Variable(tf.zeros([3]))).restore(path)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        tf.train.Checkpoint(v=v).restore(os.path.join(str(tmp_path), "missing"))
    assert tf.train.Checkpoint(v=v).restore(None) is not None
    assert tf.train.latest_checkpoint(str(tmp_path / "nothing")) is None
    # No temporary files are left behind.
    assert sorted(os.listdir(str(tmp_path))) == ["v.h5"]


class Linear(tf.Module):
    """Two unnamed Variables: the optimizer must not mix up their slots."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0], [-2.0]])
        self.b = tf.Variable([0.5])

    def __call__(self, x):
        return x @ self.w + self.b


def test_module_and_optimizer_slots_restore_by_identity(tmp_path):
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
    y = np.array([[1.0], [2.0], [0.0]], np.float32)

    def step(model, opt):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    model, opt = Linear(), tf.keras.optimizers.Adam(0.1)
    for _ in range(3):
        step(model, opt)
    path = tf.train.Checkpoint(model=model, opt=opt).write(os.path.join(str(tmp_path), "lin"))
    continued = [step(model, opt) for _ in range(3)]

    fresh, fresh_opt = Linear(), tf.keras.optimizers.Adam(0.1)
    tf.train.Checkpoint(model=fresh, opt=fresh_opt).read(path).assert_consumed()
    np.testing.assert_allclose([step(fresh, fresh_opt) for _ in range(3)], continued, rtol=1e-6)
