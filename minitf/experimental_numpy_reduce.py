"""Reductions and products of ``tf.experimental.numpy`` with NumPy's dtypes: ``sum``/``prod``
of small integers and bools give int64, ``mean``/``var``/``std`` of integers give float64."""
import builtins as _builtins

import numpy as _np

from . import dtypes as _dtypes
from .experimental_numpy_base import _np_dtype, asarray, float_pair, promote, to_float
from .experimental_numpy_arrays import ravel
from .keras.ops import numpy as _kn
from .ops import array_ops as _a, linalg_ops as _l, math_ops as _m, reduce_ops as _r
from .ops.einsum_ops import einsum as _einsum


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _widened(a):
    """Bool and integers narrower than 64 bits widened as NumPy's ``sum`` widens them."""
    if a.dtype.is_bool or a.dtype.is_integer and a.dtype.size < 8:
        return _m.cast(a, _dtypes.uint64 if a.dtype.is_unsigned else _dtypes.int64)
    return a


def _reduce(op, a, axis, dtype, keepdims, promote_int, bool_op=None, preserve_bool=False):
    target = None if dtype is None else _dtypes.as_dtype(_np_dtype(dtype))
    a = asarray(a, target)
    keepdims = bool(keepdims)
    if bool_op is not None and a.dtype.is_bool and (target is not None or preserve_bool):
        return bool_op(a, axis=_axis(axis), keepdims=keepdims)
    if target is None and not a.dtype.is_floating:
        a = _widened(a) if promote_int == "int" else to_float(a) if promote_int else a
    return op(a, axis=_axis(axis), keepdims=keepdims)


def sum(a, axis=None, dtype=None, keepdims=None):  # noqa: A001 - NumPy's name
    """The sum over ``axis``; bools and small integers sum as int64."""
    return _reduce(_r.reduce_sum, a, axis, dtype, keepdims, "int", _r.reduce_any)


def prod(a, axis=None, dtype=None, keepdims=None):
    """The product over ``axis``; bools and small integers multiply as int64."""
    return _reduce(_r.reduce_prod, a, axis, dtype, keepdims, "int", _r.reduce_all)


def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    """The mean over ``axis``; integers and bools average as float64."""
    _no_out("mean", out)
    return _reduce(_r.reduce_mean, a, axis, dtype, keepdims, "float")


def amax(a, axis=None, out=None, keepdims=None):
    """The maximum over ``axis`` in ``a``'s dtype."""
    _no_out("amax", out)
    return _reduce(_r.reduce_max, a, axis, None, keepdims, None, _r.reduce_any, True)


def amin(a, axis=None, out=None, keepdims=None):
    """The minimum over ``axis`` in ``a``'s dtype."""
    _no_out("amin", out)
    return _reduce(_r.reduce_min, a, axis, None, keepdims, None, _r.reduce_all, True)


def max(a, axis=None, keepdims=None):  # noqa: A001 - NumPy's name
    """The maximum over ``axis`` in ``a``'s dtype."""
    return amax(a, axis=axis, keepdims=keepdims)


def min(a, axis=None, keepdims=None):  # noqa: A001 - NumPy's name
    """The minimum over ``axis`` in ``a``'s dtype."""
    return amin(a, axis=axis, keepdims=keepdims)


def all(a, axis=None, keepdims=None):  # noqa: A001 - NumPy's name
    """Whether all values over ``axis`` are true."""
    return _r.reduce_all(asarray(a, _dtypes.bool), axis=_axis(axis), keepdims=bool(keepdims))


def any(a, axis=None, keepdims=None):  # noqa: A001 - NumPy's name
    """Whether any value over ``axis`` is true."""
    return _r.reduce_any(asarray(a, _dtypes.bool), axis=_axis(axis), keepdims=bool(keepdims))


def _no_out(name, out):
    if out is not None:
        raise ValueError(f"tf.experimental.numpy.{name}: out= is not supported (got {out!r})")


def _count(a, axis):
    dims = [int(d) for d in a.shape]
    if axis is None:
        return int(_np.prod(dims))
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    return int(_np.prod([dims[i] for i in axes]))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=None):
    """The variance over ``axis`` (divided by ``N - ddof``); float64 for integers."""
    _no_out("var", out)
    a = asarray(a)
    x = to_float(a) if dtype is None else asarray(a, _dtypes.as_dtype(_np_dtype(dtype)))
    centered = x - _r.reduce_mean(x, axis=_axis(axis), keepdims=True)
    total = _r.reduce_sum(_m.square(centered), axis=_axis(axis), keepdims=bool(keepdims))
    return total / asarray(_count(a, axis) - ddof, total.dtype)


def std(a, axis=None, keepdims=None):
    """The standard deviation over ``axis``; float64 for integers."""
    return _m.sqrt(var(a, axis=axis, keepdims=keepdims))


def average(a, axis=None, weights=None, returned=False):
    """The (``weights``-weighted) mean over ``axis``; with ``returned``, also the sum of the
    weights."""
    if weights is None:
        a = to_float(a)
        avg = _r.reduce_mean(a, axis=_axis(axis))
        total = asarray(_count(a, axis), avg.dtype) + _m.zeros_like_public(avg)
        return (avg, total) if returned else avg
    a, w = float_pair(a, weights)
    if tuple(a.shape) != tuple(w.shape):
        if axis is None or w.shape.rank != 1:
            raise ValueError(f"tf.experimental.numpy.average: weights of shape "
                             f"{tuple(w.shape)} differ from a's {tuple(a.shape)}; expected "
                             f"1-D weights with an int axis")
        shape = [1] * a.shape.rank
        shape[axis] = -1
        w = _a.reshape(w, shape)
    total = _r.reduce_sum(w + _m.zeros_like_public(a), axis=_axis(axis))
    avg = _r.reduce_sum(a * w, axis=_axis(axis)) / total
    return (avg, total) if returned else avg


def ptp(a, axis=None, keepdims=None):
    """``amax - amin`` over ``axis``."""
    return amax(a, axis=axis, keepdims=keepdims) - amin(a, axis=axis, keepdims=keepdims)


def count_nonzero(a, axis=None):
    """The number of non-zero values over ``axis`` (int64)."""
    a = asarray(a)
    return _r.reduce_sum(_m.cast(_m.not_equal(a, _m.zeros_like_public(a)), _dtypes.int64),
                         axis=_axis(axis))


def _nan_reduction(name, reduce, fill):
    def fn(a, axis=None, dtype=None, keepdims=False):
        a = asarray(a)
        if a.dtype.is_floating:
            a = _m.where(_m.is_nan(a), _m.zeros_like_public(a) + fill, a)
        return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}``: NaNs count as {fill}."
    return fn


nansum = _nan_reduction("nansum", sum, 0)
nanprod = _nan_reduction("nanprod", prod, 1)


def nanmean(a, axis=None, dtype=None, keepdims=None):
    """The mean over ``axis`` of the values that are not NaN."""
    a = asarray(a)
    if not a.dtype.is_floating:
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    kept = _m.logical_not(_m.is_nan(a))
    target = a.dtype if dtype is None else dtype
    return (nansum(a, axis=axis, dtype=target, keepdims=keepdims)
            / sum(kept, axis=axis, dtype=target, keepdims=keepdims))


def _cumulative(name, fn, a, axis, dtype):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    if dtype is not None:
        a = asarray(a, _dtypes.as_dtype(_np_dtype(dtype)))
    else:
        a = _widened(a)
    return fn(a, axis=axis)


def cumsum(a, axis=None, dtype=None):
    """Running sums along ``axis`` (flattened when None); small integers as int64."""
    return _cumulative("cumsum", _kn.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """Running products along ``axis`` (flattened when None); small integers as int64."""
    return _cumulative("cumprod", _kn.cumprod, a, axis, dtype)


def _arg(op, a, axis):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return op(a, axis=axis, output_type=_dtypes.int64)


def argmax(a, axis=None):
    """The int64 index of the maximum along ``axis`` (of the flattened ``a`` when None)."""
    return _arg(_r.argmax, a, axis)


def argmin(a, axis=None):
    """The int64 index of the minimum along ``axis`` (of the flattened ``a`` when None)."""
    return _arg(_r.argmin, a, axis)


# --- products --------------------------------------------------------------------------------

def matmul(x1, x2):
    """The matrix product (vectors are promoted to matrices and back, as in NumPy)."""
    x1, x2 = promote(x1, x2)
    if x1.shape.rank == 0 or x2.shape.rank == 0:
        raise ValueError(f"tf.experimental.numpy.matmul: operands must have at least one "
                         f"dimension, got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    vector1, vector2 = x1.shape.rank == 1, x2.shape.rank == 1
    result = _l.matmul(_a.expand_dims(x1, 0) if vector1 else x1,
                       _a.expand_dims(x2, -1) if vector2 else x2)
    if vector2:
        result = _a.squeeze(result, -1)
    return _a.squeeze(result, -1 if vector2 else -2) if vector1 else result


def dot(a, b):
    """NumPy's ``dot``: scalars multiply, else a sum over ``a``'s last axis and ``b``'s
    second-to-last (its only axis when 1-D)."""
    a, b = promote(a, b)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    b_axis = 0 if b.shape.rank == 1 else b.shape.rank - 2
    return _kn.tensordot(a, b, axes=[[a.shape.rank - 1], [b_axis]])


def tensordot(a, b, axes=2):
    """The sum of products over ``axes`` (a count or two lists)."""
    return _kn.tensordot(*promote(a, b), axes=axes)


def inner(a, b):
    """The sum of products over the last axes."""
    a, b = promote(a, b)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    return _kn.tensordot(a, b, axes=[[a.shape.rank - 1], [b.shape.rank - 1]])


def outer(a, b):
    """The outer product of the flattened inputs."""
    a, b = promote(a, b)
    return _a.reshape(ravel(a), [-1, 1]) * _a.reshape(ravel(b), [1, -1])


def vdot(a, b):
    """The dot product of the flattened inputs."""
    a, b = promote(a, b)
    return _r.reduce_sum(ravel(a) * ravel(b))


def kron(a, b):
    """The Kronecker product."""
    return _kn.kron(*promote(a, b))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors."""
    return _kn.cross(*promote(a, b), axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def einsum(subscripts, *operands, **kwargs):
    """Einstein summation over the operands promoted to one dtype (``casting='safe'``) or
    as given (``casting='no'``)."""
    casting = kwargs.pop("casting", "safe")
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"tf.experimental.numpy.einsum: unexpected arguments {sorted(kwargs)}")
    if casting not in ("safe", "no"):
        raise ValueError(f"tf.experimental.numpy.einsum: casting={casting!r}; expected 'safe' "
                         f"or 'no'")
    operands = promote(*operands) if casting == "safe" else [asarray(o) for o in operands]
    return _einsum(subscripts, *operands)


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    p = asarray(p)
    p, x = promote(p, x)
    result = _m.zeros_like_public(x)
    for i in _builtins.range(int(p.shape[0])):
        result = result * x + p[i]
    return result


def diff(a, n=1, axis=-1):
    """The ``n``-th discrete difference along ``axis``."""
    return _kn.diff(asarray(a), n=n, axis=axis)
