"""The elementary ``tf.linalg.LinearOperator*`` classes: full, diagonal, identity, scaled
identity, lower triangular, permutation, Toeplitz, tridiagonal and zeros."""
import numpy

from . import backend as B
from . import dtypes
from .linear_operator import (LinearOperator, adjoint_if, as_tensor, batch_broadcast,
                              broadcast_matrix, broadcast_pair, require_float)
from .ops.array_ops import broadcast_to, concat, expand_dims, gather, ones, stack, zeros
from .ops.linalg_ops import diag, diag_part, matmul
from .ops.math_ops import abs as _abs, log, reciprocal, sqrt
from .ops.matrix_ops import band_part, set_diag, triangular_solve
from .ops.reduce_ops import reduce_prod, reduce_sum
from .ops.registry import InvalidArgumentError
from .ops.tridiagonal_ops import tridiagonal_matmul, tridiagonal_solve
from .tensor import Tensor


def _require_matrix_arg(cls_name, what, t):
    if t.ndim < 2:
        raise ValueError(f"{cls_name}: argument `{what}` must have at least 2 dimensions. "
                         f"Received: shape {tuple(t.shape)}.")


def _require_vector_arg(cls_name, what, t):
    if t.ndim < 1:
        raise ValueError(f"{cls_name}: argument `{what}` must have at least 1 dimension. "
                         f"Received: a scalar.")


def _forbid(value, wrong, message):
    if value is wrong:
        raise ValueError(message)


def _count(cls_name, what, value):
    if isinstance(value, Tensor):
        value = B.to_numpy(value._value)
    value = numpy.asarray(value)
    if value.shape != () or value.dtype.kind not in "iu" or int(value) < 0:
        raise ValueError(f"{cls_name}: argument `{what}` must be a non-negative integer "
                         f"scalar. Received: {value!r}")
    return int(value)


def _batch(cls_name, batch_shape):
    if batch_shape is None:
        return ()
    if isinstance(batch_shape, Tensor):
        batch_shape = B.to_numpy(batch_shape._value)
    values = numpy.asarray(batch_shape)
    if values.ndim != 1 or values.dtype.kind not in "iu" or (values < 0).any():
        raise ValueError(f"{cls_name}: argument `batch_shape` must be a 1-D list of "
                         f"non-negative integers. Received: {batch_shape!r}")
    return tuple(int(v) for v in values)


class LinearOperatorFullMatrix(LinearOperator):
    """An operator backed by a dense [batch] matrix ``matrix`` of shape ``[..., M, N]``."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        self._matrix = as_tensor(matrix)
        require_float(name, "matrix", self._matrix)
        _require_matrix_arg(name, "matrix", self._matrix)
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, dict(matrix=matrix))

    def _shape(self):
        return tuple(int(d) for d in self._matrix.shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A [batch] diagonal matrix with diagonal ``diag`` (shape ``[..., N]``)."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name="LinearOperatorDiag"):
        self._diag = as_tensor(diag)
        require_float(name, "diag", self._diag)
        _require_vector_arg(name, "diag", self._diag)
        _forbid(is_self_adjoint, False, "A real diagonal operator is always self adjoint.")
        _forbid(is_square, False, "Only square diagonal operators currently supported.")
        super().__init__(self._diag.dtype, None, is_non_singular, True, is_positive_definite,
                         True, name, dict(diag=diag))

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        shape = tuple(int(d) for d in self._diag.shape)
        return shape + shape[-1:]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return expand_dims(self._diag, -1) * adjoint_if(x, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjoint_if(rhs, adjoint_arg) / expand_dims(self._diag, -1)

    def _determinant(self):
        return reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(self._diag)), axis=-1)

    def _diag_part(self):
        return self._diag

    def _to_dense(self):
        return diag(self._diag)

    def _add_to_tensor(self, x):
        x = broadcast_matrix(x, batch_broadcast(x.shape[:-2], self.batch_shape))
        return set_diag(x, diag_part(x) + broadcast_to(self._diag, tuple(x.shape[:-1])))

    def _eigvals(self):
        return self._diag

    def _cond(self):
        from .ops.reduce_ops import reduce_max, reduce_min
        size = _abs(self._diag)
        return reduce_max(size, axis=-1) / reduce_min(size, axis=-1)

    def _linop_inverse(self):
        return LinearOperatorDiag(reciprocal(self._diag), is_non_singular=self.is_non_singular,
                                  is_positive_definite=self.is_positive_definite)

    def _linop_cholesky(self):
        return LinearOperatorDiag(sqrt(self._diag), is_non_singular=True,
                                  is_positive_definite=True)

    def _assert_non_singular(self):
        if not bool(B.to_numpy((self._diag._value != 0).all())):
            raise InvalidArgumentError(f"Singular operator: Diagonal contained zero values "
                                       f"({self.name}).")

    def _assert_positive_definite(self):
        if not bool(B.to_numpy((self._diag._value > 0).all())):
            raise InvalidArgumentError(f"Non-positive real part: {self.name} is not positive "
                                       f"definite (its diagonal has entries <= 0).")

    def _assert_self_adjoint(self):
        return None


class LinearOperatorScaledIdentity(LinearOperator):
    """``multiplier * I`` of size ``num_rows``; ``multiplier``'s shape is the batch shape."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        self._multiplier = as_tensor(multiplier)
        require_float(name, "multiplier", self._multiplier)
        self._num_rows = _count(name, "num_rows", num_rows)
        _forbid(is_square, False, "A ScaledIdentity operator is always square.")
        if is_self_adjoint is None:   # a real multiple of the identity
            is_self_adjoint = True
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name,
                         dict(num_rows=num_rows, multiplier=multiplier))

    @property
    def multiplier(self):
        return self._multiplier

    def _shape(self):
        return tuple(int(d) for d in self._multiplier.shape) + (self._num_rows,) * 2

    def _scale(self):
        return expand_dims(expand_dims(self._multiplier, -1), -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._scale() * adjoint_if(x, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjoint_if(rhs, adjoint_arg) / self._scale()

    def _determinant(self):
        return self._multiplier ** float(self._num_rows)

    def _log_abs_determinant(self):
        return float(self._num_rows) * log(_abs(self._multiplier))

    def _trace(self):
        return float(self._num_rows) * self._multiplier

    def _diag_part(self):
        return expand_dims(self._multiplier, -1) * ones((self._num_rows,), self.dtype)

    def _to_dense(self):
        return diag(self._diag_part())

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return self._multiplier / self._multiplier

    def _linop_inverse(self):
        return LinearOperatorScaledIdentity(self._num_rows, reciprocal(self._multiplier),
                                            is_non_singular=self.is_non_singular,
                                            is_self_adjoint=self.is_self_adjoint,
                                            is_positive_definite=self.is_positive_definite)

    def _linop_cholesky(self):
        return LinearOperatorScaledIdentity(self._num_rows, sqrt(self._multiplier),
                                            is_non_singular=True, is_self_adjoint=True,
                                            is_positive_definite=True)


class LinearOperatorIdentity(LinearOperator):
    """The identity of size ``num_rows`` (float32 by default), ``batch_shape`` copies of it."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        self._num_rows = _count(name, "num_rows", num_rows)
        self._batch = _batch(name, batch_shape)
        _forbid(is_self_adjoint, False, "An identity operator is always self adjoint.")
        _forbid(is_non_singular, False, "An identity operator is always non-singular.")
        _forbid(is_positive_definite, False, "An identity operator is always positive-definite.")
        _forbid(is_square, False, "An identity operator is always square.")
        super().__init__(dtype or dtypes.float32, None, True, True, True, True, name,
                         dict(num_rows=num_rows, batch_shape=batch_shape, dtype=dtype))
        self._ones_diag = True

    def _shape(self):
        return self._batch + (self._num_rows,) * 2

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        return broadcast_matrix(x, batch_broadcast(x.shape[:-2], self._batch))

    _solve = _matmul

    def _determinant(self):
        return ones(self._batch, self.dtype)

    def _log_abs_determinant(self):
        return zeros(self._batch, self.dtype)

    def _trace(self):
        return float(self._num_rows) * ones(self._batch, self.dtype)

    def _diag_part(self):
        return ones(self._batch + (self._num_rows,), self.dtype)

    def _to_dense(self):
        return diag(self._diag_part())

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return ones(self._batch, self.dtype)

    def _add_to_tensor(self, x):
        return x + self.to_dense()

    def _linop_inverse(self):
        return self

    _linop_cholesky = _linop_inverse

    def _assert_non_singular(self):
        return None

    _assert_positive_definite = _assert_self_adjoint = _assert_non_singular


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle (diagonal included) of the square [batch] matrix ``tril``; the
    entries above the diagonal are ignored."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        tril = as_tensor(tril)
        require_float(name, "tril", tril)
        _require_matrix_arg(name, "tril", tril)
        if int(tril.shape[-1]) != int(tril.shape[-2]):
            raise ValueError(f"{name}: argument `tril` must hold square matrices. Received: "
                             f"shape {tuple(tril.shape)}")
        _forbid(is_square, False, "Only square lower triangular operators supported at this "
                                  "time.")
        self._tril = band_part(tril, -1, 0)
        super().__init__(tril.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, dict(tril=tril))

    def _shape(self):
        return tuple(int(d) for d in self._tril.shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._tril, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        tril, rhs = broadcast_pair(self._tril, adjoint_if(rhs, adjoint_arg))
        return triangular_solve(tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(diag_part(self._tril), axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(_abs(diag_part(self._tril))), axis=-1)

    def _diag_part(self):
        return diag_part(self._tril)

    def _to_dense(self):
        return self._tril

    def _eigvals(self):
        return diag_part(self._tril)


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix ``P`` with ``P[i, perm[i]] = 1``: ``P @ x`` is ``x[perm]``."""

    def __init__(self, perm, dtype=dtypes.float32, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorPermutation"):
        self._perm = as_tensor(perm)
        if self._perm.dtype not in (dtypes.int32, dtypes.int64) or self._perm.ndim < 1:
            raise TypeError(f"{name}: argument `perm` must be an int32 or int64 tensor of "
                            f"rank >= 1. Received: {self._perm.dtype.name} of shape "
                            f"{tuple(self._perm.shape)}")
        values = numpy.sort(B.to_numpy(self._perm._value), axis=-1)
        if not (values == numpy.arange(values.shape[-1])).all():
            raise ValueError(f"{name}: argument `perm` must be a permutation of "
                             f"0..{values.shape[-1] - 1} along its last axis. Received: "
                             f"{B.to_numpy(self._perm._value)!r}")
        _forbid(is_non_singular, False, "A Permutation operator is always non-singular.")
        _forbid(is_square, False, "A Permutation operator is always square.")
        super().__init__(dtype, None, True, is_self_adjoint, is_positive_definite, True, name,
                         dict(perm=perm, dtype=dtype))

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        shape = tuple(int(d) for d in self._perm.shape)
        return shape + shape[-1:]

    def _to_dense(self):
        from .ops.array_ops import one_hot
        return one_hot(self._perm, self.domain_dimension, dtype=self.dtype)

    def _sign(self):
        """The determinant, +-1: ``(-1)^(n - number of cycles)`` per batch member."""
        perms = B.to_numpy(self._perm._value).reshape(-1, self.domain_dimension)
        signs = []
        for p in perms:
            seen, cycles = numpy.zeros(len(p), bool), 0
            for start in range(len(p)):
                if not seen[start]:
                    cycles += 1
                    j = start
                    while not seen[j]:
                        seen[j] = True
                        j = p[j]
            signs.append(-1.0 if (len(p) - cycles) % 2 else 1.0)
        values = numpy.asarray(signs).reshape(tuple(self.batch_shape))
        return Tensor(B.xp.asarray(values.astype(self.dtype.as_numpy_dtype)))

    def _determinant(self):
        return self._sign()

    def _log_abs_determinant(self):
        return zeros(tuple(self.batch_shape), self.dtype)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _diag_part(self):
        fixed = self._perm._value == B.xp.arange(self.domain_dimension)
        return Tensor(fixed.astype(self.dtype.as_numpy_dtype))

    def _cond(self):
        return ones(tuple(self.batch_shape), self.dtype)

    def _linop_inverse(self):
        return self.adjoint()


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column ``col`` and first row ``row`` (``row[0]`` is
    ignored: the diagonal is ``col[0]``)."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        self._col, self._row = as_tensor(col), as_tensor(row)
        require_float(name, "col", self._col)
        if self._row.dtype != self._col.dtype:
            raise TypeError(f"{name}: `row` has dtype {self._row.dtype.name}, `col` "
                            f"{self._col.dtype.name}; they must match")
        _require_vector_arg(name, "col", self._col)
        if int(self._row.shape[-1]) != int(self._col.shape[-1]):
            raise ValueError(f"{name}: `row` and `col` must have the same last dimension. "
                             f"Received: shapes {tuple(self._row.shape)} and "
                             f"{tuple(self._col.shape)}")
        _forbid(is_square, False, "Only square Toeplitz operators currently supported.")
        super().__init__(self._col.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, dict(col=col, row=row))

    def _shape(self):
        batch = batch_broadcast(self._col.shape[:-1], self._row.shape[:-1])
        n = int(self._col.shape[-1])
        return batch + (n, n)

    def _to_dense(self):
        # entry (i, j) is col[i - j] on and below the diagonal, row[j - i] above it: one gather
        # from [row reversed (without row[0]), col] at index i - j + n - 1
        n = self.domain_dimension
        batch = tuple(self.batch_shape)
        col = broadcast_to(self._col, batch + (n,))
        row = broadcast_to(self._row, batch + (n,))
        from .ops.slice_ops import reverse
        values = concat([reverse(row[..., 1:], [-1]), col], axis=-1)
        index = numpy.arange(n)[:, None] - numpy.arange(n)[None, :] + n - 1
        return gather(values, Tensor(B.xp.asarray(index)), axis=len(batch))

    def _diag_part(self):
        n = self.domain_dimension
        return broadcast_to(expand_dims(self._col[..., 0], -1),
                            tuple(self.batch_shape) + (n,))


_TRIDIAG_FORMATS = ("compact", "matrix", "sequence")


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal [batch] matrix given by its ``diagonals`` in ``"compact"`` (``[..., 3, N]``:
    superdiagonal (last entry ignored), diagonal, subdiagonal (first entry ignored)),
    ``"matrix"`` or ``"sequence"`` format, as ``tf.linalg.tridiagonal_solve``."""

    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        if diagonals_format not in _TRIDIAG_FORMATS:
            raise ValueError(f"Argument `diagonals_format` must be one of compact, matrix, or "
                             f"sequence. Received : {diagonals_format}.")
        from .ops.tridiagonal_ops import _to_compact
        if diagonals_format == "sequence":
            diagonals = [as_tensor(d) for d in diagonals]
        compact = _to_compact(name, as_tensor(diagonals) if diagonals_format != "sequence"
                              else diagonals, diagonals_format)
        require_float(name, "diagonals", compact)
        _forbid(is_square, False, "Only square tridiagonal operators currently supported.")
        n = int(compact.shape[-1])
        # zero the ignored corners so that every formula may read the compact rows directly
        keep = numpy.ones((3, n), dtype=bool)
        if n:
            keep[0, -1] = keep[2, 0] = False
        self._compact = compact * Tensor(B.xp.asarray(keep.astype(compact.dtype.as_numpy_dtype)))
        super().__init__(compact.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name,
                         dict(diagonals=diagonals, diagonals_format=diagonals_format))

    @property
    def diagonals(self):
        return self._compact

    def _shape(self):
        shape = tuple(int(d) for d in self._compact.shape)
        return shape[:-2] + (shape[-1],) * 2

    def _adjoint_compact(self):
        # the transpose swaps the super- and subdiagonals, shifted by one position
        sup, main, sub = self._compact[..., 0, :], self._compact[..., 1, :], self._compact[..., 2, :]
        zero = zeros(tuple(sup.shape[:-1]) + (1,), self.dtype)
        return stack([concat([sub[..., 1:], zero], -1), main, concat([zero, sup[..., :-1]], -1)],
                     axis=-2)

    def _pair(self, x, adjoint):
        compact = self._adjoint_compact() if adjoint else self._compact
        batch = batch_broadcast(compact.shape[:-2], x.shape[:-2])
        return broadcast_matrix(compact, batch), broadcast_matrix(x, batch)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        compact, x = self._pair(adjoint_if(x, adjoint_arg), adjoint)
        return tridiagonal_matmul(compact, x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        compact, rhs = self._pair(adjoint_if(rhs, adjoint_arg), adjoint)
        return tridiagonal_solve(compact, rhs)

    def _diag_part(self):
        return self._compact[..., 1, :]

    def _to_dense(self):
        n = self.domain_dimension
        if n < 2:
            return diag(self._diag_part())
        sup = diag(self._compact[..., 0, :-1])
        sub = diag(self._compact[..., 2, 1:])
        dense = diag(self._diag_part())
        pad_row = zeros(tuple(sup.shape[:-2]) + (1, n - 1), self.dtype)
        pad_col = zeros(tuple(sup.shape[:-2]) + (n, 1), self.dtype)
        upper = concat([pad_col, concat([sup, pad_row], -2)], -1)
        lower = concat([concat([pad_row, sub], -2), pad_col], -1)
        return dense + upper + lower


class LinearOperatorZeros(LinearOperator):
    """The zero matrix of shape ``batch_shape + [num_rows, num_columns]``."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        _forbid(is_non_singular, True, "A zero operator is always singular.")
        _forbid(is_positive_definite, True, "A zero operator is always not positive-definite.")
        _forbid(is_self_adjoint, False, "A zero operator is always self adjoint.")
        self._num_rows = _count(name, "num_rows", num_rows)
        self._num_columns = (self._num_rows if num_columns is None
                             else _count(name, "num_columns", num_columns))
        if is_square and self._num_rows != self._num_columns:
            raise ValueError(f"LinearOperatorZeros initialized as is_square=True, but got "
                             f"num_rows({self._num_rows}) != num_columns({self._num_columns})")
        self._batch = _batch(name, batch_shape)
        square = self._num_rows == self._num_columns
        super().__init__(dtype or dtypes.float32, None, False, True if square else None, False,
                         is_square if square else None, name,
                         dict(num_rows=num_rows, num_columns=num_columns,
                              batch_shape=batch_shape, dtype=dtype))
        self._zeros_diag = True

    def _shape(self):
        return self._batch + (self._num_rows, self._num_columns)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        rows = self._num_columns if adjoint else self._num_rows
        batch = batch_broadcast(x.shape[:-2], self._batch)
        return zeros(batch + (rows, int(x.shape[-1])), self.dtype)

    def _determinant(self):
        return zeros(self._batch, self.dtype)

    def _log_abs_determinant(self):
        return Tensor(B.xp.full(self._batch, -numpy.inf, dtype=self.dtype.as_numpy_dtype))

    def _trace(self):
        return zeros(self._batch, self.dtype)

    def _diag_part(self):
        return zeros(self._batch + (min(self._num_rows, self._num_columns),), self.dtype)

    def _to_dense(self):
        return zeros(self._shape(), self.dtype)

    def _add_to_tensor(self, x):
        return x + zeros(self._shape(), self.dtype)

    def _eigvals(self):
        return self._diag_part()

    def _assert_non_singular(self):
        raise InvalidArgumentError(f"Zero operators are always non-invertible: {self.name}.")

    def _assert_positive_definite(self):
        raise InvalidArgumentError(f"Zero operators are always non-positive definite: "
                                   f"{self.name}.")

    def _assert_self_adjoint(self):
        return None
