"""``Conv2DTranspose`` output sizes and values as Keras 3 computes them (``deconv_output_length``:
``size * stride + max(kernel - stride, 0)`` for 'valid', ``size * stride`` for 'same'), against
the definition written as loops: every input pixel adds ``x[i, j] * kernel`` at ``(i*s, j*s)``."""
import os

import numpy as np
import pytest

from minitf import keras


def _scatter_reference(x, kernel, bias, s, padding):
    n, h, w, _ = x.shape
    kh, kw, filters, _ = kernel.shape
    full = np.zeros((n, (h - 1) * s + kh, (w - 1) * s + kw, filters))
    for i in range(h):
        for j in range(w):
            full[:, i * s:i * s + kh, j * s:j * s + kw] += np.einsum(
                "nc,abfc->nabf", x[:, i, j], kernel)
    if padding == "valid":
        out_h, out_w = h * s + max(kh - s, 0), w * s + max(kw - s, 0)
        top = left = 0
    else:
        out_h, out_w = h * s, w * s
        top, left = max(kh - s, 0) // 2, max(kw - s, 0) // 2
    out = np.zeros((n, out_h, out_w, filters))
    rows, cols = min(out_h, full.shape[1] - top), min(out_w, full.shape[2] - left)
    out[:, :rows, :cols] = full[:, top:top + rows, left:left + cols]
    return out + bias


@pytest.mark.parametrize("k, s, padding", [(2, 3, "valid"), (3, 2, "valid"), (1, 2, "valid"),
                                           (3, 1, "valid"), (2, 3, "same"), (3, 2, "same")])
def test_output_size_and_values(k, s, padding):
    rng = np.random.default_rng(k * 10 + s)
    x = rng.normal(size=(2, 3, 4, 2)).astype("float32")
    layer = keras.layers.Conv2DTranspose(3, k, strides=s, padding=padding)
    y = layer(x).numpy()
    want = _scatter_reference(x.astype(np.float64), layer.kernel.numpy().astype(np.float64),
                              layer.bias.numpy(), s, padding)
    assert y.shape == want.shape == tuple(layer.compute_output_shape(x.shape))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                       "keras", "conv2d_transpose_cases.npz")


def test_output_padding_dilation_and_sizes_match_keras():
    # outputs Keras 3.15 recorded (tools/make_conv_transpose_fixture.py)
    data = np.load(FIXTURE)
    for i, (k, s, same, op, d) in enumerate(data["params"]):
        layer = keras.layers.Conv2DTranspose(2, int(k), strides=int(s),
                                             padding="same" if same else "valid",
                                             output_padding=None if op < 0 else int(op),
                                             dilation_rate=int(d))
        x = data[f"{i}_x"]
        layer.build(x.shape)
        layer.kernel.assign(data[f"{i}_kernel"])
        layer.bias.assign(data[f"{i}_bias"])
        want = data[f"{i}_y"]
        assert tuple(layer.compute_output_shape(x.shape)) == want.shape
        np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-5, atol=1e-5,
                                   err_msg=str(data["params"][i]))
    with pytest.raises(ValueError, match="output_padding"):
        keras.layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
