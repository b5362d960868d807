"""TF 2's top-level initializers (tf.zeros_initializer ... tf.random_uniform_initializer).

Dtype rules, configs and error cases were checked against TensorFlow 2.21; random draws are
checked by their statistics and reproducibility (minitf's generators differ from TF's).
"""
import numpy as np
import pytest

import minitf as tf


def test_zeros_and_ones():
    z = tf.zeros_initializer()([2, 3])
    assert z.dtype == tf.float32 and z.numpy().tolist() == [[0.0] * 3] * 2
    assert tf.zeros_initializer()(tf.TensorShape([2])).numpy().tolist() == [0.0, 0.0]
    ones = tf.ones_initializer()([2], dtype=tf.int64)
    assert ones.dtype == tf.int64 and ones.numpy().tolist() == [1, 1]
    assert tf.ones_initializer()([2], tf.bool).numpy().tolist() == [True, True]
    assert tf.zeros_initializer().get_config() == {}
    with pytest.raises(ValueError, match="zeros_initializer: argument `dtype` is expected to "
                       "be numeric or boolean. Received: string"):
        tf.zeros_initializer()([2], dtype=tf.string)


def test_constant():
    init = tf.constant_initializer([1, 2, 3, 4])
    out = init([2, 2])
    assert out.dtype == tf.int32                 # the value's own dtype, as in TF
    assert out.numpy().tolist() == [[1, 2], [3, 4]]
    assert tf.constant_initializer(3)([2]).dtype == tf.int32
    assert tf.constant_initializer(3.0)([2]).dtype == tf.float32
    assert tf.constant_initializer(2)([2, 2], tf.float32).numpy().tolist() == [[2.0, 2.0]] * 2
    assert init.get_config() == {"value": [1, 2, 3, 4]}
    again = tf.constant_initializer.from_config({"value": 2.0})
    assert again([2]).numpy().tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="value has 3 elements, but the shape \\[2, 2\\] has 4"):
        tf.constant_initializer([1, 2, 3])([2, 2])
    with pytest.raises(TypeError, match="invalid type for value: Variable"):
        tf.constant_initializer(tf.Variable(1.0))


def test_random_normal():
    init = tf.random_normal_initializer(1.0, 2.0, seed=3)
    assert init.get_config() == {"mean": 1.0, "stddev": 2.0, "seed": 3}
    assert tf.random_normal_initializer().get_config() == {"mean": 0.0, "stddev": 0.05,
                                                           "seed": None}
    a, b = init([5000]), init([5000])
    assert a.dtype == tf.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())    # seeded: the same every call
    assert abs(float(np.mean(a.numpy())) - 1.0) < 0.1
    assert abs(float(np.std(a.numpy())) - 2.0) < 0.1
    assert init([3], tf.float64).dtype == tf.float64
    with pytest.raises(ValueError, match="expected to be floating point. Received: int32"):
        init([2], dtype=tf.int32)
    restored = type(init).from_config(init.get_config())
    np.testing.assert_array_equal(restored([5000]).numpy(), a.numpy())


def test_random_uniform():
    init = tf.random_uniform_initializer(-1.0, 1.0)
    assert init.get_config() == {"minval": -1.0, "maxval": 1.0, "seed": None}
    values = init([4000]).numpy()
    assert values.min() >= -1.0 and values.max() < 1.0
    assert abs(values.mean()) < 0.1 and values.min() < -0.9 and values.max() > 0.9
    ints = tf.random_uniform_initializer(0, 10, seed=2)([2000], dtype=tf.int32)
    assert ints.dtype == tf.int32
    assert set(np.unique(ints.numpy()).tolist()) == set(range(10))
    with pytest.raises(ValueError, match="floating point or integer. Received: bool"):
        init([2], dtype=tf.bool)


def test_usable_as_variable_and_layer_initializer():
    v = tf.Variable(tf.ones_initializer()([3]))
    assert v.numpy().tolist() == [1.0, 1.0, 1.0]
    layer = tf.keras.layers.Dense(2, kernel_initializer=tf.constant_initializer(0.5),
                                  bias_initializer=tf.zeros_initializer())
    out = layer(tf.ones([1, 3]))
    assert out.numpy().tolist() == [[1.5, 1.5]]
