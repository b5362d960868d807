"""``keras.ops`` functions with numpy semantics and ``keras.random`` draws, checked against
numpy (values) and against their definitions (ranges, scaling, permutations)."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import ops


X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("name, args, expected", [
    ("mod", (np.array([-3, 5, 7]), 4), np.mod([-3, 5, 7], 4)),
    ("floor_divide", (np.array([-3, 5]), 2), np.floor_divide([-3, 5], 2)),
    ("take", (X, [0, 5, 11]), np.take(X, [0, 5, 11])),
    ("cumsum", (X,), np.cumsum(X)),
    ("full", ((2, 3), 1.5), np.full((2, 3), 1.5)),
    ("linspace", (0.0, 1.0, 5), np.linspace(0.0, 1.0, 5)),
    ("erf", (np.array([-1.0, 0.0, 0.5]),), np.array([-0.8427007929497149, 0.0,
                                                     0.5204998778130465])),
    ("isnan", (np.array([np.nan, 1.0]),), np.array([True, False])),
])
def test_ops_match_numpy(name, args, expected):
    np.testing.assert_allclose(getattr(ops, name)(*args).numpy(), expected, rtol=1e-6, atol=1e-7)


def test_axis_forms_match_numpy():
    np.testing.assert_array_equal(ops.take(X, [2, 0], axis=0).numpy(), np.take(X, [2, 0], 0))
    np.testing.assert_array_equal(ops.cumsum(X, axis=1).numpy(), np.cumsum(X, axis=1))
    assert bool(ops.any(X > 10).numpy()) and not bool(ops.all(X > 0).numpy())
    np.testing.assert_array_equal(ops.all(X >= 4, axis=1).numpy(), [False, True, True])
    for got, want in zip(ops.split(X, [1, 3], axis=1), np.split(X, [1, 3], axis=1)):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(ops.split(X, 3), np.split(X, 3)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(ops.pad(X, [[1, 0], [0, 2]]).numpy(),
                                  np.pad(X, [[1, 0], [0, 2]]))
    np.testing.assert_array_equal(ops.pad(X, [[0, 0], [1, 1]], constant_values=7).numpy(),
                                  np.pad(X, [[0, 0], [1, 1]], constant_values=7))
    np.testing.assert_array_equal(ops.repeat(X, 2, axis=0).numpy(), np.repeat(X, 2, axis=0))
    np.testing.assert_allclose(ops.convert_to_numpy(tf.Variable(2.5)), 2.5)


def test_random_dropout_zeroes_and_rescales():
    tf.random.set_seed(0)
    y = keras.random.dropout(np.ones((200, 50), "float32"), rate=0.25).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert abs(y.mean() - 1.0) < 0.03  # E[y] = x


def test_random_randint_and_shuffle():
    tf.random.set_seed(1)
    draws = keras.random.randint((2000,), 2, 5).numpy()
    assert draws.dtype == np.int32 and set(np.unique(draws)) == {2, 3, 4}
    values = np.arange(10)
    shuffled = keras.random.shuffle(values).numpy()
    assert sorted(shuffled) == list(values)
    with pytest.raises(ValueError, match="axis"):
        keras.random.shuffle(X, axis=1)


def test_backend_values():
    v = tf.Variable([1.0, 2.0])
    np.testing.assert_array_equal(keras.backend.get_value(v), [1.0, 2.0])
    keras.backend.set_value(v, [3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])
    assert keras.backend.floatx() == "float32" and keras.backend.epsilon() == 1e-7
