"""``v[key].assign``, the Variable ``scatter_*`` methods and ``tf.IndexedSlices``, eagerly and in
traced functions, against numpy; TF's semantics (tensorflow.org, tf.Variable and
tf.IndexedSlices API pages)."""
import numpy as np
import pytest

import minitf as tf


def test_slice_assign_writes_the_slice_and_returns_the_variable():
    v = tf.Variable(np.arange(12.0).reshape(3, 4))
    want = np.arange(12.0).reshape(3, 4)
    out = v[:, 1].assign([-1.0, -2.0, -3.0])
    want[:, 1] = [-1.0, -2.0, -3.0]
    assert out is v
    np.testing.assert_array_equal(v.numpy(), want)
    v[1:, ::2].assign(np.full((2, 2), 7.0))
    want[1:, ::2] = 7.0
    np.testing.assert_array_equal(v.numpy(), want)


def test_a_slice_of_a_variable_is_still_a_tensor_with_its_gradient():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    s = v[1:3]
    assert isinstance(s, tf.Tensor) and not isinstance(s, tf.Variable)
    np.testing.assert_array_equal(s.numpy(), [2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[1:3] ** 2)
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [0.0, 4.0, 6.0, 0.0])
    assert not hasattr(tf.constant([1.0])[0:1], "assign")


def test_slice_assign_refuses_another_shape_and_dtype():
    v = tf.Variable([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"slice has shape \(2,\), the value \(3,\)"):
        v[0:2].assign([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="float64"):
        v[0:2].assign(tf.constant([1.0, 2.0], tf.float64))


def test_scatter_nd_methods_match_numpy_and_add_repeated_indices():
    v = tf.Variable(np.zeros((3, 2)))
    v.scatter_nd_update([[0, 1], [2, 0]], [5.0, 6.0])
    v.scatter_nd_add([[1], [1]], np.array([[1.0, 2.0], [10.0, 20.0]]))
    v.scatter_nd_sub([[2, 0]], [1.0])
    np.testing.assert_array_equal(v.numpy(), [[0.0, 5.0], [11.0, 22.0], [5.0, 0.0]])


def test_scatter_methods_take_indexed_slices_rows():
    v = tf.Variable([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    rows = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 2]))
    v.scatter_add(rows)
    np.testing.assert_array_equal(v.numpy(), [[1.0, 1.0], [2.0, 2.0], [7.0, 9.0]])
    v.scatter_sub(tf.IndexedSlices([[1.0, 1.0]], [0]))
    v.scatter_update(tf.IndexedSlices([[-1.0, -2.0]], [1]))
    np.testing.assert_array_equal(v.numpy(), [[0.0, 0.0], [-1.0, -2.0], [7.0, 9.0]])
    with pytest.raises(TypeError, match="IndexedSlices"):
        v.scatter_add([[1.0, 1.0]])


def test_scatter_errors_name_the_method_the_variable_and_the_shapes():
    v = tf.Variable([1.0, 2.0], name="w")
    with pytest.raises(tf.errors.InvalidArgumentError, match="scatter_nd_update on variable 'w:0'"):
        v.scatter_nd_update([[2]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        v.scatter_nd_add([[-1]], [1.0])          # numpy would wrap around; TF refuses
    with pytest.raises(ValueError, match=r"need updates of shape \(1,\)"):
        v.scatter_nd_update([[0]], [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="scatter_update"):
        v.scatter_update(tf.IndexedSlices([3.0], [5]))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])   # nothing written


def test_updates_in_a_function_repeat_with_each_calls_values():
    u = tf.Variable(tf.zeros(5))
    want = np.zeros(5, np.float32)

    @tf.function
    def f(i, x, idx):
        u[i:i + 2].assign(x)
        u.scatter_nd_add(idx, [1.0])
        return u.read_value()

    for i, x, k in ((0, [1.0, 2.0], 4), (0, [3.0, 4.0], 4), (2, [5.0, 6.0], 0)):
        got = f(i, tf.constant(x), tf.constant([[k]]))
        want[i:i + 2] = x
        want[k] += 1.0
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(tf.errors.InvalidArgumentError, match="scatter_nd_add"):
        f(0, tf.constant([0.0, 0.0]), tf.constant([[9]]))


def test_indexed_slices_convert_to_the_dense_sum():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), [2, 0, 2],
                         dense_shape=[3, 2])
    assert s.shape == [3, 2] and s.dtype == tf.float32
    np.testing.assert_array_equal(tf.convert_to_tensor(s).numpy(),
                                  [[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]])
    with pytest.raises(ValueError, match="dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices([[1.0]], [0]))
