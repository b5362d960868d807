"""Hand-written numpy reference: Conv32-pool-Conv64-pool-Dense10 (3x3 valid convolutions, ReLU,
2x2 max pooling, NHWC) trained with softmax cross-entropy and Adam, written the usual way:
im2col patches and one matrix product per convolution, col2im for the input gradient."""
import numpy as np

from _numpy_mlp import NumpyAdam


def _patches(x, k):
    n, h, w, c = x.shape
    oh, ow = h - k + 1, w - k + 1
    out = np.empty((n, oh, ow, k, k, c), x.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, :, i, j, :] = x[:, i:i + oh, j:j + ow, :]
    return out


def _col2im(cols, size):
    n, oh, ow, k, _, c = cols.shape
    out = np.zeros((n,) + size + (c,), cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, i:i + oh, j:j + ow, :] += cols[:, :, :, i, j, :]
    return out


def _pool(a):
    n, h, w, c = a.shape
    a = a[:, :h // 2 * 2, :w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c)
    return a.max(axis=(2, 4))


def _pool_grad(a, y, g):
    n, h, w, c = a.shape
    crop = a[:, :h // 2 * 2, :w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c)
    mask = crop == y[:, :, None, :, None, :]
    out = np.zeros_like(a)
    out[:, :h // 2 * 2, :w // 2 * 2, :] = (mask * g[:, :, None, :, None, :]).reshape(
        n, h // 2 * 2, w // 2 * 2, c)
    return out


class NumpyCNN:
    def __init__(self, seed=0, classes=10):
        rng = np.random.default_rng(seed)

        def glorot(shape, fan_in, fan_out):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-limit, limit, shape).astype(np.float32)

        self.params = [glorot((3, 3, 1, 32), 9, 288), np.zeros(32, np.float32),
                       glorot((3, 3, 32, 64), 288, 576), np.zeros(64, np.float32),
                       glorot((1600, classes), 1600, classes), np.zeros(classes, np.float32)]
        self.adam = NumpyAdam(self.params)

    def step(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.params
        n = x.shape[0]
        p1 = _patches(x, 3)
        a1 = np.maximum(p1.reshape(-1, 9) @ w1.reshape(9, 32) + b1, 0).reshape(n, 26, 26, 32)
        h1 = _pool(a1)
        p2 = _patches(h1, 3)
        a2 = np.maximum(p2.reshape(-1, 288) @ w2.reshape(288, 64) + b2, 0).reshape(
            n, 11, 11, 64)
        h2 = _pool(a2)
        flat = h2.reshape(n, -1)
        logits = flat @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(n), y]).mean()
        g = probs
        g[np.arange(n), y] -= 1
        g /= n
        gw3, gb3 = flat.T @ g, g.sum(axis=0)
        g = _pool_grad(a2, h2, (g @ w3.T).reshape(h2.shape)) * (a2 > 0)
        g2 = g.reshape(-1, 64)
        gw2, gb2 = (p2.reshape(-1, 288).T @ g2).reshape(w2.shape), g2.sum(axis=0)
        gh1 = _col2im((g2 @ w2.reshape(288, 64).T).reshape(p2.shape), (13, 13))
        g = _pool_grad(a1, h1, gh1) * (a1 > 0)
        g1 = g.reshape(-1, 32)
        gw1, gb1 = (p1.reshape(-1, 9).T @ g1).reshape(w1.shape), g1.sum(axis=0)
        self.adam.step([gw1, gb1, gw2, gb2, gw3, gb3])
        return loss
