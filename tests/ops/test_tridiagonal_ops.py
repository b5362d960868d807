"""tf.linalg.tridiagonal_solve and tridiagonal_matmul.

Expected values were computed with TensorFlow 2 on the same inputs.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.ops.registry import OPS
from minitf.testing import check_grads, check_op


DIAGS = np.array([[2., 1., 0.5, 9.], [4., 5., 6., 3.], [7., -1., 2., 1.]])
DENSE = np.array([[4., 2., 0., 0.], [-1., 5., 1., 0.], [0., 2., 6., 0.5], [0., 0., 1., 3.]])
RHS = np.array([[1., 2.], [3., 4.], [5., 6.], [7., 8.]])
SOLVED = [[-0.001385041551, 0.141274238227], [0.502770083102, 0.717451523546],
          [0.484764542936, 0.554016620499], [2.171745152355, 2.481994459834]]


def _close(t, expected, atol=1e-11):
    np.testing.assert_allclose(t.numpy(), expected, atol=atol)


def test_solve_compact_formats_and_options():
    d, r = tf.constant(DIAGS), tf.constant(RHS)
    _close(tf.linalg.tridiagonal_solve(d, r), SOLVED)
    _close(tf.linalg.tridiagonal_solve(d, r, partial_pivoting=False), SOLVED)
    _close(tf.linalg.tridiagonal_solve(d, r[:, 0]), np.array(SOLVED)[:, 0])
    _close(tf.linalg.tridiagonal_solve(d, tf.transpose(r), transpose_rhs=True), SOLVED)
    _close(tf.linalg.tridiagonal_solve(d, r, conjugate_rhs=True), SOLVED)


def test_solve_matrix_and_sequence_formats():
    r = tf.constant(RHS)
    _close(tf.linalg.tridiagonal_solve(tf.constant(DENSE), r, diagonals_format="matrix"), SOLVED)
    full = [tf.constant(v) for v in DIAGS]
    _close(tf.linalg.tridiagonal_solve(full, r, diagonals_format="sequence"), SOLVED)
    short = [tf.constant(DIAGS[0, :-1]), tf.constant(DIAGS[1]), tf.constant(DIAGS[2, 1:])]
    _close(tf.linalg.tridiagonal_solve(short, r, diagonals_format="sequence"), SOLVED)


def test_solve_batched_float32():
    d = tf.constant(np.stack([DIAGS, DIAGS[:, ::-1]]), tf.float32)
    r = tf.constant(np.stack([RHS, RHS]), tf.float32)
    out = tf.linalg.tridiagonal_solve(d, r)
    assert out.dtype == tf.float32
    _close(out[0], SOLVED, atol=1e-5)
    dense = np.diag(DIAGS[1, ::-1]) + np.diag(DIAGS[0, ::-1][:-1], 1) + np.diag(
        DIAGS[2, ::-1][1:], -1)
    _close(out[1], np.linalg.solve(dense, RHS), atol=1e-5)


def test_pivoting_and_singular_systems_as_tf():
    # TF: singular systems give NaN; a zero first pivot needs partial pivoting
    singular = tf.constant([[1., 0., 0.], [1., 1., 1.], [0., 1., 0.]], tf.float64)
    ones = tf.ones((3, 1), tf.float64)
    assert np.isnan(tf.linalg.tridiagonal_solve(singular, ones).numpy()).all()
    zero_pivot = tf.constant([[1., 1., 0.], [0., 1., 1.], [0., 1., 1.]], tf.float64)
    _close(tf.linalg.tridiagonal_solve(zero_pivot, ones), [[0.], [1.], [0.]])
    assert np.isnan(tf.linalg.tridiagonal_solve(zero_pivot, ones,
                                                partial_pivoting=False).numpy()).all()


def test_matmul():
    d, r = tf.constant(DIAGS), tf.constant(RHS)
    expected = [[10.0, 16.0], [19.0, 24.0], [39.5, 48.0], [26.0, 30.0]]
    _close(tf.linalg.tridiagonal_matmul(d, r), expected)
    _close(tf.linalg.tridiagonal_matmul(tf.constant(DENSE), r, diagonals_format="matrix"),
           expected)
    _close(tf.linalg.tridiagonal_matmul([tf.constant(v) for v in DIAGS], r,
                                        diagonals_format="sequence"), expected)


def test_solve_gradient_values_match_tf():
    d, r = tf.constant(DIAGS), tf.constant(RHS)
    with tf.GradientTape() as tape:
        tape.watch([d, r])
        y = tf.linalg.tridiagonal_solve(d, r)
        total = tf.reduce_sum(y * tf.constant([[1., -2.]], tf.float64))
    grad_d, grad_r = tape.gradient(total, [d, r])
    _close(grad_d, [[0.245298148418, 0.032803615687, 0.293920396559, 0.0],
                    [0.074719346844, 0.049059629684, 0.065607231375, 0.881761189678],
                    [0.0, 0.014943869369, 0.098119259367, 0.196821694125]])
    _close(grad_r, [[0.263157894737, -0.526315789474], [0.052631578947, -0.105263157895],
                    [0.105263157895, -0.210526315789], [0.315789473684, -0.631578947368]])


def test_solve_op_gradcheck():
    op = OPS["tridiagonal_solve"]
    for k, (inputs, attrs) in enumerate(op.samples()):
        check_op(op, inputs, attrs, name=f"tridiagonal_solve sample {k}")


def test_composite_gradients():
    def solve_matrix(a, b):
        return tf.linalg.tridiagonal_solve(a, b, diagonals_format="matrix")

    def solve_vector(d, b):
        return tf.linalg.tridiagonal_solve(d, b)

    def matmul(d, b):
        return tf.linalg.tridiagonal_matmul(d, b)

    check_grads(solve_matrix, [DENSE, RHS], order=1)
    check_grads(solve_vector, [DIAGS, RHS[:, 1]], order=1)
    check_grads(matmul, [DIAGS, RHS], order=1)


def test_errors():
    d, r = tf.constant(DIAGS), tf.constant(RHS)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"tridiagonal_solve: compact "
                       r"diagonals must have shape \[\.\.\., 3, M\], got \(2, 3\)"):
        tf.linalg.tridiagonal_solve(tf.ones((2, 3)), tf.ones((3, 1)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"tridiagonal_solve: rhs must "
                       r"have shape \[\.\.\., 4, K\].*got \(3, 2\)"):
        tf.linalg.tridiagonal_solve(d, r[:3])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="tridiagonal_solve: diagonals_format must be one of"):
        tf.linalg.tridiagonal_solve(d, r, diagonals_format="banded")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tridiagonal_matmul: diagonals_format='matrix' needs square"):
        tf.linalg.tridiagonal_matmul(tf.ones((3, 4), tf.float64), r,
                                     diagonals_format="matrix")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"the subdiagonal must have shape \(4,\) or \(3,\).*got \(2,\)"):
        tf.linalg.tridiagonal_solve([d[0], d[1], d[2, :2]], r, diagonals_format="sequence")
    with pytest.raises(TypeError, match="tridiagonal_solve: rhs has dtype float32, diagonals "
                                        "float64"):
        tf.linalg.tridiagonal_solve(d, tf.ones((4, 1)))
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        tf.linalg.tridiagonal_solve(d, r, perturb_singular=True)
