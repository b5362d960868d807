"""``tf.nn.conv3d``, ``conv3d_transpose``, ``conv1d_transpose``, ``max_pool3d`` and
``avg_pool3d``: values against explicit numpy loops and reshapes, transposed convolutions
against the input gradient of the forward convolution, derivatives against central
differences, ``tf.function`` replays and errors."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads
from tests.conv3d_reference import conv3d_loops, same_pads

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("strides,padding,dilations", [
    ((1, 1, 1), "VALID", (1, 1, 1)),
    ((2, 1, 2), "SAME", (1, 1, 1)),
    ((1, 1, 1), "SAME", (2, 1, 2)),
    ((3, 2, 1), "VALID", (1, 1, 1)),
    ((1, 1, 1), "VALID", (1, 2, 1)),
])
def test_conv3d_matches_loops(strides, padding, dilations):
    x = RNG.standard_normal((2, 6, 5, 7, 3))
    w = RNG.standard_normal((3, 2, 3, 3, 4))
    got = tf.nn.conv3d(x, w, strides=[1, *strides, 1], padding=padding,
                       dilations=[1, *dilations, 1])
    np.testing.assert_allclose(got.numpy(), conv3d_loops(x, w, strides, padding, dilations),
                               rtol=1e-10, atol=1e-10)


def test_conv3d_channels_first_and_float32():
    x = RNG.standard_normal((1, 4, 5, 4, 2)).astype("float32")
    w = RNG.standard_normal((2, 2, 2, 2, 3)).astype("float32")
    want = conv3d_loops(x.astype("float64"), w.astype("float64"), (1, 2, 1), "SAME", (1, 1, 1))
    got = tf.nn.conv3d(tf.constant(x), tf.constant(w), [1, 1, 2, 1, 1], "SAME")
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    nc = tf.nn.conv3d(x.transpose(0, 4, 1, 2, 3), w, [1, 1, 1, 2, 1], "SAME",
                      data_format="NCDHW")
    np.testing.assert_allclose(nc.numpy(), want.transpose(0, 4, 1, 2, 3), rtol=1e-5, atol=1e-5)


def _input_gradient(forward, x_shape, cotangent):
    """The gradient of ``sum(forward(x) * cotangent)`` in x: the transposed operation."""
    x = tf.Variable(np.zeros(x_shape))
    with tf.GradientTape() as tape:
        y = forward(x)
        loss = tf.reduce_sum(y * cotangent)
    return tape.gradient(loss, x).numpy()


@pytest.mark.parametrize("out_sizes,strides,padding,dilations", [
    ((5, 6, 7), (1, 1, 1), "SAME", (1, 1, 1)),
    ((6, 7, 8), (2, 1, 3), "SAME", (1, 1, 1)),
    ((7, 5, 9), (2, 2, 3), "VALID", (1, 1, 1)),
    ((8, 6, 5), (3, 2, 1), "VALID", (1, 1, 1)),   # stride > kernel: trailing rows unread
    ((6, 6, 6), (1, 1, 1), "VALID", (2, 1, 2)),
])
def test_conv3d_transpose_is_the_input_gradient(out_sizes, strides, padding, dilations):
    w = RNG.standard_normal((2, 3, 2, 3, 4))   # (KD, KH, KW, C_out, C_in)
    out_shape = (2,) + out_sizes + (3,)
    forward = lambda x: tf.nn.conv3d(x, w, strides, padding, dilations=dilations)  # noqa: E731
    in_shape = tuple(forward(np.zeros(out_shape)).shape)
    y = RNG.standard_normal(in_shape)
    want = _input_gradient(forward, out_shape, y)
    got = tf.nn.conv3d_transpose(y, w, out_shape, strides=[1, *strides, 1], padding=padding,
                                 dilations=dilations)
    assert got.shape == out_shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("out_width,stride,padding,dilation", [
    (12, 2, "SAME", 1), (11, 2, "SAME", 1), (13, 3, "VALID", 1), (10, 1, "VALID", 2),
    (12, 4, "VALID", 1),
])
def test_conv1d_transpose_is_the_input_gradient(out_width, stride, padding, dilation):
    w = RNG.standard_normal((3, 2, 4))      # (K, C_out, C_in)
    forward = lambda x: tf.nn.conv1d(x, w, stride, padding, dilations=dilation)  # noqa: E731
    out_shape = (2, out_width, 2)
    y = RNG.standard_normal(tuple(forward(np.zeros(out_shape)).shape))
    want = _input_gradient(forward, out_shape, y)
    got = tf.nn.conv1d_transpose(y, w, tf.constant(out_shape), strides=stride, padding=padding,
                                 dilations=dilation)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)
    ncw = tf.nn.conv1d_transpose(y.transpose(0, 2, 1), w, (2, 2, out_width), strides=[1, stride, 1],
                                 padding=padding, data_format="NCW", dilations=dilation)
    np.testing.assert_allclose(ncw.numpy(), want.transpose(0, 2, 1), rtol=1e-10, atol=1e-10)


def test_pools_with_tiling_windows_match_reshapes():
    x = RNG.standard_normal((2, 4, 6, 9, 3))
    blocks = x.reshape(2, 2, 2, 3, 2, 3, 3, 3)          # windows of 2 x 2 x 3
    got = tf.nn.max_pool3d(x, ksize=(2, 2, 3), strides=(2, 2, 3), padding="VALID")
    np.testing.assert_array_equal(got.numpy(), blocks.max(axis=(2, 4, 6)))
    got = tf.nn.avg_pool3d(x, ksize=[1, 2, 2, 3, 1], strides=[1, 2, 2, 3, 1], padding="VALID")
    np.testing.assert_allclose(got.numpy(), blocks.mean(axis=(2, 4, 6)), rtol=1e-12)


def _pool_loops(x, k, s, padding, reduce):
    """Each window's max or mean over its real (unpadded) elements, one at a time."""
    pads = [same_pads(n, kk, ss) if padding == "SAME" else (0, 0)
            for n, kk, ss in zip(x.shape[1:4], k, s)]
    sizes = [(n + a + b - kk) // ss + 1 for n, (a, b), kk, ss in zip(x.shape[1:4], pads, k, s)]
    out = np.zeros((x.shape[0], *sizes, x.shape[4]))
    for i, j, m in np.ndindex(*sizes):
        lo = [idx * ss - p[0] for idx, ss, p in zip((i, j, m), s, pads)]
        window = x[:, max(lo[0], 0):lo[0] + k[0], max(lo[1], 0):lo[1] + k[1],
                   max(lo[2], 0):lo[2] + k[2]]
        out[:, i, j, m] = reduce(window, axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("k,s,padding", [
    ((3, 2, 2), (2, 1, 2), "SAME"), ((2, 3, 3), (1, 2, 2), "VALID"), ((3, 3, 3), (2, 2, 2), "SAME"),
    ((1, 2, 2), (1, 2, 2), "SAME"), ((2, 1, 1), (3, 1, 1), "VALID"),
])
def test_pools_match_window_loops(k, s, padding):
    x = RNG.standard_normal((2, 5, 6, 7, 2))
    np.testing.assert_array_equal(tf.nn.max_pool3d(x, k, s, padding).numpy(),
                                  _pool_loops(x, k, s, padding, np.max))
    np.testing.assert_allclose(tf.nn.avg_pool3d(x, k, s, padding).numpy(),
                               _pool_loops(x, k, s, padding, np.mean), rtol=1e-12)
    nc = tf.nn.max_pool3d(x.transpose(0, 4, 1, 2, 3), k, s, padding, data_format="NCDHW")
    np.testing.assert_array_equal(nc.numpy(), _pool_loops(x, k, s, padding, np.max).transpose(
        0, 4, 1, 2, 3))


def test_max_pool3d_gradient_goes_to_the_first_maximum_in_depth_order():
    x = np.zeros((1, 2, 2, 2, 1))
    x[0, 1, 0, 1, 0] = x[0, 1, 1, 0, 0] = x[0, 0, 1, 1, 0] = 5.0   # three tied maxima
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = tf.nn.max_pool3d(xv, 2, 2, "VALID")
    grad = tape.gradient(y, xv).numpy()
    want = np.zeros_like(x)
    want[0, 0, 1, 1, 0] = 1.0
    np.testing.assert_array_equal(grad, want)


def test_gradients_match_central_differences():
    x = RNG.standard_normal((1, 4, 3, 4, 2))
    w = RNG.standard_normal((2, 2, 3, 2, 2))
    check_grads(lambda x, w: tf.nn.conv3d(x, w, (2, 1, 1), "SAME"), [x, w], order=2)
    check_grads(lambda x, w: tf.nn.conv3d(x, w, 1, "VALID", dilations=(1, 2, 1)), [x, w],
                order=1)
    y = RNG.standard_normal((1, 2, 3, 2, 2))
    check_grads(lambda y, w: tf.nn.conv3d_transpose(y, w, (1, 4, 3, 4, 2), (2, 1, 2)), [y, w],
                order=2)
    check_grads(lambda x: tf.nn.avg_pool3d(x, (2, 2, 3), (1, 2, 1), "SAME"), [x], order=2)
    # distinct values: the maxima are isolated, so max pooling is differentiable at x
    distinct = RNG.permutation(96).reshape(1, 4, 3, 4, 2) / 7.0
    check_grads(lambda x: tf.nn.max_pool3d(x, (2, 2, 2), (2, 1, 2), "SAME"), [distinct],
                order=1)
    v = RNG.standard_normal((2, 4, 3))
    k = RNG.standard_normal((3, 2, 3))
    check_grads(lambda v, k: tf.nn.conv1d_transpose(v, k, (2, 8, 2), 2), [v, k], order=2)


def test_in_tf_function_over_two_calls():
    w = RNG.standard_normal((2, 3, 3, 2, 3))

    @tf.function
    def run(x):
        conv = tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME")
        return conv, tf.nn.max_pool3d(conv, 2, 1, "VALID"), tf.nn.avg_pool3d(conv, 2, 2, "SAME")

    for _ in range(2):
        x = RNG.standard_normal((2, 4, 6, 5, 2))
        conv, top, mean = run(tf.constant(x))
        want = conv3d_loops(x, w, (1, 2, 1), "SAME", (1, 1, 1))
        np.testing.assert_allclose(conv.numpy(), want, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(top.numpy(), _pool_loops(want, (2,) * 3, (1,) * 3, "VALID",
                                                            np.max), rtol=1e-12)
        np.testing.assert_allclose(mean.numpy(), _pool_loops(want, (2,) * 3, (2,) * 3, "SAME",
                                                             np.mean), rtol=1e-10)

    k = RNG.standard_normal((3, 2, 3))

    @tf.function
    def transposed(v):
        return tf.nn.conv1d_transpose(v, k, (2, 9, 2), 2, "SAME")

    for _ in range(2):
        v = RNG.standard_normal((2, 5, 3))
        want = _input_gradient(lambda x: tf.nn.conv1d(x, k, 2, "SAME"), (2, 9, 2), v)
        np.testing.assert_allclose(transposed(tf.constant(v)).numpy(), want, rtol=1e-10)


def test_errors():
    x = np.zeros((1, 4, 4, 4, 2))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"conv3d: filters must be \(KD, KH, KW, C, O\) with C = 2"):
        tf.nn.conv3d(x, np.zeros((2, 2, 2, 3, 1)), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"conv3d: input must be 5-D"):
        tf.nn.conv3d(np.zeros((1, 4, 4, 2)), np.zeros((2, 2, 2, 2, 1)), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"conv3d: a 5x2x2 filter .* does not fit in the 4x4x4"):
        tf.nn.conv3d(x, np.zeros((5, 2, 2, 2, 1)), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="padding must be 'SAME' or 'VALID'"):
        tf.nn.conv3d(x, np.zeros((2, 2, 2, 2, 1)), 1, "FULL")
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch and channel entries"):
        tf.nn.conv3d(x, np.zeros((2, 2, 2, 2, 1)), [2, 1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"max_pool3d: a 5x1x1 window does not fit"):
        tf.nn.max_pool3d(x, (5, 1, 1), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"conv3d_transpose: an output size of 9 .* comes from inputs of "
                             r"size 5, not 4"):
        tf.nn.conv3d_transpose(x, np.zeros((2, 2, 2, 3, 2)), (1, 9, 8, 8, 3), 2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"conv1d_transpose: input \(N, W, C_in\) \(1, 4, 2\), filters"):
        tf.nn.conv1d_transpose(np.zeros((1, 4, 2)), np.zeros((3, 2, 5)), (1, 8, 2), 2)
