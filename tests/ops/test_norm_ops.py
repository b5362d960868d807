"""The fused batch-normalization training ops against independent numpy references.

Forward: ``gamma * (x - mean) / sqrt(var + eps) + beta`` with the batch mean and biased
variance over every axis but the last (TF's ``FusedBatchNormV3`` in training mode). Gradients:
the closed form ``dx = gamma / std * (g - mean(g) - xhat * mean(g * xhat))``, ``dgamma =
sum(g * xhat)``, ``dbeta = sum(g)``, computed here in float64 numpy. The registry's gradient
check (tests/ops/test_gradcheck.py) covers the ops' first and second derivatives.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.ops import norm_ops


def _reference(x, gamma, beta, g, eps):
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim - 1))
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    std = np.sqrt(var + eps)
    xhat = (x - mean) / std
    y = xhat * gamma + beta
    gm, gxm = g.mean(axis=axes), (g * xhat).mean(axis=axes)
    dx = gamma / std * (g - gm - xhat * gxm)
    return y, mean, var, dx, (g * xhat).sum(axis=axes), g.sum(axis=axes)


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[-1]
    x = (rng.standard_normal(shape) * 3 + 1.5).astype(np.float32)
    return (x, rng.uniform(0.5, 2, c).astype(np.float32), rng.standard_normal(c).astype(np.float32),
            rng.standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("shape", [(8, 5, 6, 4), (16, 3)])
@pytest.mark.parametrize("cache", [False, True])
def test_ops_match_numpy_reference(shape, cache):
    x, gamma, beta, g = _data(shape)
    eps = 1e-3
    y_ref, mean, var, dx_ref, dgamma_ref, dbeta_ref = _reference(x, gamma, beta, g, eps)
    xt, gt = tf.constant(x), tf.constant(g)
    y = norm_ops.batch_norm_train(xt, tf.constant(gamma), tf.constant(beta), epsilon=eps,
                                  cache=cache)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), y_ref, rtol=1e-4, atol=1e-4)
    stats = norm_ops.batch_norm_moments(xt, epsilon=eps).numpy()
    np.testing.assert_allclose(stats, np.stack([mean, var]), rtol=1e-4, atol=1e-4)
    s = norm_ops.batch_norm_reduce_grads(xt, gt, epsilon=eps)
    np.testing.assert_allclose(s.numpy(), np.stack([dbeta_ref, dgamma_ref]), rtol=1e-4,
                               atol=1e-3)
    dx = norm_ops.batch_norm_input_grad(xt, tf.constant(gamma), gt, s, epsilon=eps)
    assert dx.dtype == tf.float32
    np.testing.assert_allclose(dx.numpy(), dx_ref, rtol=1e-3, atol=1e-4)


def _layer_step(layer, x, g):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
        loss = tf.reduce_sum(y * g)
    return (y,) + tuple(tape.gradient(loss, [x, layer.gamma, layer.beta]))


@pytest.mark.parametrize("traced", [False, True])
def test_layer_training_step_matches_reference(traced):
    x, gamma, beta, g = _data((6, 7, 5, 3), seed=1)
    eps, momentum = 1e-3, 0.9
    layer = tf.keras.layers.BatchNormalization(momentum=momentum, epsilon=eps)
    layer.build(x.shape)
    layer.gamma.assign(gamma)
    layer.beta.assign(beta)
    step = tf.function(_layer_step) if traced else _layer_step
    xt, gt = tf.constant(x), tf.constant(g)
    for _ in range(2):   # a traced step replays on the second call
        y, dx, dgamma, dbeta = step(layer, xt, gt)
    y_ref, mean, var, dx_ref, dgamma_ref, dbeta_ref = _reference(x, gamma, beta, g, eps)
    np.testing.assert_allclose(y.numpy(), y_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx.numpy(), dx_ref, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dgamma.numpy(), dgamma_ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dbeta.numpy(), dbeta_ref, rtol=1e-4, atol=1e-3)
    # Two updates of the moving statistics with the same batch.
    m2 = momentum * momentum
    np.testing.assert_allclose(layer.moving_mean.numpy(), mean * (1 - m2), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(layer.moving_variance.numpy(), m2 + var * (1 - m2), rtol=1e-4)


def test_second_derivative_through_the_layer_matches_the_composite():
    """d/dx of |dL/dx|^2 through the fused ops equals the one through tf.nn's composite."""
    x, gamma, beta, g = (a.astype(np.float64) for a in _data((5, 4, 3), seed=2))
    eps = 1e-2

    def fused(xt):
        return norm_ops.batch_norm_train(xt, tf.constant(gamma), tf.constant(beta),
                                         epsilon=eps)

    def composite(xt):
        mean, var = tf.nn.moments(xt, axes=[0, 1])
        return tf.nn.batch_normalization(xt, mean, var, tf.constant(beta), tf.constant(gamma),
                                         eps)

    results = []
    for fn in (fused, composite):
        xt = tf.constant(x)
        with tf.GradientTape() as outer:
            outer.watch(xt)
            with tf.GradientTape() as inner:
                inner.watch(xt)
                loss = tf.reduce_sum(fn(xt) * tf.constant(g))
            dx = inner.gradient(loss, xt)
            penalty = tf.reduce_sum(dx * dx)
        results.append(outer.gradient(penalty, xt).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-8, atol=1e-10)
