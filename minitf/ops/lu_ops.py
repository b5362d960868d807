"""LU factorisation in ``tf.linalg``: ``lu``, ``lu_solve``, ``lu_reconstruct`` and
``lu_matrix_inverse``.

``lu(a)`` returns ``(lower_upper, perm)`` as TF does: ``a[..., perm, :] = L @ U`` with ``L``
unit lower triangular (stored strictly below the diagonal of ``lower_upper``) and ``U`` upper
triangular (the rest). Pivots are chosen by partial pivoting as LAPACK's ``getrf`` (the first
largest magnitude in the column). The permutation comes from an op without gradient; the rows
of ``a`` are then permuted by a matrix product and factored without pivoting by a
differentiable op, so gradients reach ``a`` through ``lower_upper``. The other functions are
compositions of triangular solves and products.
"""
import collections

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor
from .array_ops import one_hot
from .linalg_ops import matmul
from .math_ops import cast
from .matrix_ops import _x, band_part, require_matrix, triangular_solve
from .registry import InvalidArgumentError

Lu = collections.namedtuple("Lu", ["lu", "p"])


def _factor_ops():
    # The kernels are shared with keras.ops.lu_factor; imported on use so that loading this
    # module never loads the keras package.
    from ..keras.ops import linalg_factor
    return linalg_factor._lu_pivots, linalg_factor._lu_unpivoted


def _permutation_matrix(perm, n, dtype):
    """``P`` with ``P[i, perm[i]] = 1``: ``P @ x`` is ``x[perm]`` (rows), for batches too."""
    return one_hot(perm, n, dtype=dtype)


def _unit_lower(lower_upper):
    n = int(lower_upper.shape[-1])
    eye = B.xp.eye(n, dtype=lower_upper._value.dtype)
    return band_part(lower_upper, -1, 0) - band_part(lower_upper, 0, 0) + eye


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002 - TF's name
    """``Lu(lu, p)``: the LU factorisation with partial pivoting of each square matrix,
    ``input[..., p, :] = L @ U`` (``L`` unit lower triangular below the diagonal of ``lu``,
    ``U`` upper triangular on and above it). Raises for matrices that are not invertible."""
    x = _x(input)
    require_matrix("lu", x, square=True)
    index_type = dtypes.as_dtype(output_idx_type)
    if index_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"lu: output_idx_type must be int32 or int64, got {index_type.name}")
    pivots_op, unpivoted_op = _factor_ops()
    n = int(x.shape[-1])
    permutation = pivots_op(x)[..., 1, :]
    factors = unpivoted_op(matmul(_permutation_matrix(permutation, n, x.dtype), x))
    if n and bool((B.xp.diagonal(factors._value, axis1=-2, axis2=-1) == 0).any()):
        raise InvalidArgumentError(f"lu: input is not invertible (a zero pivot in the "
                                   f"factorisation of the matrices of shape {tuple(x.shape)})")
    return Lu(factors, cast(permutation, index_type))


def _check_factors(fn, lower_upper, perm):
    lower_upper, perm = _x(lower_upper), _x(perm)
    require_matrix(fn, lower_upper, square=True)
    if perm.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{fn}: perm must be int32 or int64, got {perm.dtype.name}")
    if tuple(perm.shape) != tuple(lower_upper.shape[:-1]):
        raise InvalidArgumentError(
            f"{fn}: perm must have shape {tuple(lower_upper.shape[:-1])} (lower_upper's shape "
            f"{tuple(lower_upper.shape)} without the last axis), got {tuple(perm.shape)}")
    return lower_upper, perm


def _validate_perm(fn, perm, n):
    values = B.to_numpy(perm._value)
    if values.size and (values.min() < 0 or values.max() >= n):
        raise InvalidArgumentError(f"{fn}: perm values must lie in [0, {n}), got "
                                   f"{values.min()} to {values.max()}")


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrices factored by ``lu``: ``P^T @ L @ U`` (undoes ``tf.linalg.lu``)."""
    lower_upper, perm = _check_factors("lu_reconstruct", lower_upper, perm)
    n = int(lower_upper.shape[-1])
    if validate_args:
        _validate_perm("lu_reconstruct", perm, n)
    product = matmul(_unit_lower(lower_upper), band_part(lower_upper, 0, -1))
    return matmul(_permutation_matrix(perm, n, lower_upper.dtype), product, transpose_a=True)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """x with ``A @ x = rhs`` given ``(lower_upper, perm) = lu(A)``; ``rhs`` is ``[..., N, K]``
    and leading (batch) dimensions broadcast."""
    lower_upper, perm = _check_factors("lu_solve", lower_upper, perm)
    rhs = _x(rhs)
    n = int(lower_upper.shape[-1])
    if rhs.ndim < 2 or int(rhs.shape[-2]) != n:
        raise InvalidArgumentError(f"lu_solve: rhs must have shape [..., {n}, K] for "
                                   f"lower_upper of shape {tuple(lower_upper.shape)}, got "
                                   f"{tuple(rhs.shape)}")
    if rhs.dtype != lower_upper.dtype:
        raise TypeError(f"lu_solve: rhs has dtype {rhs.dtype.name}, lower_upper "
                        f"{lower_upper.dtype.name}")
    if validate_args:
        _validate_perm("lu_solve", perm, n)
    permuted = matmul(_permutation_matrix(perm, n, lower_upper.dtype), rhs)
    inner = triangular_solve(_unit_lower(lower_upper), permuted, lower=True)
    return triangular_solve(lower_upper, inner, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of each matrix from its ``lu`` factors."""
    lower_upper, perm = _check_factors("lu_matrix_inverse", lower_upper, perm)
    n = int(lower_upper.shape[-1])
    eye = B.xp.broadcast_to(B.xp.eye(n, dtype=lower_upper._value.dtype),
                            tuple(lower_upper.shape))
    return lu_solve(lower_upper, perm, Tensor(eye), validate_args=validate_args)


def install(tf):
    """Add the LU functions to ``tf.linalg`` (idempotent)."""
    tf.linalg.lu = lu
    tf.linalg.lu_solve = lu_solve
    tf.linalg.lu_reconstruct = lu_reconstruct
    tf.linalg.lu_matrix_inverse = lu_matrix_inverse
