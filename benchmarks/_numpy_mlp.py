"""Hand-written numpy reference: an MLP trained with softmax cross-entropy and Adam, the way a
careful numpy programmer writes it (Keras' Adam formula, float32 throughout)."""
import numpy as np


def glorot_params(sizes, rng):
    """Glorot-uniform weights and zero biases of an MLP, float32: ``[W1, b1, W2, b2, ...]``."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return params


class NumpyAdam:
    """Adam with Keras' formula and defaults, written with plain numpy expressions."""

    def __init__(self, params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-7):
        self.params = params
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.lr, self.beta1, self.beta2, self.eps, self.t = lr, beta1, beta2, eps, 0

    def step(self, grads):
        self.t += 1
        lr_t = float(self.lr * np.sqrt(1 - self.beta2 ** self.t) / (1 - self.beta1 ** self.t))
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m[:] = self.beta1 * m + (1 - self.beta1) * g
            v[:] = self.beta2 * v + (1 - self.beta2) * g * g
            p -= lr_t * m / (np.sqrt(v) + self.eps)


class NumpyMLP:
    def __init__(self, sizes, seed=0, **adam):
        self.params = glorot_params(sizes, np.random.default_rng(seed))
        self.adam = NumpyAdam(self.params, **adam)

    def step(self, x, y):
        ws, bs = self.params[0::2], self.params[1::2]
        acts = [x]
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            z = h @ w + b
            h = np.maximum(z, 0) if i < len(ws) - 1 else z
            acts.append(h)
        logits = acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        probs = exp / exp.sum(axis=1, keepdims=True)
        n = x.shape[0]
        loss = -np.log(probs[np.arange(n), y]).mean()
        grad = probs
        grad[np.arange(n), y] -= 1
        grad /= n
        grads = [None] * len(self.params)
        for i in reversed(range(len(ws))):
            grads[2 * i] = acts[i].T @ grad
            grads[2 * i + 1] = grad.sum(axis=0)
            if i > 0:
                grad = (grad @ ws[i].T) * (acts[i] > 0)
        self.adam.step(grads)
        return loss
