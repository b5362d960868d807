"""Matrix decompositions of ``tf.linalg`` with their gradients: cholesky, qr, svd, eigh and
slogdet, and the functions built on them (logdet, eigvalsh, pinv, lstsq).

An op has one output array, so a decomposition's op returns its factors packed side by side in
the last axis (flattened where their shapes differ); the public function slices them apart with
recorded ops, and a cotangent reaches the rule packed the same way (zeros for unused factors).

Gradient formulas: cholesky, I. Murray, "Differentiation of the Cholesky decomposition" (2016);
svd, J. Townsend, "Differentiating the singular value decomposition" (2016); eigh, M. Giles,
"An extended collection of matrix derivative results" (2008); qr, TF's ``QrGrad`` (Walter and
Lehmann's formula). Cholesky and eigh read the lower triangle only, as TF's kernels do; their
gradients are with respect to exactly that (zeros above the diagonal).
"""
import collections

import numpy

from .. import backend as B
from ._samples import u
from .array_ops import stack
from .convert import convert_to_tensor
from .linalg_ops import diag_part, matmul
from .math_ops import log, ones_like_public as ones_like, reciprocal, where
from .math_ops import zeros_like_public as zeros_like
from .matrix_ops import (_swap, _x, cholesky_solve, concat_last, diag_embed, diag_of,
                         fold_to_lower, lower_triangle, require_matrix, symmetric_from_lower)
from .reduce_ops import reduce_max, reduce_sum
from .registry import TENSOR, InvalidArgumentError, defop

Qr = collections.namedtuple("Qr", ["q", "r"])
LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])


def _require_square_kernel(a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"input matrix must be square, got shape {tuple(a.shape)}")


def _lower_mask(n):
    return B.xp.tril(B.xp.ones((n, n), dtype=bool))


def _symmetric_from_lower_array(a):
    return B.xp.where(_lower_mask(a.shape[-1]), a, B.xp.swapaxes(a, -1, -2))


def _factors(result):
    """The arrays of a multi-output ``xp.linalg`` call, as backend arrays. (The strict backend
    hands named tuples back unwrapped; ``asarray`` is a no-op on numpy and cupy.)"""
    return tuple(B.xp.asarray(part) for part in result)


def _pack(parts, batch):
    """Flatten ``parts`` (each ``batch + shape``) into one array ``batch + (total,)``."""
    flat = [p.reshape(batch + (int(numpy.prod(p.shape[len(batch):], dtype=numpy.int64)),))
            for p in parts]
    return B.xp.concatenate(flat, axis=-1)


def _unpack(F, packed, shapes):
    """The arrays (or Tensors) packed by ``_pack``/``_pack_tangents``, in ``shapes``."""
    lead = tuple(packed.shape[:-1])
    out, start = [], 0
    for shape in shapes:
        size = int(numpy.prod(shape, dtype=numpy.int64))
        piece = F.getitem(packed, key=(Ellipsis, slice(start, start + size)))
        out.append(F.reshape(piece, shape=lead + tuple(shape)))
        start += size
    return out


def _pack_tangents(F, parts, ndims):
    """Flatten Tensors ``parts`` whose last ``ndims[i]`` axes are the factor's, and join them."""
    flat = []
    for p, nd in zip(parts, ndims):
        shape = tuple(p.shape)
        size = int(numpy.prod(shape[len(shape) - nd:], dtype=numpy.int64))
        flat.append(F.reshape(p, shape=shape[:len(shape) - nd] + (size,)))
    return concat_last(F, flat, axis=-1)


def _inverse_gaps(F, values):
    """``1 / (values[j] - values[i])`` off the diagonal, 0 on it (the eigenvalue or squared
    singular value gaps of the gradient formulas)."""
    n = values.shape[-1]
    gaps = (F.getitem(values, key=(Ellipsis, None, slice(None)))
            - F.getitem(values, key=(Ellipsis, slice(None), None)))
    on_diagonal = B.xp.eye(n, dtype=bool)
    safe = F.where(on_diagonal, F.ones_like(gaps), gaps)
    return F.where(on_diagonal, F.zeros_like(gaps), F.reciprocal(safe))


def _scale_columns(F, m, values):
    return F.multiply(m, F.getitem(values, key=(Ellipsis, None, slice(None))))


def _scale_rows(F, m, values):
    return F.multiply(m, F.getitem(values, key=(Ellipsis, slice(None), None)))


def _right_solve_upper(F, x, r, transposed):
    """``x @ inv(r)^T`` (``transposed``) or ``x @ inv(r)`` for upper triangular ``r``."""
    solved = F.triangular_solve(r, _swap(F, x), lower=False, adjoint=not transposed)
    return _swap(F, solved)


# --- cholesky ----------------------------------------------------------------------------------

def _cholesky_forward(a):
    """The lower triangular L with L @ L^T = a (a symmetric positive definite; only its lower
    triangle is read)."""
    _require_square_kernel(a)
    xp = B.xp
    message = (f"Cholesky decomposition was not successful: the input of shape "
               f"{tuple(a.shape)} is not symmetric positive definite")
    try:
        chol = xp.linalg.cholesky(_symmetric_from_lower_array(a))
    except numpy.linalg.LinAlgError:
        raise ValueError(message) from None
    if not bool(xp.isfinite(chol).all()):  # cupy returns NaN instead of raising
        raise ValueError(message)
    return chol


def _phi(F, x):
    """The lower triangle of ``x`` with its diagonal halved."""
    return lower_triangle(F, x) - 0.5 * F.band_part(x, num_lower=0, num_upper=0)


def _cholesky_vjp(F, g, x, y):
    chol = y
    middle = _phi(F, F.matmul(_swap(F, chol), g))
    # grad for the symmetric input: L^-T middle L^-1, folded onto the lower triangle read
    left = F.triangular_solve(chol, middle, lower=True, adjoint=True)
    full = _swap(F, F.triangular_solve(chol, _swap(F, left), lower=True, adjoint=True))
    return (fold_to_lower(F, full),)


def _cholesky_jvp(F, t, x, y):
    chol = y
    da = symmetric_from_lower(F, t[0])
    left = F.triangular_solve(chol, da, lower=True, adjoint=False)
    inner = _swap(F, F.triangular_solve(chol, _swap(F, left), lower=True, adjoint=False))
    return F.matmul(chol, _phi(F, inner))


def _spd(*shape):
    a = u(*shape)
    n = shape[-1]
    return a @ numpy.swapaxes(a, -1, -2) + n * numpy.eye(n)


_cholesky = defop("cholesky", _cholesky_forward, vjp=_cholesky_vjp, jvp=_cholesky_jvp,
                  save=("out",), type="Cholesky",
                  samples=lambda: [((_spd(3, 3),), {}), ((_spd(2, 3, 3),), {})])


def cholesky(input, name=None):  # noqa: A002 - TF's name
    """The lower triangular Cholesky factor ``L`` of each symmetric positive definite innermost
    matrix (``L @ L^T = input``). Only the lower triangle of ``input`` is read."""
    x = _x(input)
    require_matrix("cholesky", x, square=True)
    return _cholesky(x)


def logdet(matrix, name=None):
    """``log(det(matrix))`` of symmetric positive definite matrices, via their Cholesky factor
    (stable where ``det`` under- or overflows)."""
    chol = cholesky(matrix)
    return 2.0 * reduce_sum(log(diag_part(chol)), axis=-1)


# --- slogdet -----------------------------------------------------------------------------------

def _slogdet_forward(a):
    """``[sign, log|det|]`` of each matrix, packed in a last axis of 2."""
    _require_square_kernel(a)
    sign, log_abs = _factors(B.xp.linalg.slogdet(a))
    return B.xp.stack([sign, log_abs], axis=-1)


def _slogdet_vjp(F, g, x, y):
    grad_log_abs = F.getitem(g, key=(Ellipsis, slice(1, 2), None))  # (..., 1, 1)
    return (F.multiply(grad_log_abs, _swap(F, F.inv(x[0]))),)


def _slogdet_jvp(F, t, x, y):
    inverse = F.inv(x[0])
    nd = len(inverse.shape)
    dlog = F.reduce_sum(F.multiply(_swap(F, inverse), t[0]), axis=(nd - 2, nd - 1))
    return stack([zeros_like(dlog), dlog], axis=-1)


def _slogdet_samples():
    flipped = u(3, 3) + 3.0 * numpy.eye(3)
    flipped[[0, 1]] = flipped[[1, 0]]  # a negative determinant
    return [((u(3, 3) + 3.0 * numpy.eye(3),), {}), ((flipped,), {}),
            ((u(2, 3, 3) + 3.0 * numpy.eye(3),), {})]


_slogdet = defop("slogdet", _slogdet_forward, vjp=_slogdet_vjp, jvp=_slogdet_jvp, save=(0,),
                 type="LogMatrixDeterminant", samples=_slogdet_samples)


def slogdet(input, name=None):  # noqa: A002
    """``(sign, log_abs_determinant)`` of each innermost square matrix: ``det = sign *
    exp(log_abs_determinant)`` without overflow. Only ``log_abs_determinant`` has a gradient
    (``sign``'s is zero)."""
    x = _x(input)
    require_matrix("slogdet", x, square=True)
    packed = _slogdet(x)
    return LogMatrixDeterminant(packed[..., 0], packed[..., 1])


# --- eigh --------------------------------------------------------------------------------------

def _eigh_forward(a):
    """Eigenvalues (ascending) in row 0 and eigenvectors (columns) in rows 1.. of a
    ``(..., n + 1, n)`` array, for the symmetric matrix of ``a``'s lower triangle."""
    _require_square_kernel(a)
    values, vectors = _factors(B.xp.linalg.eigh(_symmetric_from_lower_array(a)))
    return B.xp.concatenate([values[..., None, :], vectors], axis=-2)


def _eigh_parts(F, packed):
    return (F.getitem(packed, key=(Ellipsis, 0, slice(None))),
            F.getitem(packed, key=(Ellipsis, slice(1, None), slice(None))))


def _eigh_vjp(F, g, x, y):
    values, vectors = _eigh_parts(F, y)
    grad_values, grad_vectors = _eigh_parts(F, g)
    inner = F.multiply(_inverse_gaps(F, values), F.matmul(_swap(F, vectors), grad_vectors))
    inner = inner + diag_embed(F, grad_values)
    full = F.matmul(F.matmul(vectors, inner), _swap(F, vectors))
    return (fold_to_lower(F, full),)


def _eigh_jvp(F, t, x, y):
    values, vectors = _eigh_parts(F, y)
    da = symmetric_from_lower(F, t[0])
    projected = F.matmul(F.matmul(_swap(F, vectors), da), vectors)
    d_values = diag_of(F, projected)
    d_vectors = F.matmul(vectors, F.multiply(_inverse_gaps(F, values), projected))
    return concat_last(F, [F.getitem(d_values, key=(Ellipsis, None, slice(None))), d_vectors],
                       axis=-2)


def _separated_symmetric(*batch, n=3):
    """Symmetric matrices with eigenvalues at least 1.5 apart."""
    q, _ = numpy.linalg.qr(u(*batch, n, n))
    values = numpy.linspace(-2.0, 2.0, n) + u(*batch, n, lo=-0.25, hi=0.25)
    return (q * values[..., None, :]) @ numpy.swapaxes(q, -1, -2)


_eigh = defop("eigh", _eigh_forward, vjp=_eigh_vjp, jvp=_eigh_jvp, save=("out",),
              type="SelfAdjointEigV2",
              samples=lambda: [((_separated_symmetric(),), {}),
                               ((_separated_symmetric(2),), {})])


def eigh(tensor, name=None):
    """``(e, v)``: the eigenvalues (ascending) and eigenvectors (the columns of ``v``) of each
    innermost symmetric matrix; only its lower triangle is read. Eigenvectors are unique up to
    sign; the gradient needs distinct eigenvalues."""
    x = _x(tensor)
    require_matrix("eigh", x, square=True)
    packed = _eigh(x)
    return packed[..., 0, :], packed[..., 1:, :]


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of each innermost symmetric matrix."""
    return eigh(tensor)[0]


# --- qr ----------------------------------------------------------------------------------------

def _qr_shapes(rows, cols, full_matrices):
    k = rows if full_matrices else min(rows, cols)
    return (rows, k), (k, cols)


def _qr_forward(a, full_matrices):
    """q and r (``a = q @ r``, q with orthonormal columns, r upper triangular), flattened and
    packed in the last axis."""
    if a.ndim < 2:
        raise ValueError(f"input must have rank >= 2, got shape {tuple(a.shape)}")
    q, r = _factors(B.xp.linalg.qr(a, mode="complete" if full_matrices else "reduced"))
    return _pack([q, r], tuple(a.shape[:-2]))


def _qr_square_or_tall_vjp(F, q, r, grad_q, grad_r):
    q_dq = F.matmul(_swap(F, q), grad_q)
    r_dr = F.matmul(r, _swap(F, grad_r))
    lower = lower_triangle(F, (q_dq - _swap(F, q_dq)) + (r_dr - _swap(F, r_dr)))
    grad_a = F.matmul(q, grad_r + _right_solve_upper(F, lower, r, transposed=True))
    return grad_a + _right_solve_upper(F, grad_q - F.matmul(q, q_dq), r, transposed=True)


def _qr_unsupported(shape, full_matrices):
    rows, cols = shape[-2:]
    if full_matrices and rows > cols:
        raise NotImplementedError(
            f"qr: the derivative of full_matrices=True is not defined for more rows than columns "
            f"(shape {tuple(shape)}): the extra columns of q are not unique")


def _qr_vjp(F, g, x, y, full_matrices):
    shape = tuple(x[0].shape)
    _qr_unsupported(shape, full_matrices)
    rows, cols = shape[-2:]
    q_shape, r_shape = _qr_shapes(rows, cols, full_matrices)
    q, r = _unpack(F, y, [q_shape, r_shape])
    grad_q, grad_r = _unpack(F, g, [q_shape, r_shape])
    if rows >= cols:
        return (_qr_square_or_tall_vjp(F, q, r, grad_q, grad_r),)
    # wide: a = [x | y] with x = q @ r_x square and y = q @ r_y
    rest = F.getitem(x[0], key=(Ellipsis, slice(rows, None)))
    r_x = F.getitem(r, key=(Ellipsis, slice(None, rows)))
    grad_r_y = F.getitem(grad_r, key=(Ellipsis, slice(rows, None)))
    grad_x = _qr_square_or_tall_vjp(F, q, r_x, grad_q + F.matmul(rest, _swap(F, grad_r_y)),
                                     F.getitem(grad_r, key=(Ellipsis, slice(None, rows))))
    return (concat_last(F, [grad_x, F.matmul(q, grad_r_y)], axis=-1),)


def _qr_square_or_tall_jvp(F, q, r, da):
    da_rinv = _right_solve_upper(F, da, r, transposed=False)
    c = F.matmul(_swap(F, q), da_rinv)
    below = lower_triangle(F, c) - F.band_part(c, num_lower=0, num_upper=0)
    upper_part = c - (below - _swap(F, below))      # c - omega, omega = q^T dq (skew)
    return da_rinv - F.matmul(q, upper_part), F.matmul(upper_part, r)


def _qr_jvp(F, t, x, y, full_matrices):
    shape = tuple(x[0].shape)
    _qr_unsupported(shape, full_matrices)
    rows, cols = shape[-2:]
    q_shape, r_shape = _qr_shapes(rows, cols, full_matrices)
    q, r = _unpack(F, y, [q_shape, r_shape])
    da = t[0]
    if rows >= cols:
        dq, dr = _qr_square_or_tall_jvp(F, q, r, da)
    else:
        r_x = F.getitem(r, key=(Ellipsis, slice(None, rows)))
        r_y = F.getitem(r, key=(Ellipsis, slice(rows, None)))
        da_x = F.getitem(da, key=(Ellipsis, slice(None, rows)))
        dq, dr_x = _qr_square_or_tall_jvp(F, q, r_x, da_x)
        d_rest = F.getitem(da, key=(Ellipsis, slice(rows, None)))
        dr_y = F.matmul(_swap(F, q), d_rest - F.matmul(dq, r_y))
        dr = concat_last(F, [dr_x, dr_y], axis=-1)
    return _pack_tangents(F, [dq, dr], (2, 2))


_qr = defop("qr", _qr_forward, vjp=_qr_vjp, jvp=_qr_jvp, save=(0, "out"), type="Qr",
            samples=lambda: [((u(4, 3),), {"full_matrices": False}),
                             ((u(3, 3),), {"full_matrices": True}),
                             ((u(3, 4),), {"full_matrices": False}),
                             ((u(2, 3, 5),), {"full_matrices": True}),
                             ((u(2, 4, 2),), {"full_matrices": False})])


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """``Qr(q, r)`` with ``input = q @ r``: ``q`` orthonormal columns, ``r`` upper triangular.
    ``full_matrices=True`` makes ``q`` square (m x m) and ``r`` m x n."""
    x = _x(input)
    rows, cols = require_matrix("qr", x)
    full = bool(full_matrices)
    packed = _qr(x, full_matrices=full)
    q, r = _unpack(TENSOR, packed, list(_qr_shapes(rows, cols, full)))
    return Qr(q, r)


# --- svd ---------------------------------------------------------------------------------------

def _svd_shapes(rows, cols, full_matrices):
    k = min(rows, cols)
    if full_matrices:
        return (k,), (rows, rows), (cols, cols)
    return (k,), (rows, k), (cols, k)


def _svd_forward(a, full_matrices, compute_uv):
    """The singular values (descending); with ``compute_uv`` also u and v (``a = u @ diag(s) @
    v^T``), flattened and packed in the last axis."""
    if a.ndim < 2:
        raise ValueError(f"input must have rank >= 2, got shape {tuple(a.shape)}")
    xp = B.xp
    if not compute_uv:
        return xp.linalg.svd(a, compute_uv=False)
    left, values, right_t = _factors(xp.linalg.svd(a, full_matrices=full_matrices))
    return _pack([values, left, xp.swapaxes(right_t, -1, -2)], tuple(a.shape[:-2]))


def _svd_unsupported(shape, full_matrices, compute_uv):
    rows, cols = shape[-2:]
    if compute_uv and full_matrices and rows != cols:
        raise NotImplementedError(
            f"svd: the derivative of full_matrices=True is only defined for square matrices, "
            f"got shape {tuple(shape)}: the extra singular vectors are not unique")


def _svd_factors(F, a, y, compute_uv):
    """(s, u, v) of the reduced svd, taken from the output or computed again."""
    rows, cols = tuple(a.shape)[-2:]
    if compute_uv:
        return _unpack(F, y, list(_svd_shapes(rows, cols, False)))
    packed = F.svd(a, full_matrices=False, compute_uv=True)
    return _unpack(F, packed, list(_svd_shapes(rows, cols, False)))


def _svd_vjp(F, g, x, y, full_matrices, compute_uv):
    a = x[0]
    shape = tuple(a.shape)
    _svd_unsupported(shape, full_matrices, compute_uv)
    rows, cols = shape[-2:]
    values, left, right = _svd_factors(F, a, y, compute_uv)
    if not compute_uv:
        inner = diag_embed(F, g)
        return (F.matmul(F.matmul(left, inner), _swap(F, right)),)
    grad_values, grad_left, grad_right = _unpack(F, g, list(_svd_shapes(rows, cols, False)))
    gaps = _inverse_gaps(F, F.multiply(values, values))
    ut_du = F.matmul(_swap(F, left), grad_left)
    vt_dv = F.matmul(_swap(F, right), grad_right)
    inner = (_scale_columns(F, F.multiply(gaps, ut_du - _swap(F, ut_du)), values)
             + diag_embed(F, grad_values)
             + _scale_rows(F, F.multiply(gaps, vt_dv - _swap(F, vt_dv)), values))
    grad_a = F.matmul(F.matmul(left, inner), _swap(F, right))
    inverse = F.reciprocal(values)
    k = min(rows, cols)
    if rows > k:   # the part of grad_left outside the span of u
        outside = grad_left - F.matmul(left, ut_du)
        grad_a = grad_a + F.matmul(_scale_columns(F, outside, inverse), _swap(F, right))
    if cols > k:
        outside = grad_right - F.matmul(right, vt_dv)
        grad_a = grad_a + F.matmul(_scale_columns(F, left, inverse), _swap(F, outside))
    return (grad_a,)


def _svd_jvp(F, t, x, y, full_matrices, compute_uv):
    a = x[0]
    shape = tuple(a.shape)
    _svd_unsupported(shape, full_matrices, compute_uv)
    rows, cols = shape[-2:]
    values, left, right = _svd_factors(F, a, y, compute_uv)
    da = t[0]
    projected = F.matmul(F.matmul(_swap(F, left), da), right)
    d_values = diag_of(F, projected)
    if not compute_uv:
        return d_values
    gaps = _inverse_gaps(F, F.multiply(values, values))
    proj_t = _swap(F, projected)
    d_left = F.matmul(left, F.multiply(gaps, _scale_columns(F, projected, values)
                                       + _scale_rows(F, proj_t, values)))
    d_right = F.matmul(right, F.multiply(gaps, _scale_rows(F, projected, values)
                                         + _scale_columns(F, proj_t, values)))
    inverse = F.reciprocal(values)
    k = min(rows, cols)
    if rows > k:
        outside = F.matmul(da, right) - F.matmul(left, projected)
        d_left = d_left + _scale_columns(F, outside, inverse)
    if cols > k:
        outside = F.matmul(_swap(F, da), left) - F.matmul(right, proj_t)
        d_right = d_right + _scale_columns(F, outside, inverse)
    return _pack_tangents(F, [d_values, d_left, d_right], (1, 2, 2))


def _separated_singular(rows, cols, *batch):
    """Matrices with singular values at least 0.8 apart (and at least 0.8)."""
    k = min(rows, cols)
    left, _ = numpy.linalg.qr(u(*batch, rows, k))
    right, _ = numpy.linalg.qr(u(*batch, cols, k))
    values = numpy.arange(k, 0, -1) * 1.0 + u(*batch, k, lo=-0.1, hi=0.1)
    return (left * values[..., None, :]) @ numpy.swapaxes(right, -1, -2)


_svd = defop("svd", _svd_forward, vjp=_svd_vjp, jvp=_svd_jvp, save=(0, "out"), type="Svd",
             samples=lambda: [
                 ((_separated_singular(4, 3),), {"full_matrices": False, "compute_uv": True}),
                 ((_separated_singular(2, 4),), {"full_matrices": False, "compute_uv": True}),
                 ((_separated_singular(3, 3),), {"full_matrices": True, "compute_uv": True}),
                 ((_separated_singular(3, 2, 2),), {"full_matrices": False, "compute_uv": True}),
                 ((_separated_singular(3, 4),), {"full_matrices": False, "compute_uv": False})])


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular value decomposition of each innermost matrix: ``(s, u, v)`` with ``tensor = u @
    diag(s) @ v^T`` (``v``, not its transpose), ``s`` descending; only ``s`` when
    ``compute_uv=False``. The gradient through ``u``/``v`` needs distinct non-zero singular
    values (and ``full_matrices=False`` unless the matrices are square)."""
    x = _x(tensor)
    rows, cols = require_matrix("svd", x)
    if not compute_uv:
        return _svd(x, full_matrices=False, compute_uv=False)
    full = bool(full_matrices)
    packed = _svd(x, full_matrices=full, compute_uv=True)
    s, left, right = _unpack(TENSOR, packed, list(_svd_shapes(rows, cols, full)))
    return s, left, right


# --- built on the decompositions ---------------------------------------------------------------

def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each innermost matrix, from its svd. Singular values
    at most ``rcond`` times the largest count as zero; ``rcond`` defaults to
    ``10 * max(rows, cols) * eps`` of the dtype (TF's default, not numpy's)."""
    x = _x(a)
    rows, cols = require_matrix("pinv", x)
    if rcond is None:
        rcond = 10.0 * max(rows, cols) * float(numpy.finfo(x._value.dtype).eps)
    s, left, right = svd(x, full_matrices=False)
    cutoff = rcond * reduce_max(s, axis=-1, keepdims=True)
    keep = s > cutoff
    safe = where(keep, s, ones_like(s))     # no 1/0 on either branch: finite gradients
    s_inverse = where(keep, reciprocal(safe), zeros_like(s))
    return matmul(right * s_inverse[..., None, :], left, transpose_b=True)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions ``x`` of ``matrix @ x = rhs`` (TF's ``matrix_solve_ls``).

    ``fast=True`` solves the regularised normal equations by Cholesky:
    ``(A^T A + l2 I)^-1 A^T b`` for tall or square ``A``, ``A^T (A A^T + l2 I)^-1 b`` for wide
    ones (``A`` must have full rank unless ``l2_regularizer > 0``). ``fast=False`` returns the
    minimum-norm solution through the pseudo-inverse, for rank-deficient ``A``, and ignores
    ``l2_regularizer``."""
    a, b = _x(matrix), _x(rhs)
    rows, cols = require_matrix("lstsq", a)
    if b.ndim < 2 or int(b.shape[-2]) != rows:
        raise InvalidArgumentError(f"lstsq: rhs must have shape [..., {rows}, K] for a matrix of "
                                   f"shape {tuple(a.shape)}, got {tuple(b.shape)}")
    if b.dtype != a.dtype:
        raise TypeError(f"lstsq: rhs has dtype {b.dtype.name}, matrix {a.dtype.name}")
    if not fast:
        return matmul(pinv(a), b)
    tall = rows >= cols
    gram = matmul(a, a, transpose_a=tall, transpose_b=not tall)
    if not (isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):
        size = cols if tall else rows
        eye = B.xp.eye(size, dtype=a._value.dtype)
        gram = gram + convert_to_tensor(l2_regularizer, dtype=a.dtype) * eye
    chol = cholesky(gram)
    if tall:
        return cholesky_solve(chol, matmul(a, b, transpose_a=True))
    return matmul(a, cholesky_solve(chol, b), transpose_a=True)
