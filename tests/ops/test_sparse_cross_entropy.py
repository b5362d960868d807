"""Sparse softmax cross-entropy: the forward computes the gradient too, and the backward uses it.

The values are checked against an independent numpy computation in float64 (the gradient of
the mean loss is ``(softmax - onehot) / N``; its Hessian ``(diag(p) - p p^T) / N`` per row).
"""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf.ops import nn_ops

pytestmark = pytest.mark.skipif(B.get_backend() == "cupy", reason="checks the host path")


def _softmax64(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture
def softmax_calls(monkeypatch):
    calls = []
    real = nn_ops._softmax_forward
    monkeypatch.setattr(nn_ops, "_softmax_forward",
                        lambda *a, **k: calls.append(True) or real(*a, **k))
    return calls


def _data(dtype=np.float32, shape=(6, 5)):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal(shape).astype(dtype) * 3
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    return labels, logits


def _mean_loss_and_grad(labels, logits, persistent=False):
    z = tf.constant(logits)
    with tf.GradientTape(persistent=persistent) as tape:
        tape.watch(z)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, z))
    return loss, tape, z


@pytest.mark.parametrize("shape", [(6, 5), (2, 3, 4)])
def test_gradient_is_softmax_minus_onehot_over_n(shape, softmax_calls):
    labels, logits = _data(np.float64, shape)
    loss, tape, z = _mean_loss_and_grad(labels, logits)
    grad = tape.gradient(loss, z).numpy()
    assert softmax_calls == []      # taken from the forward, not recomputed
    p = _softmax64(logits)
    onehot = np.eye(shape[-1])[labels]
    n = labels.size
    np.testing.assert_allclose(loss.numpy(), -np.log((p * onehot).sum(-1)).mean(), rtol=1e-12)
    np.testing.assert_allclose(grad, (p - onehot) / n, rtol=1e-12, atol=1e-15)


def test_same_bits_as_softmax_minus_onehot_in_float32():
    labels, logits = _data()
    loss, tape, z = _mean_loss_and_grad(labels, logits)
    got = tape.gradient(loss, z).numpy()
    probs = tf.nn.softmax(tf.constant(logits)).numpy()
    want = (1.0 / np.float32(len(labels))) * (probs - np.eye(5, dtype=np.float32)[labels])
    np.testing.assert_array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))


def test_a_second_gradient_call_recomputes_the_same_values(softmax_calls):
    labels, logits = _data()
    loss, tape, z = _mean_loss_and_grad(labels, logits, persistent=True)
    first = tape.gradient(loss, z).numpy()
    second = tape.gradient(loss, z).numpy()
    assert len(softmax_calls) == 1      # the kept gradient went to the first call
    np.testing.assert_array_equal(first, second)


def test_two_losses_on_the_same_logits_with_different_labels():
    labels, logits = _data(np.float64)
    other = (labels + 1) % 5
    z = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(z)
        loss = (tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, z))
                + 2 * tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(other, z)))
    grad = tape.gradient(loss, z).numpy()
    p, eye = _softmax64(logits), np.eye(5)
    np.testing.assert_allclose(grad, (p - eye[labels]) + 2 * (p - eye[other]), rtol=1e-12)


def test_hessian_matches_the_closed_form():
    labels, logits = _data(np.float64, (3, 4))
    z = tf.constant(logits)
    with tf.GradientTape() as outer:
        outer.watch(z)
        with tf.GradientTape() as inner:
            inner.watch(z)
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, z))
        g = inner.gradient(loss, z)
    hessian = outer.batch_jacobian(g, z).numpy()
    p = _softmax64(logits)
    want = np.stack([np.diag(r) - np.outer(r, r) for r in p])
    np.testing.assert_allclose(hessian, want, rtol=1e-10, atol=1e-14)


def test_forward_over_backward_hessian_vector_product():
    labels, logits = _data(np.float64, (3, 4))
    v = np.random.default_rng(4).standard_normal((3, 4))
    z = tf.constant(logits)
    with tf.autodiff.ForwardAccumulator(z, tf.constant(v)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(z)
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, z))
        g = tape.gradient(loss, z)
    p = _softmax64(logits)
    want = p * v - p * (p * v).sum(-1, keepdims=True)
    np.testing.assert_allclose(acc.jvp(g).numpy(), want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("returns_loss", [True, False])
def test_a_traced_step_replays_with_the_forwards_gradient(returns_loss, softmax_calls):
    """Where the step returns its loss, the replayed backward takes the forward's gradient;
    where it does not, the replay drops the loss's forward and the backward computes it."""
    labels, logits = _data()
    w = tf.Variable(np.eye(5, dtype=np.float32))

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, x @ w))
        return (loss, tape.gradient(loss, w)) if returns_loss else tape.gradient(loss, w)

    step(tf.constant(logits), tf.constant(labels))
    softmax_calls.clear()
    for k in range(3):        # new data each call: the kept gradient must follow it
        x = logits * (k + 1)
        got = step(tf.constant(x), tf.constant(labels))
        got = got[1] if returns_loss else got
        p = _softmax64(x.astype(np.float64))
        np.testing.assert_allclose(got.numpy(), x.T @ (p - np.eye(5)[labels]) / len(labels),
                                   rtol=2e-5, atol=1e-6)
    assert len(softmax_calls) == (0 if returns_loss else 3)
