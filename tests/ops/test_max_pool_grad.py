"""Max pooling's gradient (stride = window) against a numpy loop, ties and remainders included.

TF's MaxPoolGrad sends each window's gradient to its first maximum in row-major order; the
reference below scans every window explicitly.
"""
import numpy as np
import pytest

import minitf as tf


def _reference_grad(x, g, k):
    n, h, w, c = x.shape
    out = np.zeros_like(x)
    for b in range(n):
        for i in range(h // k[0]):
            for j in range(w // k[1]):
                for ch in range(c):
                    win = x[b, i * k[0]:(i + 1) * k[0], j * k[1]:(j + 1) * k[1], ch]
                    r, s = np.unravel_index(np.argmax(win), win.shape)   # first maximum
                    out[b, i * k[0] + r, j * k[1] + s, ch] = g[b, i, j, ch]
    return out


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("shape,k", [((2, 6, 8, 3), (2, 2)), ((1, 6, 6, 2), (3, 2)),
                                     ((2, 5, 7, 2), (2, 2))])
def test_max_pool_gradient_goes_to_the_first_maximum(shape, k, ties):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    if ties:   # whole windows of equal values and repeated maxima
        x = np.round(x).astype(np.float32)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.nn.max_pool2d(xt, ksize=k, strides=k, padding="VALID")
        g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
        loss = tf.reduce_sum(y * tf.constant(g))
    grad = tape.gradient(loss, xt).numpy()
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad, _reference_grad(x, g, k))
