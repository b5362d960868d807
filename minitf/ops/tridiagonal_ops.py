"""Tridiagonal systems of ``tf.linalg``: ``tridiagonal_solve`` and ``tridiagonal_matmul``.

Both take the matrix in one of TF's three formats: ``'compact'`` ``[..., 3, M]`` (rows:
superdiagonal, its last entry ignored; main diagonal; subdiagonal, its first entry ignored),
``'sequence'`` (those three ``[..., M]`` tensors, or ``M - 1`` long off-diagonals) and
``'matrix'`` ``[..., M, M]`` (only its three central diagonals are read).

The solve is Gaussian elimination with partial pivoting (LAPACK's ``gtsv``) or without it (the
Thomas algorithm), looped over the rows and vectorised over the batch; a singular system gives
NaN, as TF's kernel does. Its gradient is TF's: a solve with the transposed matrix for ``rhs``
and minus the products of that with the solution on the three diagonals.
"""
import numpy

from .. import backend as B
from ..tensor import Tensor
from ._samples import u
from .array_ops import concat, expand_dims, squeeze, stack
from .linalg_ops import diag_part
from .matrix_ops import _swap, _x, concat_last
from .registry import TENSOR, InvalidArgumentError, defop

_FORMATS = ("compact", "sequence", "matrix")


# --- kernel ------------------------------------------------------------------------------------

def _back_substitute(u0, u1, u2, x, singular):
    """Solve the upper triangular system with diagonals ``u0``, ``u1``, ``u2`` (main, first
    and second superdiagonal; ``(N, M)``) for ``x`` ``(N, M, K)`` in place."""
    xp = B.xp
    m = u0.shape[1]
    one = xp.ones((), dtype=u0.dtype)
    pivots = xp.where(u0 == 0, one, u0)
    singular |= (u0 == 0).any(axis=1)
    for i in range(m - 1, -1, -1):
        row = x[:, i, :]
        if i + 1 < m:
            row = row - u1[:, i, None] * x[:, i + 1, :]
        if i + 2 < m:
            row = row - u2[:, i, None] * x[:, i + 2, :]
        x[:, i, :] = row / pivots[:, i, None]
    return xp.where(singular[:, None, None], xp.asarray(numpy.nan, dtype=x.dtype), x)


def _tridiagonal_solve_forward(diagonals, rhs, partial_pivoting):
    """x with ``A @ x = rhs`` for tridiagonal ``A`` given as compact diagonals ``[..., 3, M]``
    and ``rhs`` ``[..., M, K]`` (leading dimensions broadcast); NaN where ``A`` is singular."""
    xp = B.xp
    if diagonals.ndim < 2 or diagonals.shape[-2] != 3:
        raise ValueError(f"diagonals must have shape [..., 3, M], got {tuple(diagonals.shape)}")
    m = diagonals.shape[-1]
    if rhs.ndim < 2 or rhs.shape[-2] != m:
        raise ValueError(f"rhs must have shape [..., {m}, K], got {tuple(rhs.shape)}")
    batch = numpy.broadcast_shapes(tuple(diagonals.shape[:-2]), tuple(rhs.shape[:-2]))
    k = rhs.shape[-1]
    count = int(numpy.prod(batch, dtype=numpy.int64))
    d = xp.broadcast_to(diagonals, batch + (3, m)).reshape((count, 3, m))
    x = xp.array(xp.broadcast_to(rhs, batch + (m, k)).reshape((count, m, k)), copy=True)
    if m == 0 or count == 0 or k == 0:
        return x.reshape(batch + (m, k))
    zero = xp.zeros((count, 1), dtype=d.dtype)
    sup = xp.concatenate([d[:, 0, :-1], zero], axis=1)     # the ignored entries read as zero
    sub = xp.concatenate([zero, d[:, 2, 1:]], axis=1)
    u0 = xp.array(d[:, 1, :], copy=True)
    u1 = xp.array(sup, copy=True)
    u2 = xp.zeros((count, m), dtype=d.dtype)
    singular = xp.zeros((count,), dtype=bool)
    one = xp.ones((), dtype=d.dtype)
    for i in range(m - 1):
        below = sub[:, i + 1]
        swap = (xp.abs(u0[:, i]) < xp.abs(below)) if partial_pivoting else xp.zeros_like(singular)
        keep_pivot = xp.where(u0[:, i] == 0, one, u0[:, i])
        swap_pivot = xp.where(below == 0, one, below)
        # no swap: row i + 1 -= factor * row i
        factor = below / keep_pivot
        next_main_keep = u0[:, i + 1] - factor * u1[:, i]
        # swap: rows i and i + 1 exchange, then the new row i + 1 -= factor * the new row i
        factor_swap = u0[:, i] / swap_pivot
        next_main_swap = u1[:, i] - factor_swap * u0[:, i + 1]
        next_sup_swap = -factor_swap * sup[:, i + 1]
        x_i, x_next = x[:, i, :], x[:, i + 1, :]
        sw = swap[:, None]
        new_x_i = xp.where(sw, x_next, x_i)
        new_x_next = xp.where(sw, x_i - factor_swap[:, None] * x_next,
                              x_next - factor[:, None] * x_i)
        x[:, i, :], x[:, i + 1, :] = new_x_i, new_x_next
        singular |= ~swap & (u0[:, i] == 0)
        new_u1_i = xp.where(swap, u0[:, i + 1], u1[:, i])
        u2[:, i] = xp.where(swap, sup[:, i + 1], 0)
        u0[:, i] = xp.where(swap, below, u0[:, i])
        u1[:, i] = new_u1_i
        u0[:, i + 1] = xp.where(swap, next_main_swap, next_main_keep)
        u1[:, i + 1] = xp.where(swap, next_sup_swap, sup[:, i + 1])
    return _back_substitute(u0, u1, u2, x, singular).reshape(batch + (m, k))


# --- gradient ----------------------------------------------------------------------------------

def _rows(F, d, row, cols):
    return F.getitem(d, key=(Ellipsis, slice(row, row + 1), cols))


def _transpose_compact(F, d):
    """The compact diagonals of the transposed matrix."""
    zero = F.zeros_like(_rows(F, d, 0, slice(0, 1)))
    sup = concat_last(F, [_rows(F, d, 2, slice(1, None)), zero], axis=-1)
    sub = concat_last(F, [zero, _rows(F, d, 0, slice(None, -1))], axis=-1)
    return concat_last(F, [sup, _rows(F, d, 1, slice(None)), sub], axis=-2)


def _sum_last(F, x):
    return F.reduce_sum(x, axis=(len(x.shape) - 1,))


def _three_diagonals_of_product(F, y, x):
    """The three diagonals of ``y @ x^T`` in compact form (zeros in the ignored entries)."""
    sup = _sum_last(F, F.getitem(y, key=(Ellipsis, slice(None, -1), slice(None)))
                    * F.getitem(x, key=(Ellipsis, slice(1, None), slice(None))))
    main = _sum_last(F, y * x)
    sub = _sum_last(F, F.getitem(y, key=(Ellipsis, slice(1, None), slice(None)))
                    * F.getitem(x, key=(Ellipsis, slice(None, -1), slice(None))))
    zero = F.zeros_like(F.getitem(main, key=(Ellipsis, slice(0, 1))))
    rows = [concat_last(F, [sup, zero], axis=-1), main, concat_last(F, [zero, sub], axis=-1)]
    return concat_last(F, [F.getitem(r, key=(Ellipsis, None, slice(None))) for r in rows],
                       axis=-2)


def compact_matmul(F, d, x):
    """``A @ x`` for compact diagonals ``d`` ``[..., 3, M]`` and ``x`` ``[..., M, K]``."""
    def diagonal(row, cols):
        return F.getitem(d, key=(Ellipsis, row, cols, None))
    main = diagonal(1, slice(None)) * x
    zero = F.zeros_like(F.getitem(main, key=(Ellipsis, slice(0, 1), slice(None))))
    above = diagonal(0, slice(None, -1)) * F.getitem(x, key=(Ellipsis, slice(1, None),
                                                             slice(None)))
    below = diagonal(2, slice(1, None)) * F.getitem(x, key=(Ellipsis, slice(None, -1),
                                                            slice(None)))
    return (main + concat_last(F, [above, zero], axis=-2)
            + concat_last(F, [zero, below], axis=-2))


def _tridiagonal_solve_vjp(F, g, x, y, partial_pivoting):
    diagonals = x[0]
    grad_rhs = F.tridiagonal_solve(_transpose_compact(F, diagonals), g,
                                   partial_pivoting=partial_pivoting)
    grad_diagonals = -_three_diagonals_of_product(F, grad_rhs, y) if F.needs[0] else None
    return grad_diagonals, grad_rhs


def _tridiagonal_solve_jvp(F, t, x, y, partial_pivoting):
    t_diagonals, t_rhs = t
    rhs = t_rhs
    if t_diagonals is not None:
        term = compact_matmul(F, t_diagonals, y)
        rhs = -term if rhs is None else rhs - term
    if rhs is None:
        return None
    return F.tridiagonal_solve(x[0], rhs, partial_pivoting=partial_pivoting)


def _dominant(*batch, m=4):
    d = u(*batch, 3, m)
    d[..., 1, :] += 5.0 * numpy.sign(d[..., 1, :])
    return d


def _needs_pivoting():
    """Small main diagonal: the pivoting solve exchanges rows (condition number about 20)."""
    return numpy.array([[1.5, -1.0, 1.2, 0.7], [0.1, 0.2, -0.15, 0.3], [0.4, 2.0, 1.5, -2.0]])


_tridiagonal_solve = defop(
    "tridiagonal_solve", _tridiagonal_solve_forward, arity=2, vjp=_tridiagonal_solve_vjp,
    jvp=_tridiagonal_solve_jvp, save=(0, "out"), type="TridiagonalSolve",
    samples=lambda: [((_dominant(), u(4, 2)), {"partial_pivoting": True}),
                     ((_dominant(), u(4, 1)), {"partial_pivoting": False}),
                     ((_needs_pivoting(), u(4, 2)), {"partial_pivoting": True}),
                     ((_dominant(2, m=3), u(2, 3, 2)), {"partial_pivoting": True})])


# --- formats -----------------------------------------------------------------------------------

def _pad_last(t, before, after):
    parts = []
    zero = Tensor(B.xp.zeros(tuple(t.shape[:-1]) + (1,), dtype=t._value.dtype))
    if before:
        parts.append(zero)
    parts.append(t)
    if after:
        parts.append(zero)
    return concat(parts, axis=-1) if len(parts) > 1 else t


def _to_compact(fn, diagonals, diagonals_format):
    """Compact ``[..., 3, M]`` diagonals from any of the three formats."""
    if diagonals_format == "compact":
        d = _x(diagonals)
        if d.ndim < 2 or int(d.shape[-2]) != 3:
            raise InvalidArgumentError(f"{fn}: compact diagonals must have shape [..., 3, M], "
                                       f"got {tuple(d.shape)}")
        return d
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise InvalidArgumentError(f"{fn}: diagonals_format='sequence' needs a list of "
                                       f"three tensors (superdiagonal, main diagonal, "
                                       f"subdiagonal), got {type(diagonals).__name__}")
        sup, main, sub = (_x(v) for v in diagonals)
        if main.ndim < 1:
            raise InvalidArgumentError(f"{fn}: the main diagonal must have rank >= 1, got a "
                                       f"scalar")
        m = int(main.shape[-1])
        fixed = []
        for what, t, before in (("superdiagonal", sup, False), ("subdiagonal", sub, True)):
            if tuple(t.shape[:-1]) != tuple(main.shape[:-1]) or int(t.shape[-1]) not in (m, m - 1):
                raise InvalidArgumentError(
                    f"{fn}: the {what} must have shape {tuple(main.shape[:-1]) + (m,)} or "
                    f"{tuple(main.shape[:-1]) + (m - 1,)} for a main diagonal of shape "
                    f"{tuple(main.shape)}, got {tuple(t.shape)}")
            fixed.append(t if int(t.shape[-1]) == m else _pad_last(t, before, not before))
        return stack([fixed[0], main, fixed[1]], axis=-2)
    if diagonals_format == "matrix":
        a = _x(diagonals)
        if a.ndim < 2 or int(a.shape[-1]) != int(a.shape[-2]):
            raise InvalidArgumentError(f"{fn}: diagonals_format='matrix' needs square matrices "
                                       f"[..., M, M], got shape {tuple(a.shape)}")
        if int(a.shape[-1]) == 0:
            return Tensor(B.xp.zeros(tuple(a.shape[:-2]) + (3, 0), dtype=a._value.dtype))
        sup = _pad_last(diag_part(a[..., :-1, 1:]), False, True)
        sub = _pad_last(diag_part(a[..., 1:, :-1]), True, False)
        return stack([sup, diag_part(a), sub], axis=-2)
    raise InvalidArgumentError(f"{fn}: diagonals_format must be one of {_FORMATS}, got "
                               f"{diagonals_format!r}")


def _check_rhs(fn, d, rhs):
    m = int(d.shape[-1])
    if tuple(rhs.shape[:-2]) != tuple(d.shape[:-2]) or int(rhs.shape[-2]) != m:
        raise InvalidArgumentError(
            f"{fn}: rhs must have shape [..., {m}, K] with batch shape {tuple(d.shape[:-2])} "
            f"for diagonals of shape {tuple(d.shape)}, got {tuple(rhs.shape)}")
    if rhs.dtype != d.dtype:
        raise TypeError(f"{fn}: rhs has dtype {rhs.dtype.name}, diagonals {d.dtype.name}")
    if not d.dtype.is_floating:
        raise TypeError(f"{fn}: diagonals must be float32 or float64, got {d.dtype.name}")


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """x with ``A @ x = rhs`` for tridiagonal matrices ``A`` (see the module docstring for
    ``diagonals_format``). ``rhs`` is ``[..., M, K]``, or ``[..., M]`` (one right-hand side),
    or ``[..., K, M]`` with ``transpose_rhs``. Singular systems give NaN."""
    fn = "tridiagonal_solve"
    if perturb_singular:
        raise NotImplementedError(f"{fn}: perturb_singular=True is not supported")
    d = _to_compact(fn, diagonals, diagonals_format)
    rhs = _x(rhs)
    if rhs.ndim == d.ndim - 1:          # one right-hand side per system
        column = expand_dims(rhs, -1)
        _check_rhs(fn, d, column)
        return squeeze(_tridiagonal_solve(d, column, partial_pivoting=bool(partial_pivoting)),
                       -1)
    if rhs.ndim != d.ndim:
        raise InvalidArgumentError(f"{fn}: rhs must have rank {d.ndim - 1} or {d.ndim} for "
                                   f"diagonals of shape {tuple(d.shape)}, got shape "
                                   f"{tuple(rhs.shape)}")
    if transpose_rhs:
        rhs = _swap(TENSOR, rhs)
    _check_rhs(fn, d, rhs)
    return _tridiagonal_solve(d, rhs, partial_pivoting=bool(partial_pivoting))


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """``A @ rhs`` for tridiagonal matrices ``A`` (formats as ``tridiagonal_solve``) and
    ``rhs`` ``[..., M, N]``."""
    fn = "tridiagonal_matmul"
    d = _to_compact(fn, diagonals, diagonals_format)
    rhs = _x(rhs)
    _check_rhs(fn, d, rhs)
    return compact_matmul(TENSOR, d, rhs)


def install(tf):
    """Add the tridiagonal functions to ``tf.linalg`` (idempotent)."""
    tf.linalg.tridiagonal_solve = tridiagonal_solve
    tf.linalg.tridiagonal_matmul = tridiagonal_matmul
