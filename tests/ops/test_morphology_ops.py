"""Tests of tf.nn.dilation2d / erosion2d against values computed with TensorFlow 2.21."""
import numpy
import pytest

import minitf as tf


X = numpy.array([[[[1.5, 0.5], [0.0, -1.0], [-1.0, -2.0], [-2.0, -2.0], [-1.5, 1.5]], [[0.5, 2.0],
                [0.0, 0.5], [2.0, 1.0], [0.5, 0.0], [0.5, 2.0]], [[-1.0, 1.5], [1.0, -2.0], [-0.5,
                1.5], [0.0, -2.0], [1.0, 1.0]], [[1.5, -1.5], [-2.0, 1.5], [-2.0, 0.0], [-2.0,
                -1.0], [0.0, -0.5]]]])
F = numpy.array([[[0.0, -1.0], [-1.0, -1.0], [-1.0, 0.5]], [[0.0, 0.5], [-0.5, 0.5], [0.5, -0.5]]])

# (function, strides, dilations, padding, output, d loss/d input, d loss/d filters) where
# loss = sum(output * arange(size).reshape(output.shape)).
CASES = [
    ("dilation2d", [1, 1, 1, 1], [1, 1, 1, 1], "SAME",
     [[[[0.5, 2.5], [2.5, 2.5], [1.5, 1.5], [2.0, 2.0], [0.5, 2.5]], [[1.5, 2.0], [1.0, 2.0], [1.0,
      2.0], [2.0, 2.5], [0.5, 1.5]], [[1.0, 1.0], [1.5, 2.0], [1.0, 2.0], [0.5, 1.5], [0.0, 0.0]],
      [[0.5, 2.0], [1.5, 0.5], [-2.0, 0.5], [-1.0, 0.0], [-1.0, -1.5]]]],
     [[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 7.0]], [[0.0, 4.0], [0.0, 0.0],
      [54.0,
      5.0], [26.0, 0.0], [0.0, 26.0]], [[0.0, 24.0], [34.0, 0.0], [0.0, 38.0], [28.0, 0.0], [0.0,
      75.0]], [[104.0, 0.0], [34.0, 145.0], [0.0, 0.0], [0.0, 0.0], [100.0, 76.0]]]],
     [[[152.0, 35.0], [82.0, 101.0], [48.0, 142.0]], [[36.0, 41.0], [24.0, 60.0], [38.0, 21.0]]]),
    ("dilation2d", [1, 2, 1, 1], [1, 1, 2, 1], "VALID",
     [[[[1.5, 2.5]], [[1.5, 1.5]]]],
     [[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0], [0.0,
      0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 3.0]],
      [[2.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]],
     [[[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]], [[2.0, 1.0], [0.0, 0.0], [0.0, 0.0]]]),
    ("dilation2d", [1, 2, 2, 1], [1, 2, 1, 1], "SAME",
     [[[[1.5, 2.0], [1.0, 2.0], [0.5, 1.5]], [[0.0, 0.5], [1.0, 0.5], [0.0, 0.0]]]],
     [[[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [0.0,
      0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 8.0], [16.0, 0.0], [0.0, 12.0], [10.0, 0.0], [4.0,
      16.0]], [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]]],
     [[[18.0, 0.0], [0.0, 27.0], [6.0, 0.0]], [[2.0, 0.0], [4.0, 9.0], [0.0, 0.0]]]),
    ("erosion2d", [1, 1, 1, 1], [1, 1, 1, 1], "SAME",
     [[[[-0.0, -1.5], [-1.0, -2.5], [-2.0, -2.5], [-1.5, -2.5], [-2.5, -1.5]], [[-0.0, -1.0],
      [-0.5,
      -1.0], [-0.5, -2.5], [0.5, -1.0], [-0.0, -2.5]], [[-2.0, -2.5], [-2.0, -2.5], [-2.0, -2.5],
      [-1.0, -2.5], [-1.0, -1.5]], [[-2.0, -2.0], [-2.0, -1.0], [-2.5, -1.5], [-2.5, -1.5], [-2.5,
      -1.0]]]],
     [[[[-0.0, -0.0], [-0.0, 1.0], [8.0, 8.0], [12.0, 16.0], [-0.0, -0.0]], [[-0.0, -0.0], [24.0,
      -0.0],
      [-0.0, -0.0], [18.0, -0.0], [16.0, -0.0]], [[-0.0, -0.0], [-0.0, 83.0], [38.0, -0.0], [-0.0,
      117.0], [-0.0, -0.0]], [[-0.0, 64.0], [84.0, -0.0], [90.0, -0.0], [90.0, 72.0], [-0.0,
      39.0]]]],
     [[[-78.0, -11.0], [0.0, -30.0], [-28.0, -34.0]], [[-94.0, -85.0], [0.0, -169.0], [-180.0,
      -71.0]]]),
    ("erosion2d", [1, 2, 1, 1], [1, 1, 2, 1], "VALID",
     [[[[-1.5, -2.5]], [[-1.5, -2.0]]]],
     [[[[-0.0, -0.0], [-0.0, -0.0], [-0.0, 1.0], [-0.0, -0.0], [-0.0, -0.0]], [[-0.0, -0.0], [-0.0,
      -0.0], [-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0]], [[2.0, -0.0], [-0.0, -0.0], [-0.0, -0.0],
      [-0.0, -0.0], [-0.0, -0.0]], [[-0.0, 3.0], [-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0], [-0.0,
      -0.0]]]],
     [[[0.0, 0.0], [0.0, 0.0], [0.0, -3.0]], [[0.0, 0.0], [0.0, -1.0], [-2.0, 0.0]]]),
    ("erosion2d", [1, 2, 2, 1], [1, 2, 1, 1], "SAME",
     [[[[-0.0, -1.5], [-2.0, -2.5], [-2.5, -2.5]], [[-0.5, -2.5], [-0.0, -2.5], [-0.5, -1.5]]]],
     [[[[-0.0, -0.0], [-0.0, 1.0], [-0.0, 3.0], [6.0, -0.0], [-0.0, -0.0]], [[-0.0, -0.0], [-0.0,
      -0.0],
      [-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0]], [[6.0, -0.0], [-0.0, 7.0], [8.0, -0.0], [10.0,
      25.0], [-0.0, -0.0]], [[-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0], [-0.0,
      -0.0]]]],
     [[[0.0, 0.0], [0.0, 0.0], [0.0, -5.0]], [[-2.0, -17.0], [-14.0, -3.0], [-14.0, -11.0]]]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[3]}-{c[1][1]}{c[1][2]}")
def test_values_and_gradients_match_tensorflow(case):
    name, strides, dilations, padding, expected, grad_x, grad_f = case
    fn = getattr(tf.nn, name)
    x, f = tf.constant(X), tf.constant(F)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, f])
        y = fn(x, f, strides, padding, "NHWC", dilations)
        weights = tf.reshape(tf.range(tf.size(y), dtype=tf.float64), y.shape)
        loss = tf.reduce_sum(y * weights)
    numpy.testing.assert_allclose(y.numpy(), expected)
    gx, gf = tape.gradient(loss, [x, f])
    numpy.testing.assert_allclose(gx.numpy(), grad_x)
    numpy.testing.assert_allclose(gf.numpy(), grad_f)


def test_dilation_by_zero_filter_is_max_pool():
    x = tf.constant(X)
    y = tf.nn.dilation2d(x, tf.zeros((2, 2, 2), tf.float64), [1, 2, 2, 1], "VALID", "NHWC",
                         [1, 1, 1, 1])
    numpy.testing.assert_allclose(y.numpy(), tf.nn.max_pool2d(x, 2, 2, "VALID").numpy())


def test_forward_mode_matches_reverse_mode():
    x, f = tf.constant(X), tf.constant(F)
    tangent = tf.constant(numpy.linspace(-1.0, 1.0, X.size).reshape(X.shape))
    with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
        y = tf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    jvp = acc.jvp(y).numpy()
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(tf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NHWC",
                                               [1, 1, 1, 1]))
    ones_grad = tape.gradient(total, x).numpy()
    numpy.testing.assert_allclose(jvp.sum(), (ones_grad * tangent.numpy()).sum())


def test_bad_arguments():
    x, f = tf.constant(X), tf.constant(F)
    with pytest.raises(ValueError, match="dilation2d: padding must be 'SAME' or 'VALID', got "
                                         "'FULL'"):
        tf.nn.dilation2d(x, f, [1, 1, 1, 1], "FULL", "NHWC", [1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"dilation2d: data_format must be 'NHWC', got 'NCHW'"):
        tf.nn.dilation2d(x, f, [1, 1, 1, 1], "SAME", "NCHW", [1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"filters \(KH, KW, C\) with the same C.*\(2, 3, 3\)"):
        tf.nn.dilation2d(x, tf.zeros((2, 3, 3), tf.float64), [1, 1, 1, 1], "SAME", "NHWC",
                         [1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"erosion2d: filters must be \(KH, KW, C\), got shape "
                                         r"\(2, 3\)"):
        tf.nn.erosion2d(x, tf.zeros((2, 3), tf.float64), [1, 1, 1, 1], "SAME", "NHWC",
                        [1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"dilation2d: strides must be 4 ints \[1, h, w, 1\]"):
        tf.nn.dilation2d(x, f, [2, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
