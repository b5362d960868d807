"""``tf.linalg.LinearOperator``: a matrix (or batch of matrices) known by its structure.

An operator of shape ``[B1, ..., Bb, M, N]`` acts like a batch of ``M x N`` matrices without
necessarily storing them: ``matmul``, ``solve``, ``log_abs_determinant`` and the rest use the
structure where it is cheap (a diagonal solves elementwise) and fall back to the dense matrix
otherwise. Every method is a composition of minitf ops, so gradients flow through them. Leading
(batch) dimensions broadcast between the operator and its arguments, as in TF.
"""
import numpy

from . import backend as B
from . import dtypes
from .ops.array_ops import (broadcast_to, eye, expand_dims, matrix_transpose, squeeze)
from .ops.convert import convert_to_tensor
from .ops.decomposition_ops import cholesky, eigvalsh, slogdet, svd
from .ops.linalg_ops import diag_part, matmul, solve as dense_solve
from .ops.math_ops import abs as _abs, exp, log, reciprocal
from .ops.matrix_ops import cholesky_solve
from .ops.reduce_ops import reduce_max, reduce_min, reduce_sum
from .ops.registry import InvalidArgumentError
from .tensor import Tensor, TensorShape

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def as_tensor(value, dtype=None):
    """``value`` as a Tensor (cast from Python numbers to ``dtype`` where given)."""
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, dtype=dtype)


def require_float(cls_name, what, t):
    """Check that ``t`` holds real floats (complex operators are not supported)."""
    if t.dtype not in _FLOATS:
        raise TypeError(f"{cls_name}: argument `{what}` must have dtype in [float16, float32, "
                        f"float64]. Received: {t.dtype.name}")


def batch_broadcast(*shapes):
    """The broadcast of batch shapes (tuples), with a clear error when they do not."""
    try:
        return tuple(numpy.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise InvalidArgumentError(f"LinearOperator: batch shapes {[tuple(s) for s in shapes]} "
                                   f"are not broadcastable") from None


def broadcast_matrix(x, batch):
    """``x`` (a [batch] matrix) broadcast to ``batch + x.shape[-2:]``."""
    target = tuple(batch) + tuple(x.shape[-2:])
    return x if tuple(x.shape) == target else broadcast_to(x, target)


def broadcast_pair(a, b):
    """Two [batch] matrices broadcast to their common batch shape."""
    batch = batch_broadcast(a.shape[:-2], b.shape[:-2])
    return broadcast_matrix(a, batch), broadcast_matrix(b, batch)


def adjoint_if(x, flag):
    return matrix_transpose(x) if flag else x


def _check_hints(is_non_singular, is_self_adjoint, is_positive_definite, is_square):
    # TF's implications: positive definite => non-singular => square; self-adjoint => square.
    if is_positive_definite:
        if is_non_singular is False:
            raise ValueError("A positive definite matrix is always non-singular.")
        is_non_singular = True
    if is_non_singular:
        if is_square is False:
            raise ValueError("A non-singular matrix is always square.")
        is_square = True
    if is_self_adjoint:
        if is_square is False:
            raise ValueError("A self-adjoint matrix is always square.")
        is_square = True
    return is_non_singular, is_square


def _operator_product(left, right):
    """``left @ right`` as an operator: the other factor for an identity, a diagonal for two
    diagonals, else a LinearOperatorComposition."""
    from .linear_operator_kinds import LinearOperatorDiag
    from .linear_operator_structured import LinearOperatorComposition
    if left.dtype != right.dtype:
        raise TypeError(f"Expected all operators to have the same dtype.  Found "
                        f"({type(left).__name__!r}, {left.dtype.name})   "
                        f"({type(right).__name__!r}, {right.dtype.name})")
    batch = batch_broadcast(left.batch_shape, right.batch_shape)
    if getattr(left, "_ones_diag", False) and batch == tuple(right.batch_shape):
        return right
    if getattr(right, "_ones_diag", False) and batch == tuple(left.batch_shape):
        return left
    if isinstance(left, LinearOperatorDiag) and isinstance(right, LinearOperatorDiag):
        both = lambda a, b: True if a and b else None  # noqa: E731
        return LinearOperatorDiag(left.diag * right.diag,
                                  is_non_singular=both(left.is_non_singular,
                                                       right.is_non_singular))
    return LinearOperatorComposition([left, right])


class LinearOperator:
    """Base class of the ``tf.linalg.LinearOperator*`` classes (see the module docstring).

    Subclasses define ``_shape()`` (a tuple) and ``_matmul`` or ``_to_dense``; the other private
    methods have dense defaults that subclasses replace with their structure."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None, parameters=None):
        is_non_singular, is_square = _check_hints(is_non_singular, is_self_adjoint,
                                                  is_positive_definite, is_square)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    # --- hints and shapes ---------------------------------------------------------------------

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def parameters(self):
        return dict(self._parameters)

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        """True/False: whether the operator is square (the hint, checked against the shape)."""
        auto = self.domain_dimension == self.range_dimension
        hint = self._is_square_set_or_implied_by_hints
        if hint is False and auto:
            raise ValueError("User set is_square hint to False, but the operator was square.")
        return auto if hint is None else hint

    def _shape(self):
        raise NotImplementedError("_shape is not implemented.")

    @property
    def shape(self):
        """``TensorShape([B1, ..., Bb, M, N])``."""
        return TensorShape(self._shape())

    @property
    def batch_shape(self):
        return TensorShape(self._shape()[:-2])

    @property
    def tensor_rank(self):
        return len(self._shape())

    @property
    def domain_dimension(self):
        return self._shape()[-1]

    @property
    def range_dimension(self):
        return self._shape()[-2]

    def _int_tensor(self, values):
        return Tensor(B.xp.asarray(numpy.asarray(values, dtype=numpy.int32)))

    def shape_tensor(self, name="shape_tensor"):
        return self._int_tensor(self._shape())

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return self._int_tensor(self._shape()[:-2])

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        return self._int_tensor(self.tensor_rank)

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        return self._int_tensor(self.domain_dimension)

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        return self._int_tensor(self.range_dimension)

    def _can_use_cholesky(self):
        return bool(self.is_self_adjoint and self.is_positive_definite)

    # --- argument checks ----------------------------------------------------------------------

    def _check_input_dtype(self, arg):
        if arg.dtype != self.dtype:
            raise TypeError(f"{self.name}: Expected argument to have dtype {self.dtype.name}.  "
                            f"Found: {arg.dtype.name} in a tensor of shape {tuple(arg.shape)}")

    def _check_dim(self, method, self_dim, arg, arg_dim):
        if arg.ndim < (1 if method.endswith("vec") else 2):
            raise ValueError(f"{self.name}.{method}: the argument must be a [batch] "
                             f"{'vector' if method.endswith('vec') else 'matrix'}, got shape "
                             f"{tuple(arg.shape)}")
        mine, theirs = self._shape()[self_dim], int(arg.shape[arg_dim])
        if mine != theirs:
            raise ValueError(f"{self.name}.{method}: Dimensions {mine} and {theirs} are not "
                             f"compatible (operator shape {tuple(self.shape)}, argument shape "
                             f"{tuple(arg.shape)})")

    def _argument(self, value, method, self_dim, arg_dim):
        x = as_tensor(value, self.dtype if not isinstance(value, numpy.ndarray) else None)
        self._check_input_dtype(x)
        self._check_dim(method, self_dim, x, arg_dim)
        return x

    # --- products and solves ------------------------------------------------------------------

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """``A @ x`` (``A^H`` with ``adjoint``, ``x^H`` with ``adjoint_arg``); ``x`` a [batch]
        matrix, or a LinearOperator (giving a LinearOperatorComposition)."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if right.range_dimension != left.domain_dimension:
                raise ValueError(f"Operators are incompatible. Expected `x` to have dimension "
                                 f"{left.domain_dimension} but got {right.range_dimension}.")
            return _operator_product(left, right)
        x = self._argument(x, "matmul", -2 if adjoint else -1, -1 if adjoint_arg else -2)
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def __matmul__(self, other):
        return self.matmul(other)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(adjoint_if(self.to_dense(), adjoint), adjoint_if(x, adjoint_arg))

    def matvec(self, x, adjoint=False, name="matvec"):
        """``A @ x`` for a [batch] vector ``x``."""
        x = self._argument(x, "matvec", -2 if adjoint else -1, -1)
        return self._matvec(x, adjoint=adjoint)

    def _matvec(self, x, adjoint=False):
        return squeeze(self._matmul(expand_dims(x, -1), adjoint=adjoint), -1)

    def _check_solvable(self):
        if self.is_non_singular is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to be singular.")
        if self.is_square is False:
            raise NotImplementedError("Exact solve not implemented for an operator that is "
                                      "expected to not be square.")

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """``X`` with ``A @ X = rhs`` (``A^H`` with ``adjoint``, ``rhs^H`` with
        ``adjoint_arg``)."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            if right.range_dimension != left.domain_dimension:
                raise ValueError(f"Operators are incompatible. Expected `rhs` to have dimension "
                                 f"{left.domain_dimension} but got {right.range_dimension}.")
            if getattr(right, "_ones_diag", False):
                return left.inverse()
            return _operator_product(left.inverse(), right)
        rhs = self._argument(rhs, "solve", -1 if adjoint else -2, -1 if adjoint_arg else -2)
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_if(rhs, adjoint_arg)
        dense = self.to_dense()
        if self._can_use_cholesky():
            chol, rhs = broadcast_pair(cholesky(dense), rhs)
            return cholesky_solve(chol, rhs)
        dense, rhs = broadcast_pair(adjoint_if(dense, adjoint), rhs)
        return dense_solve(dense, rhs)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """``x`` with ``A @ x = rhs`` for a [batch] vector ``rhs``."""
        self._check_solvable()
        rhs = self._argument(rhs, "solvevec", -1 if adjoint else -2, -1)
        return squeeze(self._solve(expand_dims(rhs, -1), adjoint=adjoint), -1)

    # --- scalars per batch member -------------------------------------------------------------

    def _check_square_for(self, what):
        if self.is_square is False:
            raise NotImplementedError(f"{what} not implemented for an operator that is "
                                      f"expected to not be square.")

    def determinant(self, name="det"):
        """The determinant of each batch member (shape ``batch_shape``)."""
        self._check_square_for("Determinant")
        return self._determinant()

    def _determinant(self):
        if self._can_use_cholesky():
            return exp(self.log_abs_determinant())
        sign, log_abs = slogdet(self.to_dense())
        return sign * exp(log_abs)

    def log_abs_determinant(self, name="log_abs_det"):
        """``log|det A|`` of each batch member."""
        self._check_square_for("Determinant")
        return self._log_abs_determinant()

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            return 2.0 * reduce_sum(log(diag_part(cholesky(self.to_dense()))), axis=-1)
        return slogdet(self.to_dense())[1]

    def trace(self, name="trace"):
        """The sum of the diagonal of each batch member."""
        return self._trace()

    def _trace(self):
        return reduce_sum(self.diag_part(), axis=-1)

    def diag_part(self, name="diag_part"):
        """The main diagonal, shape ``batch_shape + [min(M, N)]``."""
        return self._diag_part()

    def _diag_part(self):
        return diag_part(self.to_dense())

    def to_dense(self, name="to_dense"):
        """The dense [batch] matrix."""
        return self._to_dense()

    def _to_dense(self):
        n = self.domain_dimension
        return self._matmul(eye(n, batch_shape=tuple(self.batch_shape), dtype=self.dtype))

    def add_to_tensor(self, x, name="add_to_tensor"):
        """``A + x`` for a tensor ``x`` broadcastable to the operator's shape."""
        x = as_tensor(x, self.dtype if not isinstance(x, numpy.ndarray) else None)
        self._check_input_dtype(x)
        return self._add_to_tensor(x)

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def eigvals(self, name="eigvals"):
        """The eigenvalues of a self-adjoint operator (ascending)."""
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _eigvals(self):
        return eigvalsh(self.to_dense())

    def cond(self, name="cond"):
        """The condition number: the ratio of the largest to the smallest singular value."""
        return self._cond()

    def _cond(self):
        if self.is_self_adjoint:
            values = _abs(self._eigvals())
        else:
            values = svd(self.to_dense(), compute_uv=False)
        return reduce_max(values, axis=-1) / reduce_min(values, axis=-1)

    # --- derived operators --------------------------------------------------------------------

    def adjoint(self, name="adjoint"):
        """The adjoint ``A^H`` as a LinearOperator (``self`` when it is self-adjoint)."""
        if self.is_self_adjoint is True:
            return self
        return self._linop_adjoint()

    H = property(adjoint, None)

    def _linop_adjoint(self):
        return LinearOperatorAdjoint(self, is_non_singular=self.is_non_singular,
                                     is_self_adjoint=self.is_self_adjoint,
                                     is_positive_definite=self.is_positive_definite,
                                     is_square=self.is_square)

    def inverse(self, name="inverse"):
        """``A^-1`` as a LinearOperator."""
        if self.is_square is False:
            raise ValueError("Cannot take the Inverse: This operator represents a non square "
                             "matrix.")
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular "
                             "matrix.")
        return self._linop_inverse()

    def _linop_inverse(self):
        return LinearOperatorInversion(self, is_non_singular=self.is_non_singular,
                                       is_self_adjoint=self.is_self_adjoint,
                                       is_positive_definite=self.is_positive_definite,
                                       is_square=self.is_square)

    def cholesky(self, name="cholesky"):
        """The lower Cholesky factor ``L`` (``A = L L^H``) as a LinearOperator."""
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive definite "
                             "self adjoint matrix.")
        return self._linop_cholesky()

    def _linop_cholesky(self):
        from .linear_operator_kinds import LinearOperatorLowerTriangular
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True,
                                             is_self_adjoint=False, is_square=True)

    # --- assertions (eager: they raise InvalidArgumentError at once, else return None) --------

    def assert_non_singular(self, name="assert_non_singular"):
        """Raise InvalidArgumentError where the condition number exceeds
        ``1 / (max(100, M, N) * eps)``."""
        return self._assert_non_singular()

    def _assert_non_singular(self):
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        values = B.to_numpy(svd(self.to_dense(), compute_uv=False)._value)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            cond = values.max(axis=-1) / values.min(axis=-1)
        eps = numpy.finfo(self.dtype.as_numpy_dtype).eps
        limit = 1.0 / (max(100.0, self.range_dimension, self.domain_dimension) * eps)
        if not numpy.all(cond < limit):
            raise InvalidArgumentError(f"Singular matrix up to precision epsilon: {self.name} "
                                       f"has condition number {cond.max()} (must be < {limit})")

    def assert_positive_definite(self, name="assert_positive_definite"):
        """Raise InvalidArgumentError unless the (self-adjoint) operator is positive
        definite."""
        return self._assert_positive_definite()

    def _assert_positive_definite(self):
        if not self.is_self_adjoint:
            raise NotImplementedError("assert_positive_definite is not implemented.")
        values = B.to_numpy(self.to_dense()._value)
        try:
            factors = numpy.linalg.cholesky(values)
        except numpy.linalg.LinAlgError:
            factors = numpy.zeros(values.shape)
        if not numpy.all(numpy.diagonal(factors, axis1=-2, axis2=-1) > 0):
            raise InvalidArgumentError(f"Matrix was not positive definite: {self.name} of "
                                       f"shape {tuple(self.shape)}")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        """Raise InvalidArgumentError unless the operator equals its adjoint exactly."""
        return self._assert_self_adjoint()

    def _assert_self_adjoint(self):
        dense = B.to_numpy(self.to_dense()._value)
        if not numpy.array_equal(dense, numpy.swapaxes(dense, -1, -2)):
            raise InvalidArgumentError(f"Matrix was not equal to its adjoint: {self.name} of "
                                       f"shape {tuple(self.shape)}")

    def __repr__(self):
        return (f"<minitf.linalg.{type(self).__name__} \"{self.name}\" "
                f"shape={list(self.shape)} dtype={self.dtype.name}>")


class LinearOperatorAdjoint(LinearOperator):
    """``operator^H`` as an operator."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operator = operator
        pick = lambda hint, own: own if hint is None else hint  # noqa: E731
        super().__init__(operator.dtype, None,
                         pick(is_non_singular, operator.is_non_singular),
                         pick(is_self_adjoint, operator.is_self_adjoint),
                         pick(is_positive_definite, operator.is_positive_definite),
                         pick(is_square, operator._is_square_set_or_implied_by_hints),
                         name or operator.name + "_adjoint", dict(operator=operator))

    def _shape(self):
        shape = self.operator._shape()
        return shape[:-2] + (shape[-1], shape[-2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self.operator._matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self.operator._solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return self.operator.determinant()

    def _log_abs_determinant(self):
        return self.operator.log_abs_determinant()

    def _trace(self):
        return self.operator.trace()

    def _diag_part(self):
        return self.operator.diag_part()

    def _to_dense(self):
        return matrix_transpose(self.operator.to_dense())

    def _linop_adjoint(self):
        return self.operator


class LinearOperatorInversion(LinearOperator):
    """``operator^-1`` as an operator: its ``matmul`` is ``operator.solve`` and back."""

    def __init__(self, operator, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operator = operator
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(f"Argument `is_non_singular` or argument `operator` must have "
                             f"supplied hint `is_non_singular` equal to `True` or `None`. Found "
                             f"`operator.is_non_singular`: {operator.is_non_singular}, "
                             f"`is_non_singular`: {is_non_singular}.")
        if operator.is_square is False or is_square is False:
            raise ValueError(f"Argument `is_square` or argument `operator` must have supplied "
                             f"hint `is_square` equal to `True` or `None`. Found "
                             f"`operator.is_square`: {operator.is_square}, `is_square`: "
                             f"{is_square}.")
        pick = lambda hint, own: own if hint is None else hint  # noqa: E731
        super().__init__(operator.dtype, None,
                         pick(is_non_singular, operator.is_non_singular),
                         pick(is_self_adjoint, operator.is_self_adjoint),
                         pick(is_positive_definite, operator.is_positive_definite),
                         True, name or operator.name + "_inv", dict(operator=operator))

    def _shape(self):
        return self.operator._shape()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self.operator._solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self.operator._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return reciprocal(self.operator.determinant())

    def _log_abs_determinant(self):
        return -self.operator.log_abs_determinant()

    def _linop_inverse(self):
        return self.operator


_CLASSES = {
    "linear_operator_kinds": (
        "LinearOperatorFullMatrix", "LinearOperatorDiag", "LinearOperatorIdentity",
        "LinearOperatorScaledIdentity", "LinearOperatorLowerTriangular",
        "LinearOperatorPermutation", "LinearOperatorToeplitz", "LinearOperatorTridiag",
        "LinearOperatorZeros"),
    "linear_operator": ("LinearOperatorAdjoint", "LinearOperatorInversion"),
    "linear_operator_structured": (
        "LinearOperatorHouseholder", "LinearOperatorComposition",
        "LinearOperatorKronecker", "LinearOperatorBlockDiag",
        "LinearOperatorBlockLowerTriangular", "LinearOperatorLowRankUpdate"),
}


def install(tf):
    """Set ``tf.linalg.LinearOperator`` and its subclasses (idempotent)."""
    import importlib
    tf.linalg.LinearOperator = LinearOperator
    for module_name, names in _CLASSES.items():
        module = importlib.import_module(f"{__package__}.{module_name}")
        for name in names:
            setattr(tf.linalg, name, getattr(module, name))
