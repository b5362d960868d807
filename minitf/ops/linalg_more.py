"""More of ``tf.linalg``: ``sqrtm``, ``matrix_rank``, ``tensor_diag``, ``tensor_diag_part``,
``banded_triangular_solve`` and ``eigh_tridiagonal``.

``sqrtm`` computes the principal square root of real matrices whose eigenvalues are off the
closed negative real axis: symmetric matrices through their eigendecomposition (singular positive
semi-definite ones too), others by the scaled Denman-Beavers iteration. Where no real principal
root exists the result is NaN, as TF's. Its gradient is TF's: the Sylvester equation
``R @ dR + dR @ R = dA`` solved through its Kronecker form, so it costs ``O(n^6)`` and is meant
for small matrices.
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor
from ._samples import u
from .array_ops import concat, gather, reshape
from .convert import convert_to_tensor
from .decomposition_ops import _separated_symmetric, svd
from .linalg_ops import diag, diag_part
from .math_ops import cast
from .matrix_ops import _swap, _x, require_matrix, triangular_solve
from .reduce_ops import reduce_max, reduce_sum
from .registry import InvalidArgumentError, defop


# --- sqrtm -------------------------------------------------------------------------------------

def _symmetric_root(a):
    values, vectors = (B.xp.asarray(p) for p in B.xp.linalg.eigh(a))
    scale = max(1.0, float(B.xp.abs(values).max())) if values.size else 1.0
    # tiny negative eigenvalues of a semi-definite matrix are rounding: their root is 0
    values = B.xp.where((values < 0) & (values > -1e-12 * scale), 0.0, values)
    roots = B.xp.sqrt(B.xp.where(values < 0, numpy.nan, values))
    return (vectors * roots[..., None, :]) @ B.xp.swapaxes(vectors, -1, -2)


def _denman_beavers(a):
    """The principal square roots of float64 matrices ``a`` ``(count, n, n)``; NaN for those
    that are singular or where the iteration does not converge."""
    xp = B.xp
    count, n = a.shape[0], a.shape[-1]
    sign, _ = (xp.asarray(p) for p in xp.linalg.slogdet(a))
    failed = sign == 0
    eye = xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape)
    y = xp.where(failed[:, None, None], eye, a)
    z = xp.array(eye, copy=True)
    scaling = True
    for _ in range(100):
        try:
            y_inv, z_inv = xp.linalg.inv(y), xp.linalg.inv(z)
        except numpy.linalg.LinAlgError:     # an iterate became singular: no convergence
            return xp.full(a.shape, numpy.nan, dtype=a.dtype)
        mu = xp.ones((count, 1, 1), dtype=a.dtype)
        if scaling:      # determinant scaling speeds up the first steps
            log_det = (xp.asarray(xp.linalg.slogdet(y)[1])
                       + xp.asarray(xp.linalg.slogdet(z)[1]))
            mu = xp.exp(-log_det / (2.0 * n))[:, None, None]
        y_next = 0.5 * (mu * y + z_inv / mu)
        z_next = 0.5 * (mu * z + y_inv / mu)
        change = (xp.linalg.norm(y_next - y, axis=(-2, -1))
                  / xp.maximum(xp.linalg.norm(y_next, axis=(-2, -1)), 1e-300))
        y, z = y_next, z_next
        worst = float(xp.where(failed, 0.0, change).max())
        if worst < 1e-2:
            scaling = False
        if not numpy.isfinite(worst) or worst <= 1e-15 * n:
            break
    residual = xp.linalg.norm(y @ y - a, axis=(-2, -1))
    size = xp.maximum(xp.linalg.norm(a, axis=(-2, -1)), 1e-300)
    failed = failed | ~(residual <= 1e-8 * size)
    return xp.where(failed[:, None, None], numpy.nan, y)


def _sqrtm_forward(a):
    """The principal square root of each real matrix (NaN where none is real)."""
    xp = B.xp
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"input matrix must be square, got shape {tuple(a.shape)}")
    n = a.shape[-1]
    batch = tuple(a.shape[:-2])
    if a.size == 0:
        return xp.zeros(a.shape, dtype=a.dtype)
    flat = a.astype(numpy.float64).reshape((-1, n, n))
    symmetric = (flat == xp.swapaxes(flat, -1, -2)).all(axis=(-2, -1))
    roots = xp.zeros_like(flat)
    if bool(symmetric.any()):
        roots = xp.where(symmetric[:, None, None], _symmetric_root(flat), roots)
    if not bool(symmetric.all()):
        general = _denman_beavers(xp.where(symmetric[:, None, None], xp.eye(n), flat))
        roots = xp.where(symmetric[:, None, None], roots, general)
    return roots.astype(a.dtype).reshape(batch + (n, n))


def _kronecker_sum(F, root):
    """The matrix of ``dR -> R @ dR + dR @ R`` on row-major flattened ``dR``."""
    n = int(root.shape[-1])
    lead = tuple(root.shape[:-2])
    dtype = root._value.dtype if isinstance(root, Tensor) else root.dtype
    eye = B.xp.eye(n, dtype=dtype)
    # entry ((a, b), (c, d)): R[a, c] * I[b, d] + I[a, c] * R[d, b]
    left = F.multiply(F.getitem(root, key=(Ellipsis, slice(None), None, slice(None), None)),
                      eye[None, :, None, :])
    right = F.multiply(eye[:, None, :, None],
                       F.getitem(_swap(F, root), key=(Ellipsis, None, slice(None), None,
                                                      slice(None))))
    return F.reshape(left + right, shape=lead + (n * n, n * n))


def _solve_flattened(F, system, m):
    shape = tuple(m.shape)
    n = shape[-1]
    column = F.reshape(m, shape=shape[:-2] + (n * n, 1))
    return F.reshape(F.solve(system, column), shape=shape)


def _sqrtm_vjp(F, g, x, y):
    return (_solve_flattened(F, _swap(F, _kronecker_sum(F, y)), g),)


def _sqrtm_jvp(F, t, x, y):
    return _solve_flattened(F, _kronecker_sum(F, y), t[0])


def _sqrtm_samples():
    def general(*shape):
        return 0.5 * u(*shape) + 3.0 * numpy.eye(shape[-1])
    return [((general(3, 3),), {}), ((general(2, 2, 2),), {}),
            ((_separated_symmetric() + 3.0 * numpy.eye(3),), {})]


_sqrtm = defop("sqrtm", _sqrtm_forward, vjp=_sqrtm_vjp, jvp=_sqrtm_jvp, save=("out",),
               type="MatrixSquareRoot", aliases=("matrix_square_root",), samples=_sqrtm_samples)


def sqrtm(input, name=None):  # noqa: A002 - TF's name
    """The principal square root ``R`` (``R @ R = input``, eigenvalues with positive real
    parts) of each innermost real square matrix; NaN where it has no real one (an eigenvalue on
    the negative real axis). Non-symmetric singular matrices also give NaN."""
    x = _x(input)
    require_matrix("sqrtm", x, square=True)
    return _sqrtm(x)


# --- matrix_rank, tensor_diag, tensor_diag_part ------------------------------------------------

def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` for each innermost matrix (int32);
    ``tol`` defaults to ``eps * max(rows, cols) * largest singular value`` (TF's default)."""
    x = _x(a)
    rows, cols = require_matrix("matrix_rank", x)
    s = svd(x, compute_uv=False)
    if tol is None:
        eps = float(numpy.finfo(x._value.dtype).eps)
        tol = eps * max(rows, cols) * reduce_max(s, axis=-1, keepdims=True)
    else:
        tol = cast(tol, x.dtype) if isinstance(tol, Tensor) else convert_to_tensor(tol, x.dtype)
    return reduce_sum(cast(s > tol, dtypes.int32), axis=-1)


def tensor_diag(diagonal, name=None):
    """``output[i1, ..., ik, i1, ..., ik] = diagonal[i1, ..., ik]``, zeros elsewhere (shape
    ``diagonal.shape + diagonal.shape``)."""
    d = _x(diagonal)
    if d.ndim < 1:
        raise InvalidArgumentError(f"tensor_diag: diagonal must have rank >= 1, got a scalar "
                                   f"{tuple(d.shape)}")
    shape = tuple(int(s) for s in d.shape)
    size = int(numpy.prod(shape, dtype=numpy.int64))
    return reshape(diag(reshape(d, (size,))), shape + shape)


def tensor_diag_part(input, name=None):  # noqa: A002
    """The inverse of ``tensor_diag``: ``output[i1, ..., ik] = input[i1, ..., ik, i1, ...,
    ik]`` for ``input`` of shape ``s + s``."""
    x = _x(input)
    shape = tuple(int(s) for s in x.shape)
    k = len(shape) // 2
    if not shape or len(shape) % 2 or shape[:k] != shape[k:]:
        raise InvalidArgumentError(f"tensor_diag_part: input must have an even rank >= 2 and "
                                   f"shape s + s, got shape {shape}")
    size = int(numpy.prod(shape[:k], dtype=numpy.int64))
    return reshape(diag_part(reshape(x, (size, size))), shape[:k])


# --- banded_triangular_solve -------------------------------------------------------------------

def _band_positions(bands, m, lower):
    """For each entry of an ``m x m`` triangular matrix, its index in the flattened ``[bands,
    m]`` band storage (LEFT_RIGHT aligned), or ``bands * m`` (a zero) outside the band."""
    i = numpy.arange(m)[:, None]
    c = numpy.arange(m)[None, :]
    offset = i - c if lower else c - i
    row = offset if lower else bands - 1 - offset
    inside = (offset >= 0) & (offset < bands)
    return numpy.where(inside, row * m + i, bands * m).astype(numpy.int64)


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """x with ``T @ x = rhs`` (``T^T`` when ``adjoint``) for banded triangular ``T`` stored as
    ``bands`` ``[..., K, M]``: lower: the diagonal first, then the subdiagonals (aligned right);
    upper: the superdiagonals from the ``K - 1``-th (aligned left), the diagonal last."""
    bands, rhs = _x(bands), _x(rhs)
    if bands.ndim < 2:
        raise InvalidArgumentError(f"banded_triangular_solve: bands must have shape [..., K, M], "
                                   f"got {tuple(bands.shape)}")
    count, m = int(bands.shape[-2]), int(bands.shape[-1])
    if rhs.ndim < 2 or int(rhs.shape[-2]) != m:
        raise InvalidArgumentError(f"banded_triangular_solve: rhs must have shape [..., {m}, N] "
                                   f"for bands of shape {tuple(bands.shape)}, got "
                                   f"{tuple(rhs.shape)}")
    if count < 1:
        raise InvalidArgumentError(f"banded_triangular_solve: bands must hold at least the "
                                   f"diagonal (K >= 1), got bands of shape {tuple(bands.shape)}")
    if rhs.dtype != bands.dtype:
        raise TypeError(f"banded_triangular_solve: rhs has dtype {rhs.dtype.name}, bands "
                        f"{bands.dtype.name}")
    batch = tuple(bands.shape[:-2])
    flat = reshape(bands, batch + (count * m,))
    zero = Tensor(B.xp.zeros(batch + (1,), dtype=bands._value.dtype))
    positions = Tensor(B.xp.asarray(_band_positions(count, m, bool(lower))))
    matrix = gather(concat([flat, zero], axis=-1), positions, axis=len(batch))
    return triangular_solve(matrix, rhs, lower=bool(lower), adjoint=bool(adjoint))


# --- eigh_tridiagonal --------------------------------------------------------------------------

def _eigh_tridiagonal_forward(alpha, beta, eigvals_only, select, low, high):
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal ``alpha`` and
    off-diagonal ``beta``; with eigenvectors (columns of rows 1..) in a ``(n + 1, k)`` array
    unless ``eigvals_only``. ``select`` 'a' (all), 'v' (in ``(low, high]``), 'i' (indices
    ``low..high``)."""
    xp = B.xp
    n = alpha.shape[0]
    matrix = xp.zeros((n, n), dtype=alpha.dtype)
    index = xp.arange(n)
    matrix[index, index] = alpha
    matrix[index[:-1], index[1:]] = beta
    matrix[index[1:], index[:-1]] = beta
    if eigvals_only:
        values, vectors = xp.linalg.eigvalsh(matrix), None
    else:
        values, vectors = (xp.asarray(p) for p in xp.linalg.eigh(matrix))
    if select == "i":
        keep = slice(int(low), int(high) + 1)
    elif select == "v":
        host = B.to_numpy(values)
        start = int(numpy.searchsorted(host, low, side="right"))
        stop = int(numpy.searchsorted(host, high, side="right"))
        keep = slice(start, max(start, stop))
    else:
        keep = slice(None)
    if eigvals_only:
        return values[keep]
    return xp.concatenate([values[None, keep], vectors[:, keep]], axis=0)


_eigh_tridiagonal = defop("eigh_tridiagonal", _eigh_tridiagonal_forward, arity=2,
                          type="EighTridiagonal")


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None,
                     name=None):
    """Eigenvalues (ascending), and unless ``eigvals_only`` the eigenvectors (columns), of the
    real symmetric tridiagonal matrix with diagonal ``alpha`` ``[n]`` and off-diagonal ``beta``
    ``[n - 1]``. ``select``: 'a' all, 'v' those in ``(select_range[0], select_range[1]]``, 'i'
    those with indices ``select_range[0]..select_range[1]``. No gradient (as in TF)."""
    fn = "eigh_tridiagonal"
    alpha, beta = _x(alpha), _x(beta)
    if alpha.ndim != 1 or beta.ndim != 1 or int(beta.shape[0]) != max(int(alpha.shape[0]) - 1,
                                                                        0):
        raise InvalidArgumentError(f"{fn}: alpha must have shape [n] and beta [n - 1], got "
                                   f"{tuple(alpha.shape)} and {tuple(beta.shape)}")
    if not alpha.dtype.is_floating or beta.dtype != alpha.dtype:
        raise TypeError(f"{fn}: alpha and beta must have the same float dtype, got "
                        f"{alpha.dtype.name} and {beta.dtype.name}")
    if select not in ("a", "v", "i"):
        raise InvalidArgumentError(f"{fn}: select must be 'a', 'v' or 'i', got {select!r}")
    n = int(alpha.shape[0])
    low = high = 0
    if select != "a":
        given = select_range.numpy() if isinstance(select_range, Tensor) else select_range
        bounds = numpy.asarray(given if given is not None else [], dtype=numpy.float64)
        if bounds.shape != (2,):
            raise InvalidArgumentError(f"{fn}: select_range must be a pair (low, high) for "
                                       f"select={select!r}, got {select_range!r}")
        low, high = float(bounds[0]), float(bounds[1])
        if select == "i":
            low, high = int(low), int(high)
            if not 0 <= low <= high < n:
                raise InvalidArgumentError(f"{fn}: select_range for select='i' must satisfy "
                                           f"0 <= low <= high < n = {n}, got {select_range!r}")
        elif low > high:
            raise InvalidArgumentError(f"{fn}: select_range for select='v' must have "
                                       f"low <= high, got {select_range!r}")
    packed = _eigh_tridiagonal(alpha, beta, eigvals_only=bool(eigvals_only), select=select,
                               low=low, high=high)
    if eigvals_only:
        return packed
    return packed[0], packed[1:]


def install(tf):
    """Add these functions to ``tf.linalg`` (idempotent)."""
    tf.linalg.sqrtm = sqrtm
    tf.linalg.matrix_rank = matrix_rank
    tf.linalg.tensor_diag = tensor_diag
    tf.linalg.tensor_diag_part = tensor_diag_part
    tf.linalg.banded_triangular_solve = banded_triangular_solve
    tf.linalg.eigh_tridiagonal = eigh_tridiagonal
