"""gelu and its gradient op against the closed forms, computed here with math.erf in float64:
gelu(x) = x Phi(x), gelu'(x) = Phi(x) + x phi(x), gelu''(x) = phi(x) (2 - x^2) (exact form);
the tanh form's (TF's ``approximate=True``) differentiated by hand."""
import math

import numpy as np
import pytest

import minitf as tf

X = np.concatenate([np.linspace(-12, 12, 481), [-1e-4, 0.0, 3e-6, 40.0, -40.0]])


def _phi_cdf(x):
    return np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2)))(np.asarray(x, float))


def _phi_pdf(x):
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _tanh_form(x):
    c, a = math.sqrt(2 / math.pi), 0.044715
    t = np.tanh(c * (x + a * x ** 3))
    du = c * (1 + 3 * a * x * x)
    return (0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du,
            (1 - t * t) * (du + 3 * a * c * x * x - x * t * du * du))


def _reference(x, approximate):
    if approximate:
        return _tanh_form(x)
    cdf, pdf = _phi_cdf(x), _phi_pdf(x)
    return x * cdf, cdf + x * pdf, pdf * (2 - x * x)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_float64_to_rounding_even_in_the_far_tail(approximate):
    x = tf.constant(X)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.nn.gelu(x, approximate=approximate)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    want_y, want_dy, want_d2y = _reference(X, approximate)
    # The tanh form's 1 + tanh(u) cancels for u << 0 in any implementation: an absolute
    # error of a few ulps of 1 there. The exact form keeps its relative precision.
    atol = 1e-14 if approximate else 1e-300
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-13, atol=atol)
    np.testing.assert_allclose(dy.numpy(), want_dy, rtol=1e-12, atol=atol)
    np.testing.assert_allclose(d2y.numpy(), want_d2y, rtol=1e-11, atol=max(atol, 1e-15))
    if not approximate:   # x Phi(x) at x = -10: 7.6e-23, kept to its own relative precision
        assert abs(y.numpy()[X == -10.0][0] / (-10 * 0.5 * math.erfc(10 / math.sqrt(2))) - 1) < 1e-13


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_float32_within_a_few_ulps_of_its_scale(approximate):
    x32 = X.astype(np.float32)
    x = tf.constant(x32)
    g = tf.constant(np.linspace(-2, 2, X.size).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.gelu(x, approximate=approximate)
    dx = tape.gradient(y, x, output_gradients=g)
    want_y, want_dy, _ = _reference(x32.astype(np.float64), approximate)
    assert y.dtype == tf.float32 and dx.dtype == tf.float32
    # Phi's absolute error below 1e-7: y's below 1e-7 |x| (plus float32 rounding of y)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=3e-7, atol=1.5e-7 * 12)
    np.testing.assert_allclose(dx.numpy(), g.numpy() * want_dy, rtol=1e-6, atol=3e-6)


def test_gelu_of_nonfinite_and_half_precision():
    y = tf.nn.gelu(tf.constant([np.inf, -np.inf, np.nan, -3.0], tf.float32)).numpy()
    assert y[0] == np.inf and np.isnan(y[1]) and np.isnan(y[2])   # -inf * Phi(-inf) = -inf * 0
    np.testing.assert_allclose(y[3], -3 * 0.5 * math.erfc(3 / math.sqrt(2)), rtol=1e-5)
    half = tf.nn.gelu(tf.constant([1.5, -0.5], tf.float16))
    assert half.dtype == tf.float16
    np.testing.assert_allclose(half.numpy().astype(np.float64),
                               [1.5 * _phi_cdf([1.5])[0], -0.5 * _phi_cdf([-0.5])[0]],
                               rtol=1e-3)


def test_gelu_batch_jacobian_matches_the_derivative():
    x = tf.constant(np.linspace(-3, 3, 12).reshape(3, 4))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.gelu(x)
    jac = tape.batch_jacobian(y, x).numpy()
    want = np.stack([np.diag(row) for row in _reference(x.numpy(), False)[1]])
    np.testing.assert_allclose(jac, want, rtol=1e-12, atol=1e-15)


def test_gelu_of_integers_is_refused_with_the_op_and_dtype_named():
    with pytest.raises(TypeError, match="gelu.*int32.*floating-point"):
        tf.nn.gelu(tf.constant([1, 2]))
