"""SAME convolutions on Winograd's tiles without a padded copy (minitf/winograd.py's pads,
conv_ops' ``pads`` attribute): the bits of padding first and convolving after, forward and
both gradients, and a traced step with no pad op in it."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import native, winograd
from minitf.ops.registry import RAW
from minitf.testing import sparse_ce_step
from tests.test_plan_fusion import _op_names

pytestmark = [pytest.mark.skipif(
    B.get_backend() != "numpy" or native.kernels() is None
    or native.kernels().winograd is None,
    reason="numpy's native Winograd kernels: another backend, no C compiler or MINITF_NATIVE=0"),
    pytest.mark.usefixtures("winograd_everywhere")]


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, pads", [
    ((3, 16, 16, 8), ((1, 1), (1, 1))),      # SAME on an even image (F(4x4, 3x3))
    ((2, 7, 9, 12), ((1, 1), (1, 1))),       # odd sizes: tiles overhang the far edges
    ((2, 6, 5, 8), ((0, 2), (2, 0))),        # uneven explicit padding
    ((2, 3, 3, 8), ((2, 2), (2, 2))),        # more padding than image
])
def test_padded_tiles_give_the_bits_of_a_padded_copy(shape, pads, dtype):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((3, 3, shape[-1], 16)).astype(dtype)
    padded = np.pad(x, ((0, 0),) + pads + ((0, 0),))
    g = rng.standard_normal((shape[0], padded.shape[1] - 2, padded.shape[2] - 2, 16)).astype(dtype)
    attrs = {"strides": (1, 1), "dilations": (1, 1)}
    top, left = pads[0][0], pads[1][0]
    want = (RAW.conv2d_valid(padded, w, cache=False, **attrs),
            RAW.conv2d_input_grad(g, w, size=padded.shape[1:3], **attrs)[
                :, top:top + shape[1], left:left + shape[2]],
            RAW.conv2d_filter_grad(padded, g, ksize=(3, 3), **attrs))
    got = (RAW.conv2d_valid(x, w, cache=False, pads=pads, **attrs),
           RAW.conv2d_input_grad(g, w, size=shape[1:3], pads=pads, **attrs),
           RAW.conv2d_filter_grad(x, g, ksize=(3, 3), pads=pads, **attrs))
    for a, b in zip(got, want):
        _same_bits(a, b)
    # The kernels themselves, without the op layer, against a float64 direct convolution.
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    p64 = padded.astype(np.float64)
    oh, ow = g.shape[1:3]
    direct = sum(p64[:, i:i + oh, j:j + ow] @ w64[i, j] for i in range(3) for j in range(3))
    np.testing.assert_allclose(winograd.conv(x64, w64, pads=pads), direct, rtol=1e-9,
                               atol=1e-9)


def _models(channels):
    """Conv2D(padding="same") on Winograd, and the same layer written as ZeroPadding2D before
    a VALID Conv2D (a pad op, then the unpadded convolution), with the same weights."""
    L = tf.keras.layers

    def build(same):
        tf.random.set_seed(4)
        first = (L.Conv2D(16, 3, padding="same", activation="relu") if same else
                 [L.ZeroPadding2D(1), L.Conv2D(16, 3, activation="relu")])
        second = (L.Conv2D(8, 3, padding="same", activation="relu") if same else
                  [L.ZeroPadding2D(1), L.Conv2D(8, 3, activation="relu")])
        layers = [*(first if isinstance(first, list) else [first]),
                  *(second if isinstance(second, list) else [second]),
                  L.MaxPooling2D(2), L.Flatten(), L.Dense(3)]
        model = tf.keras.Sequential(layers)
        model.build((None, 10, 10, channels))
        return model

    same, padded = build(True), build(False)
    for a, b in zip(padded.variables, same.variables):
        b.assign(a)
    return same, padded


def test_traced_same_conv_step_has_no_pad_op_and_trains_as_a_padded_copy():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 10, 10, 8)).astype(np.float32)
    y = rng.integers(0, 3, 6).astype(np.int32)
    same, padded = _models(8)
    runs = {}
    for name, model in (("same", same), ("padded", padded)):
        step = tf.function(sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2)))
        runs[name] = [float(step(x, y)) for _ in range(3)], step
    assert runs["same"][0] == runs["padded"][0]
    assert runs["same"][0][-1] < runs["same"][0][0]       # it trains
    for a, b in zip(same.variables, padded.variables):
        _same_bits(a.numpy(), b.numpy())
    assert "_pad_forward" not in _op_names(runs["same"][1])
    assert _op_names(runs["padded"][1]).count("_pad_forward") == 2
