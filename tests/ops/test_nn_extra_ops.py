"""The ``tf.nn`` functions of ``minitf/ops/nn_extra_ops.py`` against independent numpy
computations of TF's definitions (tensorflow.org tf.nn API pages) and, for the transposed
convolution, against its definition as the input gradient of ``conv2d``."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

RNG = np.random.default_rng(11)


def _conv1d_reference(x, w, stride):
    n, width, _ = x.shape
    k, _, o = w.shape
    out_w = (width - k) // stride + 1
    out = np.zeros((n, out_w, o))
    for i in range(out_w):
        out[:, i] = np.einsum("nkc,kco->no", x[:, i * stride:i * stride + k], w)
    return out


def test_conv1d_matches_the_sliding_window_sum():
    x, w = RNG.normal(size=(2, 9, 3)), RNG.normal(size=(3, 3, 4))
    np.testing.assert_allclose(tf.nn.conv1d(x, w, 2, "VALID").numpy(),
                               _conv1d_reference(x, w, 2), rtol=1e-10)
    same = tf.nn.conv1d(x, w, 1, "SAME").numpy()
    np.testing.assert_allclose(same, _conv1d_reference(np.pad(x, [(0, 0), (1, 1), (0, 0)]), w, 1),
                               rtol=1e-10)
    np.testing.assert_allclose(tf.nn.convolution(x, w, padding="SAME").numpy(), same)
    with pytest.raises(ValueError, match=r"conv1d: input must be \(N, W, C\)"):
        tf.nn.conv1d(x[0], w, 1, "VALID")


@pytest.mark.parametrize("in_hw, k, stride, padding", [
    ((5, 5), (3, 3), 2, "SAME"), ((6, 4), (3, 2), 2, "SAME"), ((4, 4), (3, 3), 1, "VALID"),
    ((5, 6), (2, 3), 3, "VALID")])
def test_conv2d_transpose_is_the_input_gradient_of_conv2d(in_hw, k, stride, padding):
    x = tf.constant(RNG.normal(size=(2,) + in_hw + (3,)))
    w = tf.constant(RNG.normal(size=k + (3, 4)))
    y = tf.nn.conv2d(x, w, stride, padding)
    cotangent = tf.constant(RNG.normal(size=tuple(y.shape)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        inner = tf.reduce_sum(tf.nn.conv2d(x, w, stride, padding) * cotangent)
    want = tape.gradient(inner, x).numpy()
    got = tf.nn.conv2d_transpose(cotangent, w, x.shape, stride, padding).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="comes from inputs of size"):
        tf.nn.conv2d_transpose(cotangent, w, (2, in_hw[0] + 7, in_hw[1], 3), stride, padding)


def test_pool1d_depth_space_and_crelu():
    x = RNG.normal(size=(2, 6, 3))
    np.testing.assert_allclose(tf.nn.max_pool1d(x, 2, 2, "VALID").numpy(),
                               x.reshape(2, 3, 2, 3).max(axis=2))
    np.testing.assert_allclose(tf.nn.avg_pool1d(x, 3, 3, "VALID").numpy(),
                               x.reshape(2, 2, 3, 3).mean(axis=2))
    img = np.arange(2 * 2 * 3 * 8.0).reshape(2, 2, 3, 8)
    deep = tf.nn.depth_to_space(img, 2).numpy()
    assert deep.shape == (2, 4, 6, 2)
    # output[n, h*b + i, w*b + j, c] = input[n, h, w, (i*b + j)*C + c]
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(deep[:, i::2, j::2, :],
                                          img[..., (i * 2 + j) * 2:(i * 2 + j) * 2 + 2])
    np.testing.assert_array_equal(tf.nn.space_to_depth(deep, 2).numpy(), img)
    np.testing.assert_array_equal(tf.nn.crelu(x).numpy(),
                                  np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1))


def test_local_response_normalization_sums_the_channel_window():
    x = RNG.normal(size=(1, 2, 2, 7))
    r, bias, alpha, beta = 2, 1.5, 0.3, 0.75
    padded = np.pad(x ** 2, [(0, 0), (0, 0), (0, 0), (r, r)])
    window = sum(padded[..., k:k + 7] for k in range(2 * r + 1))
    np.testing.assert_allclose(
        tf.nn.local_response_normalization(x, r, bias, alpha, beta).numpy(),
        x / (bias + alpha * window) ** beta, rtol=1e-12)
    check_grads(lambda t: tf.nn.lrn(t, 1, 1.0, 0.5, 0.5), [tf.constant(x)], order=1)


def test_weighted_cross_entropy_and_log_poisson_loss():
    z, x, q = RNG.uniform(size=(3, 4)), RNG.normal(scale=3, size=(3, 4)), 2.5
    sigmoid = 1 / (1 + np.exp(-x))
    want = -(q * z * np.log(sigmoid) + (1 - z) * np.log(1 - sigmoid))   # the definition
    np.testing.assert_allclose(tf.nn.weighted_cross_entropy_with_logits(z, x, q).numpy(), want,
                               rtol=1e-10)
    targets, c = np.array([0.0, 0.5, 1.0, 3.0, 10.0]), RNG.normal(size=5)
    np.testing.assert_allclose(tf.nn.log_poisson_loss(targets, c).numpy(),
                               np.exp(c) - targets * c)
    stirling = np.where(targets > 1, targets * np.log(np.maximum(targets, 1)) - targets
                        + 0.5 * np.log(2 * np.pi * np.maximum(targets, 1)), 0.0)
    np.testing.assert_allclose(tf.nn.log_poisson_loss(targets, c, compute_full_loss=True).numpy(),
                               np.exp(c) - targets * c + stirling)


def test_moments_from_statistics_and_weights():
    x = RNG.normal(size=(4, 5))
    counts, m_ss, v_ss, shift = tf.nn.sufficient_statistics(x, [0], shift=0.5)
    assert float(counts) == 4.0 and float(shift) == 0.5
    mean, var = tf.nn.normalize_moments(counts, m_ss, v_ss, shift)
    np.testing.assert_allclose(mean.numpy(), x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), x.var(0), rtol=1e-10)
    w = RNG.integers(1, 4, size=(4, 1)).astype(float)
    mean, var = tf.nn.weighted_moments(x, [0], w)
    repeated = np.repeat(x, w[:, 0].astype(int), axis=0)
    np.testing.assert_allclose(mean.numpy(), repeated.mean(0), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), repeated.var(0), rtol=1e-10)
    assert float(tf.nn.zero_fraction([0.0, 1.0, 0.0, 2.0])) == 0.5
