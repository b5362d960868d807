"""tf.linalg decompositions (cholesky, qr, svd, eigh, slogdet) and the functions built on them,
against numpy.linalg, closed forms and the examples of TF's API documentation.

The registry's gradient check (tests/ops/test_gradcheck.py) covers the ops' first and second
derivatives on their own samples; here: the public functions' values, factor properties
(eigenvectors and singular vectors are unique only up to sign, so the tests check
reconstructions, orthogonality and sign-invariant functions), gradients of the composites,
errors and ``tf.function`` traces.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

_rng = np.random.default_rng(11)


def _u(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, size=shape)


def _spd(*shape):
    a = _u(*shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _separated(rows, cols, *batch):
    """Matrices with well separated singular values (3, 2, 1, ...)."""
    k = min(rows, cols)
    left, _ = np.linalg.qr(_u(*batch, rows, k))
    right, _ = np.linalg.qr(_u(*batch, cols, k))
    return (left * np.arange(k, 0, -1.0)) @ np.swapaxes(right, -1, -2)


def _np(t):
    return t.numpy()


# --- cholesky, cholesky_solve, logdet ----------------------------------------------------------

def test_cholesky_matches_numpy_and_reconstructs():
    a = _spd(2, 4, 4)
    chol = _np(tf.linalg.cholesky(tf.constant(a)))
    np.testing.assert_allclose(chol, np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(chol @ np.swapaxes(chol, -1, -2), a, rtol=1e-12, atol=1e-12)
    assert np.all(np.triu(chol[0], 1) == 0)


def test_cholesky_reads_the_lower_triangle_only():
    a = _spd(3, 3)
    garbage = np.tril(a) + np.triu(_u(3, 3) * 100, 1)
    np.testing.assert_allclose(_np(tf.linalg.cholesky(garbage)), np.linalg.cholesky(a),
                               rtol=1e-12)


def test_cholesky_gradient_of_a_symmetric_input():
    # for f(X) = sum(cholesky(X X^T + 3 I)), compare with finite differences of the whole map
    check_grads(lambda x: tf.linalg.cholesky(tf.matmul(x, x, transpose_b=True)
                                             + 3.0 * tf.eye(3, dtype=tf.float64)),
                [_u(3, 3)], order=1)


def test_cholesky_float32_keeps_its_dtype():
    out = tf.linalg.cholesky(tf.constant(_spd(3, 3), dtype=tf.float32))
    assert out.dtype == tf.float32


def test_cholesky_errors():
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]])   # eigenvalues 3 and -1
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cholesky.*\(2, 2\).*positive"):
        tf.linalg.cholesky(not_pd)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cholesky.*square.*\(2, 3\)"):
        tf.linalg.cholesky(np.ones((2, 3)))
    with pytest.raises(TypeError, match="cholesky.*float"):
        tf.linalg.cholesky(np.eye(2, dtype=np.int32))


def test_cholesky_solve_and_logdet():
    a, b = _spd(2, 4, 4), _u(2, 4, 3)
    chol = tf.linalg.cholesky(a)
    np.testing.assert_allclose(_np(tf.linalg.cholesky_solve(chol, b)), np.linalg.solve(a, b),
                               rtol=1e-10)
    np.testing.assert_allclose(_np(tf.linalg.logdet(a)), np.linalg.slogdet(a)[1], rtol=1e-12)


def test_logdet_gradient_is_the_inverse():
    # d log det(X X^T + 4 I) / dX = 2 (X X^T + 4 I)^-1 X  (closed form)
    x = _u(4, 4)
    a = x @ x.T + 4 * np.eye(4)
    xt = tf.Variable(x)
    with tf.GradientTape() as tape:
        gram = tf.matmul(xt, xt, transpose_b=True) + 4.0 * tf.eye(4, dtype=tf.float64)
        y = tf.linalg.logdet(gram)
    np.testing.assert_allclose(_np(tape.gradient(y, xt)), 2 * np.linalg.inv(a) @ x, rtol=1e-10)


@pytest.mark.parametrize("name,fn,inputs", [
    ("cholesky_solve", lambda c, b: tf.linalg.cholesky_solve(c, b),
     [np.linalg.cholesky(_spd(3, 3)), _u(3, 2)]),
    ("logdet", lambda x: tf.linalg.logdet(tf.matmul(x, x, transpose_b=True)
                                          + 3.0 * tf.eye(3, dtype=tf.float64)), [_u(2, 3, 3)]),
    ("eigvalsh", lambda x: tf.linalg.eigvalsh(x), [_spd(3, 3) + np.diag([0.0, 3.0, 6.0])]),
    ("svd values", lambda x: tf.linalg.svd(x, compute_uv=False), [_separated(3, 4)]),
    ("svd public", lambda x: tf.linalg.svd(x), [_separated(4, 2)]),
    ("qr public wide", lambda x: tf.linalg.qr(x), [_u(2, 3)]),
    ("slogdet public", lambda x: tf.linalg.slogdet(x), [_u(3, 3) + 3 * np.eye(3)]),
    ("pinv tall", lambda x: tf.linalg.pinv(x), [_separated(4, 3)]),
    ("pinv wide batched", lambda x: tf.linalg.pinv(x), [_separated(2, 3, 2)]),
    ("lstsq tall", lambda a, b: tf.linalg.lstsq(a, b), [_separated(4, 3), _u(4, 2)]),
    ("lstsq wide", lambda a, b: tf.linalg.lstsq(a, b), [_separated(2, 3), _u(2, 2)]),
    ("lstsq l2", lambda a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.5),
     [_separated(4, 3), _u(4, 1)]),
    ("lstsq slow", lambda a, b: tf.linalg.lstsq(a, b, fast=False), [_separated(4, 3), _u(4, 2)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_composite_gradients(name, fn, inputs):
    check_grads(fn, inputs, name=name)


# --- slogdet -----------------------------------------------------------------------------------

def test_slogdet_matches_numpy_with_signs():
    a = _u(3, 4, 4)
    a[1, [0, 1]] = a[1, [1, 0]]
    sign, log_abs = tf.linalg.slogdet(a)
    want_sign, want_log = np.linalg.slogdet(a)
    np.testing.assert_array_equal(_np(sign), want_sign)
    np.testing.assert_allclose(_np(log_abs), want_log, rtol=1e-12)
    assert sign.shape == (3,) and log_abs.shape == (3,)


def test_slogdet_does_not_overflow_where_det_does():
    a = np.diag(np.full(400, 10.0))
    a[0, 0] = -10.0
    sign, log_abs = tf.linalg.slogdet(a)
    assert float(_np(sign)) == -1.0
    np.testing.assert_allclose(float(_np(log_abs)), 400 * np.log(10.0), rtol=1e-12)


def test_slogdet_gradient_is_the_inverse_transpose():
    a = _u(3, 3) + 3 * np.eye(3)
    x = tf.Variable(a)
    with tf.GradientTape(persistent=True) as tape:
        sign, log_abs = tf.linalg.slogdet(x)
    np.testing.assert_allclose(_np(tape.gradient(log_abs, x)), np.linalg.inv(a).T, rtol=1e-12)
    np.testing.assert_array_equal(_np(tape.gradient(sign, x)), np.zeros((3, 3)))
    del tape


def test_slogdet_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"slogdet.*square.*\(3, 2\)"):
        tf.linalg.slogdet(np.ones((3, 2)))


# --- eigh --------------------------------------------------------------------------------------

def test_eigh_values_and_vectors():
    a = _spd(2, 4, 4)
    e, v = tf.linalg.eigh(a)
    e, v = _np(e), _np(v)
    np.testing.assert_allclose(e, np.linalg.eigvalsh(a), rtol=1e-12)
    assert np.all(np.diff(e, axis=-1) > 0)
    np.testing.assert_allclose(a @ v, v * e[:, None, :], atol=1e-10)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(4), (2, 4, 4)),
                               atol=1e-12)
    np.testing.assert_allclose(_np(tf.linalg.eigvalsh(a)), e, rtol=1e-12)


def test_eigh_reads_the_lower_triangle():
    a = _spd(3, 3)
    skewed = np.tril(a) + np.triu(_u(3, 3), 1)
    np.testing.assert_allclose(_np(tf.linalg.eigvalsh(skewed)), np.linalg.eigvalsh(a),
                               rtol=1e-12)


def test_eigh_gradient_of_the_largest_eigenvalue():
    # d lambda_max((X + X^T) / 2) / dX = v v^T, v its unit eigenvector (closed form)
    x = _u(4, 4)
    sym = (x + x.T) / 2
    e, v = np.linalg.eigh(sym)
    xt = tf.Variable(x)
    with tf.GradientTape() as tape:
        values, _ = tf.linalg.eigh((xt + tf.transpose(xt)) / 2.0)
        top = values[-1]
    np.testing.assert_allclose(_np(tape.gradient(top, xt)), np.outer(v[:, -1], v[:, -1]),
                               atol=1e-10)


def test_eigh_gradient_of_a_sign_invariant_function():
    # a weighted sum of v v^T for the smallest eigenvector v: its sign cancels
    w = _u(3, 3)

    def fn(x):
        _, v = tf.linalg.eigh(tf.matmul(x, x, transpose_b=True))
        first = v[:, 0:1]
        return tf.reduce_sum(tf.matmul(first, first, transpose_b=True) * tf.constant(w))
    check_grads(fn, [_separated(3, 3)], order=1)


def test_eigh_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"eigh.*square.*\(2, 3\)"):
        tf.linalg.eigh(np.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"eigh.*rank >= 2.*\(3,\)"):
        tf.linalg.eigh(np.ones(3))


# --- qr ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,full,q_shape,r_shape", [
    ((5, 3), False, (5, 3), (3, 3)),
    ((5, 3), True, (5, 5), (5, 3)),
    ((3, 5), False, (3, 3), (3, 5)),
    ((2, 4, 4), True, (2, 4, 4), (2, 4, 4)),
])
def test_qr_factors(shape, full, q_shape, r_shape):
    a = _u(*shape)
    q, r = tf.linalg.qr(a, full_matrices=full)
    q, r = _np(q), _np(r)
    assert q.shape == q_shape and r.shape == r_shape
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    k = q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2]
                                                                           + (k, k)), atol=1e-12)
    np.testing.assert_array_equal(np.tril(r, -1), np.zeros_like(r))
    np.testing.assert_allclose(np.abs(r), np.abs(np.linalg.qr(a, mode="complete" if full else
                                                              "reduced")[1]), atol=1e-12)


def test_qr_named_fields():
    result = tf.linalg.qr(_u(3, 2))
    assert result.q.shape == (3, 2) and result.r.shape == (2, 2)


def test_qr_full_tall_gradient_is_not_defined():
    x = tf.Variable(_u(4, 2))
    with tf.GradientTape() as tape:
        q, r = tf.linalg.qr(x, full_matrices=True)
        loss = tf.reduce_sum(r)
    with pytest.raises(NotImplementedError, match=r"qr.*full_matrices=True.*\(4, 2\)"):
        tape.gradient(loss, x)


# --- svd ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svd_reconstructs_and_matches_numpy(shape):
    a = _u(*shape)
    s, left, right = tf.linalg.svd(a)
    s, left, right = _np(s), _np(left), _np(right)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    # v, not v^T: a = u diag(s) v^T
    np.testing.assert_allclose((left * s[..., None, :]) @ np.swapaxes(right, -1, -2), a,
                               atol=1e-12)
    k = min(shape[-2:])
    assert left.shape == shape[:-1] + (k,) and right.shape == shape[:-2] + (shape[-1], k)
    eye = np.broadcast_to(np.eye(k), shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(left, -1, -2) @ left, eye, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(right, -1, -2) @ right, eye, atol=1e-12)


def test_svd_full_matrices_and_values_only():
    a = _u(4, 2)
    s, left, right = tf.linalg.svd(a, full_matrices=True)
    assert left.shape == (4, 4) and right.shape == (2, 2) and s.shape == (2,)
    np.testing.assert_allclose(_np(left)[:, :2] * _np(s) @ _np(right).T, a, atol=1e-12)
    values = tf.linalg.svd(a, compute_uv=False)
    assert isinstance(values, tf.Tensor)
    np.testing.assert_allclose(_np(values), np.linalg.svd(a, compute_uv=False), rtol=1e-12)


def test_svd_nuclear_norm_gradient():
    # d sum(s) / dA = u v^T (closed form, independent of the singular vectors' signs)
    a = _separated(4, 3)
    left, _, right_t = np.linalg.svd(a, full_matrices=False)
    for compute_uv in (True, False):
        x = tf.Variable(a)
        with tf.GradientTape() as tape:
            out = tf.linalg.svd(x, compute_uv=compute_uv)
            s = out[0] if compute_uv else out
            total = tf.reduce_sum(s)
        np.testing.assert_allclose(_np(tape.gradient(total, x)), left @ right_t, atol=1e-10)


def test_svd_gradient_of_a_sign_invariant_function():
    w = _u(4, 4)

    def fn(x):
        _, left, _ = tf.linalg.svd(x)
        first = left[:, :1]
        return tf.reduce_sum(tf.matmul(first, first, transpose_b=True) * tf.constant(w))
    check_grads(fn, [_separated(4, 3)], order=1)


def test_svd_full_non_square_gradient_is_not_defined():
    x = tf.Variable(_u(4, 2))
    with tf.GradientTape() as tape:
        s, left, right = tf.linalg.svd(x, full_matrices=True)
        loss = tf.reduce_sum(s)
    with pytest.raises(NotImplementedError, match=r"svd.*full_matrices=True.*\(4, 2\)"):
        tape.gradient(loss, x)


def test_svd_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"svd.*rank >= 2.*\(4,\)"):
        tf.linalg.svd(np.ones(4))


# --- pinv and lstsq ----------------------------------------------------------------------------

def test_pinv_tf_doc_example():
    # from TF's tf.linalg.pinv documentation: pinv(a) @ a is the identity
    a = np.array([[1., 0.4, 0.5], [0.4, 0.2, 0.25], [0.5, 0.25, 0.35]])
    np.testing.assert_allclose(_np(tf.matmul(tf.linalg.pinv(a), a)), np.eye(3), atol=1e-10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_pinv_matches_numpy(shape):
    a = _u(*shape)
    np.testing.assert_allclose(_np(tf.linalg.pinv(a)), np.linalg.pinv(a), rtol=1e-9, atol=1e-10)


def test_pinv_rank_deficient_uses_tf_cutoff():
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])   # rank 1
    np.testing.assert_allclose(_np(tf.linalg.pinv(a)), np.linalg.pinv(a), atol=1e-12)
    f32 = _np(tf.linalg.pinv(a.astype(np.float32)))
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, np.linalg.pinv(a), atol=1e-6)


def test_lstsq_matches_numpy():
    a, b = _u(6, 3), _u(6, 2)
    want = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(_np(tf.linalg.lstsq(a, b)), want, rtol=1e-9)
    np.testing.assert_allclose(_np(tf.linalg.lstsq(a, b, fast=False)), want, rtol=1e-9)


def test_lstsq_wide_gives_the_minimum_norm_solution():
    a, b = _u(2, 4), _u(2, 1)
    np.testing.assert_allclose(_np(tf.linalg.lstsq(a, b)), np.linalg.pinv(a) @ b, rtol=1e-9)


def test_lstsq_ridge_closed_form():
    a, b, lam = _u(5, 3), _u(5, 2), 0.7
    want = np.linalg.solve(a.T @ a + lam * np.eye(3), a.T @ b)
    np.testing.assert_allclose(_np(tf.linalg.lstsq(a, b, l2_regularizer=lam)), want, rtol=1e-10)
    wide = a.T
    want = wide.T @ np.linalg.solve(wide @ wide.T + lam * np.eye(3), np.ones((3, 1)))
    np.testing.assert_allclose(_np(tf.linalg.lstsq(wide, np.ones((3, 1)), l2_regularizer=lam)),
                               want, rtol=1e-10)


def test_lstsq_rank_deficient_slow_path():
    a = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, 1.0])   # rank 1
    b = _u(4, 1)
    np.testing.assert_allclose(_np(tf.linalg.lstsq(a, b, fast=False)),
                               np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-12)


def test_lstsq_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"lstsq.*\[\.\.\., 4, K\].*\(3, 1\)"):
        tf.linalg.lstsq(np.ones((4, 2)), np.ones((3, 1)))


# --- tf.function -------------------------------------------------------------------------------

def test_decompositions_under_function_over_two_calls():
    @tf.function
    def step(a):
        with tf.GradientTape() as tape:
            tape.watch(a)
            s, _, _ = tf.linalg.svd(a)
            e, _ = tf.linalg.eigh(tf.matmul(a, a, transpose_a=True))
            chol = tf.linalg.cholesky(tf.matmul(a, a, transpose_a=True))
            q, r = tf.linalg.qr(a)
            _, log_abs = tf.linalg.slogdet(tf.matmul(a, a, transpose_a=True))
            loss = tf.reduce_sum(s)
        return s, e, chol, tf.abs(r), log_abs, tape.gradient(loss, a)

    for _ in range(2):
        a = _separated(4, 3)
        gram = a.T @ a
        s, e, chol, r, log_abs, grad = [_np(t) for t in step(tf.constant(a))]
        left, want_s, right_t = np.linalg.svd(a, full_matrices=False)
        np.testing.assert_allclose(s, want_s, rtol=1e-12)
        np.testing.assert_allclose(e, np.linalg.eigvalsh(gram), rtol=1e-10)
        np.testing.assert_allclose(chol, np.linalg.cholesky(gram), rtol=1e-10)
        np.testing.assert_allclose(r, np.abs(np.linalg.qr(a)[1]), atol=1e-12)
        np.testing.assert_allclose(log_abs, np.linalg.slogdet(gram)[1], rtol=1e-12)
        np.testing.assert_allclose(grad, left @ right_t, atol=1e-10)
    assert step.experimental_get_tracing_count() == 1   # the second call replayed the trace
