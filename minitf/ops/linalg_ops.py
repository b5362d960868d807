"""Matrix products and linear algebra."""
import math

import numpy

from .. import backend as B
from .. import kernel_threads, mkl_blas, openblas
from ..tensor import Tensor
from ._samples import u
from .array_ops import matrix_transpose, reshape, transpose
from .convert import convert_to_tensor, operand_pair
from .math_ops import multiply, sqrt, where, abs as _abs, pow as _pow
from .reduce_ops import reduce_max, reduce_sum
from .registry import InvalidArgumentError, apply2, as_keras_layer, defop


def _swap(F, x):
    """Swap the last two axes (works with any number of leading batch dimensions)."""
    nd = len(x.shape)
    perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    return F.transpose(x, perm)


def _matmul_vjp(F, g, x, y):
    # g @ b^T and a^T @ g broadcast over leading (batch or jacobian) dimensions; the tape sums
    # any broadcast dimensions back to each input's shape.
    a, b = x
    ga = F.matmul(g, _swap(F, b)) if F.needs[0] else None
    gb = F.matmul(_swap(F, a), g) if F.needs[1] else None
    return ga, gb


def _matmul_row_vjp(g, x, y, needs):
    # g is row-sparse along the rows of a @ b (see minitf.row_cotangent): row r of g only
    # reaches row r of a's gradient, and b's gradient is the outer product a[r]^T g_r.
    a, b = x
    if a.ndim != 2 or b.ndim != 2:
        return None
    ga = g.like(g.vals @ b.T) if needs[0] else None
    gb = None
    if needs[1]:  # writing this (N, k, m) result is the whole cost
        gb = B.empty_result((len(g.rows),) + b.shape, g.vals.dtype)
        a_rows = a[g.rows]
        if B.xp is numpy:  # einsum's loop writes it 1.6x faster than a broadcast multiply
            _outer_rows(a_rows, g.vals, gb)
        else:
            B.xp.multiply(a_rows[:, :, None], g.vals[:, None, :], out=gb)
    return ga, gb


_OUTER_PART = 1 << 20   # elements of the result per thread at least


def _outer_rows(a, v, out):
    """``out[r] = outer(a[r], v[r])``, split by rows over ``minitf.kernel_threads`` (einsum lets
    the GIL go): one thread wrote the benchmark's 33 MB jacobian in 3.5 ms, two in 2.0."""
    per_row = a.shape[1] * v.shape[1]
    kernel_threads.run(
        lambda lo, hi: numpy.einsum("bk,bm->bkm", a[lo:hi], v[lo:hi], out=out[lo:hi]),
        kernel_threads.split(a.shape[0], -(-_OUTER_PART // max(per_row, 1))))


def _matmul_col_vjp(g, x, y, needs):
    # g is column-sparse on a @ b (see minitf.column_cotangent): the cotangent that is v on
    # column c gives a the gradient v[:, None] * b[:, c] (an outer product, not a product with
    # b^T). b's gradient would be a dense outer product per cotangent: the dense path.
    # Written example-major, (n0, N, m) in memory seen as (N, n0, m): the products after it
    # keep that order (``_matmul_forward``), so batch_jacobian's result needs no transpose.
    a, b = x
    if a.ndim != 2 or b.ndim != 2 or needs[1]:
        return None
    out = B.xp.empty((a.shape[0], len(g.cols), b.shape[0]), dtype=g.vals.dtype)
    if g.ones:   # the seeds themselves: every example's rows are b's columns
        out[...] = b.T[g.cols]
    else:
        B.xp.multiply(g.vals.T[:, :, None], b.T[g.cols][None, :, :], out=out)
    return out.transpose(1, 0, 2), None


def _matmul_forward(a, b):
    """a @ b over the last two axes. A stack of matrices times one matrix (and one matrix times
    a stack) runs as a single BLAS product instead of numpy's loop of small ones: that is the
    shape of every product in a vectorised jacobian (measured 6x and 5x faster there)."""
    xp = B.xp
    if b.ndim == 2 and a.ndim > 2:
        order = _stored_order(a)
        if order is not None:   # one product in a's memory order; the result keeps that order
            lead = tuple(range(a.ndim - 1))
            stored = a if order == lead else a.transpose(order + (a.ndim - 1,))
            rows = math.prod(a.shape[:-1])   # explicit: -1 fails on size 0
            c = matrix_product(stored.reshape(rows, a.shape[-1]), b)
            c = c.reshape(stored.shape[:-1] + (b.shape[-1],))
            if order == lead:
                return c
            return c.transpose(tuple(order.index(i) for i in lead) + (a.ndim - 1,))
    if a.ndim == 2 and b.ndim > 2:
        return xp.moveaxis(xp.tensordot(a, b, axes=([1], [b.ndim - 2])), 0, -2)
    return matrix_product(a, b) if a.ndim == 2 and b.ndim == 2 else xp.matmul(a, b)


# OpenBLAS splits a product over its threads from 65536 x 4 multiply-adds on. Up to about a
# million the split gains little, and the next kernel then reads half the result from the
# other core's cache: with OpenBLAS's AVX2 kernels the relu gradient after the
# (128, 10) @ (10, 512) product took 40 us against 14. Such products run on one thread (the
# AVX-512 kernels run most of them so anyway, with their small-matrix path). The calling
# thread's count goes back to the global one after, so a thread-local count set by other code
# on this thread (openblas_set_num_threads_local) does not survive such a product.
_SPLIT_FROM = 65536 * 4
_ONE_THREAD_MAX = 1 << 20


def _stored_order(a):
    """The order of ``a``'s leading axes in memory, when ``a`` is C-contiguous in that order
    with its last axis last (a transposed stack of matrices, as a vectorised jacobian writes
    them); None otherwise."""
    if a.flags.c_contiguous:
        return tuple(range(a.ndim - 1))
    if a.strides[-1] != a.itemsize or a.size == 0:
        return None
    order = tuple(sorted(range(a.ndim - 1), key=lambda i: -a.strides[i]))
    expected = a.itemsize * a.shape[-1]
    for i in reversed(order):
        if a.shape[i] != 1 and a.strides[i] != expected:
            return None
        expected *= a.shape[i]
    return order


def matrix_product(a, b, out=None):
    """``a @ b`` for two matrices (into ``out``), on MKL where ``minitf.mkl_blas`` runs, and on
    one BLAS thread where it is small."""
    done = mkl_blas.product(a, b, out)
    if done is not None:
        return done
    b = _few_rows_in_order(a, b)
    if (_SPLIT_FROM < a.shape[0] * a.shape[1] * b.shape[1] <= _ONE_THREAD_MAX
            and type(a) is numpy.ndarray and (set_local := openblas.local_threads_setter())):
        set_local(1)
        try:
            return numpy.matmul(a, b, out=out)
        finally:
            set_local(0)
    return B.xp.matmul(a, b, out=out)


def _few_rows_in_order(a, b):
    """``b``, C-ordered where it is a transposed view with a few rows (16 or fewer) and the
    product is large: OpenBLAS multiplies such a ``b`` several times slower than a C-ordered
    copy (measured (128, 10) @ (10, 512), the last layer's input gradient ``g @ W.T``: 86
    against 15 us on two threads; the same bits). The copy is ``b``'s few rows only."""
    if (type(b) is numpy.ndarray and b.ndim == 2 and b.shape[0] <= 16 and b.flags.f_contiguous
            and not b.flags.c_contiguous and a.shape[-2] * b.shape[1] >= 1 << 14):
        return numpy.ascontiguousarray(b)
    return b


def _matmul_out(out, a, b):
    if a.ndim == 2 and b.ndim == 2:
        return matrix_product(a, b, out)
    return _matmul_forward(a, b)


_matmul = defop("matmul", _matmul_forward, arity=2, vjp=_matmul_vjp, row_vjp=_matmul_row_vjp,
                col_vjp=_matmul_col_vjp, out_forward=_matmul_out,
                jvp="bilinear", save=(0, 1), type="MatMul", aliases=("BatchMatMulV2",),
                samples=lambda: [((u(3, 4), u(4, 2)), {}), ((u(2, 3, 4), u(4, 5)), {}),
                                 ((u(2, 3, 4), u(2, 4, 2)), {})])


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           name=None):
    """Matrix product of the last two dimensions, broadcasting the leading ones.

    >>> minitf.matmul(minitf.ones((2, 3)), minitf.ones((3, 4))).shape
    TensorShape([2, 4])
    """
    try:
        a, b = operand_pair("matmul", a, b)
    except TypeError:
        return as_keras_layer(matmul, (a, b), {"transpose_a": transpose_a,
                                               "transpose_b": transpose_b,
                                               "adjoint_a": adjoint_a, "adjoint_b": adjoint_b})
    if a.ndim < 2 or b.ndim < 2:
        raise InvalidArgumentError(
            f"matmul: both operands need rank >= 2, got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}")
    if transpose_a or adjoint_a:
        a = matrix_transpose(a)
    if transpose_b or adjoint_b:
        b = matrix_transpose(b)
    if a._value.shape[-1] != b._value.shape[-2]:
        raise InvalidArgumentError(
            f"matmul: inner dimensions differ: shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)} ({a._value.shape[-1]} != {b._value.shape[-2]})")
    return apply2(_matmul.op, a, b)


def _solve_vjp(F, g, x, y):
    a = x[0]
    gb = F.solve(_swap(F, a), g)
    ga = -F.matmul(gb, _swap(F, y)) if F.needs[0] else None
    return ga, gb


def _solve_forward(matrix, rhs):
    return B.xp.linalg.solve(matrix, rhs)


def _well_conditioned(n, k=None):
    m = u(n, n) + 3.0 * numpy.eye(n)
    return m if k is None else (m, u(n, k))


_solve = defop("solve", _solve_forward, arity=2, vjp=_solve_vjp, jvp=None, save=(0, "out"),
               type="MatrixSolve", samples=lambda: [(_well_conditioned(3, 2), {})])


def solve(matrix, rhs, adjoint=False, name=None):
    """x with matrix @ x = rhs."""
    matrix, rhs = operand_pair("linalg.solve", matrix, rhs)
    if adjoint:
        matrix = matrix_transpose(matrix)
    return apply2(_solve.op, matrix, rhs)


def _inv_vjp(F, g, x, y):
    yt = _swap(F, y)
    return (-F.matmul(F.matmul(yt, g), yt),)


_inv = defop("inv", lambda a: B.xp.linalg.inv(a), vjp=_inv_vjp, save=("out",),
             type="MatrixInverse", samples=lambda: [((_well_conditioned(3),), {})])


def inv(input, adjoint=False, name=None):  # noqa: A002
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    return _inv(matrix_transpose(x) if adjoint else x)


def _det_vjp(F, g, x, y):
    a = x[0]
    scale = F.reshape(g * y, tuple(g.shape) + (1, 1))
    return (scale * _swap(F, F.inv(a)),)


_det = defop("det", lambda a: B.xp.linalg.det(a), vjp=_det_vjp, save=(0, "out"),
             type="MatrixDeterminant", samples=lambda: [((_well_conditioned(3),), {})])


def det(input, name=None):  # noqa: A002
    return _det(input)


def _fill_jvps():
    # solve/inv/det forward mode: derived from the VJP ("reverse-of-reverse" is not needed for
    # these small matrix ops; the explicit formulas below keep forward mode exact).
    def solve_jvp(F, t, x, y):
        a, b = x
        ta, tb = t
        rhs = tb if tb is not None else F.zeros_like(b)
        if ta is not None:
            rhs = rhs - F.matmul(ta, y)
        return F.solve(a, rhs)

    def inv_jvp(F, t, x, y):
        return -F.matmul(F.matmul(y, t[0]), y)

    def det_jvp(F, t, x, y):
        a = x[0]
        inner = F.matmul(F.inv(a), t[0])
        n = a.shape[-1]
        trace = F.reduce_sum(F.getitem(inner, key=(Ellipsis, numpy.arange(n), numpy.arange(n))),
                             axis=(len(a.shape) - 2,))
        return y * trace

    _solve.op.jvp = solve_jvp
    _inv.op.jvp = inv_jvp
    _det.op.jvp = det_jvp


_fill_jvps()


def tensordot(a, b, axes, name=None):
    """Contract ``axes`` of ``a`` with ``axes`` of ``b`` (an int: the last/first ``axes``)."""
    a, b = operand_pair("tensordot", a, b)
    if isinstance(axes, (int, numpy.integer)):
        ax_a = list(range(a.ndim - int(axes), a.ndim))
        ax_b = list(range(int(axes)))
    else:
        ax_a, ax_b = axes
        ax_a = [int(i) % a.ndim for i in numpy.atleast_1d(ax_a)]
        ax_b = [int(i) % b.ndim for i in numpy.atleast_1d(ax_b)]
    for i, j in zip(ax_a, ax_b):
        if a._value.shape[i] != b._value.shape[j]:
            raise InvalidArgumentError(
                f"tensordot: axis {i} of shape {tuple(a.shape)} does not match axis "
                f"{j} of shape {tuple(b.shape)}")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    sa, sb = a._value.shape, b._value.shape
    k = int(numpy.prod([sa[i] for i in ax_a], dtype=numpy.int64))
    m = int(numpy.prod([sa[i] for i in free_a], dtype=numpy.int64))  # not -1: size 0 works too
    n = int(numpy.prod([sb[i] for i in free_b], dtype=numpy.int64))
    am = reshape(transpose(a, free_a + ax_a), (m, k))
    bm = reshape(transpose(b, ax_b + free_b), (k, n))
    out = matmul(am, bm)
    return reshape(out, [sa[i] for i in free_a] + [sb[i] for i in free_b])


def _norm_axis(a, ndim, ord):  # noqa: A002
    if not isinstance(a, (int, numpy.integer)) or isinstance(a, bool) or not -ndim <= a < ndim:
        raise ValueError(f"norm: axis must be None, an int or a pair of ints in [-{ndim}, {ndim}) "
                         f"(rank {ndim}), got {a!r} (ord={ord!r})")
    return int(a) % ndim


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """TF's ``norm``. ``axis`` None (the whole tensor as one vector) or one axis: the vector
    p-norm for any real ``p > 0`` or ``inf`` (``"euclidean"`` is 2). ``axis`` a pair: the matrix
    norm, ``"euclidean"``/``"fro"`` Frobenius, 1 the largest column abs sum, ``inf`` the largest
    row abs sum, 2 the largest singular value (the spectral norm)."""
    x = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    keepdims = bool(keepdims)
    ord_is_real = (isinstance(ord, (int, float, numpy.integer, numpy.floating))
                   and not isinstance(ord, bool))
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        r, c = (_norm_axis(a, x.ndim, ord) for a in axis)
        if r == c:
            raise ValueError(f"norm: the two matrix axes must differ, got ord={ord!r}, "
                             f"axis={axis!r}")
        if ord in ("euclidean", "fro"):
            return sqrt(reduce_sum(multiply(x, x), axis=(r, c), keepdims=keepdims))
        if ord_is_real and ord in (1, numpy.inf):  # sum down columns (1) or along rows (inf)
            sums = reduce_sum(_abs(x), axis=r if ord == 1 else c, keepdims=True)
            return reduce_max(sums, axis=(r, c), keepdims=keepdims)
        if ord_is_real and ord == 2:
            return _spectral_norm(x, r, c, keepdims)
        raise ValueError(f"norm: ord must be a matrix norm ('euclidean', 'fro', 1, 2, inf) "
                         f"for matrix axes, got ord={ord!r}, axis={axis!r}")
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if axis is not None:
        axis = _norm_axis(axis, x.ndim, ord)
    if ord == "euclidean" or ord_is_real and ord == 2:
        return sqrt(reduce_sum(multiply(x, x), axis=axis, keepdims=keepdims))
    if not ord_is_real or not ord > 0:
        raise ValueError(f"norm: ord must be 'euclidean', inf or a real p > 0 for a vector norm "
                         f"(axis None or one axis), got ord={ord!r}, axis={axis!r}")
    if ord == numpy.inf:
        return reduce_max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return reduce_sum(_abs(x), axis=axis, keepdims=keepdims)
    total = reduce_sum(_pow(_abs(x), float(ord)), axis=axis, keepdims=keepdims)
    return _pow(total, 1.0 / float(ord))


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """``(tensor / norm, norm)`` with ``norm`` from ``norm(tensor, ord, axis, keepdims=True)``."""
    x = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"normalize: tensor must be floating-point, got {x.dtype.name}")
    size = norm(x, ord=ord, axis=axis, keepdims=True)
    return x / size, size


def _spectral_norm(x, r, c, keepdims):
    from .array_ops import expand_dims, transpose
    from .decomposition_ops import svd
    rest = [a for a in range(x.ndim) if a not in (r, c)]
    s = svd(transpose(x, rest + [r, c]), compute_uv=False)
    out = reduce_max(s, axis=-1)
    if keepdims:
        for a in sorted((r, c)):
            out = expand_dims(out, a)
    return out


def diag(diagonal, name=None):
    """Matrices with ``diagonal``'s last axis on their diagonal (TF's ``linalg.diag``)."""
    v = diagonal if isinstance(diagonal, Tensor) else convert_to_tensor(diagonal)
    n = v._value.shape[-1]
    on_diagonal = Tensor(B.xp.eye(n, dtype=bool))  # where, not a product: inf * 0 would be NaN
    zero = Tensor(B.xp.zeros((), v._value.dtype))
    return where(on_diagonal, reshape(v, tuple(v.shape) + (1,)), zero)


def diag_part(input, name=None):  # noqa: A002
    """The main diagonals of the innermost matrices (TF's ``linalg.diag_part``)."""
    m = input if isinstance(input, Tensor) else convert_to_tensor(input)
    k = min(m._value.shape[-2:])
    on_diagonal = Tensor(B.xp.eye(k, dtype=bool))
    zero = Tensor(B.xp.zeros((), m._value.dtype))
    return reduce_sum(where(on_diagonal, m[..., :k, :k], zero), axis=-1)


def _install_rule_versions():
    from .registry import TENSOR
    TENSOR.matmul = lambda a, b: apply2(_matmul.op, a, b)


_install_rule_versions()
