"""tf.norm / tf.linalg.norm orders against numpy.linalg.norm, their gradients against central
differences, and the ValueError cases of TF's documented semantics."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

A = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4)).astype(np.float32)
BATCH = RNG.normal(size=(2, 3, 3, 4))  # float64, batched 3x4 matrices


def _np_vector(x, p, axis, keepdims=False):
    return np.linalg.norm(x, ord=p, axis=axis, keepdims=keepdims)


def test_issue_example_matrix_orders():
    assert float(tf.norm(A, ord=1, axis=[0, 1])) == pytest.approx(6.0)
    assert float(tf.norm(A, ord=np.inf, axis=[-2, -1])) == pytest.approx(7.0)
    assert float(tf.linalg.norm(A, ord="fro", axis=(0, 1))) == pytest.approx(np.sqrt(30.0))
    assert float(tf.norm(A, axis=[0, 1])) == pytest.approx(np.sqrt(30.0))


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, np.inf, 2.5])
@pytest.mark.parametrize("axis", [0, 1, -1, -2, [1]])
def test_vector_orders_match_numpy(p, axis):
    got = tf.norm(X, ord=p, axis=axis)
    ax = axis[0] if isinstance(axis, list) else axis
    want = _np_vector(X, p, ax)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, np.inf])
def test_vector_orders_axis_none_is_the_flattened_tensor(p):
    got = tf.norm(X, ord=p)
    assert got.shape == ()
    np.testing.assert_allclose(float(got), _np_vector(X.ravel(), p, None), rtol=1e-5)


def test_vector_orders_keepdims():
    for p in (1, 3, np.inf, "euclidean"):
        q = 2 if p == "euclidean" else p
        got = tf.norm(X, ord=p, axis=-1, keepdims=True)
        assert tuple(got.shape) == (3, 1)
        np.testing.assert_allclose(got.numpy(), _np_vector(X, q, -1, keepdims=True), rtol=1e-5)
    got = tf.norm(X, ord=3, keepdims=True)
    assert tuple(got.shape) == (1, 1)
    np.testing.assert_allclose(got.numpy(), [[_np_vector(X.ravel(), 3, None)]], rtol=1e-5)


@pytest.mark.parametrize("ord_", [1, np.inf, "fro", "euclidean"])
@pytest.mark.parametrize("axis", [[0, 1], (-2, -1), [1, 0], (-1, 0)])
def test_matrix_orders_match_numpy(ord_, axis):
    np_ord = "fro" if ord_ == "euclidean" else ord_
    got = tf.norm(X, ord=ord_, axis=axis)
    want = np.linalg.norm(X, ord=np_ord, axis=tuple(axis))
    np.testing.assert_allclose(float(got), want, rtol=1e-5)


@pytest.mark.parametrize("ord_", [1, np.inf, "fro", "euclidean"])
def test_batched_matrices_and_keepdims(ord_):
    np_ord = "fro" if ord_ == "euclidean" else ord_
    got = tf.linalg.norm(BATCH, ord=ord_, axis=[-2, -1])
    assert tuple(got.shape) == (2, 3)
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(BATCH, ord=np_ord, axis=(-2, -1)),
                               rtol=1e-12)
    kept = tf.norm(BATCH, ord=ord_, axis=[-2, -1], keepdims=True)
    assert tuple(kept.shape) == (2, 3, 1, 1)
    np.testing.assert_allclose(kept.numpy(), np.linalg.norm(BATCH, ord=np_ord, axis=(-2, -1),
                                                            keepdims=True), rtol=1e-12)
    # Non-trailing matrix axes: rows on axis 0, columns on axis 2.
    mid = tf.norm(BATCH, ord=ord_, axis=[0, 2])
    want = np.linalg.norm(np.moveaxis(BATCH, (0, 2), (-2, -1)), ord=np_ord, axis=(-2, -1))
    np.testing.assert_allclose(mid.numpy(), want, rtol=1e-12)


def test_column_and_row_sums_are_not_swapped():
    m = np.array([[1.0, 10.0], [1.0, 0.0]])  # column sums 2, 10; row sums 11, 1
    assert float(tf.norm(m, ord=1, axis=[0, 1])) == 10.0
    assert float(tf.norm(m, ord=np.inf, axis=[0, 1])) == 11.0
    assert float(tf.norm(m, ord=1, axis=[1, 0])) == 11.0  # transposed view


def test_spectral_norm_is_the_largest_singular_value():
    rng = np.random.default_rng(4)
    batch = rng.normal(size=(3, 4, 5))
    want = np.linalg.norm(batch, ord=2, axis=(1, 2))
    np.testing.assert_allclose(tf.norm(batch, ord=2, axis=[1, 2]).numpy(), want, rtol=1e-12)
    # the matrix axes may be any pair, in either order; keepdims keeps both
    moved = np.moveaxis(batch, 0, 2)                     # (4, 5, 3): matrices on axes 0, 1
    np.testing.assert_allclose(tf.norm(moved, ord=2, axis=[0, 1]).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(tf.norm(moved, ord=2, axis=[1, 0], keepdims=True).numpy(),
                               want.reshape(1, 1, 3), rtol=1e-12)
    m = tf.constant(batch[0])
    with tf.GradientTape() as tape:
        tape.watch(m)
        n = tf.norm(m, ord=2, axis=[0, 1])
    u, _, vt = np.linalg.svd(batch[0])               # d sigma_max / dA = u_1 v_1^T
    np.testing.assert_allclose(tape.gradient(n, m).numpy(), np.outer(u[:, 0], vt[0]),
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("ord_, axis", [
    ("fro", None), ("fro", 1), ("fro", [0]),         # 'fro' is not a vector norm
    (0, 1), (-1, None), (-np.inf, 0), (np.nan, 0),   # p must be > 0
    ("nuc", None), ("max", 1), (True, 0),
    (3, [0, 1]), (0.5, (-2, -1)), ("nuc", [0, 1]),  # matrix axes: only the 5 matrix norms
    (1, [0, 0]), (1, [0, -2]), (1, [0, 2]), (1, 2), (1, [0, 1, 1]), (1, 1.0),
])
def test_value_errors(ord_, axis):
    with pytest.raises(ValueError) as info:
        tf.norm(X, ord=ord_, axis=axis)
    msg = str(info.value)
    assert "ord" in msg and "axis" in msg


def test_unsupported_matrix_ord_message_names_ord_and_axis():
    with pytest.raises(ValueError, match=r"ord=3.*axis=\[0, 1\]"):
        tf.norm(X, ord=3, axis=[0, 1])


def _central_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _tape_grad(fn, x):
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = fn(v)
    return tape.gradient(y, v).numpy()


# Matrices whose column / row abs sums have a unique maximum with a clear margin (no ties),
# and no zero entries (|x| has a kink at 0).
M = np.array([[1.5, -0.7, 2.0], [0.3, 2.2, -1.1], [-0.9, 0.4, 0.6]])
W = np.array([[0.5, 1.2, -0.8], [-0.6, 0.2, 0.9], [0.7, -1.3, 0.1]])  # weights of the outputs


@pytest.mark.parametrize("ord_", [1, np.inf, "fro"])
def test_matrix_norm_gradients_match_central_differences(ord_):
    batch = np.stack([M, -M.T * 1.3])  # (2, 3, 3); second matrix has a different argmax
    wts = np.array([0.7, -1.9])

    def f(x):
        return float(np.sum(wts * np.linalg.norm(x, ord=ord_, axis=(-2, -1))))

    got = _tape_grad(lambda v: tf.reduce_sum(wts * tf.norm(v, ord=ord_, axis=[-2, -1])), batch)
    np.testing.assert_allclose(got, _central_grad(f, batch), rtol=1e-6, atol=1e-8)
    assert np.count_nonzero(got) > 0


def test_matrix_one_norm_gradient_is_sign_on_the_max_column():
    # column abs sums of M: 2.7, 3.3, 3.7 -> column 2 alone
    got = _tape_grad(lambda v: tf.norm(v, ord=1, axis=[0, 1]), M)
    want = np.zeros_like(M)
    want[:, 2] = np.sign(M[:, 2])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("p", [3, 0.5, 1, np.inf])
def test_vector_p_norm_gradients_match_central_differences(p):
    def f(x):
        return float(np.sum(W[:, 0] * np.linalg.norm(x, ord=p, axis=1)))

    got = _tape_grad(lambda v: tf.reduce_sum(W[:, 0] * tf.norm(v, ord=p, axis=1)), M)
    np.testing.assert_allclose(got, _central_grad(f, M), rtol=1e-6, atol=1e-8)


def test_p3_norm_full_gradient_check():
    # reverse and forward mode, jacobian and second order through pow/abs/reduce_sum
    check_grads(lambda x: tf.norm(x, ord=3, axis=-1, keepdims=True), [M], order=2)
    check_grads(lambda x: tf.norm(x, ord=np.inf, axis=[0, 1]), [M], order=1)
