"""Fused backward rules of an eager tape (minitf/eager_fusion.py, and the relu rule of
``bias_activation`` that leaves a convolution's bias sums): the gradients are the unfused
rules' bit for bit and an independent numpy computation's, the fusion runs where it should,
and a relu output that something else reads, or that is itself a source, is left alone."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import eager_fusion, native_nn
from minitf.ops import registry

L = tf.keras.layers


@pytest.fixture
def fused_calls(monkeypatch):
    """How often the pool's record took the relu's gradients (a list of booleans)."""
    calls = []
    original = eager_fusion.PoolRelu.grads

    def counting(self, *args):
        result = original(self, *args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(eager_fusion.PoolRelu, "grads", counting)
    return calls


def _native():
    return B.get_backend() == "numpy" and native_nn.available()


def _grads(model, x, y, fused, monkeypatch):
    monkeypatch.setattr(eager_fusion, "ENABLED", fused)
    tf.random.set_seed(3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    return [B.to_numpy(g._value) for g in tape.gradient(loss, model.trainable_variables)]


@pytest.mark.parametrize("layers", [
    lambda: [L.Conv2D(8, 3, activation="relu"), L.MaxPooling2D(2),
             L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(2)],
    lambda: [L.Conv2D(8, 3, padding="same", use_bias=False), L.BatchNormalization(), L.ReLU(),
             L.MaxPooling2D(2), L.Dropout(0.3)],
    lambda: [L.Conv2D(8, 3, padding="same", activation="relu"),
             L.Conv2D(8, 3, padding="same", activation="relu"), L.MaxPooling2D(2)],
], ids=["conv-relu-pool", "conv-bn-relu-pool", "conv-relu-conv-relu-pool"])
def test_model_gradients_are_the_unfused_rules_bit_for_bit(layers, fused_calls, monkeypatch):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((16, 14, 14, 3)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 16))
    model = tf.keras.Sequential(layers() + [L.Flatten(), L.Dense(10)])
    model.build((None, 14, 14, 3))
    fused = _grads(model, x, y, True, monkeypatch)
    if _native():
        assert fused_calls and all(fused_calls)   # every pool took its relu's gradients
    fused_calls.clear()
    unfused = _grads(model, x, y, False, monkeypatch)
    assert not fused_calls
    assert len(fused) == len(model.trainable_variables)
    for a, b in zip(fused, unfused):
        np.testing.assert_array_equal(a, b)


def _pool_relu_by_hand(z, b, w, relu=True):
    """Gradients of sum(w * max_pool_2x2(relu(z + b))) by hand: w at each window's first
    maximum, zero where the relu's output is not positive; b's is the sum over the images.
    With ``relu=False``: the gradient with respect to the relu's output ``a`` instead."""
    a = np.maximum(z + b, 0)
    n, h, wd, c = a.shape
    dz = np.zeros_like(a)
    for i in range(n):
        for r in range(h // 2):
            for s in range(wd // 2):
                for k in range(c):
                    window = a[i, 2 * r:2 * r + 2, 2 * s:2 * s + 2, k].reshape(-1)
                    q = int(np.argmax(window))
                    mask = window[q] > 0 if relu else True
                    dz[i, 2 * r + q // 2, 2 * s + q % 2, k] = w[i, r, s, k] * mask
    return dz, dz.sum(axis=(0, 1, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_relu_pool_gradient_matches_a_hand_computation(dtype, fused_calls):
    rng = np.random.default_rng(1)
    # Large enough for the native kernels (distinct values: no ties).
    z = rng.permutation(np.arange(-8640, 8640)).reshape(3, 12, 10, 48).astype(dtype) / 997
    b = rng.uniform(-2, 2, 48).astype(dtype)
    w = rng.standard_normal((3, 6, 5, 48)).astype(dtype)
    zt, bt = tf.constant(z), tf.Variable(b)
    with tf.GradientTape() as tape:
        tape.watch(zt)
        pooled = tf.nn.max_pool2d(tf.nn.relu(tf.nn.bias_add(zt, bt)), 2, 2, "VALID")
        loss = tf.reduce_sum(pooled * w)
    dz, db = tape.gradient(loss, [zt, bt])
    want_dz, want_db = _pool_relu_by_hand(z, b, w)
    np.testing.assert_array_equal(dz.numpy(), want_dz)
    np.testing.assert_allclose(db.numpy(), want_db, rtol=1e-5 if dtype == np.float32 else 1e-12)
    with tf.GradientTape() as tape:   # the same through Conv2D's fused bias and activation
        tape.watch(zt)
        a = registry.apply(registry.OPS["bias_activation"], (zt, bt), {"activation": "relu"})
        loss = tf.reduce_sum(tf.nn.max_pool2d(a, 2, 2, "VALID") * w)
    dz2, db2 = tape.gradient(loss, [zt, bt])
    np.testing.assert_array_equal(dz2.numpy(), want_dz)
    np.testing.assert_allclose(db2.numpy(), want_db, rtol=1e-5 if dtype == np.float32 else 1e-12)
    if _native():
        assert fused_calls[-1]


def _relu_pool_case():
    rng = np.random.default_rng(2)
    z = tf.constant(rng.permutation(np.arange(-64, 64)).reshape(2, 4, 4, 4).astype(np.float32))
    w = rng.standard_normal((2, 2, 2, 4)).astype(np.float32)
    return z, w


def test_a_relu_output_read_twice_is_not_fused(fused_calls):
    z, w = _relu_pool_case()
    with tf.GradientTape() as tape:
        tape.watch(z)
        a = tf.nn.relu(z)
        loss = tf.reduce_sum(tf.nn.max_pool2d(a, 2, 2, "VALID") * w) + 3.0 * tf.reduce_sum(a)
    dz = tape.gradient(loss, z).numpy()
    zn = z.numpy()
    want = (_pool_relu_by_hand(zn, np.zeros(4, np.float32), w)[0]
            + 3.0 * (zn > 0).astype(np.float32))
    np.testing.assert_allclose(dz, want, rtol=1e-6)
    assert not any(fused_calls)


def test_a_relu_output_that_is_a_source_gets_its_own_gradient(fused_calls):
    z, w = _relu_pool_case()
    with tf.GradientTape() as tape:
        tape.watch(z)
        a = tf.nn.relu(z)
        loss = tf.reduce_sum(tf.nn.max_pool2d(a, 2, 2, "VALID") * w)
    da, dz = tape.gradient(loss, [a, z])
    want_dz = _pool_relu_by_hand(z.numpy(), np.zeros(4, np.float32), w)[0]
    np.testing.assert_array_equal(dz.numpy(), want_dz)
    zeros = np.zeros(4, np.float32)
    np.testing.assert_array_equal(da.numpy(), _pool_relu_by_hand(z.numpy(), zeros, w, False)[0])
    assert not any(fused_calls)


def test_a_replaced_relu_gradient_is_used(fused_calls):
    z, w = _relu_pool_case()

    @tf.RegisterGradient("Relu")
    def _doubled(op, grad):
        return 2.0 * grad * tf.cast(op.outputs[0] > 0, grad.dtype)

    try:
        with tf.GradientTape() as tape:
            tape.watch(z)
            loss = tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(z), 2, 2, "VALID") * w)
        dz = tape.gradient(loss, z).numpy()
    finally:
        registry.clear_gradient_override("Relu")
    want = 2.0 * _pool_relu_by_hand(z.numpy(), np.zeros(4, np.float32), w)[0]
    np.testing.assert_allclose(dz, want, rtol=1e-6)
    assert not any(fused_calls)


def test_a_recorded_backward_pass_is_not_fused_and_its_second_derivative_holds(fused_calls):
    """Under an outer tape the rules run as ops (unfused): d/dz of the sum of squares of the
    first gradient, 2 * dz * (dz's own derivative), by hand."""
    z, w = _relu_pool_case()
    with tf.GradientTape() as outer:
        outer.watch(z)
        with tf.GradientTape() as inner:
            inner.watch(z)
            loss = tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(z), 2, 2, "VALID") * w)
        dz = inner.gradient(loss, z)
        penalty = tf.reduce_sum(dz * dz)
    want = _pool_relu_by_hand(z.numpy(), np.zeros(4, np.float32), w)[0]
    np.testing.assert_array_equal(dz.numpy(), want)
    second = outer.gradient(penalty, z)
    assert second is None or not np.any(second.numpy())   # piecewise linear: zero
    assert not any(fused_calls)


@pytest.mark.parametrize("fused", [True, False])
def test_batch_norm_sums_come_with_the_scatter(fused, monkeypatch):
    """Conv2D, BatchNormalization, ReLU, MaxPooling2D: the masked scatter adds up the batch
    norm's parameter sums, so its gradient does not read the scatter again."""
    if not _native():
        pytest.skip("numpy's native kernels only (no C compiler, or another backend)")
    rng = np.random.default_rng(6)
    x = tf.constant(rng.standard_normal((16, 14, 14, 3)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 16))
    model = tf.keras.Sequential([L.Conv2D(8, 3, padding="same", use_bias=False),
                                 L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(2),
                                 L.Flatten(), L.Dense(10)])
    model.build((None, 14, 14, 3))
    reduced = []
    real = native_nn.bn_reduce
    monkeypatch.setattr(native_nn, "bn_reduce", lambda *a: reduced.append(a[1].shape) or real(*a))
    _grads(model, x, y, fused, monkeypatch)
    assert reduced == ([] if fused else [(16, 14, 14, 8)])
