"""tf.linalg.lu, lu_solve, lu_reconstruct and lu_matrix_inverse.

Expected values were computed with TensorFlow 2 (tf.linalg.lu and friends) on the same inputs.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads


A = np.array([[[2., -1., 0.5], [4., 3., -2.], [-6., 1., 1.]],
              [[0.5, 2., 1.], [1., -1., 3.], [2., 0.25, -1.]]])
LU = [[[-6.0, 1.0, 1.0], [-0.666666666667, 3.666666666667, -1.333333333333],
       [-0.333333333333, -0.181818181818, 0.590909090909]],
      [[2.0, 0.25, -1.0], [0.25, 1.9375, 1.25], [0.5, -0.58064516129, 4.225806451613]]]
PERM = [[2, 1, 0], [2, 0, 1]]
RHS = np.array([[1., 2.], [0., -1.], [3., 0.5]])
SOLVED = [[[0.5, 0.673076923077], [2.0, 1.076923076923], [4.0, 3.461538461538]],
          [[1.297709923664, 0.106870229008], [0.335877862595, 0.992366412214],
           [-0.320610687023, -0.038167938931]]]
INVERSE = [[[0.384615384615, 0.115384615385, 0.038461538462],
            [0.615384615385, 0.384615384615, 0.461538461538],
            [1.692307692308, 0.307692307692, 0.769230769231]],
           [[0.015267175573, 0.137404580153, 0.427480916031],
            [0.427480916031, -0.152671755725, -0.030534351145],
            [0.137404580153, 0.236641221374, -0.152671755725]]]


def test_lu_matches_tf_packing_and_pivots():
    lu, p = tf.linalg.lu(tf.constant(A))
    np.testing.assert_allclose(lu.numpy(), LU, atol=1e-11)
    assert p.dtype == tf.int32
    np.testing.assert_array_equal(p.numpy(), PERM)


def test_lu_three_by_three_and_int64_indices():
    a = tf.constant([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]], tf.float64)
    lu, p = tf.linalg.lu(a, output_idx_type=tf.int64)
    assert p.dtype == tf.int64
    np.testing.assert_array_equal(p.numpy(), [2, 0, 1])
    np.testing.assert_allclose(lu.numpy(), [[7.0, 8.0, 10.0],
                                            [0.14285714285714285, 0.8571428571428572,
                                             1.5714285714285716],
                                            [0.5714285714285714, 0.5, -0.5]], atol=1e-12)


def test_lu_ties_keep_the_first_row_as_tf():
    a = tf.constant([[1., 2., 0.], [-1., 3., 1.], [1., 0., 2.]], tf.float64)
    lu, p = tf.linalg.lu(a)
    np.testing.assert_array_equal(p.numpy(), [0, 1, 2])
    np.testing.assert_allclose(lu.numpy(), [[1., 2., 0.], [-1., 5., 1.], [1., -0.4, 2.4]],
                               atol=1e-12)


def test_lu_float32_reconstructs():
    a = tf.constant(A, tf.float32)
    lu, p = tf.linalg.lu(a)
    assert lu.dtype == tf.float32
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(lu, p).numpy(), A, atol=1e-5)


def test_lu_reconstruct_undoes_lu():
    lu, p = tf.linalg.lu(tf.constant(A))
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(lu, p).numpy(), A, atol=1e-12)


def test_lu_solve_and_broadcast_rhs():
    lu, p = tf.linalg.lu(tf.constant(A))
    batched = tf.linalg.lu_solve(lu, p, tf.constant(np.broadcast_to(RHS, (2, 3, 2))))
    np.testing.assert_allclose(batched.numpy(), SOLVED, atol=1e-11)
    shared = tf.linalg.lu_solve(lu, p, tf.constant(RHS), validate_args=True)
    np.testing.assert_allclose(shared.numpy(), SOLVED, atol=1e-11)


def test_lu_matrix_inverse():
    lu, p = tf.linalg.lu(tf.constant(A))
    np.testing.assert_allclose(tf.linalg.lu_matrix_inverse(lu, p).numpy(), INVERSE, atol=1e-11)


def test_gradient_of_lu_against_finite_differences():
    def factors(a):
        return tf.linalg.lu(a)[0]
    check_grads(factors, [A], order=1)


def test_gradients_of_compositions_against_finite_differences():
    def solve(a, b):
        lu, p = tf.linalg.lu(a)
        return tf.linalg.lu_solve(lu, p, b)

    def inverse(a):
        return tf.linalg.lu_matrix_inverse(*tf.linalg.lu(a))

    def reconstruct(a):
        return tf.linalg.lu_reconstruct(*tf.linalg.lu(a))

    check_grads(solve, [A, np.broadcast_to(RHS, (2, 3, 2)).copy()], order=1)
    check_grads(inverse, [A], order=1)
    check_grads(reconstruct, [A], order=1)


def test_gradient_value_of_inverse_through_lu():
    # d/dA sum(inv(A)) = -inv(A)^T @ ones @ inv(A)^T
    a = tf.constant(A[0])
    with tf.GradientTape() as tape:
        tape.watch(a)
        total = tf.reduce_sum(tf.linalg.lu_matrix_inverse(*tf.linalg.lu(a)))
    inv = np.array(INVERSE[0])
    expected = -inv.T @ np.ones((3, 3)) @ inv.T
    np.testing.assert_allclose(tape.gradient(total, a).numpy(), expected, atol=1e-10)


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"lu: input matrix must be square.*\(2, 3\)"):
        tf.linalg.lu(tf.ones((2, 3)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="lu: input is not invertible"):
        tf.linalg.lu(tf.constant([[1., 2.], [2., 4.]]))
    with pytest.raises(TypeError, match="lu: output_idx_type must be int32 or int64, got float32"):
        tf.linalg.lu(tf.eye(2), output_idx_type=tf.float32)
    lu, p = tf.linalg.lu(tf.constant(A))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"lu_solve: rhs must have shape \[\.\.\., 3, K\].*got \(2, 2\)"):
        tf.linalg.lu_solve(lu, p, tf.ones((2, 2), tf.float64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"lu_reconstruct: perm must have shape \(2, 3\).*got \(3,\)"):
        tf.linalg.lu_reconstruct(lu, p[0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"lu_solve: perm values must lie in \[0, 3\), got 0 to 5"):
        tf.linalg.lu_solve(lu, tf.constant([[0, 1, 5], [0, 1, 2]]), tf.constant(RHS),
                           validate_args=True)
    with pytest.raises(TypeError, match="lu_solve: rhs has dtype float32, lower_upper float64"):
        tf.linalg.lu_solve(lu, p, tf.ones((3, 1)))
