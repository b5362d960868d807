"""Tests of the tf.nn functions in minitf.ops.nn_more_ops. Expected values (outputs and the
gradients of sum(output * arange(1, size + 1))) were computed with TensorFlow 2.21."""
import numpy
import pytest

import minitf as tf


CT2_SAME = ([[[[0.0], [0.0], [-2.0], [-9.0], [2.0], [11.0]], [[0.0], [0.0], [-9.0], [1.0], [16.0],
             [1.0]], [[-2.0], [-9.0], [2.0], [4.0], [-3.0], [-11.0]], [[-9.0], [1.0], [13.0],
             [1.0], [-3.0], [-4.0]], [[-8.0], [1.0], [-6.0], [4.0], [15.0], [9.0]], [[-6.0], [4.0],
             [3.0], [1.0], [-6.0], [-1.0]]]], [[[[[84.0, -91.0], [94.0, -107.0], [85.0, -125.0]],
             [[144.0, -187.0], [154.0, -203.0], [133.0, -245.0]], [[-21.0, -17.0], [-23.0, -19.0],
             [-68.0, -157.0]]]], [[[[-37.0, 29.0]], [[-38.0, 32.0]], [[-106.0, 68.0]]], [[[-43.0,
             47.0]], [[-44.0, 50.0]], [[-118.0, 104.0]]], [[[62.0, 30.0]], [[64.0, 32.0]], [[30.0,
             103.0]]]]])
CT1 = ([[[-5.0], [6.0], [-13.0], [-6.0], [-10.0], [-6.0], [9.0], [9.0]]], [[[[17.0, 12.0], [33.0,
        24.0], [49.0, 36.0], [38.0, 21.0]]], [[[7.0, 8.0]], [[8.0, 6.0]], [[-18.0, -5.0]]]])
CT3 = ([[[[[0.0], [0.0], [0.0], [0.0]], [[0.0], [-1.0], [0.0], [-2.0]], [[0.0], [0.0], [0.0],
        [0.0]], [[0.0], [3.0], [0.0], [-2.0]]], [[[3.0], [-1.0], [6.0], [-2.0]], [[1.0], [-1.0],
        [2.0], [-2.0]], [[-9.0], [3.0], [6.0], [-2.0]], [[-3.0], [3.0], [2.0], [-2.0]]], [[[0.0],
        [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]], [[0.0],
        [-1.0], [0.0], [1.0]]], [[[0.0], [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0]],
        [[3.0], [-1.0], [-3.0], [1.0]], [[1.0], [-1.0], [-1.0], [1.0]]]]], [[[[[[26.0], [28.0]],
        [[34.0], [36.0]]], [[[58.0], [60.0]], [[66.0], [68.0]]]]], [[[[[0.0]], [[2.0]]], [[[8.0]],
        [[10.0]]]], [[[[32.0]], [[34.0]]], [[[40.0]], [[42.0]]]]]])
ATROUS_SAME = ([[[[4.0, -2.0], [2.0, 1.0], [-8.0, 8.0], [-4.0, 6.0]], [[-4.0, 0.0], [3.0, -2.0],
                [3.0, -7.0], [5.0, -4.0]], [[-10.0, 1.0], [-9.0, 9.0], [16.0, -5.0], [2.0, 4.0]],
                [[2.0, 1.0], [1.0, -4.0], [-7.0, -5.0], [-2.0, -4.0]]]], [[[[[35.0], [13.0],
                [13.0], [-40.0]], [[65.0], [21.0], [25.0], [-60.0]], [[97.0], [37.0], [41.0],
                [-76.0]], [[22.0], [40.0], [44.0], [20.0]]]], [[[[-3.0], [-2.0]], [[-55.0],
                [-56.0]]], [[[97.0], [104.0]], [[-4.0], [0.0]]]]])
ATROUS_VALID = ([[[[6.0, -3.0], [2.0, -1.0], [-4.0, 8.0], [4.0, 0.0], [-2.0, 3.0], [-6.0, 9.0]],
                 [[2.0, -1.0], [4.0, -2.0], [2.0, 1.0], [-8.0, 8.0], [-4.0, 6.0], [4.0, -6.0]],
                 [[-12.0, 0.0], [-4.0, 0.0], [3.0, -2.0], [3.0, -7.0], [5.0, -4.0], [-3.0, 15.0]],
                 [[4.0, -4.0], [-10.0, 1.0], [-9.0, 9.0], [16.0, -5.0], [2.0, 4.0], [-6.0, 2.0]],
                 [[6.0, 3.0], [2.0, 1.0], [1.0, -4.0], [-7.0, -5.0], [-2.0, -4.0], [3.0, 6.0]],
                 [[-6.0, -3.0], [6.0, 3.0], [3.0, 6.0], [-7.0, -8.0], [0.0, 0.0], [2.0, 4.0]]]],
                 [[[[[21.0], [25.0], [29.0], [33.0]], [[45.0], [49.0], [53.0], [57.0]], [[69.0],
                 [73.0], [77.0], [81.0]], [[93.0], [97.0], [101.0], [105.0]]]], [[[[84.0], [94.0]],
                 [[124.0], [134.0]]], [[[324.0], [334.0]], [[364.0], [374.0]]]]])
P_MAX_VALID_DIL = ([[[[5.0], [5.0], [5.0]], [[5.0], [3.0], [3.0]], [[5.0], [5.0], [5.0]]]],
                    [[[[[0.0], [0.0], [4.0], [0.0], [0.0]], [[0.0], [0.0], [6.0], [0.0], [0.0]],
                    [[7.0], [10.0], [9.0], [0.0], [0.0]], [[4.0], [0.0], [0.0], [5.0], [0.0]],
                    [[0.0], [0.0], [0.0], [0.0], [0.0]]]]])
P_AVG_VALID_DIL = ([[[[3.25], [4.75], [3.0], [0.0]], [[0.75], [-1.25], [0.75], [1.5]], [[3.25],
                    [3.5], [2.0], [0.75]]]], [[[[[0.25], [0.75], [1.25], [1.75], [1.0]], [[1.25],
                    [2.75], [3.25], [3.75], [2.0]], [[2.5], [5.5], [6.5], [7.5], [4.0]], [[1.25],
                    [2.75], [3.25], [3.75], [2.0]], [[2.25], [4.75], [5.25], [5.75], [3.0]]]]])
P_AVG_VALID_STRIDE = ([[[[2.333333333], [1.0]], [[1.666666667], [1.333333333]]]],
                       [[[[[0.1666666667], [0.1666666667], [0.5], [0.3333333333], [0.3333333333]],
                       [[0.1666666667], [0.1666666667], [0.5], [0.3333333333], [0.3333333333]],
                       [[0.5], [0.5], [1.166666667], [0.6666666667], [0.6666666667]], [[0.5],
                       [0.5], [1.166666667], [0.6666666667], [0.6666666667]], [[0.0], [0.0], [0.0],
                       [0.0], [0.0]]]]])
P_MAX_SAME_STRIDE = ([[[[4.0], [5.0], [2.0]], [[5.0], [5.0], [4.0]], [[5.0], [4.0], [3.0]]]],
                      [[[[[0.0], [1.0], [2.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [3.0], [0.0]],
                      [[4.0], [5.0], [0.0], [6.0], [0.0]], [[7.0], [0.0], [0.0], [9.0], [0.0]],
                      [[0.0], [0.0], [8.0], [0.0], [0.0]]]]])
P1_AVG = ([[[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [2.333333333, 0.0], [0.0, -2.666666667],
           [-0.3333333333, -0.6666666667], [-2.5, -1.0]]], [[[[1.5, 2.333333333], [3.166666667,
           4.333333333], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0], [13.16666667, 14.33333333],
           [10.16666667, 11.0]]]])
P1_MAX_DIL = ([[[3.0, 5.0], [4.0, 0.0], [3.0, 4.0], [0.0, 2.0]]], [[[[1.0, 2.0], [0.0, 0.0], [5.0,
               6.0], [7.0, 0.0], [3.0, 4.0], [0.0, 0.0], [0.0, 8.0]]]])
WSTB = ([[[[0.0], [2.0], [4.0], [6.0], [4.0]], [[-12.0], [-2.0], [4.0], [7.0], [14.0]], [[-6.0],
         [-2.0], [-22.0], [-25.0], [0.0]], [[-15.0], [-24.0], [-27.0], [-13.0], [-22.0]], [[15.0],
         [0.0], [6.0], [18.0], [-9.0]]]], [[[[[-21.0], [-42.0], [-48.0], [-54.0], [-27.0]],
         [[-32.0], [-66.0], [-70.0], [-74.0], [-42.0]], [[-37.0], [-86.0], [-90.0], [-94.0],
         [-57.0]], [[-42.0], [-106.0], [-110.0], [-114.0], [-72.0]], [[34.0], [36.0], [38.0],
         [40.0], [0.0]]]]])
DW_IN = [[[[0.0, 0.0], [10.0, 5.0], [-6.0, 4.0], [11.0, -9.0]], [[-2.0, -1.0], [0.0, 5.0], [3.0,
         7.0], [-2.0, -11.0]], [[0.0, -4.0], [5.0, -6.0], [-3.0, -2.0], [13.0, -13.0]], [[-1.0,
         -4.0], [0.0, -4.0], [0.0, 0.0], [-1.0, -12.0]]]]
DW_F = [[[[3.0, 1.0], [3.0, -10.0]], [[1.0, 3.0], [-1.0, -9.0]]], [[[-8.0, 3.0], [7.0, 2.0]],
        [[-2.0, 1.0], [5.0, -7.0]]]]
BN_SCALE = [[5.097501873, 3.19962507, 2.29601196], [3.098501124, -1.299812535, 6.28803588]]
BN_NOSCALE = [[2.598750937, 1.199875023, -1.69601196], [1.599250562, -0.2999375117, -5.68803588]]
ISO_TRUE = ([[2.5, 2.5, 2.5, 2.5, 0.5], [5.0, 2.75, 2.75, 2.75, 2.75]], [[0, 0, 0, 0, 1], [0, 1, 1,
             1, 1]], [[2.5, 2.5, 2.5, 2.5, 5.0], [6.0, 8.5, 8.5, 8.5, 8.5]])
ISO_FALSE = ([[1.0, 2.375, 2.375, 2.375, 2.375], [2.25, 2.25, 2.25, 2.25, 7.0]], [[0, 1, 1, 1, 1],
              [0, 0, 0, 0, 1]], [[1.0, 3.5, 3.5, 3.5, 3.5], [7.5, 7.5, 7.5, 7.5, 10.0]])
ISO_AXIS0 = ([[2.5, 5.0], [2.5, 2.75], [2.5, 2.75], [2.5, 2.75], [0.5, 2.75]], [[0, 0], [0, 1], [0,
              1], [0, 1], [1, 1]])
X2 = [[[[0.0, 0.0], [2.0, 3.0], [-3.0, -2.0]], [[2.0, 3.0], [-2.0, -1.0], [3.0, -1.0]],
      [[-2.0, 2.0], [-2.0, -1.0], [1.0, 0.0]]]]
W2 = [[[[2.0, -2.0]], [[-3.0, -1.0]], [[-1.0, 2.0]]], [[[0.0, -3.0]], [[-1.0, 1.0]], [[2.0,
      2.0]]], [[[3.0, -2.0]], [[3.0, -3.0]], [[0.0, -2.0]]]]
X1 = [[[2.0, -3.0], [-2.0, -2.0], [-2.0, 2.0], [3.0, 1.0]]]
W1 = [[[2.0, 3.0]], [[3.0, 0.0]], [[3.0, 3.0]]]
X3 = [[[[[1.0], [2.0]], [[-3.0], [2.0]]], [[[0.0], [0.0]], [[1.0], [-1.0]]]]]
W3 = [[[[[0.0]], [[0.0]]], [[[0.0]], [[-1.0]]]], [[[[3.0]], [[-1.0]]], [[[1.0]], [[-1.0]]]]]
XA = [[[[3.0], [1.0], [1.0], [3.0]], [[1.0], [2.0], [2.0], [-2.0]], [[-3.0], [-1.0], [-2.0],
      [3.0]], [[3.0], [-3.0], [0.0], [2.0]]]]
WA = [[[[2.0], [-1.0]], [[-2.0], [3.0]]], [[[-2.0], [-1.0]], [[1.0], [2.0]]]]
XP = [[[[-1.0], [4.0], [5.0], [-2.0], [-4.0]], [[1.0], [2.0], [3.0], [2.0], [2.0]], [[5.0],
      [5.0], [5.0], [4.0], [2.0]], [[5.0], [-5.0], [-5.0], [3.0], [-1.0]], [[3.0], [0.0],
      [4.0], [-5.0], [2.0]]]]
XP1 = [[[3.0, 5.0], [-3.0, -3.0], [3.0, 4.0], [0.0, -4.0], [4.0, 0.0], [-4.0, -4.0], [-1.0, 2.0]]]
FW = [[[[-3.0]], [[-3.0]]], [[[2.0]], [[0.0]]]]
XD = [[[[1.0, -2.0], [3.0, 3.0], [-3.0, -2.0], [-2.0, -2.0]], [[1.0, -1.0], [0.0, -2.0],
      [3.0, 1.0], [1.0, -3.0]], [[-2.0, 3.0], [-1.0, 3.0], [2.0, -3.0], [0.0, 0.0]], [[0.0,
      -3.0], [2.0, -2.0], [-1.0, -1.0], [-1.0, 0.0]]]]
WD = [[[[3.0, 3.0], [2.0, 2.0]], [[-3.0, 2.0], [3.0, -2.0]]], [[[-2.0, -3.0], [2.0, 3.0]],
      [[1.0, 1.0], [2.0, -3.0]]]]
GD = [[[[-2.0, 2.0, 1.0, -1.0], [-3.0, 1.0, -1.0, 3.0]], [[-1.0, 1.0, -2.0, 0.0], [-3.0, 2.0,
      -3.0, 2.0]]]]
XB = [[3.0, 1.0, 1.0], [2.0, -2.0, -1.0]]


def _c(values):
    return tf.constant(numpy.array(values, numpy.float64))


def _weighted_sum(y):
    return tf.reduce_sum(y * tf.reshape(tf.range(1, tf.size(y) + 1, dtype=y.dtype), y.shape))


def _check(fn, inputs, expected, rtol=1e-9):
    """``fn(*inputs)`` and the gradients of its weighted sum against TF's values."""
    tensors = [tf.constant(numpy.array(x, numpy.float64)) for x in inputs]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        y = fn(*tensors)
        loss = _weighted_sum(y)
    value, grads = expected
    numpy.testing.assert_allclose(y.numpy(), value, rtol=rtol, atol=1e-12)
    for got, want in zip(tape.gradient(loss, tensors), grads):
        numpy.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-12)


# --- transposed convolutions ---------------------------------------------------------------------

def test_conv_transpose_dispatches_on_rank():
    _check(lambda x, w: tf.nn.conv_transpose(x, w, [1, 6, 6, 1], 2, "SAME"), (X2, W2), CT2_SAME)
    _check(lambda x, w: tf.nn.conv_transpose(x, w, [1, 8, 1], 2, "SAME"), (X1, W1), CT1)
    _check(lambda x, w: tf.nn.conv_transpose(x, w, [1, 4, 4, 4, 1], 2, "SAME"), (X3, W3), CT3)


def test_conv_transpose_nchw_and_dilations_agree_with_nhwc_and_atrous():
    x, w = _c(X2), _c(W2)
    nhwc = tf.nn.conv_transpose(x, w, [1, 7, 7, 1], [1, 2, 2, 1], "VALID")
    nchw = tf.nn.conv_transpose(tf.transpose(x, (0, 3, 1, 2)), w, [1, 1, 7, 7], [1, 1, 2, 2],
                                "VALID", data_format="NCHW")
    numpy.testing.assert_allclose(tf.transpose(nchw, (0, 2, 3, 1)).numpy(), nhwc.numpy())
    xa, wa = _c(XA), _c(WA)
    dilated = tf.nn.conv_transpose(xa, wa, [1, 6, 6, 2], 1, "VALID", dilations=2)
    numpy.testing.assert_allclose(dilated.numpy(), ATROUS_VALID[0])


def test_atrous_conv2d_transpose():
    _check(lambda x, w: tf.nn.atrous_conv2d_transpose(x, w, [1, 4, 4, 2], 2, "SAME"), (XA, WA),
           ATROUS_SAME)
    _check(lambda x, w: tf.nn.atrous_conv2d_transpose(x, w, [1, 6, 6, 2], 2, "VALID"), (XA, WA),
           ATROUS_VALID)


def test_conv_transpose_errors():
    x, w = _c(X2), _c(W2)
    with pytest.raises(ValueError, match="conv_transpose: output_shape must have 3, 4 or 5 "
                                         "entries .*got 2"):
        tf.nn.conv_transpose(x, w, [6, 6], 2)
    with pytest.raises(ValueError, match=r"conv_transpose: an output size of 5 .* comes from "
                                         r"inputs of size 3, not 2|not 3"):
        tf.nn.conv_transpose(x, w, [1, 5, 6, 1], 3, "SAME")
    with pytest.raises(ValueError, match="atrous_conv2d_transpose: rate must be at least 1, "
                                         "got 0"):
        tf.nn.atrous_conv2d_transpose(x, w, [1, 6, 6, 1], 0, "SAME")
    with pytest.raises(ValueError, match="atrous_conv2d_transpose: padding must be 'SAME' or "
                                         "'VALID', got 'FULL'"):
        tf.nn.atrous_conv2d_transpose(x, w, [1, 3, 3, 1], 1, "FULL")


# --- pool / with_space_to_batch ------------------------------------------------------------------

@pytest.mark.parametrize("expected, kwargs", [
    (P_MAX_VALID_DIL, dict(window_shape=[2, 2], pooling_type="MAX", padding="VALID",
                           dilations=[2, 2])),
    (P_AVG_VALID_DIL, dict(window_shape=[2, 2], pooling_type="AVG", padding="VALID",
                           dilations=[2, 1])),
    (P_AVG_VALID_STRIDE, dict(window_shape=[2, 3], pooling_type="AVG", padding="VALID",
                              strides=[2, 2])),
    (P_MAX_SAME_STRIDE, dict(window_shape=[3, 3], pooling_type="MAX", padding="SAME",
                             strides=[2, 2]))], ids=["max-dil", "avg-dil", "avg-stride",
                                                     "max-same"])
def test_pool_2d(expected, kwargs):
    _check(lambda x: tf.nn.pool(x, **kwargs), (XP,), expected)


def test_pool_1d_3d_and_channels_first():
    _check(lambda x: tf.nn.pool(x, [3], "AVG", padding="SAME"), (XP1,), P1_AVG)
    _check(lambda x: tf.nn.pool(x, [2], "MAX", padding="VALID", dilations=[3]), (XP1,),
           P1_MAX_DIL)
    x = _c(XP1)
    ncw = tf.nn.pool(tf.transpose(x, (0, 2, 1)), [2], "MAX", padding="VALID", dilations=[3],
                     data_format="NCW")
    numpy.testing.assert_allclose(tf.transpose(ncw, (0, 2, 1)).numpy(), P1_MAX_DIL[0])
    x3 = tf.reshape(tf.range(2 * 4 * 4 * 4, dtype=tf.float64), (2, 4, 4, 4, 1))
    numpy.testing.assert_allclose(tf.nn.pool(x3, [2, 2, 2], "MAX", strides=[2, 2, 2]).numpy(),
                                  tf.nn.max_pool3d(x3, 2, 2, "VALID").numpy())


def test_pool_errors():
    x = _c(XP)
    with pytest.raises(ValueError, match="pool: 'SAME' padding is not supported with "
                                         r"dilations \[2, 2\]"):
        tf.nn.pool(x, [2, 2], "MAX", padding="SAME", dilations=2)
    with pytest.raises(ValueError, match=r"pool: strides \[2, 2\] > 1 cannot be combined"):
        tf.nn.pool(x, [2, 2], "MAX", strides=2, dilations=2)
    with pytest.raises(ValueError, match=r"pool: strides \[3, 3\] larger than window_shape"):
        tf.nn.pool(x, [2, 2], "AVG", strides=3)
    with pytest.raises(ValueError, match="pool: pooling_type must be 'MAX' or 'AVG', got 'MIN'"):
        tf.nn.pool(x, [2, 2], "MIN")
    with pytest.raises(ValueError, match=r"pool: window_shape \[2\] needs an input of rank 3"):
        tf.nn.pool(x, [2], "MAX")


def test_with_space_to_batch_runs_a_dilated_convolution():
    filters = _c(FW)
    _check(lambda x: tf.nn.with_space_to_batch(
        x, [2, 2], "SAME", lambda inp, n, pad: tf.nn.convolution(inp, filters, padding=pad),
        filter_shape=[2, 2]), (XP,), WSTB)
    calls = []
    x = _c(XP)
    same = tf.nn.with_space_to_batch(x, [1, 1], "SAME",
                                     lambda inp, n, pad: calls.append((n, pad)) or inp)
    assert calls == [(2, "SAME")] and same is x
    with pytest.raises(ValueError, match="with_space_to_batch: filter_shape must be given for "
                                         "SAME padding"):
        tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda inp, n, pad: inp)
    with pytest.raises(ValueError, match=r"spatial_dims must be 2 increasing positive ints, "
                                         r"got \[2, 1\]"):
        tf.nn.with_space_to_batch(x, [2, 2], "VALID", lambda inp, n, pad: inp,
                                  spatial_dims=[2, 1])


# --- depthwise gradients, batch norm -------------------------------------------------------------

def test_depthwise_backprops_match_tensorflow():
    got = tf.nn.depthwise_conv2d_backprop_input([1, 4, 4, 2], _c(WD), _c(GD),
                                                [1, 2, 2, 1], "SAME")
    numpy.testing.assert_allclose(got.numpy(), DW_IN)
    got = tf.nn.depthwise_conv2d_backprop_filter(_c(XD), [2, 2, 2, 2], _c(GD),
                                                 [1, 2, 2, 1], "SAME")
    numpy.testing.assert_allclose(got.numpy(), DW_F)
    with pytest.raises(ValueError, match=r"out_backprop has shape \(1, 3, 3, 4\), the "
                                         r"convolution's output has shape \(1, 2, 2, 4\)"):
        tf.nn.depthwise_conv2d_backprop_input([1, 4, 4, 2], _c(WD),
                                              tf.zeros((1, 3, 3, 4), tf.float64), [1, 2, 2, 1],
                                              "SAME")


def test_depthwise_backprop_input_is_differentiable_in_the_filter():
    # backprop_input is linear in the filter: its gradient is backprop_input of the weights.
    w, g = _c(WD), _c(GD)
    weights = tf.reshape(tf.range(1, 33, dtype=tf.float64), (1, 4, 4, 2))
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf.nn.depthwise_conv2d_backprop_input([1, 4, 4, 2], w, g, [1, 2, 2, 1], "SAME")
        loss = tf.reduce_sum(y * weights)
    expected = tf.nn.depthwise_conv2d_backprop_filter(weights, [2, 2, 2, 2], g, [1, 2, 2, 1],
                                                      "SAME")
    numpy.testing.assert_allclose(tape.gradient(loss, w).numpy(), expected.numpy())


def test_batch_norm_with_global_normalization():
    args = (numpy.array([0.5, -1.0, 2.0]), numpy.array([1.0, 4.0, 0.25]),
            numpy.array([0.1, 0.2, 0.3]), numpy.array([2.0, 3.0, -1.0]), 0.001)
    numpy.testing.assert_allclose(
        tf.nn.batch_norm_with_global_normalization(XB, *args, True).numpy(), BN_SCALE)
    numpy.testing.assert_allclose(
        tf.nn.batch_norm_with_global_normalization(XB, *args, False).numpy(), BN_NOSCALE)


# --- CTC helpers ---------------------------------------------------------------------------------

def test_collapse_repeated():
    # TF 2.21: collapse_repeated([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0]], [4, 2])
    labels, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0]]),
                                              tf.constant([4, 2]))
    assert labels.numpy().tolist() == [[1, 2], [4, 0]] and labels.dtype == tf.int32
    assert lengths.numpy().tolist() == [2, 1] and lengths.dtype == tf.int32
    with pytest.raises(ValueError, match="collapse_repeated: seq_length has 1 entries for 2 "
                                         "label rows"):
        tf.nn.collapse_repeated([[1, 1], [2, 2]], [2])


def test_ctc_unique_labels():
    # The docstring's example, and TF 2.21's result for a second row.
    unique, index = tf.nn.ctc_unique_labels(tf.constant([[3, 4, 4, 3], [1, 1, 0, 0]]))
    assert unique.numpy().tolist() == [[3, 4, 0, 0], [1, 0, 0, 0]] and unique.dtype == tf.int64
    assert index.numpy().tolist() == [[0, 1, 1, 0], [0, 0, 1, 1]] and index.dtype == tf.int32
    with pytest.raises(ValueError, match=r"ctc_unique_labels: labels must be an integer matrix "
                                         r"\(batch, max_length\), got float32 of shape \(3,\)"):
        tf.nn.ctc_unique_labels([1.0, 2.0, 3.0])


# --- sparse embedding lookups --------------------------------------------------------------------

PARAMS = numpy.arange(12.0).reshape(4, 3)


def _ids_and_weights():
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 1], tf.int64), [4, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([2.0, 1.0, 0.5],
                                                                    tf.float64), [4, 2])
    return ids, weights


def test_embedding_lookup_sparse_matches_tensorflow():
    ids, weights = _ids_and_weights()
    params = tf.constant(PARAMS)
    # TF 2.21: rows after the last row with an id are left out (3 rows, not 4).
    numpy.testing.assert_allclose(tf.nn.embedding_lookup_sparse(params, ids, None).numpy(),
                                  [[6, 7, 8], [0, 0, 0], [3, 4, 5]])
    numpy.testing.assert_allclose(
        tf.nn.embedding_lookup_sparse(params, ids, weights, combiner="sqrtn").numpy(),
        [[6.70820393, 8.04984472, 9.39148551], [0, 0, 0], [3, 4, 5]], rtol=1e-8)
    numpy.testing.assert_allclose(
        tf.nn.embedding_lookup_sparse(params, ids, weights, combiner="sum").numpy(),
        [[15, 18, 21], [0, 0, 0], [1.5, 2, 2.5]])


def test_embedding_lookup_sparse_gradient_and_max_norm():
    ids, weights = _ids_and_weights()
    params = tf.constant(PARAMS)
    with tf.GradientTape() as tape:
        tape.watch(params)
        loss = tf.reduce_sum(tf.nn.embedding_lookup_sparse(params, ids, weights,
                                                           combiner="mean"))
    # row 0 = (2 p1 + p3) / 3, row 2 = p1: d/dp1 = 2/3 + 1, d/dp3 = 1/3.
    numpy.testing.assert_allclose(tape.gradient(loss, params).numpy(),
                                  [[0] * 3, [5 / 3] * 3, [0] * 3, [1 / 3] * 3])
    clipped = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum", max_norm=1.0)
    unit = PARAMS / numpy.linalg.norm(PARAMS, axis=1, keepdims=True)
    numpy.testing.assert_allclose(clipped.numpy(), [unit[1] + unit[3], [0, 0, 0], unit[1]])


def test_safe_embedding_lookup_sparse():
    ids, weights = _ids_and_weights()
    params = tf.constant(PARAMS)
    # TF 2.21's value: every row, empty ones zero.
    numpy.testing.assert_allclose(tf.nn.safe_embedding_lookup_sparse(params, ids, weights).numpy(),
                                  [[5, 6, 7], [0, 0, 0], [3, 4, 5], [0, 0, 0]])
    # Negative ids and non-positive weights are dropped; empty rows take default_id's row.
    ids3 = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1]],
                           tf.constant([2, -1, 3, 0], tf.int64), [2, 2, 2])
    w3 = tf.SparseTensor(ids3.indices, tf.constant([1.0, 5.0, 0.0, 3.0], tf.float64), [2, 2, 2])
    got = tf.nn.safe_embedding_lookup_sparse(params, ids3, w3, combiner="mean", default_id=1)
    numpy.testing.assert_allclose(got.numpy(), [[PARAMS[2], PARAMS[1]], [PARAMS[1], PARAMS[0]]])
    with tf.GradientTape() as tape:
        tape.watch(params)
        loss = tf.reduce_sum(tf.nn.safe_embedding_lookup_sparse(params, ids3, w3,
                                                                combiner="sum"))
    # "sum" keeps the zero weight of id 3: ids 2, 0 (weight 3) and 3 (weight 0) count.
    numpy.testing.assert_allclose(tape.gradient(loss, params).numpy(),
                                  [[3] * 3, [0] * 3, [1] * 3, [0] * 3])


def test_embedding_lookup_sparse_errors():
    ids, _ = _ids_and_weights()
    with pytest.raises(ValueError, match="embedding_lookup_sparse: combiner must be 'mean', "
                                         "'sqrtn' or 'sum', got 'max'"):
        tf.nn.embedding_lookup_sparse(PARAMS, ids, None, combiner="max")
    with pytest.raises(TypeError, match="embedding_lookup_sparse: sp_ids must be a "
                                        "SparseTensor, got list"):
        tf.nn.embedding_lookup_sparse(PARAMS, [1, 2], None)
    with pytest.raises(ValueError, match=r"safe_embedding_lookup_sparse: sparse_ids must have "
                                         r"rank >= 2, got dense shape \[3\]"):
        tf.nn.safe_embedding_lookup_sparse(
            PARAMS, tf.SparseTensor([[0]], tf.constant([1], tf.int64), [3]))


# --- isotonic regression -------------------------------------------------------------------------

XI = [[1.0, 3.0, 2.0, 4.0, 0.5], [5.0, 1.0, 1.0, 2.0, 7.0]]


@pytest.mark.parametrize("decreasing, expected", [(True, ISO_TRUE), (False, ISO_FALSE)])
def test_isotonic_regression(decreasing, expected):
    x = tf.constant(XI, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        output, segments = tf.nn.isotonic_regression(x, decreasing=decreasing)
        loss = _weighted_sum(output)
    numpy.testing.assert_allclose(output.numpy(), expected[0])
    assert segments.numpy().tolist() == expected[1] and segments.dtype == tf.int32
    numpy.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected[2])


def test_isotonic_regression_axis_ties_and_dtypes():
    result = tf.nn.isotonic_regression(tf.constant(numpy.array(XI).T), axis=0)
    numpy.testing.assert_allclose(result.output.numpy(), ISO_AXIS0[0])
    assert result.segments.numpy().tolist() == ISO_AXIS0[1]
    # TF 2.21: equal neighbouring means merge into one segment; float32 stays float32.
    output, segments = tf.nn.isotonic_regression(tf.constant([[3.0, 3.0, 1.0, 5.0, 5.0]]))
    numpy.testing.assert_allclose(output.numpy(), [[3.4] * 5], rtol=1e-6)
    assert segments.numpy().tolist() == [[0] * 5] and output.dtype == tf.float32
    # Integer inputs give float64, as TF: [[1, 2, 2, 0]] -> 5/3 x 3, 0.
    output, segments = tf.nn.isotonic_regression(tf.constant([[1, 2, 2, 0]]))
    assert output.dtype == tf.float64 and segments.numpy().tolist() == [[0, 0, 0, 1]]
    numpy.testing.assert_allclose(output.numpy(), [[5 / 3, 5 / 3, 5 / 3, 0]])
    with pytest.raises(ValueError, match="isotonic_regression: axis 2 is out of range for "
                                         "rank 2"):
        tf.nn.isotonic_regression(tf.constant(XI), axis=2)
