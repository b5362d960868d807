"""Structural tf.linalg functions: band_part, trace, set_diag, adjoint, eye, cross and
triangular_solve, against numpy and the examples of TF's API documentation.

The registry's gradient check (tests/ops/test_gradcheck.py) covers band_part, cross and
triangular_solve; the composites (trace, set_diag) are checked here.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

_rng = np.random.default_rng(5)


def _u(*shape):
    return _rng.uniform(-2.0, 2.0, size=shape)


# --- band_part ---------------------------------------------------------------------------------

_TF_BAND_INPUT = np.array([[0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1], [-3, -2, -1, 0]],
                          dtype=np.float32)


@pytest.mark.parametrize("lower,upper,want", [
    # the two examples of TF's tf.linalg.band_part documentation
    (1, -1, [[0, 1, 2, 3], [-1, 0, 1, 2], [0, -1, 0, 1], [0, 0, -1, 0]]),
    (2, 1, [[0, 1, 0, 0], [-1, 0, 1, 0], [-2, -1, 0, 1], [0, -2, -1, 0]]),
])
def test_band_part_tf_doc_examples(lower, upper, want):
    out = tf.linalg.band_part(_TF_BAND_INPUT, lower, upper)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.array(want, dtype=np.float32))


def test_band_part_triangles_batched_and_integers():
    x = _u(2, 3, 5)
    np.testing.assert_array_equal(tf.linalg.band_part(x, -1, 0).numpy(), np.tril(x))
    np.testing.assert_array_equal(tf.linalg.band_part(x, 0, -1).numpy(), np.triu(x))
    np.testing.assert_array_equal(tf.linalg.band_part(x, 0, 0).numpy(),
                                  x * np.eye(3, 5))
    ints = np.arange(9, dtype=np.int32).reshape(3, 3)
    out = tf.linalg.band_part(ints, tf.constant(0, dtype=tf.int64), -1)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), np.triu(ints))


def test_band_part_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"band_part.*rank >= 2.*\(3,\)"):
        tf.linalg.band_part(np.ones(3), 0, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"band_part: num_lower.*\(2, 3\)"):
        tf.linalg.band_part(np.ones((2, 3)), 3, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="band_part: num_upper.*integer"):
        tf.linalg.band_part(np.ones((2, 3)), 0, 1.5)


# --- trace, set_diag, adjoint, eye -------------------------------------------------------------

def test_trace_tf_doc_examples():
    # from TF's tf.linalg.trace documentation
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=np.int32)
    assert int(tf.linalg.trace(x).numpy()) == 15
    batched = np.stack([x, -x])
    np.testing.assert_array_equal(tf.linalg.trace(batched).numpy(), [15, -15])


def test_trace_non_square_and_gradient():
    x = _u(2, 3, 4)
    np.testing.assert_allclose(tf.linalg.trace(x).numpy(), np.trace(x, axis1=-2, axis2=-1))
    check_grads(lambda t: tf.linalg.trace(t), [x])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"trace.*\(4,\)"):
        tf.linalg.trace(np.ones(4))


def _set_diag_reference(x, d, k):
    out = x.copy()
    rows, cols = x.shape[-2:]
    for i in range(rows):
        j = i + k
        if 0 <= j < cols:
            out[..., i, j] = d[..., i if k >= 0 else j]
    return out


@pytest.mark.parametrize("shape,k", [((3, 4), 0), ((2, 3, 4), 1), ((2, 4, 3), -1),
                                     ((4, 3), 2), ((3, 3), -2)])
def test_set_diag_matches_reference(shape, k):
    x = _u(*shape)
    rows, cols = shape[-2:]
    length = min(rows + min(k, 0), cols - max(k, 0))
    d = _u(*shape[:-2], length)
    out = tf.linalg.set_diag(x, d, k=k)
    np.testing.assert_array_equal(out.numpy(), _set_diag_reference(x, d, k))
    check_grads(lambda a, b: tf.linalg.set_diag(a, b, k=k), [x, d])


def test_set_diag_tf_doc_example():
    # TF's tf.linalg.set_diag documentation: input 7s of shape (2, 3, 4), the main diagonal
    x = np.full((2, 3, 4), 7.0)
    d = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    want = np.array([[[1, 7, 7, 7], [7, 2, 7, 7], [7, 7, 3, 7]],
                     [[4, 7, 7, 7], [7, 5, 7, 7], [7, 7, 6, 7]]], dtype=np.float64)
    np.testing.assert_array_equal(tf.linalg.set_diag(x, d).numpy(), want)


def test_set_diag_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"set_diag.*shape \(3,\).*\(2,\)"):
        tf.linalg.set_diag(np.ones((3, 4)), np.ones(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="set_diag.*k=5"):
        tf.linalg.set_diag(np.ones((3, 4)), np.ones(1), k=5)
    with pytest.raises(NotImplementedError, match="set_diag"):
        tf.linalg.set_diag(np.ones((3, 4)), np.ones((2, 3)), k=(0, 1))


def test_adjoint_and_eye():
    x = _u(2, 3, 4)
    np.testing.assert_array_equal(tf.linalg.adjoint(x).numpy(), np.swapaxes(x, -1, -2))
    np.testing.assert_array_equal(tf.linalg.eye(2, 3, batch_shape=[2]).numpy(),
                                  np.broadcast_to(np.eye(2, 3), (2, 2, 3)))
    assert tf.linalg.eye is tf.eye


# --- cross -------------------------------------------------------------------------------------

def test_cross_matches_numpy():
    a, b = _u(2, 5, 3), _u(2, 5, 3)
    np.testing.assert_allclose(tf.linalg.cross(a, b).numpy(), np.cross(a, b), rtol=1e-14)
    e = np.eye(3, dtype=np.int32)
    np.testing.assert_array_equal(tf.linalg.cross(e[0], e[1]).numpy(), e[2])


def test_cross_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cross.*\(2, 3\) and \(3,\)"):
        tf.linalg.cross(np.ones((2, 3)), np.ones(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cross.*\(4,\)"):
        tf.linalg.cross(np.ones(4), np.ones(4))


# --- triangular_solve --------------------------------------------------------------------------

def test_triangular_solve_tf_doc_example():
    # from TF's tf.linalg.triangular_solve documentation
    a = np.array([[3, 0, 0, 0], [2, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=np.float32)
    b = np.array([[4], [2], [4], [2]], dtype=np.float32)
    x = tf.linalg.triangular_solve(a, b, lower=True)
    assert x.dtype == tf.float32
    np.testing.assert_allclose(x.numpy(), [[1.333333], [-0.666667], [2.666667], [-1.333333]],
                               rtol=1e-5)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_triangular_solve_ignores_the_other_triangle(lower, adjoint):
    m = _u(2, 4, 4) + 4 * np.eye(4)
    rhs = _u(4, 3)   # broadcast against the batch of matrices
    tri = np.tril(m) if lower else np.triu(m)
    if adjoint:
        tri = np.swapaxes(tri, -1, -2)
    out = tf.linalg.triangular_solve(m, rhs, lower=lower, adjoint=adjoint)
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(tri, np.broadcast_to(rhs, (2, 4, 3))),
                               rtol=1e-12)


def test_triangular_solve_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"triangular_solve.*square.*\(3, 2\)"):
        tf.linalg.triangular_solve(np.ones((3, 2)), np.ones((3, 1)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"triangular_solve.*\(2, 1\)"):
        tf.linalg.triangular_solve(np.eye(3), np.ones((2, 1)))
    singular = np.tril(np.ones((3, 3)))
    singular[1, 1] = 0.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="triangular_solve.*[Ss]ingular"):
        tf.linalg.triangular_solve(singular, np.ones((3, 1)))


def test_matrix_ops_under_function_over_two_calls():
    @tf.function
    def step(m, rhs, a, b):
        with tf.GradientTape() as tape:
            tape.watch(m)
            x = tf.linalg.triangular_solve(m, rhs)
            loss = tf.reduce_sum(x) + tf.linalg.trace(m)
        banded = tf.linalg.band_part(m, 1, 0)
        exp_sym = tf.linalg.expm((m + tf.transpose(m)) / 2.0)
        return x, banded, tf.linalg.cross(a, b), tape.gradient(loss, m), exp_sym

    for _ in range(2):
        m, rhs, a, b = _u(3, 3) + 3 * np.eye(3), _u(3, 2), _u(4, 3), _u(4, 3)
        x, banded, c, grad, exp_sym = [t.numpy() for t in step(
            tf.constant(m), tf.constant(rhs), tf.constant(a), tf.constant(b))]
        e, v = np.linalg.eigh((m + m.T) / 2)
        np.testing.assert_allclose(exp_sym, (v * np.exp(e)) @ v.T, rtol=1e-12)
        low = np.tril(m)
        want_x = np.linalg.solve(low, rhs)
        np.testing.assert_allclose(x, want_x, rtol=1e-12)
        np.testing.assert_array_equal(banded, np.tril(np.triu(m, -1)))
        np.testing.assert_allclose(c, np.cross(a, b), rtol=1e-14)
        # d sum(L^-1 rhs) / dL = -tril(L^-T 1 x^T), plus the identity from the trace
        g_rhs = np.linalg.solve(low.T, np.ones((3, 2)))
        np.testing.assert_allclose(grad, np.tril(-g_rhs @ want_x.T) + np.eye(3), rtol=1e-10)
    assert step.experimental_get_tracing_count() == 1   # the second call replayed the trace


# --- expm --------------------------------------------------------------------------------------

def test_expm_closed_forms():
    # rotation generator: expm([[0, t], [-t, 0]]) = [[cos t, sin t], [-sin t, cos t]]
    t = 0.7
    np.testing.assert_allclose(tf.linalg.expm(np.array([[0.0, t], [-t, 0.0]])).numpy(),
                               [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]], rtol=1e-14)
    # nilpotent: I + N
    np.testing.assert_allclose(tf.linalg.expm(np.array([[0.0, 2.0], [0.0, 0.0]])).numpy(),
                               [[1.0, 2.0], [0.0, 1.0]], rtol=1e-15)
    np.testing.assert_allclose(tf.linalg.expm(np.zeros((2, 3, 3))).numpy(),
                               np.broadcast_to(np.eye(3), (2, 3, 3)), rtol=1e-15, atol=0)


@pytest.mark.parametrize("scale", [0.1, 3.0, 40.0])
def test_expm_of_symmetric_matrices_against_eigendecomposition(scale):
    # large norms exercise the squaring steps
    x = _u(2, 4, 4) * scale / 4
    sym = (x + np.swapaxes(x, -1, -2)) / 2
    e, v = np.linalg.eigh(sym)
    want = (v * np.exp(e)[:, None, :]) @ np.swapaxes(v, -1, -2)
    got = tf.linalg.expm(sym).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13 * np.abs(want).max())


def test_expm_gradient_of_the_trace():
    # d tr(expm(A)) / dA = expm(A)^T (closed form)
    a = _u(3, 3)
    x = tf.Variable(a)
    with tf.GradientTape() as tape:
        y = tf.linalg.trace(tf.linalg.expm(x))
    want = tf.linalg.expm(a).numpy().T
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-12)
    assert tf.linalg.expm(a.astype(np.float32)).dtype == tf.float32


def test_expm_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"expm.*square.*\(2, 3\)"):
        tf.linalg.expm(np.ones((2, 3)))
