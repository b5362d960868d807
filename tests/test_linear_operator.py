"""tf.linalg.LinearOperator and its subclasses against numpy on the dense matrices, TF values
and central differences."""
import numpy as np
import pytest

import minitf as tf

L = tf.linalg
RNG = np.random.default_rng(7)


def _rand(*shape):
    return RNG.normal(size=shape)


def _spd(n, *batch):
    a = _rand(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _kron(a, b):
    return np.einsum("...ij,...kl->...ikjl", a, b).reshape(
        a.shape[:-2] + (a.shape[-2] * b.shape[-2], a.shape[-1] * b.shape[-1]))


def _full():
    a = _rand(3, 3) + 3 * np.eye(3)
    return L.LinearOperatorFullMatrix(a), a


def _full_spd():
    a = _spd(3, 2)
    return L.LinearOperatorFullMatrix(a, is_self_adjoint=True, is_positive_definite=True), a


def _diag():
    d = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
    return L.LinearOperatorDiag(d), np.stack([np.diag(r) for r in d])


def _identity():
    return L.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64), np.stack([np.eye(3)] * 2)


def _scaled():
    m = np.array([2.0, -0.5])
    return L.LinearOperatorScaledIdentity(3, m), m[:, None, None] * np.eye(3)


def _lower():
    a = _rand(4, 4) + 4 * np.eye(4)
    return L.LinearOperatorLowerTriangular(a), np.tril(a)


def _composition():
    a, b = _rand(3, 3) + 3 * np.eye(3), _rand(3, 3) + 3 * np.eye(3)
    ops = [L.LinearOperatorFullMatrix(a), L.LinearOperatorLowerTriangular(b)]
    return L.LinearOperatorComposition(ops), a @ np.tril(b)


def _kronecker():
    a, b = _rand(2, 2) + 2 * np.eye(2), _rand(3, 3) + 3 * np.eye(3)
    d = np.array([1.0, 2.0])
    ops = [L.LinearOperatorFullMatrix(a), L.LinearOperatorFullMatrix(b), L.LinearOperatorDiag(d)]
    return L.LinearOperatorKronecker(ops), _kron(_kron(a, b), np.diag(d))


def _kronecker_batched():
    a, b = _rand(2, 2, 2) + 2 * np.eye(2), _rand(3, 3) + 3 * np.eye(3)
    op = L.LinearOperatorKronecker([L.LinearOperatorFullMatrix(a), L.LinearOperatorFullMatrix(b)])
    return op, np.stack([np.kron(a[0], b), np.kron(a[1], b)])


def _block_diag_batched():
    a, d = _rand(2, 3, 3) + 3 * np.eye(3), np.array([2.0, -3.0])
    dense = np.zeros((2, 5, 5))
    dense[:, :3, :3], dense[:, 3:, 3:] = a, np.diag(d)
    ops = [L.LinearOperatorFullMatrix(a), L.LinearOperatorDiag(d)]
    return L.LinearOperatorBlockDiag(ops), dense


def _low_rank_batched():
    d, u = np.array([1.0, 2.0, 3.0]), _rand(2, 3, 1)
    op = L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag(d, is_positive_definite=True), u)
    return op, np.diag(d) + u @ np.swapaxes(u, -1, -2)


def _block_diag():
    a, d = _rand(3, 3) + 3 * np.eye(3), np.array([2.0, -3.0])
    dense = np.zeros((5, 5))
    dense[:3, :3], dense[3:, 3:] = a, np.diag(d)
    return L.LinearOperatorBlockDiag([L.LinearOperatorFullMatrix(a), L.LinearOperatorDiag(d)]), dense


def _block_lower():
    a, b, c = _rand(2, 2) + 2 * np.eye(2), _rand(3, 2), _rand(3, 3) + 3 * np.eye(3)
    ops = [[L.LinearOperatorFullMatrix(a)],
           [L.LinearOperatorFullMatrix(b), L.LinearOperatorFullMatrix(c)]]
    dense = np.zeros((5, 5))
    dense[:2, :2], dense[2:, :2], dense[2:, 2:] = a, b, c
    return L.LinearOperatorBlockLowerTriangular(ops), dense


def _low_rank_spd():
    d, u, upd = np.array([1.0, 2.0, 3.0, 4.0]), _rand(4, 2), np.array([0.5, 2.0])
    op = L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag(d, is_positive_definite=True), u,
                                       diag_update=upd, is_diag_update_positive=True)
    return op, np.diag(d) + u @ np.diag(upd) @ u.T


def _low_rank_general():
    a, u, v = _rand(4, 4) + 4 * np.eye(4), _rand(4, 2), _rand(4, 2)
    op = L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(a), u, v=v)
    return op, a + u @ v.T


def _inversion():
    a = _rand(3, 3) + 3 * np.eye(3)
    return L.LinearOperatorInversion(L.LinearOperatorFullMatrix(a)), np.linalg.inv(a)


def _adjoint():
    a = _rand(3, 3) + 3 * np.eye(3)
    return L.LinearOperatorAdjoint(L.LinearOperatorLowerTriangular(a)), np.tril(a).T


def _permutation():
    perm = np.array([[2, 0, 3, 1], [1, 0, 2, 3]])
    return L.LinearOperatorPermutation(perm, dtype=tf.float64), np.eye(4)[perm]


def _toeplitz():
    col, row = np.array([4.0, 1.0, -2.0]), np.array([9.0, 0.5, 1.5])
    dense = np.array([[4.0, 0.5, 1.5], [1.0, 4.0, 0.5], [-2.0, 1.0, 4.0]])
    return L.LinearOperatorToeplitz(col, row), dense


def _tridiag():
    compact = np.array([[1.0, 2.0, -1.0, 0.0], [4.0, 5.0, 6.0, 7.0], [0.0, 0.5, 2.0, 1.0]])
    dense = np.diag(compact[1]) + np.diag(compact[0, :-1], 1) + np.diag(compact[2, 1:], -1)
    return L.LinearOperatorTridiag(compact), dense


def _householder():
    v = np.array([[1.0, 2.0, 2.0], [0.0, 3.0, -4.0]])
    unit = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return L.LinearOperatorHouseholder(v), np.eye(3) - 2 * unit[:, :, None] * unit[:, None, :]


SOLVABLE = [_full, _full_spd, _diag, _identity, _scaled, _lower, _composition, _kronecker,
            _kronecker_batched, _block_diag, _block_diag_batched, _low_rank_batched, _block_lower, _low_rank_spd, _low_rank_general, _inversion, _adjoint,
            _permutation, _toeplitz, _tridiag, _householder]


@pytest.mark.parametrize("make", SOLVABLE, ids=lambda f: f.__name__[1:])
def test_methods_match_the_dense_matrix(make):
    op, dense = make()
    assert op.shape == dense.shape and op.dtype == tf.float64
    assert tuple(op.shape_tensor().numpy()) == dense.shape
    n = dense.shape[-1]
    x = _rand(*dense.shape[:-2], n, 2)
    close = dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(op.to_dense().numpy(), dense, **close)
    np.testing.assert_allclose(op.matmul(x).numpy(), dense @ x, **close)
    np.testing.assert_allclose((op @ x).numpy(), dense @ x, **close)
    adj = np.swapaxes(dense, -1, -2)
    np.testing.assert_allclose(op.matmul(x, adjoint=True).numpy(), adj @ x, **close)
    xt = np.swapaxes(x, -1, -2)
    np.testing.assert_allclose(op.matmul(xt, adjoint_arg=True).numpy(), dense @ x, **close)
    np.testing.assert_allclose(op.matvec(x[..., 0]).numpy(), (dense @ x)[..., 0], **close)
    np.testing.assert_allclose(op.solve(x).numpy(), np.linalg.solve(dense, x), **close)
    np.testing.assert_allclose(op.solve(x, adjoint=True).numpy(), np.linalg.solve(adj, x),
                               **close)
    np.testing.assert_allclose(op.solve(xt, adjoint_arg=True).numpy(),
                               np.linalg.solve(dense, x), **close)
    np.testing.assert_allclose(op.solvevec(x[..., 1]).numpy(),
                               np.linalg.solve(dense, x)[..., 1], **close)
    np.testing.assert_allclose(op.log_abs_determinant().numpy(), np.linalg.slogdet(dense)[1],
                               **close)
    np.testing.assert_allclose(op.determinant().numpy(), np.linalg.det(dense), **close)
    np.testing.assert_allclose(op.trace().numpy(), np.trace(dense, axis1=-2, axis2=-1), **close)
    np.testing.assert_allclose(op.diag_part().numpy(), np.diagonal(dense, axis1=-2, axis2=-1),
                               **close)
    np.testing.assert_allclose(op.adjoint().to_dense().numpy(), adj, **close)
    np.testing.assert_allclose(op.H.matmul(x).numpy(), adj @ x, **close)
    np.testing.assert_allclose(op.inverse().to_dense().numpy(), np.linalg.inv(dense), **close)
    np.testing.assert_allclose(op.add_to_tensor(x[..., :1] * np.ones(n)).numpy(),
                               dense + x[..., :1] * np.ones(n), **close)


def test_batch_broadcasting_as_tf():
    op = L.LinearOperatorFullMatrix(_rand(3, 2, 2) + 2 * np.eye(2))
    assert op.batch_shape == [3] and op.tensor_rank == 3 and op.domain_dimension == 2
    assert op.matmul(np.ones((4, 1, 2, 5))).shape == [4, 3, 2, 5]   # TF: (4, 3, 2, 5)
    assert op.solve(np.ones((4, 1, 2, 5))).shape == [4, 3, 2, 5]
    diag = L.LinearOperatorDiag(np.array([1.0, 2.0]))
    np.testing.assert_allclose(diag.solve(np.ones((3, 2, 1))).numpy()[:, :, 0],
                               [[1.0, 0.5]] * 3)


def test_non_square_operators():
    a = _rand(2, 3)
    op = L.LinearOperatorFullMatrix(a)
    assert op.is_square is False and op.shape == [2, 3]
    np.testing.assert_allclose(op.diag_part().numpy(), np.diagonal(a))
    zeros = L.LinearOperatorZeros(2, 3, is_square=False, dtype=tf.float64)
    assert zeros.matmul(np.ones((3, 4))).shape == [2, 4]
    blocks = L.LinearOperatorBlockDiag([op, L.LinearOperatorFullMatrix(np.ones((1, 1)))])
    assert blocks.shape == [3, 4]
    np.testing.assert_allclose(blocks.matvec(np.arange(4.0)).numpy(), list(a @ [0, 1, 2]) + [3])
    with pytest.raises(NotImplementedError, match="expected to not be square"):
        op.solve(np.ones((2, 1)))
    with pytest.raises(NotImplementedError, match="Determinant not implemented"):
        op.determinant()
    kron = L.LinearOperatorKronecker([op, L.LinearOperatorFullMatrix(a.T)])
    np.testing.assert_allclose(kron.to_dense().numpy(), np.kron(a, a.T))
    np.testing.assert_allclose(kron.matvec(np.arange(6.0)).numpy(), np.kron(a, a.T) @ np.arange(6))


def test_values_from_tf():
    # obtained by running TensorFlow 2.21 on the same arguments
    perm = L.LinearOperatorPermutation([2, 0, 1])
    np.testing.assert_allclose(perm.to_dense().numpy(), [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(perm.matvec([1.0, 2, 3]).numpy(), [3.0, 1, 2])
    assert perm.determinant().numpy() == 1.0
    assert L.LinearOperatorPermutation([1, 0, 2]).determinant().numpy() == -1.0
    toeplitz = L.LinearOperatorToeplitz(col=[1.0, 2, 3], row=[9.0, 4, 5])
    np.testing.assert_allclose(toeplitz.to_dense().numpy(), [[1, 4, 5], [2, 1, 4], [3, 2, 1]])
    house = L.LinearOperatorHouseholder([1.0, 2, 2])
    np.testing.assert_allclose(house.to_dense().numpy(),
                               [[0.7777778, -0.44444448, -0.44444448],
                                [-0.44444448, 0.11111104, -0.88888896],
                                [-0.44444448, -0.88888896, 0.11111104]], atol=1e-6)
    assert house.determinant().numpy() == -1.0
    tri = L.LinearOperatorTridiag([[1.0, 2, 0], [4.0, 5, 6], [0, 7, 8]])
    np.testing.assert_allclose(tri.to_dense().numpy(), [[4, 1, 0], [7, 5, 2], [0, 8, 6]])
    np.testing.assert_allclose(tri.log_abs_determinant().numpy(), 2.6390572, rtol=1e-6)
    zeros = L.LinearOperatorZeros(3)
    assert zeros.log_abs_determinant().numpy() == -np.inf and zeros.dtype == tf.float32
    assert zeros.determinant().numpy() == 0.0
    np.testing.assert_allclose(L.LinearOperatorLowerTriangular([[1.0, 2], [3, 4]]).to_dense(),
                               [[1, 0], [3, 4]])
    scaled = L.LinearOperatorScaledIdentity(3, 2.0)
    assert scaled.multiplier.numpy() == 2.0 and scaled.is_self_adjoint is True


def test_structured_values_from_tf():
    # obtained by running TensorFlow 2.21 on the same (float32) arguments
    kron = L.LinearOperatorKronecker([L.LinearOperatorFullMatrix([[2.0, 1], [0.5, 3]]),
                                      L.LinearOperatorDiag([1.0, -2, 4])])
    np.testing.assert_allclose(kron.log_abs_determinant().numpy(), 9.273127555847168, rtol=1e-6)
    np.testing.assert_allclose(kron.determinant().numpy(), 10648.0029296875, rtol=1e-5)
    assert kron.trace().numpy() == 15.0
    np.testing.assert_allclose(kron.diag_part().numpy(), [2.0, -4.0, 8.0, 3.0, -6.0, 12.0])
    np.testing.assert_allclose(kron.solvevec([1.0, 2, 3, 4, 5, 6]).numpy(),
                               [-0.18181819, -0.09090906, 0.13636363, 1.3636364, -0.8181819,
                                0.47727275], rtol=1e-5)
    low_rank = L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag([1.0, 2, 3]),
                                             u=[[1.0], [0.5], [-1]], diag_update=[-0.25],
                                             v=[[0.5], [1.0], [2.0]])
    np.testing.assert_allclose(low_rank.determinant().numpy(), 5.875, rtol=1e-6)
    np.testing.assert_allclose(low_rank.log_abs_determinant().numpy(), 1.770706057548523,
                               rtol=1e-6)
    np.testing.assert_allclose(low_rank.solvevec([1.0, 1, 1]).numpy(),
                               [1.4255319, 0.60638297, 0.19148937], rtol=1e-6)
    np.testing.assert_allclose(low_rank.diag_part().numpy(), [0.875, 1.875, 3.5])
    assert low_rank.trace().numpy() == 6.25
    lower = L.LinearOperatorBlockLowerTriangular(
        [[L.LinearOperatorDiag([2.0, 3.0])],
         [L.LinearOperatorFullMatrix([[1.0, 2]]), L.LinearOperatorFullMatrix([[4.0]])]])
    np.testing.assert_allclose(lower.to_dense().numpy(), [[2, 0, 0], [0, 3, 0], [1, 2, 4]])
    np.testing.assert_allclose(lower.solvevec([1.0, 1, 1]).numpy(),
                               [0.5, 0.33333334, -0.04166669], rtol=1e-5)
    np.testing.assert_allclose(lower.matvec([1.0, 1, 1], adjoint=True).numpy(), [3.0, 5.0, 4.0])
    house = L.LinearOperatorHouseholder([1.0, 2, 2])
    assert house.trace().numpy() == 1.0
    np.testing.assert_allclose(house.solvevec([1.0, 0, 0]).numpy(),
                               [0.7777778, -0.44444448, -0.44444448], rtol=1e-6)
    perm = L.LinearOperatorPermutation([2, 0, 1])
    np.testing.assert_allclose(perm.solvevec([1.0, 2, 3]).numpy(), [2.0, 3.0, 1.0])
    assert perm.trace().numpy() == 0.0
    toeplitz = L.LinearOperatorToeplitz(col=[4.0, 1, -2], row=[9.0, 0.5, 1.5])
    np.testing.assert_allclose(toeplitz.solvevec([1.0, 2, 3]).numpy(),
                               [-0.03767127, 0.4315068, 0.62328774], rtol=1e-5)
    np.testing.assert_allclose(toeplitz.log_abs_determinant().numpy(), 4.290459156036377,
                               rtol=1e-6)
    diag = L.LinearOperatorDiag([3.0, -1.0, 2.0])
    np.testing.assert_allclose(diag.eigvals().numpy(), [3.0, -1.0, 2.0])   # TF: not sorted
    assert diag.cond().numpy() == 3.0
    np.testing.assert_allclose(diag.add_to_tensor([[1.0, 1, 1]] * 3).numpy(),
                               [[4, 1, 1], [1, 0, 1], [1, 1, 3]])
    general = L.LinearOperatorFullMatrix(np.array([[2.0, 1], [0, 3]]))
    np.testing.assert_allclose(general.cond().numpy(), 1.7675918792439989, rtol=1e-12)
    scaled = L.LinearOperatorScaledIdentity(3, -2.0)
    assert scaled.determinant().numpy() == -8.0 and scaled.cond().numpy() == 1.0
    assert L.LinearOperatorIdentity(2, batch_shape=[2]).matmul(
        tf.ones((3, 1, 2, 1))).shape == [3, 2, 2, 1]
    assert L.LinearOperatorZeros(2).matmul(tf.ones((4, 2, 3))).shape == [4, 2, 3]
    assert L.LinearOperatorIdentity(3).shape_tensor().dtype == tf.int32


def test_operator_products_and_solves():
    d1, d2 = L.LinearOperatorDiag([2.0, 4.0]), L.LinearOperatorDiag([3.0, 0.5])
    product = d1 @ d2   # TF also gives a LinearOperatorDiag here
    assert isinstance(product, L.LinearOperatorDiag)
    np.testing.assert_allclose(product.diag.numpy(), [6.0, 2.0])
    assert L.LinearOperatorIdentity(2) @ d1 is d1
    assert isinstance(d1.inverse(), L.LinearOperatorDiag)
    np.testing.assert_allclose(d1.inverse().to_dense().numpy(), [[0.5, 0], [0, 0.25]])
    np.testing.assert_allclose(d1.solve(d2).to_dense().numpy(), [[1.5, 0], [0, 0.125]])
    with pytest.raises(ValueError, match="Operators are incompatible. Expected `x` to have "
                                         "dimension 2 but got 3"):
        d1.matmul(L.LinearOperatorDiag([1.0, 2, 3]))


def test_hints_and_derived_operators():
    assert L.LinearOperatorDiag([1.0, 2]).is_self_adjoint is True
    assert L.LinearOperatorDiag([1.0, 2]).is_non_singular is None
    full = L.LinearOperatorFullMatrix(np.eye(2), is_self_adjoint=True)
    assert full.adjoint() is full
    assert isinstance(L.LinearOperatorFullMatrix(np.eye(2)).adjoint(), L.LinearOperatorAdjoint)
    spd = _spd(3)
    op = L.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
    assert op.is_non_singular is True and op.is_square is True
    chol = op.cholesky()
    assert isinstance(chol, L.LinearOperatorLowerTriangular)
    np.testing.assert_allclose(chol.to_dense().numpy(), np.linalg.cholesky(spd))
    np.testing.assert_allclose(op.eigvals().numpy(), np.linalg.eigvalsh(spd))
    np.testing.assert_allclose(op.cond().numpy(), np.linalg.cond(spd))
    low_rank = L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag([1.0, 2, 3],
                                                                  is_positive_definite=True),
                                             u=np.ones((3, 1), np.float32),
                                             is_diag_update_positive=True)
    assert low_rank.is_positive_definite is True and low_rank.is_self_adjoint is True
    product = L.LinearOperatorFullMatrix(np.eye(2)) @ L.LinearOperatorDiag(np.array([1.0, 2]))
    assert isinstance(product, L.LinearOperatorComposition)
    # TF: mixing float64 and float32 operators
    with pytest.raises(TypeError, match="Expected all operators to have the same dtype"):
        L.LinearOperatorFullMatrix(np.eye(2)) @ L.LinearOperatorDiag([1.0, 2.0])  # noqa: B018


def test_contradicting_hints_raise_as_tf():
    with pytest.raises(ValueError, match="A positive definite matrix is always non-singular"):
        L.LinearOperatorFullMatrix(np.eye(2), is_positive_definite=True, is_non_singular=False)
    with pytest.raises(ValueError, match="A non-singular matrix is always square"):
        L.LinearOperatorFullMatrix(np.ones((2, 3)), is_positive_definite=True, is_square=False)
    with pytest.raises(ValueError, match="A self-adjoint matrix is always square"):
        L.LinearOperatorFullMatrix(np.ones((2, 3)), is_self_adjoint=True, is_square=False)
    with pytest.raises(ValueError, match="User set is_square hint to False"):
        L.LinearOperatorFullMatrix(np.ones((2, 2)), is_square=False).is_square
    with pytest.raises(ValueError, match="A real diagonal operator is always self adjoint"):
        L.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="An identity operator is always non-singular"):
        L.LinearOperatorIdentity(3, is_non_singular=False)
    with pytest.raises(ValueError, match="A zero operator is always singular"):
        L.LinearOperatorZeros(3, is_non_singular=True)
    with pytest.raises(ValueError, match=r"num_rows\(3\) != num_columns\(4\)"):
        L.LinearOperatorZeros(3, 4)
    with pytest.raises(ValueError, match="A Householder operator is always non-positive"):
        L.LinearOperatorHouseholder([1.0, 2, 2], is_positive_definite=True)
    with pytest.raises(ValueError, match="must have supplied hint `is_non_singular`"):
        L.LinearOperatorInversion(L.LinearOperatorFullMatrix(np.eye(2), is_non_singular=False))
    with pytest.raises(NotImplementedError, match="expected to be singular"):
        L.LinearOperatorDiag([1.0, 2], is_non_singular=False).solve(np.ones((2, 1)))
    with pytest.raises(NotImplementedError, match="Only self-adjoint matrices are supported"):
        L.LinearOperatorFullMatrix(np.eye(2)).eigvals()
    with pytest.raises(ValueError, match="Cannot take the Cholesky decomposition"):
        L.LinearOperatorFullMatrix(np.eye(2), is_self_adjoint=True).cholesky()


def test_bad_arguments_raise():
    op = L.LinearOperatorFullMatrix(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"matmul: Dimensions 2 and 3 are not compatible"):
        op.matmul(np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"matvec: Dimensions 2 and 3 are not compatible"):
        op.matvec(np.ones(3))
    with pytest.raises(TypeError, match="Expected argument to have dtype float64.  Found: "
                                        "float32"):
        op.matmul(np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="`matrix` must have at least 2 dimensions"):
        L.LinearOperatorFullMatrix(np.array([1.0, 0.0]))
    with pytest.raises(TypeError, match="`matrix` must have dtype in .*Received: int64"):
        L.LinearOperatorFullMatrix(np.array([[1, 0], [0, 1]]))
    with pytest.raises(ValueError, match=r"Expected a non-empty list of operators"):
        L.LinearOperatorComposition([])
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        L.LinearOperatorComposition([L.LinearOperatorFullMatrix(np.ones((2, 3)))] * 2)
    with pytest.raises(ValueError, match=r"`operators\[1\]` must contain `2` blocks"):
        L.LinearOperatorBlockLowerTriangular([[op], [op]])
    with pytest.raises(ValueError, match=r"operators\[0\]\[-1\].is_square` to be True"):
        L.LinearOperatorBlockLowerTriangular([[L.LinearOperatorFullMatrix(np.ones((2, 3)))]])
    with pytest.raises(ValueError, match="`diagonals_format` must be one of compact"):
        L.LinearOperatorTridiag(np.ones((3, 3)), diagonals_format="bad")
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        L.LinearOperatorLowRankUpdate(L.LinearOperatorDiag([1.0, 2, 3]),
                                      u=np.ones((2, 1), np.float32))
    with pytest.raises(ValueError, match="`perm` must be a permutation of 0..2"):
        L.LinearOperatorPermutation([0, 0, 1])


def test_assertions():
    L.LinearOperatorFullMatrix(np.eye(2)).assert_non_singular()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Singular matrix up to precision"):
        L.LinearOperatorFullMatrix(np.ones((2, 2))).assert_non_singular()
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal to its adjoint"):
        L.LinearOperatorFullMatrix(np.array([[1.0, 2], [3, 4]])).assert_self_adjoint()
    with pytest.raises(tf.errors.InvalidArgumentError, match="not positive definite"):
        L.LinearOperatorFullMatrix(np.diag([1.0, -4.0]),
                                   is_self_adjoint=True).assert_positive_definite()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Diagonal contained zero values"):
        L.LinearOperatorDiag([1.0, 0.0]).assert_non_singular()


def _central_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("build", [
    lambda t: L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(tf.constant([1.0, 2.0, 3.0], tf.float64),
                             is_positive_definite=True), t).log_abs_determinant(),
    lambda t: tf.reduce_sum(L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(tf.constant([1.0, 2.0, 3.0], tf.float64)), t,
        v=tf.constant([[1.0], [0.5], [-1.0]], tf.float64)).solvevec(
            tf.constant([1.0, -2.0, 0.5], tf.float64)) ** 2),
    lambda t: tf.reduce_sum(L.LinearOperatorKronecker(
        [L.LinearOperatorFullMatrix(t[:2, :1] * tf.transpose(t[:2, :1]) + 2 * tf.eye(2, dtype=tf.float64)),
         L.LinearOperatorDiag(t[:, 0] + 4.0)]).solve(tf.ones((6, 1), tf.float64)) ** 2),
    lambda t: L.LinearOperatorBlockLowerTriangular(
        [[L.LinearOperatorDiag(t[:2, 0] + 3.0)],
         [L.LinearOperatorFullMatrix(t[1:, :1] * tf.ones((2, 2), tf.float64)),
          L.LinearOperatorFullMatrix(t[:1] * t[1:] + 2 * tf.eye(2, dtype=tf.float64))]]
    ).solvevec(tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64))[3],
    lambda t: L.LinearOperatorToeplitz(t[:, 0] * tf.constant([4.0, 1.0, 1.0], tf.float64),
                                       t[:, 0] + 1.0).log_abs_determinant(),
    lambda t: L.LinearOperatorHouseholder(t[:, 0]).matvec(
        tf.constant([1.0, 2.0, 3.0], tf.float64))[1],
    lambda t: tf.reduce_sum(L.LinearOperatorTridiag(
        tf.stack([t[:, 0], t[:, 0] + 3.0, t[:, 0] * t[:, 0]])).solve(
            tf.ones((3, 2), tf.float64), adjoint=True)),
], ids=["low_rank_logdet", "woodbury_solve", "kronecker_solve", "block_lower_solve",
        "toeplitz_logdet", "householder_matvec", "tridiag_adjoint_solve"])
def test_gradients_match_central_differences(build):
    start = np.array([[0.3], [-0.7], [0.4]])
    value = tf.constant(start)
    with tf.GradientTape() as tape:
        tape.watch(value)
        out = build(value)
    grad = tape.gradient(out, value).numpy()
    expected = _central_difference(lambda a: float(build(tf.constant(a)).numpy()), start)
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)


def test_user_subclass_gets_the_dense_defaults():
    class TimesTwo(L.LinearOperator):
        def __init__(self, n):
            self.n = n
            super().__init__(dtype=tf.float64, is_self_adjoint=True, is_positive_definite=True)

        def _shape(self):
            return tf.TensorShape([self.n, self.n])

        def _matmul(self, x, adjoint=False, adjoint_arg=False):
            return 2.0 * (tf.linalg.adjoint(x) if adjoint_arg else x)

    op = TimesTwo(3)
    assert op.is_non_singular is True and op.name == "TimesTwo"
    np.testing.assert_allclose(op.to_dense().numpy(), 2 * np.eye(3))
    np.testing.assert_allclose(op.log_abs_determinant().numpy(), np.log(8.0))
    np.testing.assert_allclose(op.solvevec(np.ones(3)).numpy(), [0.5] * 3)
    np.testing.assert_allclose(op.cholesky().to_dense().numpy(), np.sqrt(2) * np.eye(3))
