"""tf.linalg.sqrtm, matrix_rank, tensor_diag, tensor_diag_part, banded_triangular_solve and
eigh_tridiagonal.

Expected values were computed with TensorFlow 2 on the same inputs.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.ops.registry import OPS
from minitf.testing import check_grads, check_op


RHS = np.array([[1., 2.], [3., 4.], [5., 6.], [7., 8.]])
S = np.array([[4., 1., 0.], [1., 3., 0.5], [0.2, 0.1, 2.]])
WEIGHTS = np.array([[1., 2., 3.], [0., 1., -1.], [2., 0., 1.]])


def _close(t, expected, atol=1e-10):
    np.testing.assert_allclose(t.numpy(), expected, atol=atol)


# --- sqrtm -------------------------------------------------------------------------------------

def test_sqrtm_values_match_tf():
    _close(tf.linalg.sqrtm(tf.constant(S)),
           [[1.981917438482, 0.27098224356, -0.012869694494],
            [0.268408304662, 1.709648225472, 0.161230510768],
            [0.056770387611, 0.027098224356, 1.412926592924]])
    _close(tf.linalg.sqrtm(tf.constant([[1., 2.], [0., 1.]], tf.float64)), [[1., 1.], [0., 1.]])
    singular = tf.linalg.sqrtm(tf.constant([[1., 1.], [1., 1.]]))
    assert singular.dtype == tf.float32
    _close(singular, np.full((2, 2), 0.707106781187), atol=1e-6)


def test_sqrtm_batched_squares_back():
    a = np.stack([S, S.T + 2.0 * np.eye(3)])
    root = tf.linalg.sqrtm(tf.constant(a)).numpy()
    np.testing.assert_allclose(root @ root, a, atol=1e-10)


def test_sqrtm_without_real_root_is_nan_as_tf():
    assert np.isnan(tf.linalg.sqrtm(tf.constant([[-1., 0.], [0., 4.]], tf.float64)).numpy()).all()
    assert np.isnan(tf.linalg.sqrtm(tf.constant([[-1., 0.5], [0., 4.]], tf.float64)).numpy()).all()


def test_sqrtm_gradient_value_matches_tf():
    a = tf.constant(S)
    with tf.GradientTape() as tape:
        tape.watch(a)
        total = tf.reduce_sum(tf.linalg.sqrtm(a) * tf.constant(WEIGHTS))
    _close(tape.gradient(total, a),
           [[0.217507978906, 0.467600791115, 0.902033336374],
            [-0.042212615285, 0.278393228963, -0.403385662247],
            [0.59999388991, -0.083112396347, 0.369742238459]])


def test_sqrtm_op_gradcheck():
    op = OPS["sqrtm"]
    for k, (inputs, attrs) in enumerate(op.samples()):
        check_op(op, inputs, attrs, name=f"sqrtm sample {k}")


def test_sqrtm_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"sqrtm: input matrix must be square, got shape \(2, 3\)"):
        tf.linalg.sqrtm(tf.ones((2, 3)))


# --- matrix_rank, tensor_diag, tensor_diag_part ------------------------------------------------

def test_matrix_rank():
    m = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
    rank = tf.linalg.matrix_rank(tf.constant(m))
    assert rank.dtype == tf.int32 and int(rank) == 2
    np.testing.assert_array_equal(tf.linalg.matrix_rank(tf.constant(np.stack([m, np.eye(3)])))
                                  .numpy(), [2, 3])
    assert int(tf.linalg.matrix_rank(tf.constant(m), tol=5.0)) == 1
    assert int(tf.linalg.matrix_rank(tf.constant(m), tol=tf.constant(0.1, tf.float64))) == 2
    # TF's default tolerance eps * max(rows, cols) * max(s): 1e-8 is below it in float32
    assert int(tf.linalg.matrix_rank(tf.constant([[1., 0.], [0., 1e-8]]))) == 1
    assert int(tf.linalg.matrix_rank(tf.constant([[1., 0.], [0., 1e-6]]))) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="matrix_rank: input must have rank"):
        tf.linalg.matrix_rank(tf.ones((3,)))


def test_tensor_diag_and_part():
    _close(tf.linalg.tensor_diag(tf.constant([[1., 2.], [3., 4.]])),
           [[[[1.0, 0.0], [0.0, 0.0]], [[0.0, 2.0], [0.0, 0.0]]],
            [[[0.0, 0.0], [3.0, 0.0]], [[0.0, 0.0], [0.0, 4.0]]]])
    _close(tf.linalg.tensor_diag_part(tf.reshape(tf.range(16.), [2, 2, 2, 2])),
           [[0.0, 5.0], [10.0, 15.0]])
    _close(tf.linalg.tensor_diag_part(tf.linalg.tensor_diag(tf.constant([1., 2., 3.]))),
           [1., 2., 3.])
    check_grads(tf.linalg.tensor_diag, [np.array([[1., 2.], [3., 4.]])], order=1)
    check_grads(tf.linalg.tensor_diag_part, [np.arange(16.).reshape(2, 2, 2, 2)], order=1)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tensor_diag_part: input must have an even rank.*\(2, 3\)"):
        tf.linalg.tensor_diag_part(tf.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_diag: diagonal must have"):
        tf.linalg.tensor_diag(tf.constant(1.0))


# --- banded_triangular_solve -------------------------------------------------------------------

BANDS_LOWER = np.array([[2., 3., 4., 5.], [0., 1., -1., 2.], [0., 0., 0.5, 1.]])
BANDS_UPPER = np.array([[1., -1., 2., 0.], [2., 3., 4., 5.]])


def test_banded_triangular_solve_matches_tf():
    b = tf.constant(RHS)
    lower, upper = tf.constant(BANDS_LOWER), tf.constant(BANDS_UPPER)
    _close(tf.linalg.banded_triangular_solve(lower, b),
           [[0.5, 1.0], [0.833333333333, 1.0], [1.395833333333, 1.625], [0.675, 0.75]])
    _close(tf.linalg.banded_triangular_solve(lower, b, adjoint=True),
           [[0.004166666667, 0.308333333333], [0.716666666667, 1.033333333333], [0.55, 0.7],
            [1.4, 1.6]])
    _close(tf.linalg.banded_triangular_solve(upper, b, lower=False),
           [[-0.091666666667, 0.216666666667], [1.183333333333, 1.566666666667], [0.55, 0.7],
            [1.4, 1.6]])
    _close(tf.linalg.banded_triangular_solve(upper, b, lower=False, adjoint=True),
           [[0.5, 1.0], [0.833333333333, 1.0], [1.458333333333, 1.75],
            [0.816666666667, 0.9]])


def test_banded_triangular_solve_gradients():
    bands = tf.constant(BANDS_LOWER)
    with tf.GradientTape() as tape:
        tape.watch(bands)
        total = tf.reduce_sum(tf.linalg.banded_triangular_solve(bands, tf.constant(RHS)) ** 2)
    _close(tape.gradient(total, bands),
           [[-0.456961805556, -1.331828703704, -1.862300347222, -0.40725],
            [0.0, -1.114097222222, -1.131597222222, -0.864375],
            [0.0, 0.0, -0.943958333333, -0.525]])

    def upper_adjoint(bands, rhs):
        return tf.linalg.banded_triangular_solve(bands, rhs, lower=False, adjoint=True)

    check_grads(upper_adjoint, [BANDS_UPPER, RHS], order=1)
    check_grads(tf.linalg.banded_triangular_solve,
                [np.stack([BANDS_LOWER, BANDS_LOWER + 1.0]), RHS], order=1)


def test_banded_triangular_solve_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"banded_triangular_solve: rhs must have shape \[\.\.\., 4, N\]"):
        tf.linalg.banded_triangular_solve(tf.constant(BANDS_LOWER), tf.ones((3, 1), tf.float64))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"bands must hold at least the "
                                                             r"diagonal \(K >= 1\)"):
        tf.linalg.banded_triangular_solve(tf.ones((0, 2)), tf.ones((2, 1)))


def test_banded_triangular_solve_ignores_bands_beyond_the_matrix():
    # TF: K > M is allowed; the extra subdiagonals do not exist in a 2 x 2 matrix
    bands = tf.constant([[2., 3.], [1., 1.], [5., 5.]])
    _close(tf.linalg.banded_triangular_solve(bands, tf.ones((2, 1))), [[0.5], [0.16666667]],
           atol=1e-6)


# --- eigh_tridiagonal --------------------------------------------------------------------------

ALPHA = np.array([1., 2., 3., 4.])
BETA = np.array([0.5, -1., 0.25])
EIGENVALUES = [0.707001917851, 1.640334247502, 3.549908364086, 4.102755470562]


def test_eigh_tridiagonal_values_and_selection():
    alpha, beta = tf.constant(ALPHA), tf.constant(BETA)
    _close(tf.linalg.eigh_tridiagonal(alpha, beta), EIGENVALUES)
    _close(tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[1.0, 3.5]),
           [1.640334247502])
    _close(tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2]),
           EIGENVALUES[1:3])
    float32 = tf.linalg.eigh_tridiagonal(tf.constant([1., 2.]), tf.constant([0.5]))
    assert float32.dtype == tf.float32
    _close(float32, [0.7928932, 2.2071066], atol=1e-6)


def test_eigh_tridiagonal_vectors_up_to_sign():
    values, vectors = tf.linalg.eigh_tridiagonal(tf.constant(ALPHA), tf.constant(BETA),
                                                 eigvals_only=False)
    _close(values, EIGENVALUES)
    expected = np.array([[-0.842098361771, 0.529015650675, 0.100633577755, -0.029760266641],
                         [0.49346640996, 0.677493677184, 0.513212803251, -0.184677660253],
                         [0.217001940798, 0.508179098555, -0.745116027436, 0.373451827067],
                         [-0.016474496445, -0.053840157024, 0.413869070196, 0.908593540145]])
    got = vectors.numpy()
    signs = np.sign((got * expected).sum(axis=0))
    np.testing.assert_allclose(got * signs, expected, atol=1e-10)
    _, some = tf.linalg.eigh_tridiagonal(tf.constant(ALPHA), tf.constant(BETA),
                                         eigvals_only=False, select="i", select_range=[2, 3])
    np.testing.assert_allclose(np.abs(some.numpy()), np.abs(expected[:, 2:]), atol=1e-10)


def test_eigh_tridiagonal_has_no_gradient():
    alpha = tf.constant(ALPHA)
    with tf.GradientTape() as tape:
        tape.watch(alpha)
        total = tf.reduce_sum(tf.linalg.eigh_tridiagonal(alpha, tf.constant(BETA)))
    assert tape.gradient(total, alpha) is None


def test_eigh_tridiagonal_errors():
    alpha, beta = tf.constant(ALPHA), tf.constant(BETA)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"alpha must have shape \[n\] and beta \[n - 1\], got \(4,\) and "
                             r"\(2,\)"):
        tf.linalg.eigh_tridiagonal(alpha, beta[:2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="select must be 'a', 'v' or 'i'"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="x")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"0 <= low <= high < n = 4"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[2, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="select_range must be a pair"):
        tf.linalg.eigh_tridiagonal(alpha, beta, select="v")
    with pytest.raises(TypeError, match="same float dtype, got float64 and float32"):
        tf.linalg.eigh_tridiagonal(alpha, tf.constant([1., 2., 3.]))
