"""The direct 3x3 convolution of one- and three-channel images (``minitf.direct_conv``)
against an independent numpy computation in float64."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import direct_conv, kernel_threads, native
from minitf.testing import sparse_ce_step

pytestmark = pytest.mark.skipif(
    B.get_backend() != "numpy" or native.kernels() is None,
    reason="numpy's native kernels: another backend, no C compiler or MINITF_NATIVE=0")


def test_the_kernels_pass_their_start_up_check():
    assert native.kernels().direct_conv is not None
    assert direct_conv.applies((128, 30, 30, 1), (3, 3, 1, 32), (1, 1), (1, 1), "float32")
    assert direct_conv.applies((64, 34, 34, 3), (3, 3, 3, 64), (1, 1), (1, 1), "float32")


def _windows(x, oh, ow):
    """(N, OH, OW, 9 * C): each output pixel's 3x3 window, in (row, column, channel) order."""
    n, _, _, c = x.shape
    return np.stack([x[:, i:i + oh, j:j + ow] for i in range(3) for j in range(3)],
                    3).reshape(n, oh, ow, 9 * c)


@pytest.mark.parametrize("dtype, tol", [("float64", 1e-12), ("float32", 2e-5)])
@pytest.mark.parametrize("size, c, o", [((5, 7), 1, 32), ((28, 28), 1, 32), ((9, 4), 1, 64),
                                        ((3, 3), 1, 64), ((6, 5), 3, 32), ((32, 32), 3, 64),
                                        ((3, 4), 3, 32)])
def test_forward_and_filter_gradient_match_numpy(size, c, o, dtype, tol):
    rng = np.random.default_rng(sum(size) + o + c)
    h, w = size
    x = rng.standard_normal((3, h, w, c))
    f = rng.standard_normal((3, 3, c, o))
    g = rng.standard_normal((3, h - 2, w - 2, o))
    windows = _windows(x, h - 2, w - 2)
    want = windows @ f.reshape(9 * c, o)
    want_df = np.einsum("nhwk,nhwo->ko", windows, g).reshape(3, 3, c, o)
    got = direct_conv.conv(x.astype(dtype), f.astype(dtype))
    got_df = direct_conv.filter_grad(x.astype(dtype), g.astype(dtype))
    assert got.dtype == dtype and got_df.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(got_df, want_df, rtol=tol, atol=tol * 100)


def test_images_split_over_threads_give_the_one_thread_results(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 8, 9, 1)).astype(np.float32)
    f = rng.standard_normal((3, 3, 1, 32)).astype(np.float32)
    g = rng.standard_normal((37, 6, 7, 32)).astype(np.float32)
    monkeypatch.setattr(kernel_threads, "count", lambda: 1)
    one = direct_conv.conv(x, f), direct_conv.filter_grad(x, g)
    monkeypatch.setattr(kernel_threads, "count", lambda: 3)
    monkeypatch.setattr(direct_conv, "MIN_PART", 1)
    parts = []
    real_run = kernel_threads.run
    monkeypatch.setattr(kernel_threads, "run",
                        lambda fn, p, **kw: parts.append(len(p)) or real_run(fn, p, **kw))
    split = direct_conv.conv(x, f), direct_conv.filter_grad(x, g)
    assert parts == [3, 3]
    np.testing.assert_array_equal(one[0], split[0])       # each output from the same sums
    np.testing.assert_allclose(one[1], split[1], rtol=1e-6)


@pytest.mark.parametrize("x_shape, w_shape, strides, dilations, dtype", [
    ((2, 8, 8, 2), (3, 3, 2, 32), (1, 1), (1, 1), "float32"),    # two channels: not compiled
    ((2, 8, 8, 3), (3, 3, 1, 32), (1, 1), (1, 1), "float32"),    # filters for another C
    ((2, 8, 8, 1), (3, 3, 1, 16), (1, 1), (1, 1), "float32"),    # 16 filters: not compiled
    ((2, 8, 8, 1), (3, 3, 1, 48), (1, 1), (1, 1), "float32"),
    ((2, 8, 8, 1), (5, 5, 1, 32), (1, 1), (1, 1), "float32"),
    ((2, 8, 8, 1), (3, 3, 1, 32), (2, 2), (1, 1), "float32"),
    ((2, 8, 8, 1), (3, 3, 1, 32), (1, 1), (2, 2), "float32"),
    ((2, 8, 8, 1), (3, 3, 1, 32), (1, 1), (1, 1), "float16"),
    ((2, 2, 8, 1), (3, 3, 1, 32), (1, 1), (1, 1), "float32"),    # no output rows
])
def test_other_convolutions_take_the_general_path(x_shape, w_shape, strides, dilations, dtype):
    assert not direct_conv.applies(x_shape, w_shape, strides, dilations, dtype)


@pytest.mark.parametrize("channels", [1, 3])
def test_a_conv2d_layer_trains_as_on_the_general_path(monkeypatch, channels):
    """Three Adam steps of Conv2D(32, 3, padding="same") on grayscale or RGB images: the direct
    kernels and the im2col path give the same losses and updated filters (up to rounding)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 12, 12, channels)).astype(np.float32)
    y = rng.integers(0, 10, 16)

    def train():
        tf.random.set_seed(3)
        layers = tf.keras.layers
        model = tf.keras.Sequential([layers.Conv2D(32, 3, padding="same", activation="relu"),
                                     layers.Flatten(), layers.Dense(10)])
        model.build((None, 12, 12, channels))
        step = tf.function(sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2)))

        losses = [float(step(tf.constant(x), tf.constant(y))) for _ in range(3)]
        return losses, model.layers[0].kernel.numpy()

    calls = []
    real = direct_conv.filter_grad
    monkeypatch.setattr(direct_conv, "filter_grad", lambda *a: calls.append(1) or real(*a))
    direct = train()
    assert calls                                           # the direct kernels ran
    monkeypatch.setattr(direct_conv, "applies", lambda *a: False)
    general = train()
    np.testing.assert_allclose(direct[0], general[0], rtol=1e-5)
    np.testing.assert_allclose(direct[1], general[1], rtol=1e-4, atol=1e-5)


def test_an_empty_batch_gives_empty_outputs_and_a_zero_filter_gradient():
    x = np.zeros((0, 6, 5, 1), np.float32)
    out = direct_conv.conv(x, np.ones((3, 3, 1, 64), np.float32))
    grad = direct_conv.filter_grad(x, np.zeros((0, 4, 3, 64), np.float32))
    assert out.shape == (0, 4, 3, 64)
    np.testing.assert_array_equal(grad, np.zeros((3, 3, 1, 64), np.float32))
