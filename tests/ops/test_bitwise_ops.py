"""tf.bitwise and the dtype dispatch of Tensor's &, |, ^, ~ (numbers from TF's documentation)."""
import numpy as np
import pytest

import minitf as tf


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_bitwise_ops_match_numpy(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=20, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, size=20, dtype=dtype, endpoint=True)
    x, y = tf.constant(a), tf.constant(b)
    np.testing.assert_array_equal(tf.bitwise.bitwise_and(x, y).numpy(), a & b)
    np.testing.assert_array_equal(tf.bitwise.bitwise_or(x, y).numpy(), a | b)
    np.testing.assert_array_equal(tf.bitwise.bitwise_xor(x, y).numpy(), a ^ b)
    np.testing.assert_array_equal(tf.bitwise.invert(x).numpy(), ~a)
    assert tf.bitwise.bitwise_and(x, y).dtype.name == dtype


def test_shifts_tf_doc_examples():
    # tf.bitwise.left_shift / right_shift documentation examples.
    lhs = tf.constant([-1, -5, -3, -14], dtype=tf.int8)
    rhs = tf.constant([5, 0, 7, 11], dtype=tf.int8)
    np.testing.assert_array_equal(tf.bitwise.left_shift(lhs, rhs).numpy(), [-32, -5, -128, 0])
    np.testing.assert_array_equal(tf.bitwise.right_shift(lhs, rhs).numpy(), [-1, -5, -1, -1])
    wide = tf.constant([-1, -5, -3, -14], dtype=tf.int32)
    np.testing.assert_array_equal(
        tf.bitwise.left_shift(wide, tf.constant([5, 0, 7, 11])).numpy(), [-32, -5, -384, -28672])
    # negative shift amounts: the value comes back unchanged
    odd = tf.constant(np.array([-2, 64, 101, 32], dtype=np.int8))
    neg = tf.constant(np.array([-1, -5, -3, -14], dtype=np.int8))
    np.testing.assert_array_equal(tf.bitwise.left_shift(odd, neg).numpy(), [-2, 64, 101, 32])
    np.testing.assert_array_equal(tf.bitwise.right_shift(odd, neg).numpy(), [-2, 64, 101, 32])


def test_operators_dispatch_on_dtype():
    a, b = tf.constant([12, 10]), tf.constant([10, 6])
    np.testing.assert_array_equal((a & b).numpy(), [8, 2])
    np.testing.assert_array_equal((a | b).numpy(), [14, 14])
    np.testing.assert_array_equal((a ^ b).numpy(), [6, 12])
    np.testing.assert_array_equal((~a).numpy(), [-13, -11])
    np.testing.assert_array_equal((3 & a).numpy(), [0, 2])
    np.testing.assert_array_equal((5 ^ a).numpy(), [9, 15])
    p, q = tf.constant([True, True, False]), tf.constant([True, False, False])
    np.testing.assert_array_equal((p & q).numpy(), [True, False, False])
    np.testing.assert_array_equal((p | q).numpy(), [True, True, False])
    np.testing.assert_array_equal((p ^ q).numpy(), [False, True, False])
    np.testing.assert_array_equal((~p).numpy(), [False, False, True])
    np.testing.assert_array_equal((True ^ q).numpy(), [False, True, True])


def test_float_and_mixed_inputs_raise():
    f = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="bitwise_and expects integer tensors"):
        f & f
    with pytest.raises(TypeError, match="invert"):
        ~f
    with pytest.raises(TypeError, match="left_shift"):
        tf.bitwise.left_shift(f, f)
    with pytest.raises(TypeError, match="different dtypes"):
        tf.bitwise.bitwise_or(tf.constant([1], tf.int64), tf.constant([1], tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="bitwise_xor"):
        tf.bitwise.bitwise_xor(tf.constant([1, 2, 3]), tf.constant([1, 2]))


def test_bitwise_in_tf_function():
    @tf.function
    def f(x, y):
        return (x & y) | tf.bitwise.left_shift(x, 1), ~(x > y)

    for xv, yv in (([1, 6], [3, 4]), ([9, 2], [8, 7])):
        a, b = f(tf.constant(xv), tf.constant(yv))
        xa, ya = np.array(xv, np.int32), np.array(yv, np.int32)
        np.testing.assert_array_equal(a.numpy(), (xa & ya) | (xa << 1))
        np.testing.assert_array_equal(b.numpy(), ~(xa > ya))
