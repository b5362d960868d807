"""Second derivatives through piecewise-linear ops are zero tensors where TF's are (never None),
checked against float64 central differences on a WGAN-GP gradient penalty."""
import numpy as np

import minitf as tf

RNG = np.random.default_rng(0)
X = tf.constant(RNG.standard_normal((2, 5, 5, 1)))


def _discriminator(x, k, b, w):
    h = tf.nn.leaky_relu(tf.nn.conv2d(x, k, strides=2, padding="SAME") + b, alpha=0.2)
    h = tf.nn.max_pool2d(h, ksize=1, strides=1, padding="VALID")
    return tf.matmul(tf.reshape(h, (2, 18)), w)


def _penalty(k, b, w):
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(X)
        pred = _discriminator(X, k, b, w)
    grads = gp_tape.gradient(pred, [X])[0]
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
    return tf.reduce_mean((norm - 1.0) ** 2)


def _numeric(var, params, eps=1e-6):
    v0 = var.numpy().copy()
    out = np.zeros_like(v0)
    for idx in np.ndindex(*v0.shape):
        for sign in (1, -1):
            v = v0.copy()
            v[idx] += sign * eps
            var.assign(v)
            out[idx] += sign * float(_penalty(*params)) / (2 * eps)
    var.assign(v0)
    return out


def test_gradient_penalty_through_conv_leaky_relu_and_pooling():
    k = tf.Variable(RNG.standard_normal((3, 3, 1, 2)) * 0.5)
    b = tf.Variable(RNG.standard_normal((2,)) * 0.1)
    w = tf.Variable(RNG.standard_normal((18, 1)) * 0.3)
    params = (k, b, w)
    with tf.GradientTape() as tape:
        gp = _penalty(*params)
    grads = tape.gradient(gp, list(params))
    np.testing.assert_array_equal(grads[1].numpy(), [0.0, 0.0])  # zeros, not None
    for g, var in zip(grads, params):
        np.testing.assert_allclose(g.numpy(), _numeric(var, params), rtol=1e-5, atol=1e-8)


def test_second_derivative_of_relu_abs_and_maximum_is_zero_not_none():
    x = tf.Variable([-1.5, 0.5, 2.0])
    for fn in (tf.nn.relu, tf.abs, lambda v: tf.maximum(v, 0.25 * v), tf.nn.relu6):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(fn(x) * tf.constant([1.0, 2.0, 3.0]))
            g = inner.gradient(y, x)
        second = outer.gradient(g, x)
        np.testing.assert_array_equal(second.numpy(), np.zeros(3))


def test_forward_over_back_through_relu_is_zero_not_none():
    x = tf.constant([-1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.nn.relu(x))
        g = tape.gradient(y, x)
    np.testing.assert_array_equal(acc.jvp(g).numpy(), [0.0, 0.0])


def test_jacobians_of_a_gradient_through_relu():
    x = tf.constant([[1., -2.], [3., -4.], [0.5, 0.25]])
    for use_pfor in (True, False):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.nn.relu(x) * tf.constant([2., 3.]) + x * x)
            g = inner.gradient(y, x)
        jac = outer.jacobian(g, x, experimental_use_pfor=use_pfor)
        np.testing.assert_array_equal(jac.numpy().reshape(6, 6), 2 * np.eye(6))
        batch = outer.batch_jacobian(g, x, experimental_use_pfor=use_pfor)
        np.testing.assert_array_equal(batch.numpy(), np.stack([2 * np.eye(2)] * 3))


def test_third_derivative_through_nested_tapes():
    x = tf.constant(-0.5, tf.float64)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.nn.elu(x)
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    for g in (g1, g2, g3):  # elu(x) = exp(x) - 1 for x < 0
        np.testing.assert_allclose(float(g), np.exp(-0.5), rtol=1e-12)
