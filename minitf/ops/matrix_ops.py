"""Structural matrix ops of ``tf.linalg``: band parts, diagonals, traces, triangular solves and
cross products, with the helpers the decompositions' gradient rules share."""
import numpy

from .. import backend as B
from ..tensor import Tensor
from ._samples import u
from .array_ops import gather, matrix_transpose
from .convert import convert_to_tensor, operand_pair
from .linalg_ops import diag_part
from .math_ops import where
from .reduce_ops import reduce_sum
from .registry import RAW, InvalidArgumentError, defop


def _x(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _swap(F, x):
    """Swap the last two axes (any number of leading batch dimensions)."""
    nd = len(x.shape)
    return F.transpose(x, perm=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _host_int(value, what, op):
    """A Python int from an int or a scalar integer tensor (TF takes these as tensors)."""
    if isinstance(value, Tensor):
        if value.shape.rank != 0 or value._value.dtype.kind not in "iu":
            raise InvalidArgumentError(f"{op}: {what} must be an integer scalar, got "
                                       f"{value.dtype.name} of shape {tuple(value.shape)}")
        return int(value._value)
    if isinstance(value, (bool, numpy.bool_)) or not isinstance(value, (int, numpy.integer)):
        raise InvalidArgumentError(f"{op}: {what} must be an integer scalar, got {value!r}")
    return int(value)


def require_matrix(op, x, square=False, float_only=True):
    """Check that ``x`` (a Tensor) holds matrices in its last two axes; returns (rows, cols)."""
    shape = tuple(x._value.shape)
    if len(shape) < 2:
        raise InvalidArgumentError(f"{op}: input must have rank >= 2 (a matrix or a batch of "
                                   f"matrices), got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise InvalidArgumentError(f"{op}: input matrix must be square, got shape {shape}")
    if float_only and x._value.dtype.kind != "f":
        raise TypeError(f"{op}: input must be a float tensor (float32 or float64), got "
                        f"{x.dtype.name}")
    return shape[-2], shape[-1]


# --- band_part ---------------------------------------------------------------------------------

def _band_mask(rows, cols, num_lower, num_upper):
    xp = B.xp
    i = xp.arange(rows)[:, None]
    j = xp.arange(cols)[None, :]
    keep = xp.ones((rows, cols), dtype=bool)
    if num_lower >= 0:
        keep = keep & (i - j <= num_lower)
    if num_upper >= 0:
        keep = keep & (j - i <= num_upper)
    return keep


def _band_part_forward(x, num_lower, num_upper):
    """Entries within ``num_lower`` diagonals below and ``num_upper`` above the main one (a
    negative count keeps the whole triangle); zeros elsewhere."""
    if x.ndim < 2:
        raise ValueError(f"input must have rank >= 2, got shape {tuple(x.shape)}")
    keep = _band_mask(x.shape[-2], x.shape[-1], num_lower, num_upper)
    return B.xp.where(keep, x, B.xp.zeros((), dtype=x.dtype))


def _band_part_vjp(F, g, x, y, num_lower, num_upper):
    return (F.band_part(g, num_lower=num_lower, num_upper=num_upper),)


_band_part = defop("band_part", _band_part_forward, vjp=_band_part_vjp, jvp="linear",
                   type="MatrixBandPart", aliases=("matrix_band_part",),
                   samples=lambda: [((u(3, 4),), {"num_lower": 1, "num_upper": 0}),
                                    ((u(4, 3),), {"num_lower": -1, "num_upper": 0}),
                                    ((u(2, 3, 3),), {"num_lower": 0, "num_upper": -1}),
                                    ((u(3, 3),), {"num_lower": 0, "num_upper": 1})])


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002 - TF's name
    """Keep a central band of each innermost matrix: ``num_lower`` sub-diagonals and
    ``num_upper`` super-diagonals (negative: all of them), zeros elsewhere.

    ``band_part(x, -1, 0)`` is the lower triangle, ``band_part(x, 0, 0)`` the diagonal.
    """
    x = _x(input)
    rows, cols = require_matrix("band_part", x, float_only=False)
    lower = _host_int(num_lower, "num_lower", "band_part")
    upper = _host_int(num_upper, "num_upper", "band_part")
    if lower > rows:
        raise InvalidArgumentError(f"band_part: num_lower must be negative or at most the number "
                                   f"of rows ({rows}) of shape {tuple(x.shape)}, got {lower}")
    if upper > cols:
        raise InvalidArgumentError(f"band_part: num_upper must be negative or at most the number "
                                   f"of columns ({cols}) of shape {tuple(x.shape)}, got {upper}")
    return _band_part(x, num_lower=lower, num_upper=upper)


def lower_triangle(F, x):
    return F.band_part(x, num_lower=-1, num_upper=0)


def diagonal_band(F, x):
    return F.band_part(x, num_lower=0, num_upper=0)


def symmetric_from_lower(F, x):
    """The symmetric matrix whose lower triangle is ``x``'s (what cholesky and eigh read)."""
    low = lower_triangle(F, x)
    return low + _swap(F, low) - diagonal_band(F, x)


def fold_to_lower(F, m):
    """The gradient with respect to a matrix of which only the lower triangle is read, given
    ``m``, the gradient with respect to the symmetric matrix built from it: an entry below the
    diagonal stands for two entries of the symmetric matrix."""
    return lower_triangle(F, m + _swap(F, m)) - diagonal_band(F, m)


def as_array_dtype(x):
    return x._value.dtype if isinstance(x, Tensor) else x.dtype


def diag_embed(F, vec):
    """Square matrices with ``vec``'s last axis on their diagonal (both namespaces)."""
    n = vec.shape[-1]
    eye = B.xp.eye(n, dtype=as_array_dtype(vec))
    return F.multiply(F.getitem(vec, key=(Ellipsis, None, slice(None))), eye)


def diag_of(F, m):
    """The main diagonal of square matrices ``m`` (both namespaces)."""
    n = m.shape[-1]
    eye = B.xp.eye(n, dtype=as_array_dtype(m))
    return F.reduce_sum(F.multiply(m, eye), axis=(len(m.shape) - 1,))


def concat_last(F, parts, axis):
    """Join ``parts`` along ``axis`` in either namespace (the public op in the TENSOR one)."""
    if F is RAW:
        return B.xp.concatenate(parts, axis=axis)
    from .array_ops import concat
    return concat(list(parts), axis=axis)


# --- triangular_solve --------------------------------------------------------------------------

def _triangle(x, lower):
    rows, cols = x.shape[-2:]
    return B.xp.where(_band_mask(rows, cols, -1, 0) if lower else _band_mask(rows, cols, 0, -1),
                      x, B.xp.zeros((), dtype=x.dtype))


def _triangular_solve_forward(matrix, rhs, lower, adjoint):
    """x with T @ x = rhs, T the lower (or upper) triangle of ``matrix`` (transposed if
    ``adjoint``); the other triangle is not read."""
    xp = B.xp
    if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
        raise ValueError(f"matrix must be square, got shape {tuple(matrix.shape)}")
    if rhs.ndim < 2 or rhs.shape[-2] != matrix.shape[-1]:
        raise ValueError(f"rhs must have shape [..., {matrix.shape[-1]}, K] for a matrix of shape "
                         f"{tuple(matrix.shape)}, got {tuple(rhs.shape)}")
    tri = _triangle(matrix, lower)
    if adjoint:
        tri = xp.swapaxes(tri, -1, -2)
    batch = numpy.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(rhs.shape[:-2]))
    tri = xp.broadcast_to(tri, batch + tuple(tri.shape[-2:]))
    rhs = xp.broadcast_to(rhs, batch + tuple(rhs.shape[-2:]))
    return xp.linalg.solve(tri, rhs)


def _triangle_band(lower):
    return {"num_lower": -1, "num_upper": 0} if lower else {"num_lower": 0, "num_upper": -1}


def _triangular_solve_vjp(F, g, x, y, lower, adjoint):
    matrix = x[0]
    grad_rhs = F.triangular_solve(matrix, g, lower=lower, adjoint=not adjoint)
    grad_matrix = None
    if F.needs[0]:
        outer = (F.matmul(y, _swap(F, grad_rhs)) if adjoint
                 else F.matmul(grad_rhs, _swap(F, y)))
        grad_matrix = -F.band_part(outer, **_triangle_band(lower))
    return grad_matrix, grad_rhs


def _triangular_solve_jvp(F, t, x, y, lower, adjoint):
    matrix = x[0]
    t_matrix, t_rhs = t
    rhs = t_rhs
    if t_matrix is not None:
        dt = F.band_part(t_matrix, **_triangle_band(lower))
        term = F.matmul(_swap(F, dt) if adjoint else dt, y)
        rhs = -term if rhs is None else rhs - term
    if rhs is None:
        return None
    return F.triangular_solve(matrix, rhs, lower=lower, adjoint=adjoint)


def _triangular_samples():
    def tri():
        return u(3, 3) + 3.0 * numpy.eye(3)
    return [((tri(), u(3, 2)), {"lower": True, "adjoint": False}),
            ((tri(), u(3, 2)), {"lower": False, "adjoint": False}),
            ((tri(), u(3, 1)), {"lower": True, "adjoint": True}),
            ((tri(), u(3, 2)), {"lower": False, "adjoint": True}),
            ((u(2, 3, 3) + 3.0 * numpy.eye(3), u(3, 2)), {"lower": True, "adjoint": False})]


_triangular_solve = defop("triangular_solve", _triangular_solve_forward, arity=2,
                          vjp=_triangular_solve_vjp, jvp=_triangular_solve_jvp, save=(0, "out"),
                          type="MatrixTriangularSolve", samples=_triangular_samples)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solve ``T @ x = rhs`` for triangular ``T``: the lower (``lower=True``) or upper triangle of
    ``matrix``, transposed when ``adjoint``. The other triangle is ignored. Leading (batch)
    dimensions broadcast."""
    matrix, rhs = operand_pair("linalg.triangular_solve", matrix, rhs)
    require_matrix("triangular_solve", matrix, square=True)
    return _triangular_solve(matrix, rhs, lower=bool(lower), adjoint=bool(adjoint))


def cholesky_solve(chol, rhs, name=None):
    """x with ``A @ x = rhs`` given ``chol``, the lower Cholesky factor of ``A``."""
    chol, rhs = operand_pair("linalg.cholesky_solve", chol, rhs)
    inner = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, inner, lower=True, adjoint=True)


# --- cross -------------------------------------------------------------------------------------

def _cross_forward(a, b):
    return B.xp.cross(a, b, axis=-1)


def _cross_vjp(F, g, x, y):
    a, b = x
    return (F.cross(b, g) if F.needs[0] else None,
            F.cross(g, a) if F.needs[1] else None)


_cross = defop("cross", _cross_forward, arity=2, vjp=_cross_vjp, jvp="bilinear", save=(0, 1),
               type="Cross", samples=lambda: [((u(3), u(3)), {}), ((u(2, 4, 3), u(2, 4, 3)), {})])


def cross(a, b, name=None):
    """Cross products of the 3-element vectors in the last axis of ``a`` and ``b`` (same
    shape)."""
    a, b = operand_pair("linalg.cross", a, b)
    if tuple(a.shape) != tuple(b.shape) or a.ndim == 0 or int(a.shape[-1]) != 3:
        raise InvalidArgumentError(f"cross: a and b must have the same shape with an innermost "
                                   f"dimension of 3, got shapes {tuple(a.shape)} and "
                                   f"{tuple(b.shape)}")
    return _cross(a, b)


# --- diagonals and traces (composites: their gradients are TF's) -------------------------------

def trace(x, name=None):
    """Sum of the main diagonal of each innermost matrix (``x[..., i, i]``)."""
    x = _x(x)
    require_matrix("trace", x, float_only=False)
    return reduce_sum(diag_part(x), axis=-1)


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with diagonal ``k`` of each innermost matrix replaced by ``diagonal``
    (``k`` > 0: above the main diagonal, < 0: below)."""
    x, d = _x(input), _x(diagonal)
    rows, cols = require_matrix("set_diag", x, float_only=False)
    if isinstance(k, (list, tuple)) or (isinstance(k, Tensor) and k.shape.rank != 0):
        raise NotImplementedError("set_diag: a range of diagonals (k a pair) is not supported; "
                                  "give one diagonal index k")
    k = _host_int(k, "k", "set_diag")
    if not -rows < k < cols:
        raise InvalidArgumentError(f"set_diag: diagonal index k={k} is outside a matrix of shape "
                                   f"{(rows, cols)}")
    length = min(rows + min(k, 0), cols - max(k, 0))
    want = tuple(x.shape[:-2]) + (length,)
    if tuple(d.shape) != want:
        raise InvalidArgumentError(f"set_diag: diagonal must have shape {want} for input of shape "
                                   f"{tuple(x.shape)} and k={k}, got {tuple(d.shape)}")
    if d.dtype != x.dtype:
        raise TypeError(f"set_diag: diagonal has dtype {d.dtype.name}, input {x.dtype.name}")
    r = numpy.arange(rows)[:, None]
    c = numpy.arange(cols)[None, :]
    on_diagonal = Tensor(B.xp.asarray(c - r == k))
    # along diagonal k, entry (r, r + k) is element min(r, c) of the diagonal
    position = numpy.clip(numpy.minimum(r, c), 0, max(length - 1, 0)).astype(numpy.int64)
    spread = gather(d, Tensor(B.xp.asarray(position)), axis=d.ndim - 1)
    return where(on_diagonal, spread, x)


def adjoint(matrix, name=None):
    """The conjugate transpose of each innermost matrix (the transpose for real dtypes)."""
    x = _x(matrix)
    require_matrix("adjoint", x, float_only=False)
    return matrix_transpose(x)


# --- expm --------------------------------------------------------------------------------------

# Pade [13/13] coefficients and the 1-norm up to which it is accurate to double precision
# (N. Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_forward(a):
    """The matrix exponential by scaling and squaring with a [13/13] Pade approximant (one
    scaling for the whole batch: the largest any matrix needs)."""
    xp = B.xp
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"input matrix must be square, got shape {tuple(a.shape)}")
    n = a.shape[-1]
    if a.size == 0:
        return xp.zeros(a.shape, dtype=a.dtype)
    norm = float(xp.abs(a).sum(axis=-2).max())   # the largest 1-norm in the batch
    squarings = 0
    if numpy.isfinite(norm) and norm > _THETA13:
        squarings = int(numpy.ceil(numpy.log2(norm / _THETA13)))
    a = a / a.dtype.type(2.0 ** squarings)
    b = [a.dtype.type(c) for c in _PADE13]
    eye = xp.eye(n, dtype=a.dtype)
    a2 = xp.matmul(a, a)
    a4 = xp.matmul(a2, a2)
    a6 = xp.matmul(a4, a2)
    odd = xp.matmul(a, xp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                    + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    even = (xp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
            + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
    result = xp.linalg.solve(even - odd, even + odd)
    for _ in range(squarings):
        result = xp.matmul(result, result)
    return result


def _expm_of_block(F, diagonal, corner):
    """The upper right block of expm([[diagonal, corner], [0, diagonal]]): the Frechet
    derivative of expm at ``diagonal`` in the direction ``corner``."""
    shape = tuple(corner.shape)
    n = shape[-1]
    if tuple(diagonal.shape) != shape:   # the cotangent has leading jacobian dimensions
        diagonal = F.broadcast_to(diagonal, shape=shape)
    top = concat_last(F, [diagonal, corner], axis=-1)
    bottom = concat_last(F, [F.zeros_like(corner), diagonal], axis=-1)
    block = F.expm(concat_last(F, [top, bottom], axis=-2))
    return F.getitem(block, key=(Ellipsis, slice(None, n), slice(n, None)))


def _expm_vjp(F, g, x, y):
    return (_expm_of_block(F, _swap(F, x[0]), g),)


def _expm_jvp(F, t, x, y):
    return _expm_of_block(F, x[0], t[0])


_expm = defop("expm", _expm_forward, vjp=_expm_vjp, jvp=_expm_jvp, save=(0,),
              type="MatrixExponential",
              samples=lambda: [((u(3, 3),), {}), ((3.0 * u(2, 2, 2),), {})])


def expm(input, name=None):  # noqa: A002
    """The matrix exponential of each innermost square matrix."""
    x = _x(input)
    require_matrix("expm", x, square=True)
    return _expm(x)
