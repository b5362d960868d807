"""Deferred restoration into tf.Modules (tensorflow.org checkpoint guide, "Delayed
restorations"): a value saved for a variable the module creates later is assigned when the
variable is attached, so its first use computes with the restored value."""
import numpy as np
import pytest

import minitf as tf


class Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = None

    def __call__(self, x):
        if self.v is None:
            self.v = tf.Variable(tf.zeros(x.shape[-1]))
        return x * self.v


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = None

    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones((x.shape[-1], 2)))
            self.scale = Scale()
            self.dense = tf.keras.layers.Dense(2, kernel_initializer="zeros")
        return self.dense(self.scale(x @ self.w))


def _saved(tmp_path):
    net = Net()
    net(tf.ones((1, 3)))
    net.w.assign(np.arange(6.0).reshape(3, 2))
    net.scale.v.assign([2.0, -1.0])
    net.dense.kernel.assign([[1.0, 2.0], [3.0, 4.0]])
    net.dense.bias.assign([0.5, -0.5])
    path = tf.train.Checkpoint(net=net).save(str(tmp_path / "ckpt"))
    return net, path


def test_variables_created_after_restore_get_the_saved_values(tmp_path):
    net, path = _saved(tmp_path)
    fresh = Net()
    status = tf.train.Checkpoint(net=fresh).restore(path)
    with pytest.raises(AssertionError, match=r"waiting for their module .*'net/w'"):
        status.assert_consumed()
    x = tf.constant([[1.0, 2.0, 3.0]])
    y = fresh(x)                                   # creates w, scale.v and the Dense layer
    # closed form: ((x @ w) * v) @ K + b with the saved values
    h = (np.array([[1.0, 2.0, 3.0]]) @ np.arange(6.0).reshape(3, 2)) * [2.0, -1.0]
    np.testing.assert_allclose(y.numpy(), h @ [[1.0, 2.0], [3.0, 4.0]] + [0.5, -0.5])
    np.testing.assert_array_equal(fresh.scale.v.numpy(), [2.0, -1.0])
    status.assert_consumed()


def test_a_restored_value_of_the_wrong_shape_is_refused_on_attach(tmp_path):
    _, path = _saved(tmp_path)
    fresh = Net()
    tf.train.Checkpoint(net=fresh).restore(path)
    with pytest.raises(ValueError, match=r"'net/w' has shape \(3, 2\), the variable has shape "
                                         r"\(4, 2\)"):
        fresh(tf.ones((1, 4)))


def test_modules_without_pending_values_are_untouched(tmp_path):
    plain = Scale()
    plain.v = tf.Variable([1.0])
    assert "_pending_restore" not in vars(plain)
    np.testing.assert_array_equal(plain.v.numpy(), [1.0])
    assert [v.numpy().tolist() for v in plain.variables] == [[1.0]]
