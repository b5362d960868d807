"""The fused CUDA kernels and CUDA graph replay against the unfused numpy computation. These
need cupy and a GPU (``@pytest.mark.cupy``: skipped elsewhere); the selection logic around them
is tested on the CPU in test_gpu_paths.py."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import cuda_graphs, cuda_kernels, native
from minitf.keras import layers, optimizers
from minitf.testing import sparse_ce_step

pytestmark = pytest.mark.cupy


@pytest.fixture
def cupy_backend():
    previous = B.get_backend()
    B.set_backend("cupy")
    try:
        yield B.xp
    finally:
        B.set_backend(previous)


def test_the_adam_kernel_matches_the_ufunc_update(cupy_backend):
    cp = cupy_backend
    rng = np.random.default_rng(0)
    w, g, m = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(1000)).astype(np.float32)
    args = (0.9, 0.1, 0.999, 0.001, 1e-7, -0.01, 0.99)
    ref = [a.copy() for a in (g, m, v, w)]
    native.adam_ufuncs(*ref, np.empty_like(w), *args)
    dev = [cp.asarray(a) for a in (w, g, m, v)]
    assert cuda_kernels.adam(*dev, *args) is True
    for got, want in zip((dev[0], dev[2], dev[3]), (ref[3], ref[1], ref[2])):
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "tanh", "linear"])
def test_bias_activation_kernels_match_numpy(cupy_backend, activation):
    cp = cupy_backend
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((2, 64, 8))
    b = rng.standard_normal(8)
    z = x + b
    y = {"relu": np.maximum(z, 0), "sigmoid": 1 / (1 + np.exp(-z)), "tanh": np.tanh(z),
         "linear": z}[activation]
    gx = {"relu": g * (y > 0), "sigmoid": g * y * (1 - y), "tanh": g * (1 - y * y),
          "linear": g}[activation]
    got = cuda_kernels.bias_activation(cp.asarray(x), cp.asarray(b), activation)
    np.testing.assert_allclose(cp.asnumpy(got), y, rtol=1e-12)
    got = cuda_kernels.activation_grad(cp.asarray(g), cp.asarray(y), activation)
    np.testing.assert_allclose(cp.asnumpy(got), gx, rtol=1e-12)


def test_the_cross_entropy_kernel_gives_losses_and_gradient(cupy_backend):
    cp = cupy_backend
    rng = np.random.default_rng(2)
    z = rng.standard_normal((300, 10)) * 5
    labels = rng.integers(0, 10, 300)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.eye(10)[labels]
    loss, grad = cuda_kernels.softmax_cross_entropy(cp.asarray(labels), cp.asarray(z))
    np.testing.assert_allclose(cp.asnumpy(loss), -np.log(p[np.arange(300), labels]), rtol=1e-10)
    np.testing.assert_allclose(cp.asnumpy(grad), p - onehot, atol=1e-12)
    labels[0] = 10                                            # out of range: NaN, as TF's GPU
    loss, grad = cuda_kernels.softmax_cross_entropy(cp.asarray(labels), cp.asarray(z))
    assert np.isnan(cp.asnumpy(loss)[0]) and np.isnan(cp.asnumpy(grad)[0]).all()


def _mlp_steps(traced, steps=4):
    tf.random.set_seed(0)
    rng = np.random.default_rng(3)
    model = tf.keras.Sequential([layers.Dense(32, activation="relu"), layers.Dense(10)])
    model.build((None, 20))
    step = sparse_ce_step(model, optimizers.Adam(1e-2))
    run = tf.function(step) if traced else step
    losses = [float(run(tf.constant(rng.standard_normal((16, 20)).astype(np.float32)),
                        tf.constant(rng.integers(0, 10, 16).astype(np.int32))))
              for _ in range(steps)]
    return run, losses, [v.numpy() for v in model.trainable_variables]


def test_a_traced_step_replayed_as_cuda_graphs_matches_eager(cupy_backend):
    run, losses, weights = _mlp_steps(traced=True)
    plan = next(iter(run._plans.values()))
    assert isinstance(plan.graph_replay, cuda_graphs.GraphReplay)
    replay = plan.graph_replay
    assert replay.segments is not None and not replay.failed   # captured and used
    _, eager_losses, eager_weights = _mlp_steps(traced=False)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-4)
    for a, b in zip(weights, eager_weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
