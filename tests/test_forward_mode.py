"""autodiff.ForwardAccumulator: JVPs against closed forms, and forward-over-reverse Hessian-vector
products."""
import numpy as np
import pytest

import minitf as tf

RNG = np.random.default_rng(7)


def f64(*shape):
    return tf.constant(RNG.standard_normal(shape))


def jvp(fn, primals, tangents):
    with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
        y = fn(*primals) if isinstance(primals, (list, tuple)) else fn(primals)
    return y, acc.jvp(y)


@pytest.mark.parametrize("fn,closed_form", [
    (tf.sin, lambda x, t: np.cos(x) * t),
    (tf.exp, lambda x, t: np.exp(x) * t),
    (tf.tanh, lambda x, t: (1 - np.tanh(x) ** 2) * t),
    (lambda x: x * x * x, lambda x, t: 3 * x * x * t),
    (lambda x: tf.reduce_sum(x ** 2, axis=1), lambda x, t: (2 * x * t).sum(axis=1)),
    (lambda x: tf.reduce_mean(x), lambda x, t: t.mean()),
    (lambda x: tf.nn.relu(x), lambda x, t: (x > 0) * t),
    (lambda x: tf.reshape(tf.transpose(x), [-1]), lambda x, t: t.T.reshape(-1)),
    (lambda x: x[1:, ::2] * 2.0, lambda x, t: t[1:, ::2] * 2.0),
])
def test_jvp_closed_forms(fn, closed_form):
    x, t = f64(3, 4), f64(3, 4)
    y, ty = jvp(fn, x, t)
    assert ty.shape == y.shape and ty.dtype == y.dtype
    np.testing.assert_allclose(ty.numpy(), closed_form(x.numpy(), t.numpy()), rtol=1e-12,
                               atol=1e-14)


def test_softmax_and_matmul_jvp():
    x, w, tx, tw = f64(2, 3), f64(3, 4), f64(2, 3), f64(3, 4)
    _, ty = jvp(lambda a, b: a @ b, [x, w], [tx, tw])
    np.testing.assert_allclose(ty.numpy(), tx.numpy() @ w.numpy() + x.numpy() @ tw.numpy())
    s, ts = jvp(lambda a: tf.nn.softmax(a), x, tx)
    sv, tv = s.numpy(), tx.numpy()
    np.testing.assert_allclose(ts.numpy(), sv * (tv - (sv * tv).sum(-1, keepdims=True)),
                               rtol=1e-12, atol=1e-14)


def test_jvp_equals_jacobian_times_tangent():
    x, t = f64(4), f64(4)
    fn = lambda v: tf.nn.log_softmax(tf.sin(v) * v)  # noqa: E731
    _, ty = jvp(fn, x, t)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    j = tape.jacobian(y, x).numpy()
    np.testing.assert_allclose(ty.numpy(), j @ t.numpy(), rtol=1e-12, atol=1e-14)


def test_variables_python_tangents_and_unconnected():
    v = tf.Variable([1.0, 2.0])
    other = tf.constant(5.0)
    with tf.autodiff.ForwardAccumulator(v, [0.5, 0.0]) as acc:
        y = v * v
        z = other * 2.0
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 0.0])
    assert acc.jvp(z) is None
    assert float(acc.jvp(z, unconnected_gradients=tf.UnconnectedGradients.ZERO)) == 0.0
    assert acc.jvp([y, z])[1] is None


def test_accumulator_errors():
    with pytest.raises(ValueError, match="tangent shape"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), tf.constant([1.0]))
    with pytest.raises(TypeError, match="primals must be Tensors"):
        tf.autodiff.ForwardAccumulator(3.0, 1.0)
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        tf.autodiff.ForwardAccumulator([tf.constant(1.0), tf.constant(2.0)], [tf.constant(1.0)])


def test_forward_over_reverse_hessian_vector_product():
    x, v = f64(3), f64(3)
    A = f64(3, 3)

    def loss(z):
        az = tf.reshape(A @ tf.reshape(z, [3, 1]), [3])
        return tf.reduce_sum(tf.tanh(az) ** 2) + tf.reduce_sum(z ** 4)

    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        g = tape.gradient(y, x)
    hvp = acc.jvp(g).numpy()

    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = loss(x)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x).numpy()
    np.testing.assert_allclose(hvp, h @ v.numpy(), rtol=1e-10, atol=1e-12)

    a = np.array([[2.0, 1.0], [1.0, 3.0]])  # a closed form: f = x^T a x / 2 + sum(x^3)
    x2, v2 = tf.constant([0.5, -1.0], dtype=tf.float64), tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(x2, v2) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x2)
            ax = tf.reshape(tf.constant(a) @ tf.reshape(x2, [2, 1]), [2])
            y = 0.5 * tf.reduce_sum(x2 * ax) + tf.reduce_sum(x2 ** 3)
        g = tape.gradient(y, x2)
    np.testing.assert_allclose(acc.jvp(g).numpy(),
                               (a + np.diag(6 * x2.numpy())) @ v2.numpy())


def test_reverse_over_forward_and_forward_over_forward():
    x = tf.constant(0.7, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype=tf.float64)) as acc:
            y = tf.sin(x) * x
        dy = acc.jvp(y)  # cos(x) x + sin(x)
    d2 = tape.gradient(dy, x)
    np.testing.assert_allclose(float(d2), -np.sin(0.7) * 0.7 + 2 * np.cos(0.7))

    one = tf.constant(1.0, dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(x, one) as outer:
        with tf.autodiff.ForwardAccumulator(x, one) as inner:
            y = x ** 4
        dy = inner.jvp(y)
    np.testing.assert_allclose(float(dy), 4 * 0.7 ** 3)
    np.testing.assert_allclose(float(outer.jvp(dy)), 12 * 0.7 ** 2)


def _numeric_derivative(fn, x, eps=1e-6):
    return (fn(x + eps) - fn(x - eps)) / (2 * eps)


def test_back_over_forward_inside_function_matches_numeric():
    @tf.function
    def second_derivative(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
                y = tf.sin(x) * x ** 2
            dy = acc.jvp(y)
        return tape.gradient(dy, x)

    first = lambda v: np.cos(v) * v ** 2 + 2 * v * np.sin(v)  # noqa: E731
    for value in (0.3, -1.2):
        x = tf.constant([value], dtype=tf.float64)
        np.testing.assert_allclose(second_derivative(x).numpy(),
                                   [_numeric_derivative(first, value)], rtol=1e-6)


def test_custom_gradient_reading_a_variable_under_forward_mode():
    v = tf.Variable(3.0, dtype=tf.float64)

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables):
            return dy * v, [tf.reduce_sum(dy * x)]
        return x * v, grad

    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator([x, v], [tf.constant([1.0, 0.5], tf.float64),
                                                 tf.constant(2.0, tf.float64)]) as acc:
        y = scale(x)
    # d(x v) = dx v + x dv
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1.0 * 3 + 1 * 2, 0.5 * 3 + 2 * 2])


def test_forward_over_back_through_custom_gradient_matches_numeric():
    @tf.custom_gradient
    def softplus(x):
        def grad(dy):
            return dy * tf.sigmoid(x)
        return tf.math.log(1 + tf.exp(x)), grad

    x = tf.constant(0.7, tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, tf.float64)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = softplus(x) ** 2
        g = tape.gradient(y, x)
    d1 = lambda v: 2 * np.log1p(np.exp(v)) / (1 + np.exp(-v))  # noqa: E731
    np.testing.assert_allclose(float(acc.jvp(g)), _numeric_derivative(d1, 0.7), rtol=1e-6)
