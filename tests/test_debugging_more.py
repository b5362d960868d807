"""tf.debugging: assert_integer, assert_rank_in, assert_proper_iterable,
assert_same_float_dtype, is_numeric_tensor and the recorded switches.

Outcomes (None, the error type, the returned dtype) were checked against TensorFlow 2.21.
"""
import numpy as np
import pytest

import minitf as tf


def test_assert_integer():
    assert tf.debugging.assert_integer(tf.constant([1])) is None
    with pytest.raises(TypeError, match="assert_integer: expected \"x\" to be of an integer "
                       "type, found a tensor of dtype float32"):
        tf.debugging.assert_integer(tf.constant([1.0]))
    with pytest.raises(TypeError, match="^hey: assert_integer"):
        tf.debugging.assert_integer(tf.constant([1.0]), message="hey")


def test_assert_rank_in():
    assert tf.debugging.assert_rank_in(tf.zeros([2, 3]), (1, 2)) is None
    with pytest.raises(ValueError, match="must have rank in \\(1, 3\\). Received rank 2, shape "
                       "\\(2, 3\\)"):
        tf.debugging.assert_rank_in(tf.zeros([2, 3]), [1, 3])


def test_assert_proper_iterable():
    assert tf.debugging.assert_proper_iterable([1, 2]) is None
    assert tf.debugging.assert_proper_iterable((x for x in [1])) is None
    for bad in ("abc", b"abc", tf.constant([1]), np.array([1])):
        with pytest.raises(TypeError, match="\"proper\" iterable .* found "
                           f"{type(bad).__name__}"):
            tf.debugging.assert_proper_iterable(bad)
    with pytest.raises(TypeError, match="to be iterable, found int"):
        tf.debugging.assert_proper_iterable(5)


def test_assert_same_float_dtype():
    same = tf.debugging.assert_same_float_dtype
    assert same([tf.zeros([2], tf.float64)]) == tf.float64
    assert same(None, tf.float16) == tf.float16
    assert same() == tf.float32
    with pytest.raises(ValueError, match="type=float64, must be of the same type \\(float32\\)"):
        same([tf.zeros([2]), tf.zeros([2], tf.float64)])
    with pytest.raises(ValueError, match="expected a floating point type, got int32"):
        same([tf.zeros([2], tf.int32)])
    with pytest.raises(ValueError, match="type=float32, must be of the same type \\(float64\\)"):
        same([tf.zeros([2])], tf.float64)


def test_is_numeric_tensor():
    check = tf.debugging.is_numeric_tensor
    assert check(tf.constant([1])) is True
    assert check(tf.constant([1.5])) is True
    assert check(tf.constant(["a"])) is False
    assert check(tf.constant([True])) is False
    assert check(np.array([1])) is False


def test_recorded_switches():
    assert tf.debugging.is_traceback_filtering_enabled() is True
    tf.debugging.disable_traceback_filtering()
    try:
        assert tf.debugging.is_traceback_filtering_enabled() is False
    finally:
        tf.debugging.enable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled() is True
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    try:
        assert tf.debugging.get_log_device_placement() is True
    finally:
        tf.debugging.set_log_device_placement(False)
    assert tf.debugging.get_log_device_placement() is False
