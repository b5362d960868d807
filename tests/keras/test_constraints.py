"""keras.constraints: Keras 3's formulas, serialization, and the optimizer applying a
variable's constraint after each update (fit, and a traced minitf.function loop)."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import constraints

EPS = np.float32(1e-7)


def _w(shape=(4, 3), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32") * 2


def _norms(w, axis):
    return np.sqrt(np.sum(np.square(w), axis=axis, keepdims=True))


def test_max_norm_values():
    w = _w()
    out = constraints.MaxNorm(max_value=1.5, axis=0)(tf.constant(w)).numpy()
    n = _norms(w, 0)
    np.testing.assert_array_equal(out, w * (np.clip(n, 0, 1.5) / (EPS + n)))
    assert np.all(_norms(out, 0) <= 1.5 + 1e-5)
    assert np.any(_norms(w, 0) > 1.5)


def test_non_neg_unit_norm_min_max_norm_values():
    w = _w(seed=1)
    np.testing.assert_array_equal(constraints.NonNeg()(tf.constant(w)).numpy(), w * (w >= 0))
    out = constraints.UnitNorm(axis=1)(tf.constant(w)).numpy()
    np.testing.assert_array_equal(out, w / (_norms(w, 1) + EPS))
    np.testing.assert_allclose(_norms(out, 1), 1.0, rtol=1e-5)
    c = constraints.MinMaxNorm(min_value=0.5, max_value=1.0, rate=0.5, axis=0)
    n = _norms(w, 0)
    desired = 0.5 * np.clip(n, 0.5, 1.0) + (1 - 0.5) * n
    np.testing.assert_array_equal(c(tf.constant(w)).numpy(), w * (desired / (EPS + n)))


def test_get_serialize_deserialize():
    assert isinstance(constraints.get("max_norm"), constraints.MaxNorm)
    assert isinstance(constraints.get("non_neg"), constraints.NonNeg)
    assert isinstance(constraints.get("unit_norm"), constraints.UnitNorm)
    assert isinstance(constraints.get("min_max_norm"), constraints.MinMaxNorm)
    assert isinstance(constraints.get("UnitNorm"), constraints.UnitNorm)
    c = constraints.MinMaxNorm(0.1, 2.0, rate=0.3, axis=[0, 1])
    back = constraints.deserialize(constraints.serialize(c))
    assert back.get_config() == {"min_value": 0.1, "max_value": 2.0, "rate": 0.3,
                                 "axis": [0, 1]}
    with pytest.raises(ValueError, match="unknown constraint"):
        constraints.get("no_such")


def test_layer_config_round_trip_keeps_constraints():
    layer = keras.layers.Dense(3, kernel_constraint=constraints.MaxNorm(2.5, axis=1),
                               bias_constraint="non_neg")
    cfg = layer.get_config()
    assert cfg["kernel_constraint"] == {"class_name": "MaxNorm",
                                        "config": {"max_value": 2.5, "axis": 1}}
    again = keras.layers.Dense.from_config(cfg)
    assert isinstance(again.kernel_constraint, constraints.MaxNorm)
    assert again.kernel_constraint.max_value == 2.5
    assert isinstance(again.bias_constraint, constraints.NonNeg)
    conv = keras.layers.Conv2D(2, 3, kernel_constraint="unit_norm")
    again = keras.layers.Conv2D.from_config(conv.get_config())
    assert isinstance(again.kernel_constraint, constraints.UnitNorm)
    emb = keras.layers.Embedding(5, 2, embeddings_constraint="max_norm")
    again = keras.layers.Embedding.from_config(emb.get_config())
    assert isinstance(again.embeddings_constraint, constraints.MaxNorm)
    again.build((None, 3))
    assert isinstance(again.embeddings._constraint, constraints.MaxNorm)


def _dense(constraint):
    m = keras.Sequential([keras.Input((3,)),
                          keras.layers.Dense(2, use_bias=False, kernel_constraint=constraint)])
    m.layers[0].kernel.assign(_w((3, 2), seed=2))
    return m


def test_fit_with_non_neg_equals_numpy_sgd_step():
    x = _w((8, 3), seed=3)
    y = _w((8, 2), seed=4)
    m = _dense(constraints.NonNeg())
    kernel = m.layers[0].kernel
    assert isinstance(kernel._constraint, constraints.NonNeg)
    w0 = kernel.numpy()
    with tf.GradientTape() as tape:
        loss = keras.losses.MeanSquaredError()(y, m(x))
    g = tape.gradient(loss, kernel).numpy()
    m.compile(keras.optimizers.SGD(0.1), "mse")
    m.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    w1 = kernel.numpy()
    expected = w0 - np.float32(0.1) * g
    expected = expected * (expected >= 0)
    assert np.any(w0 - np.float32(0.1) * g < 0)
    assert np.all(w1 >= 0)
    np.testing.assert_allclose(w1, expected, rtol=1e-6, atol=1e-7)


def test_traced_training_step_applies_constraint_on_every_call():
    m = _dense(constraints.MaxNorm(0.5))
    kernel = m.layers[0].kernel
    opt = keras.optimizers.SGD(0.25)
    c = tf.constant(_w((3, 2), seed=5))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(kernel * c)
        opt.apply_gradients([(tape.gradient(loss, kernel), kernel)])

    def numpy_step(w):
        w = w - np.float32(0.25) * c.numpy()
        n = _norms(w, 0)
        return w * (np.clip(n, 0, 0.5) / (EPS + n))

    expected = kernel.numpy()
    for _ in range(3):  # the second and third calls replay the trace
        kernel.assign(kernel.numpy() * 4)  # push the norms back over max_value
        expected = numpy_step(kernel.numpy())
        step()
        np.testing.assert_array_equal(kernel.numpy(), expected)


def test_add_weight_and_plain_callable_constraint():
    class L(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(2,), initializer="ones",
                                     constraint=lambda v: tf.clip_by_value(v, 0.0, 0.5))

        def call(self, x):
            return x * self.w

    layer = L()
    layer(tf.ones((1, 2)))
    opt = keras.optimizers.SGD(1.0)
    opt.apply_gradients([(tf.constant([-1.0, 0.75]), layer.w)])
    np.testing.assert_array_equal(layer.w.numpy(), np.array([0.5, 0.25], "float32"))
